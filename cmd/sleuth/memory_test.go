package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
)

func TestCmdMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SLEUTH_DATA_DIR", dir)
	t.Setenv("QDRANT_URL", "")
	t.Setenv("EMBED_MODEL", "")
	ctx := context.Background()
	db, err := memory.Open(ctx, memory.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	emb, _ := memory.NewHashEmbedder(0)
	st, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Add(ctx,
		memory.Record{Tenant: "T", User: "alice", Channel: "C", Scope: memory.ScopeUser, Type: memory.TypePreference, Priority: 3, Content: "alice prefers bullet points"},
		memory.Record{Tenant: "T", Channel: "C", Scope: memory.ScopeChannel, Type: memory.TypeIncident, Priority: 4, Content: "redis timeout during billing deploy"},
	); err != nil {
		t.Fatal(err)
	}
	db.Close()

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cmdMemory(ctx, args, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, e := run("list"); code != 2 || !strings.Contains(e, "tenant") {
		t.Fatalf("list without scope: %d %q", code, e)
	}
	code, out, _ := run("list", "--tenant", "T", "--user", "bob", "--channel", "C")
	if code != 0 || strings.Contains(out, "bullet") || !strings.Contains(out, "redis timeout") {
		t.Fatalf("bob's list: %d %q", code, out)
	}
	code, out, _ = run("search", "redis", "timeout", "billing", "--tenant", "T", "--channel", "C")
	if code != 0 || !strings.Contains(out, "redis timeout") || !strings.Contains(out, "score") {
		t.Fatalf("search: %d %q", code, out)
	}
	code, out, _ = run("list", "--tenant", "T", "--user", "alice", "--json")
	if code != 0 || !strings.Contains(out, `"content":"alice prefers bullet points"`) {
		t.Fatalf("json list: %d %q", code, out)
	}
	// bob cannot forget alice's memory.
	if code, _, _ := run("forget", "--tenant", "T", "--user", "bob", "--all"); code != 1 {
		t.Fatalf("bob forget --all: %d", code)
	}
	code, out, _ = run("forget", "--tenant", "T", "--user", "alice", "--query", "bullet points")
	if code != 0 || !strings.Contains(out, "forgot 1") {
		t.Fatalf("forget: %d %q", code, out)
	}
	if _, out, _ := run("list", "--tenant", "T", "--user", "alice"); strings.Contains(out, "bullet") {
		t.Fatalf("still listed after forget: %q", out)
	}
}
