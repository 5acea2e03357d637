package dailydigest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
)

// clock is a settable clock shared by the store and the skill.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type seeder struct {
	t   *testing.T
	st  memory.Sessions
	clk *clock
}

// thread creates a session in channel ch with the given turns, each at its
// own time.
func (s seeder) thread(ch, key, status string, turns ...memory.Turn) {
	s.t.Helper()
	ctx := context.Background()
	s.clk.Set(turns[0].CreatedAt)
	if _, err := s.st.Ensure(ctx, memory.Session{Key: key, Platform: "slack", Tenant: "T1", Channel: ch, Thread: key, Link: "https://chat/" + key}); err != nil {
		s.t.Fatal(err)
	}
	for _, tr := range turns {
		tr.Session = key
		s.clk.Set(tr.CreatedAt)
		if _, err := s.st.AppendTurn(ctx, tr); err != nil {
			s.t.Fatal(err)
		}
	}
	if status != "" {
		if err := s.st.SetStatus(ctx, key, status); err != nil {
			s.t.Fatal(err)
		}
	}
}

func user(at time.Time, text string) memory.Turn {
	return memory.Turn{Role: "user", Content: text, CreatedAt: at}
}

func answer(at time.Time, failed bool, fps ...string) memory.Turn {
	return memory.Turn{Role: "assistant", Content: "answer", Failed: failed, Fingerprints: fps, CreatedAt: at}
}

// incidents is a tiny MemoryLister: one incident label per fingerprint,
// returned only for the right tenant and channel.
type incidents map[string]string

func (m incidents) List(_ context.Context, f memory.Filter, _ int) ([]memory.Record, error) {
	if f.Scope.Tenant != "T1" || f.Scope.Channel != "C1" {
		return nil, errors.New("wrong scope")
	}
	if c, ok := m[f.Fingerprint]; ok {
		return []memory.Record{{Content: c, Type: memory.TypeIncident, Fingerprints: []string{f.Fingerprint}}}, nil
	}
	return nil, nil
}

var now = time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)

func h(hours float64) time.Time { return now.Add(-time.Duration(hours * float64(time.Hour))) }

