package writesnapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// noteStore is a small in-memory stand-in for memory.Sessions' notes.
type noteStore struct {
	mu    sync.Mutex
	notes map[string][]memory.Note
	fail  error
}

func (s *noteStore) AddNote(_ context.Context, n memory.Note) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.notes == nil {
		s.notes = map[string][]memory.Note{}
	}
	s.notes[n.Session] = append(s.notes[n.Session], n)
	return nil
}

func (s *noteStore) Notes(_ context.Context, key string) ([]memory.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]memory.Note(nil), s.notes[key]...), nil
}

func TestWriteSnapshot(t *testing.T) {
	store := &noteStore{}
	now := time.Date(2024, 5, 1, 14, 2, 0, 0, time.UTC)
	s, err := New(Config{Notes: store, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	env := skills.Env{SessionKey: "slack:T1:C1:171"}
	call := func(args string) skills.Result {
		t.Helper()
		r, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(args), Env: env})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		args, status, want string
	}{
		{`{"action":"read"}`, "ok", "No notes in this conversation yet."},
		{`{"content":"Pool exhausted from L549; cause: export at L525."}`, "ok", "Noted (1 notes in this conversation)."},
		{`{"action":"write","content":"Next: check OOM at L1111."}`, "ok", "Noted (2 notes"},
		{`{"action":"read"}`, "ok", "2 notes in this conversation:\n1. [2024-05-01 14:02] Pool exhausted from L549; cause: export at L525.\n2. [2024-05-01 14:02] Next: check OOM at L1111."},
		{`{"content":"   "}`, "error", "content is empty"},
		{fmt.Sprintf(`{"content":%q}`, strings.Repeat("x", MaxNoteChars+1)), "error", "the limit is 2000"},
		{`{"action":"delete"}`, "error", `action "delete" is unknown`},
	}
	for _, tc := range tests {
		r := call(tc.args)
		if r.Status != tc.status || !strings.Contains(r.Output, tc.want) {
			t.Errorf("%.40s: got %s %q, want %s containing %q", tc.args, r.Status, r.Output, tc.status, tc.want)
		}
	}
	if n := len(store.notes["slack:T1:C1:171"]); n != 2 {
		t.Errorf("stored %d notes, want 2", n)
	}
}

func TestWriteSnapshotErrors(t *testing.T) {
	if _, err := New(Config{}); !errors.Is(err, ErrNoNotes) {
		t.Errorf("err = %v, want ErrNoNotes", err)
	}
	store := &noteStore{fail: errors.New("disk full")}
	s, err := New(Config{Notes: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"content":"x"}`), Env: skills.Env{SessionKey: "k"}}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("store failure: err = %v, want a Go error", err)
	}
	if _, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"content":"x"}`)}); err == nil {
		t.Error("no session: want a Go error")
	}
}

// The interface is what memory.Sessions offers.
var _ Notes = memory.Sessions(nil)

// TestWriteSnapshotSurvivesRestart uses the real embedded session store.
func TestWriteSnapshotSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := "local:t1:c1:th1"
	db, err := memory.Open(ctx, memory.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Sessions().Ensure(ctx, memory.Session{Key: key, Platform: "local", Tenant: "t1", Channel: "c1", Thread: "th1"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Notes: db.Sessions()})
	if err != nil {
		t.Fatal(err)
	}
	env := skills.Env{SessionKey: key}
	if r, err := s.Run(ctx, skills.Call{Args: json.RawMessage(`{"content":"cause: export job at L525"}`), Env: env}); err != nil || r.Status != skills.StatusOK {
		t.Fatalf("%v %+v", err, r)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = memory.Open(ctx, memory.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err = New(Config{Notes: db.Sessions()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, skills.Call{Args: json.RawMessage(`{"action":"read"}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Output, "1. [") || !strings.Contains(r.Output, "cause: export job at L525") {
		t.Errorf("notes after restart: %q", r.Output)
	}
}
