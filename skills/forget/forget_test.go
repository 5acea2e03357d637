package forget_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/forget"
	"github.com/sleuth-bot/sleuth/skills/remember"
	"github.com/sleuth-bot/sleuth/skills/searchmemory"
)

// The three memory skills are tested together on a real embedded store:
// what remember writes, search-memory finds and forget deletes.

func store(t *testing.T) *memory.Embedded {
	t.Helper()
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	emb, _ := memory.NewHashEmbedder(0)
	s, err := memory.NewEmbedded(context.Background(), memory.EmbeddedConfig{DB: db, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	aliceOps = skills.Env{Tenant: "T", User: "alice", Channel: "C-ops", SessionKey: "s1", Link: "https://chat/thread/1"}
	bobOps   = skills.Env{Tenant: "T", User: "bob", Channel: "C-ops"}
	aliceDM  = skills.Env{Tenant: "T", User: "alice", DM: true}
)

func run(t *testing.T, s skills.Skill, env skills.Env, args string) skills.Result {
	t.Helper()
	res, err := s.Run(context.Background(), skills.Call{Skill: s.Spec().Name, Args: json.RawMessage(args), Env: env})
	if err != nil {
		t.Fatalf("%s %s: %v", s.Spec().Name, args, err)
	}
	return res
}

func TestMemorySkills(t *testing.T) {
	st := store(t)
	rem, err := remember.New(remember.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srch, err := searchmemory.New(searchmemory.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	fgt, err := forget.New(forget.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if !rem.Spec().SideEffects || !fgt.Spec().SideEffects || srch.Spec().SideEffects {
		t.Fatal("side_effects: remember and forget must have them, search-memory not")
	}
	if rem.Spec().Name != "remember" || fgt.Spec().Name != "forget" || srch.Spec().Name != "search-memory" {
		t.Fatal("spec names")
	}

	// remember: defaults by type and place; secrets redacted.
	r := run(t, rem, aliceOps, `{"content": "Prefers answers in bullet points with UTC timestamps", "type": "preference"}`)
	if r.Status != skills.StatusOK || !strings.Contains(r.Output, "user memory, preference") {
		t.Fatalf("remember preference: %+v", r)
	}
	r = run(t, rem, aliceOps, `{"content": "Staging postgres runs on port 5433, password=hunter2", "priority": 4}`)
	if r.Status != skills.StatusOK || !strings.Contains(r.Output, "channel memory, fact, priority 4") || strings.Contains(r.Output, "hunter2") || !strings.Contains(r.Output, "[REDACTED]") {
		t.Fatalf("remember fact: %+v", r)
	}
	r = run(t, rem, aliceDM, `{"content": "Salary review meeting moved to friday"}`)
	if r.Status != skills.StatusOK || !strings.Contains(r.Output, "user memory") {
		t.Fatalf("remember in DM: %+v", r)
	}
	if r := run(t, rem, aliceDM, `{"content": "team fact", "scope": "channel"}`); r.Status != skills.StatusError {
		t.Fatalf("channel memory in a DM accepted: %+v", r)
	}
	if r := run(t, rem, aliceOps, `{"content": "x y z", "type": "gossip"}`); r.Status != skills.StatusError {
		t.Fatalf("bad type accepted: %+v", r)
	}
	if r := run(t, rem, aliceOps, `{"content": "`+strings.Repeat("a", 600)+`"}`); r.Status != skills.StatusError || !strings.Contains(r.Output, "distil") {
		t.Fatalf("long content accepted: %+v", r)
	}

	// search-memory: what alice sees in ops; DM memory stays out of the channel.
	r = run(t, srch, aliceOps, `{"scope": "user"}`)
	if r.Status != skills.StatusOK || !strings.Contains(r.Output, "bullet points") || strings.Contains(r.Output, "Salary") || strings.Contains(r.Output, "5433") {
		t.Fatalf("alice's user memories in ops: %q", r.Output)
	}
	r = run(t, srch, aliceOps, `{"query": "staging postgres port"}`)
	if !strings.Contains(r.Output, "5433") || !strings.Contains(r.Output, "channel · fact") || !strings.Contains(r.Output, "https://chat/thread/1") {
		t.Fatalf("search: %q", r.Output)
	}
	r = run(t, srch, bobOps, `{}`)
	if strings.Contains(r.Output, "bullet points") || !strings.Contains(r.Output, "5433") {
		t.Fatalf("bob sees: %q", r.Output)
	}
	if r := run(t, srch, aliceDM, `{"query": "salary review"}`); !strings.Contains(r.Output, "Salary") {
		t.Fatalf("alice in DM: %q", r.Output)
	}
	if r := run(t, srch, aliceOps, `{"query": "kubernetes certificate renewal"}`); r.Output != "No memories match." {
		t.Fatalf("unrelated search: %q", r.Output)
	}

	// forget: bob cannot forget alice's preference, not even by id.
	l, _ := st.List(context.Background(), memory.Filter{Scope: memory.Scope{Tenant: "T", User: "alice", Channel: "C-ops"}, Types: []string{memory.TypePreference}}, 0)
	if len(l) != 1 {
		t.Fatalf("preference list: %+v", l)
	}
	if r := run(t, fgt, bobOps, `{"id": "`+l[0].ID[:8]+`"}`); r.Status != skills.StatusError {
		t.Fatalf("bob forgot alice's memory: %+v", r)
	}
	r = run(t, fgt, aliceOps, `{"id": "`+l[0].ID[:8]+`"}`)
	if r.Status != skills.StatusOK || !strings.HasPrefix(r.Output, "Forgot 1 memory:") || !strings.Contains(r.Output, "bullet points") {
		t.Fatalf("forget by id: %+v", r)
	}
	r = run(t, fgt, bobOps, `{"query": "staging postgres port"}`)
	if r.Status != skills.StatusOK || !strings.Contains(r.Output, "Forgot 1 memory") {
		t.Fatalf("forget by query: %+v", r)
	}
	if r := run(t, srch, aliceOps, `{}`); r.Output != "No memories here yet." {
		t.Fatalf("after forgetting, alice in ops sees %q", r.Output)
	}
	// The DM memory is still there, and "forget everything about me" in the DM removes it.
	r = run(t, fgt, aliceDM, `{"all": true, "scope": "user"}`)
	if !strings.Contains(r.Output, "Forgot 1 memory") || !strings.Contains(r.Output, "Salary") {
		t.Fatalf("forget all: %q", r.Output)
	}
	if r := run(t, fgt, aliceDM, `{}`); r.Status != skills.StatusError {
		t.Fatalf("forget without arguments: %+v", r)
	}
}
