package jobs

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
)

func TestMemoryCleanupDeletesExactlyWhatItShould(t *testing.T) {
	now := t0
	clk := newClock(now)
	dir := t.TempDir()
	db := openDB(t, dir, clk.Now)
	ctx := context.Background()
	emb, err := memory.NewHashEmbedder(64)
	if err != nil {
		t.Fatal(err)
	}
	lt, err := memory.NewEmbedded(ctx, memory.EmbeddedConfig{DB: db, Embedder: emb, Now: clk.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(id, tenant, typ string, prio int, age time.Duration) memory.Record {
		return memory.Record{ID: id, Tenant: tenant, Channel: "C1", Scope: memory.ScopeChannel, Type: typ, Priority: prio, Content: "memory " + id, CreatedAt: now.Add(-age)}
	}
	day := 24 * time.Hour
	if err := lt.Add(ctx,
		rec("low-old", "T1", memory.TypeFact, 1, 2*day),         // priority <= 1 and > 24 h: gone
		rec("low-new", "T1", memory.TypeFact, 1, 2*time.Hour),   // too young: kept
		rec("high-old", "T1", memory.TypeFact, 3, 40*day),       // important fact: kept
		rec("task-old", "T1", memory.TypeTaskResult, 4, 31*day), // past the 30 d TTL: gone
		rec("task-new", "T1", memory.TypeTaskResult, 4, 10*day), // within TTL: kept
		rec("other-tenant", "T2", memory.TypeFact, 0, 3*day),    // all tenants: gone
	); err != nil {
		t.Fatal(err)
	}

	// Session workspaces.
	old, fresh := now.Add(-20*day), now.Add(-time.Hour)
	mk := func(rel string, at time.Time) {
		p := filepath.Join(dir, "sessions", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("log line\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
	}
	mk("old-1/files/a.log", old)
	mk("old-2/files/b.log", old)
	mk("fresh/files/c.log", fresh)
	mk("mixed/files/old.log", old)
	mk("mixed/files/new.log", fresh)
	mk("stray.txt", old)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep.log"), []byte("x"), 0o600)
	os.Symlink(outside, filepath.Join(dir, "sessions", "link"))
	for _, d := range []string{"old-1/files", "old-1", "old-2/files", "old-2", "mixed/files", "mixed", "fresh/files", "fresh"} {
		at := old
		if strings.HasPrefix(d, "fresh") || strings.HasPrefix(d, "mixed") {
			at = fresh
		}
		os.Chtimes(filepath.Join(dir, "sessions", d), at, at)
	}
	busyCalls := 0
	sl := &sleeps{}
	s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, LongTerm: lt, DataDir: dir, Sleep: sl.Sleep,
		Busy: func() bool { busyCalls++; return busyCalls <= 3 }, BusyPoll: time.Second,
		Defs: Builtins()})
	if err != nil || len(s.Problems()) > 0 {
		t.Fatal(err, s.Problems())
	}
	// Run records: one 100 days old (pruned), one a day old.
	if _, err := db.SQL().ExecContext(ctx, `INSERT INTO jobs_runs(job, scheduled_at, status, started_at) VALUES('x', 1, 'delivered', ?), ('x', 2, 'delivered', ?)`,
		now.Add(-100*day).UnixNano(), now.Add(-day).UnixNano()); err != nil {
		t.Fatal(err)
	}
	r, err := s.RunNow(ctx, "memory-cleanup")
	if err != nil || r.Status != StatusDone {
		t.Fatalf("cleanup run = %+v, %v", r, err)
	}
	if !strings.Contains(r.Summary, "3 memories") || !strings.Contains(r.Summary, "2 session workspaces") || !strings.Contains(r.Summary, "1 job run records") {
		t.Errorf("summary = %q", r.Summary)
	}
	if got := sl.all(); len(got) != 3 || got[0] != time.Second {
		t.Errorf("busy waits = %v; want three 1s polls while interactive work ran", got)
	}

	var kept []string
	for _, tenant := range []string{"T1", "T2"} {
		recs, err := lt.List(ctx, memory.Filter{Scope: memory.Scope{Tenant: tenant, Channel: "C1"}}, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			kept = append(kept, r.ID)
		}
	}
	sort.Strings(kept)
	if strings.Join(kept, ",") != "high-old,low-new,task-new" {
		t.Errorf("memories kept = %v; want high-old, low-new, task-new", kept)
	}
	var left []string
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "fresh,link,mixed,stray.txt" {
		t.Errorf("sessions/ holds %v; want fresh, link, mixed, stray.txt", left)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.log")); err != nil {
		t.Errorf("a symlinked folder's target was touched: %v", err)
	}
	h, _ := s.History(ctx, "", 10)
	for _, r := range h {
		if r.Job == "x" && r.Scheduled.Equal(time.Unix(0, 1)) {
			t.Error("100-day-old run record survived")
		}
	}
}

func TestCleanupArgs(t *testing.T) {
	a, err := parseCleanupArgs(map[string]any{"max_priority": 2, "older_than": "48h", "ttl": map[string]any{"fact": "90d"}, "attachment_days": 0})
	if err != nil || a.MaxPriority != 2 || a.OlderThan != 48*time.Hour || a.TTL["fact"] != 90*24*time.Hour || a.AttachmentDays != 0 || a.HistoryDays != 90 {
		t.Errorf("args = %+v, %v", a, err)
	}
	for _, bad := range []map[string]any{{"max_priority": 9}, {"older_than": "soon"}, {"ttl": map[string]any{"fact": "-1h"}}, {"unknown": 1}} {
		if _, err := parseCleanupArgs(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
