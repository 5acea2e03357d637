package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTest(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSessionsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openTest(t, dir)
	ss := db.Sessions()
	key := "slack:T1:C1:1700000000.000100"
	s, err := ss.Ensure(ctx, Session{Key: key, Platform: "slack", Tenant: "T1", Channel: "C1", Thread: "1700000000.000100", User: "U1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusOpen || s.CreatedAt.IsZero() {
		t.Fatalf("new session: %+v", s)
	}
	ws, err := ss.Workspace(key)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(ws); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("workspace %s: %v %v", ws, fi, err)
	}
	if !strings.HasPrefix(ws, filepath.Join(db.Dir(), "sessions")) || strings.Contains(filepath.Base(filepath.Dir(ws)), ":") {
		t.Fatalf("workspace path not safe: %s", ws)
	}
	fpath := filepath.Join(ws, "app.log")
	if err := os.WriteFile(fpath, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ss.AddFile(ctx, File{Session: key, Name: "app.log", Path: fpath, Size: 2, SHA256: "ab"}); err != nil {
		t.Fatal(err)
	}
	for i, role := range []string{"user", "assistant"} {
		if _, err := ss.AppendTurn(ctx, Turn{Session: key, Role: role, Content: "turn " + role, Fingerprints: []string{"T1", "T2"}, Tokens: i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.AddNote(ctx, Note{Session: key, Content: "db timeouts start at L120"}); err != nil {
		t.Fatal(err)
	}
	if err := ss.SetPlan(ctx, key, "1. scan 2. read"); err != nil {
		t.Fatal(err)
	}
	if err := ss.SetSummary(ctx, key, "user asked about timeouts"); err != nil {
		t.Fatal(err)
	}
	if err := ss.SetStatus(ctx, key, StatusWaiting); err != nil {
		t.Fatal(err)
	}
	if ok, err := ss.Claim(ctx, "ev-1"); err != nil || !ok {
		t.Fatalf("first claim = %v, %v", ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openTest(t, dir)
	defer db.Close()
	ss = db.Sessions()
	got, err := ss.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan != "1. scan 2. read" || got.Summary != "user asked about timeouts" || got.Status != StatusWaiting || got.User != "U1" {
		t.Fatalf("after restart: %+v", got)
	}
	turns, err := ss.Turns(ctx, key, 0)
	if err != nil || len(turns) != 2 || turns[0].Role != "user" || turns[1].Role != "assistant" || len(turns[1].Fingerprints) != 2 || turns[1].Tokens != 1 {
		t.Fatalf("turns after restart: %+v %v", turns, err)
	}
	last, _ := ss.Turns(ctx, key, 1)
	if len(last) != 1 || last[0].Role != "assistant" {
		t.Fatalf("last turn: %+v", last)
	}
	files, err := ss.Files(ctx, key)
	if err != nil || len(files) != 1 || files[0].Path != fpath || files[0].Size != 2 {
		t.Fatalf("files after restart: %+v %v", files, err)
	}
	notes, err := ss.Notes(ctx, key)
	if err != nil || len(notes) != 1 || notes[0].Content != "db timeouts start at L120" {
		t.Fatalf("notes after restart: %+v %v", notes, err)
	}
	if ws2, _ := ss.Workspace(key); ws2 != ws {
		t.Fatalf("workspace moved: %s != %s", ws2, ws)
	}
	if ok, err := ss.Claim(ctx, "ev-1"); err != nil || ok {
		t.Fatalf("claim after restart = %v, %v; want duplicate", ok, err)
	}
	if ok, _ := ss.Exists(ctx, key); !ok {
		t.Fatal("Exists = false")
	}
	if ok, _ := ss.Exists(ctx, "nope"); ok {
		t.Fatal("Exists(nope) = true")
	}
	if _, err := ss.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(nope) = %v", err)
	}
	if _, err := ss.AppendTurn(ctx, Turn{Session: "nope", Role: "user"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("AppendTurn(nope) = %v", err)
	}
}

func TestClaimPrunesOldKeys(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(ctx, Config{DataDir: t.TempDir(), DedupeRetention: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := db.Sessions()
	ss.Claim(ctx, "old")
	now = now.Add(2 * time.Hour)
	ss.Claim(ctx, "new")
	n, err := ss.PruneClaims(ctx)
	if err != nil || n != 1 {
		t.Fatalf("PruneClaims = %d, %v; want 1", n, err)
	}
	if ok, _ := ss.Claim(ctx, "new"); ok {
		t.Fatal("recent key was pruned")
	}
	if ok, _ := ss.Claim(ctx, "old"); !ok {
		t.Fatal("old key was kept past retention")
	}
}

func TestListSessionsWindow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(ctx, Config{DataDir: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ss := db.Sessions()
	ss.Ensure(ctx, Session{Key: "a", Platform: "slack", Tenant: "T", Channel: "C"})
	now = now.Add(time.Hour)
	ss.Ensure(ctx, Session{Key: "b", Platform: "slack", Tenant: "T", Channel: "C"})
	ss.Ensure(ctx, Session{Key: "c", Platform: "slack", Tenant: "T", Channel: "OTHER"})
	got, err := ss.ListSessions(ctx, "slack", "T", "C", now.Add(-time.Minute), now.Add(time.Minute))
	if err != nil || len(got) != 1 || got[0].Key != "b" {
		t.Fatalf("ListSessions = %+v, %v", got, err)
	}
}

func TestOpenCorruptFile(t *testing.T) {
	dir := t.TempDir()
	junk := []byte(strings.Repeat("this is not a database at all ", 200))
	if err := os.WriteFile(filepath.Join(dir, DBFile), junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Config{DataDir: dir})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open(corrupt) = %v; want ErrCorrupt", err)
	}
	if !strings.Contains(err.Error(), "move it aside") || !strings.Contains(err.Error(), DBFile) {
		t.Fatalf("message does not say what to do: %v", err)
	}
}