func open(t *testing.T) (memory.Sessions, *clock) {
	t.Helper()
	clk := &clock{t: now}
	db, err := memory.Open(context.Background(), memory.Config{DataDir: t.TempDir(), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.Sessions(), clk
}

func seed(t *testing.T) (memory.Sessions, *clock) {
	st, clk := open(t)
	s := seeder{t, st, clk}
	// Current window [now-24h, now).
	s.thread("C1", "A", "", user(h(21), "why did deploy fail?"), answer(h(20.9), false, "fp-db", "fp-new"))
	s.thread("C1", "B", memory.StatusFailed, user(h(1), "db timeouts again"), answer(h(0.9), true, "fp-db"))
	s.thread("C1", "C", "", user(h(0.5), "is   the queue\nstuck?"))
	s.thread("C1", "G", "", user(h(3), "look at this"), answer(h(2.9), false, "fp-seen"))
	// Previous window [now-48h, now-24h).
	s.thread("C1", "D", "", user(h(47), "db?"), answer(h(46.9), false, "fp-db"))
	s.thread("C1", "E", "", user(h(30), "old"), answer(h(29.9), false, "fp-old"))
	// Ten days ago: fp-seen is not new.
	s.thread("C1", "F", "", user(h(240), "ancient"), answer(h(239.9), false, "fp-seen"))
	// Another channel: never counted.
	s.thread("C2", "X", "", user(h(2), "other"), answer(h(1.9), false, "fp-other"))
	// A digest thread sleuth started: no question, not counted.
	s.thread("C1", "digest", "", answer(h(5), false, "fp-db", "fp-digest-only"))
	clk.Set(now)
	return st, clk
}

func TestBuildCountsTrendNewAndOpen(t *testing.T) {
	st, clk := seed(t)
	sk, err := New(Config{Sessions: st, Memories: incidents{"fp-db": "DB connection pool exhausted"}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	d, err := sk.Build(context.Background(), "slack", "T1", "C1", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if d.Threads != 4 || d.Questions != 4 || d.Analyses != 2 || d.FailedRuns != 1 {
		t.Errorf("activity = threads %d questions %d analyses %d failed %d; want 4 4 2 1", d.Threads, d.Questions, d.Analyses, d.FailedRuns)
	}
	got := map[string]Signature{}
	for _, sg := range d.Signatures {
		got[sg.ID] = sg
	}
	want := map[string]Signature{
		"fp-db":   {Threads: 2, Previous: 1, Trend: TrendRising, Label: "DB connection pool exhausted", Link: "https://chat/B"},
		"fp-new":  {Threads: 1, Previous: 0, Trend: TrendNew, Link: "https://chat/A"},
		"fp-seen": {Threads: 1, Previous: 0, Trend: TrendRising, Link: "https://chat/G"},
	}
	if len(got) != len(want) {
		t.Errorf("signatures = %+v; want exactly %v", d.Signatures, want)
	}
	for id, w := range want {
		g, ok := got[id]
		w.ID = id
		if !ok || g != w {
			t.Errorf("signature %s = %+v; want %+v", id, g, w)
		}
	}
	if d.Signatures[0].ID != "fp-db" {
		t.Errorf("most frequent signature first: got %s", d.Signatures[0].ID)
	}
	if len(d.New) != 1 || d.New[0].ID != "fp-new" {
		t.Errorf("new signatures = %+v; want only fp-new", d.New)
	}
	if len(d.Open) != 2 {
		t.Fatalf("open threads = %+v; want B (failed) and C (unanswered)", d.Open)
	}
	if d.Open[0].Key != "C" || d.Open[0].Reason != "unanswered" || d.Open[0].Question != "is the queue stuck?" || d.Open[0].Link != "https://chat/C" {
		t.Errorf("open[0] = %+v", d.Open[0])
	}
	if d.Open[1].Key != "B" || d.Open[1].Reason != "failed" {
		t.Errorf("open[1] = %+v", d.Open[1])
	}
	text := d.Text()
	for _, s := range []string{"4 threads", "`fp-db` DB connection pool exhausted: 2 threads (previous window 1, rising)", "**First seen** (1)", "unanswered: \"is the queue stuck?\" — https://chat/C", "failed: \"db timeouts again\" — https://chat/B"} {
		if !strings.Contains(text, s) {
			t.Errorf("digest text lacks %q:\n%s", s, text)
		}
	}
	for _, s := range []string{"fp-other", "fp-old", "fp-digest-only"} {
		if strings.Contains(text, s) {
			t.Errorf("digest text mentions %q:\n%s", s, text)
		}
	}
}

type countingNarrator struct {
	calls int
	got   string
}

func (n *countingNarrator) Narrate(_ context.Context, digest string) (string, error) {
	n.calls++
	n.got = digest
	return "DB timeouts rose overnight.", nil
}

func run(t *testing.T, sk *Skill, env skills.Env, args string) skills.Result {
	t.Helper()
	res, err := sk.Run(context.Background(), skills.Call{Skill: Name, Args: json.RawMessage(args), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunNarratesOnlyWhenSomethingHappened(t *testing.T) {
	st, clk := seed(t)
	n := &countingNarrator{}
	sk, err := New(Config{Sessions: st, Narrator: n, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, sk, skills.Env{Platform: "slack", Tenant: "T1", Channel: "C1"}, `{"window":"24h"}`)
	if res.Status != skills.StatusOK || n.calls != 1 {
		t.Fatalf("status %s, narrator calls %d; want ok, 1", res.Status, n.calls)
	}
	if !strings.HasPrefix(res.Output, "DB timeouts rose overnight.\n\n**Digest for C1**") {
		t.Errorf("narrative not on top:\n%s", res.Output)
	}
	if !strings.Contains(n.got, "fp-db") || strings.Contains(n.got, "DB timeouts rose") {
		t.Errorf("narrator got %q; want the structured digest", n.got)
	}
	if res.Metadata["quiet"] != false || res.Metadata["narrated"] != true {
		t.Errorf("metadata = %v", res.Metadata)
	}

	// A quiet channel: no model call at all.
	res = run(t, sk, skills.Env{Platform: "slack", Tenant: "T1", Channel: "C-quiet"}, `{}`)
	if n.calls != 1 {
		t.Errorf("narrator called on a quiet day (%d calls)", n.calls)
	}
	if res.Metadata["quiet"] != true || !strings.Contains(res.Output, "quiet") {
		t.Errorf("quiet digest = %q, %v", res.Output, res.Metadata)
	}

	// A failing narrator leaves the structured digest.
	sk2, _ := New(Config{Sessions: st, Now: clk.Now, Narrator: NarratorFunc(func(context.Context, string) (string, error) {
		return "", errors.New("model down")
	})})
	res = run(t, sk2, skills.Env{Platform: "slack", Tenant: "T1", Channel: "C1"}, `{}`)
	if !strings.HasPrefix(res.Output, "**Digest for C1**") || res.Metadata["narrated"] != false {
		t.Errorf("fallback digest = %q", res.Output)
	}
}

func TestRunWindowAndDM(t *testing.T) {
	st, clk := seed(t)
	sk, _ := New(Config{Sessions: st, Now: clk.Now})
	env := skills.Env{Platform: "slack", Tenant: "T1", Channel: "C1"}
	// 48h window: D, E now inside; fp-old appears, fp-db counted 3 times.
	res := run(t, sk, env, `{"window":"2d"}`)
	if !strings.Contains(res.Output, "`fp-db`: 3 threads") || !strings.Contains(res.Output, "fp-old") {
		t.Errorf("2d digest:\n%s", res.Output)
	}
	for _, bad := range []string{`{"window":"8d"}`, `{"window":"soon"}`, `{"window":"-1h"}`} {
		if r := run(t, sk, env, bad); r.Status != skills.StatusError {
			t.Errorf("%s: status %s; want error", bad, r.Status)
		}
	}
	if r := run(t, sk, skills.Env{Platform: "slack", Tenant: "T1", User: "U1", DM: true}, `{}`); r.Status != skills.StatusError || !strings.Contains(r.Output, "DM") {
		t.Errorf("DM: %+v", r)
	}
}

func TestParseWindow(t *testing.T) {
	for in, want := range map[string]time.Duration{"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "12": 12 * time.Hour, "90m": 90 * time.Minute, "0.5d": 12 * time.Hour} {
		got, err := ParseWindow(in)
		if err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "7.5d", "x", "1y"} {
		if _, err := ParseWindow(in); err == nil {
			t.Errorf("ParseWindow(%q): no error", in)
		}
	}
}

func TestSpec(t *testing.T) {
	sk, err := New(Config{Sessions: nil})
	if err == nil || sk != nil {
		t.Fatal("New without Sessions succeeded")
	}
	st, _ := open(t)
	sk, err = New(Config{Sessions: st})
	if err != nil {
		t.Fatal(err)
	}
	if sk.Spec().Name != Name || sk.Spec().Body == "" {
		t.Errorf("spec = %+v", sk.Spec())
	}
	if _, err := skills.ValidateArgs(sk.Spec(), json.RawMessage(`{"window":"24h"}`)); err != nil {
		t.Errorf("valid args rejected: %v", err)
	}
}
