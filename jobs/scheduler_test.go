package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/bot/local"
	"github.com/sleuth-bot/sleuth/bot/metrics"
	"github.com/sleuth-bot/sleuth/skills"
)

var quiet = slog.New(slog.NewTextHandler(logOut(), &slog.HandlerOptions{Level: slog.LevelDebug}))

// echo is a test skill: it posts "echo <n>", or panics, or blocks until
// release is closed.
type echo struct {
	calls   atomic.Int32
	panics  bool
	release chan struct{}
	started chan struct{}
}

func (e *echo) Spec() skills.Spec {
	s, err := skills.ParseSpec([]byte("---\nname: echo\ndescription: test skill\nparameters:\n  type: object\n  properties:\n    text: {type: string}\n---\nbody\n"))
	if err != nil {
		panic(err)
	}
	return s
}

func (e *echo) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	n := e.calls.Add(1)
	if e.panics {
		panic("boom")
	}
	if e.started != nil {
		e.started <- struct{}{}
	}
	if e.release != nil {
		select {
		case <-e.release:
		case <-ctx.Done():
			return skills.Result{}, ctx.Err()
		}
	}
	return skills.Result{Status: skills.StatusOK, Output: "echo " + string(rune('0'+n)) + " for " + c.Env.Channel, Fingerprints: []string{"fp1"}}, nil
}

func registry(t *testing.T, list ...skills.Skill) *skills.Registry {
	t.Helper()
	r, err := skills.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var t0 = time.Date(2025, 3, 10, 8, 59, 0, 0, time.UTC)

func echoDef(schedule string) Def {
	return Def{Name: "echo-job", Schedule: schedule, Timezone: "UTC", Skill: "echo", Target: "slack:C1"}
}

func TestDigestThroughLocalAdapterSeedsThread(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	ctx := context.Background()
	st := db.Sessions()
	seedThread(t, st, bot.Message{Platform: "local", Tenant: "local", Channel: "ops", ID: "q1", Thread: "q1"}, "fp-db")
	la, err := local.New(local.Config{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := startDigest(t, clk, db, bot.PlatformLocal, la, "local:ops")
	clk.Advance(30 * time.Second) // 08:59:30: not yet
	if len(la.Posts()) != 0 {
		t.Fatal("posted before 09:00")
	}
	clk.Advance(30 * time.Second)
	eventually(t, "the digest post", func() bool { return len(la.Posts()) == 1 })
	p := la.Posts()[0]
	if p.Conversation.Channel != "ops" || !strings.Contains(p.Text, "fp-db") {
		t.Errorf("post = %+v", p)
	}
	var h []Run
	eventually(t, "the run record", func() bool {
		h, _ = s.History(ctx, "digest", 5)
		return len(h) == 1 && h[0].Status == StatusDelivered
	})
	if h[0].MessageID != p.ID || !h[0].Scheduled.Equal(t0.Add(time.Minute)) || h[0].Attempts != 1 {
		t.Errorf("run = %+v; want delivered with id %s at 09:00", h[0], p.ID)
	}
	// The digest is a thread root: a follow-up in it finds the session.
	thread := bot.Message{Platform: "local", Tenant: "local", Channel: "ops", ID: p.ID, Thread: p.ID}.SessionKey()
	turns, err := st.Turns(ctx, thread, 0)
	if err != nil || len(turns) != 1 || turns[0].Role != "assistant" || turns[0].Content != p.Text || turns[0].MessageID != p.ID {
		t.Fatalf("seeded turns = %+v, %v", turns, err)
	}
	if len(turns[0].Fingerprints) != 1 || turns[0].Fingerprints[0] != "fp-db" {
		t.Errorf("seeded fingerprints = %v", turns[0].Fingerprints)
	}
	// Next day, the digest thread itself is not counted as activity.
	clk.Advance(24 * time.Hour)
	eventually(t, "the second digest", func() bool { return len(la.Posts()) == 2 })
	if !strings.Contains(la.Posts()[1].Text, "quiet") {
		t.Errorf("second digest should be quiet: %s", la.Posts()[1].Text)
	}
}

func TestFiredOnceAcrossTwoSchedulers(t *testing.T) {
	clk := newClock(t0)
	dir := t.TempDir()
	var posters [2]*poster
	var scheds [2]*Scheduler
	sk := &echo{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range scheds {
		db := openDB(t, dir, clk.Now) // two handles on one file: two replicas
		posters[i] = &poster{prefix: string(rune('A' + i))}
		s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, sk), Instance: string(rune('A' + i)),
			Posters: map[string]Poster{"slack": posters[i]}, Defs: []Def{echoDef("@every 1m")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	defer func() { cancel(); scheds[0].Wait(); scheds[1].Wait() }()
	delivered := func() int {
		h, _ := scheds[0].History(context.Background(), "echo-job", 50)
		n := 0
		for _, r := range h {
			if r.Status == StatusDelivered {
				n++
			}
		}
		return n
	}
	for i := range 5 {
		clk.Advance(time.Minute)
		// Wait for the run to finish: advancing while it runs would make
		// the next occurrence an overlap (skipped), as it should.
		eventually(t, "one run per minute", func() bool { return delivered() == i+1 })
	}
	eventually(t, "records", func() bool {
		h, _ := scheds[0].History(context.Background(), "echo-job", 50)
		return len(h) == 5 && h[0].Status == StatusDelivered
	})
	time.Sleep(50 * time.Millisecond) // a late second fire would show now
	total := len(posters[0].all()) + len(posters[1].all())
	if total != 5 || sk.calls.Load() != 5 {
		t.Fatalf("posts = %d, skill calls = %d; want 5 and 5 (fired once)", total, sk.calls.Load())
	}
}

func TestMissedRunCatchUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		downFor  time.Duration // from 08:59 day 1
		wantRuns int
	}{
		{"within grace", 25*time.Hour + 30*time.Minute, 1}, // day 2 10:29: 09:00 missed 1h29m ago
		{"outside grace", 27 * time.Hour, 0},               // day 2 11:59: 2h59m ago
		{"not yet due", 10 * time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock(t0)
			dir := t.TempDir()
			def := echoDef("0 9 * * *")
			start := func(sk *echo) (*Scheduler, context.CancelFunc) {
				db := openDB(t, dir, clk.Now)
				s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, sk), Posters: map[string]Poster{"slack": &poster{}}, Defs: []Def{def}})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				return s, func() { cancel(); s.Wait() }
			}
			// First life: knows the job, stops before 09:00.
			s1, stop := start(&echo{})
			stop()
			_ = s1
			clk.Advance(tc.downFor)
			sk := &echo{}
			s2, stop2 := start(sk)
			defer stop2()
			if tc.wantRuns > 0 {
				eventually(t, "catch-up run", func() bool {
					h, _ := s2.History(context.Background(), "echo-job", 5)
					return len(h) == 1 && h[0].Status == StatusDelivered
				})
			}
			time.Sleep(50 * time.Millisecond)
			if got := int(sk.calls.Load()); got != tc.wantRuns {
				t.Fatalf("runs at start-up = %d; want %d", got, tc.wantRuns)
			}
			if tc.wantRuns > 0 {
				h, _ := s2.History(context.Background(), "echo-job", 5)
				day2 := time.Date(2025, 3, 11, 9, 0, 0, 0, time.UTC)
				if !h[0].Scheduled.Equal(day2) {
					t.Errorf("caught-up occurrence = %v; want %v", h[0].Scheduled, day2)
				}
				// A third start does not run it again.
				stop2()
				sk3 := &echo{}
				_, stop3 := start(sk3)
				time.Sleep(50 * time.Millisecond)
				stop3()
				if sk3.calls.Load() != 0 {
					t.Error("catch-up ran twice")
				}
			}
		})
	}
}

func TestNewJobDoesNotCatchUp(t *testing.T) {
	clk := newClock(t0.Add(90 * time.Minute)) // 10:29, 09:00 is within grace
	db := openDB(t, t.TempDir(), clk.Now)
	sk := &echo{}
	s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, sk), Posters: map[string]Poster{"slack": &poster{}}, Defs: []Def{echoDef("0 9 * * *")}})
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	time.Sleep(50 * time.Millisecond)
	cancel()
	s.Wait()
	if sk.calls.Load() != 0 {
		t.Error("a job seen for the first time ran an occurrence from before it existed")
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, emptyID := range []bool{false, true} {
		clk := newClock(t0)
		db := openDB(t, t.TempDir(), clk.Now)
		p := &poster{failures: 2, emptyID: emptyID}
		sl := &sleeps{}
		sk := &echo{}
		s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, sk), Sleep: sl.Sleep, RetryBackoff: time.Second,
			Posters: map[string]Poster{"slack": p}, Defs: []Def{echoDef("@daily")}})
		before := counterValue(metrics.JobRuns.WithLabelValues("echo-job", StatusDelivered))
		r, err := s.RunNow(context.Background(), "echo-job")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != StatusDelivered || r.Attempts != 3 || r.MessageID != "msg-a" || r.Error != "" {
			t.Errorf("emptyID=%v: run = %+v; want delivered on attempt 3", emptyID, r)
		}
		if sk.calls.Load() != 1 {
			t.Errorf("skill ran %d times; the output is produced once and only the post retried", sk.calls.Load())
		}
		if got := sl.all(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
			t.Errorf("backoff = %v; want [1s 2s]", got)
		}
		h, _ := s.History(context.Background(), "echo-job", 1)
		if len(h) != 1 || h[0].Status != StatusDelivered || h[0].Attempts != 3 || h[0].MessageID != "msg-a" || !h[0].Manual {
			t.Errorf("recorded = %+v", h)
		}
		if d := counterValue(metrics.JobRuns.WithLabelValues("echo-job", StatusDelivered)) - before; d != 1 {
			t.Errorf("delivered metric rose by %v; want 1", d)
		}
	}
}

func TestNoMessageIDIsNotDelivered(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	p := &poster{failures: 100, emptyID: true}
	s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, &echo{}), Sleep: (&sleeps{}).Sleep,
		Posters: map[string]Poster{"slack": p}, Defs: []Def{echoDef("@daily")}})
	r, err := s.RunNow(context.Background(), "echo-job")
	if err == nil || r.Status != StatusFailed || r.Attempts != DefaultMaxAttempts || !strings.Contains(r.Error, ErrNotDelivered.Error()) {
		t.Fatalf("run = %+v, %v; want failed after %d attempts, no message id", r, err, DefaultMaxAttempts)
	}
}

func TestOwnerNoticeAfterConsecutiveFailures(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	failing := &poster{failures: 1000}
	owner := &poster{}
	s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, &echo{}), Sleep: (&sleeps{}).Sleep,
		MaxAttempts: 2, OwnerTarget: "feishu:oc_owner",
		Posters: map[string]Poster{"slack": failing, "feishu": owner}, Defs: []Def{echoDef("@daily")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= 7; i++ {
		clk.Advance(time.Second)
		r, err := s.RunNow(ctx, "echo-job")
		if err == nil || r.Status != StatusFailed || r.Attempts != 2 || !strings.Contains(r.Error, "service unavailable") {
			t.Fatalf("run %d = %+v, %v", i, r, err)
		}
		want := i / 3 // notices at 3 and 6
		if got := len(owner.all()); got != want {
			t.Fatalf("after %d failures: %d notices; want %d", i, got, want)
		}
	}
	n := owner.all()[0]
	if n.To.Channel != "oc_owner" || !strings.Contains(n.Reply.Text, "echo-job failed 3 times in a row") || !strings.Contains(n.Reply.Text, "service unavailable") {
		t.Errorf("notice = %+v", n)
	}
	// A success resets the streak.
	failing.mu.Lock()
	failing.failures = 0
	failing.mu.Unlock()
	clk.Advance(time.Second)
	if r, err := s.RunNow(ctx, "echo-job"); err != nil || r.Status != StatusDelivered {
		t.Fatalf("recovery run = %+v, %v", r, err)
	}
	if n, _ := s.st.consecutiveFailures(ctx, "echo-job"); n != 0 {
		t.Errorf("streak after success = %d", n)
	}
}

func TestPanicRecoveredAndOverlapRefused(t *testing.T) {
	clk := newClock(t0)
	db := openDB(t, t.TempDir(), clk.Now)
	s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, &echo{panics: true}),
		Posters: map[string]Poster{"slack": &poster{}}, Defs: []Def{echoDef("@daily")}})
	r, err := s.RunNow(context.Background(), "echo-job")
	if err == nil || r.Status != StatusFailed || !strings.Contains(r.Error, "panic: boom") || r.Attempts != 1 {
		t.Fatalf("panicking run = %+v, %v", r, err)
	}

	blocker := &echo{release: make(chan struct{}), started: make(chan struct{}, 1)}
	s2, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Skills: registry(t, blocker),
		Posters: map[string]Poster{"slack": &poster{}}, Defs: []Def{echoDef("@daily")}})
	done := make(chan Run)
	go func() { r, _ := s2.RunNow(context.Background(), "echo-job"); done <- r }()
	<-blocker.started
	clk.Advance(time.Second)
	if _, err := s2.RunNow(context.Background(), "echo-job"); !errors.Is(err, ErrOverlap) {
		t.Errorf("second run while the first runs: %v; want ErrOverlap", err)
	}
	close(blocker.release)
	if r := <-done; r.Status != StatusDelivered {
		t.Errorf("first run = %+v", r)
	}
	if _, err := s2.RunNow(context.Background(), "nope"); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: %v", err)
	}
}

func TestNewRejectsWhatCannotRunHere(t *testing.T) {
	db := openDB(t, t.TempDir(), nil)
	defs := []Def{
		echoDef("@daily"),
		{Name: "to-feishu", Schedule: "@daily", Skill: "echo", Target: "feishu:oc_1"},
		{Name: "no-skill", Schedule: "@daily", Skill: "missing", Target: "slack:C1"},
		{Name: "bad-args", Schedule: "@daily", Skill: "echo", Args: map[string]any{"text": []any{1}}, Target: "slack:C1"},
		{Name: "report-ok", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": "/var/log/app/*.log"}, Target: "slack:C1"},
		{Name: "report-one", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": []any{"/var/log/app/api.log"}}, Target: "slack:C1"},
		{Name: "report-etc", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": "/etc/shadow"}, Target: "slack:C1"},
		{Name: "report-dotdot", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": "/var/log/app/../../../etc/passwd"}, Target: "slack:C1"},
		{Name: "report-deeper", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": "/var/log/app/x/y.log"}, Target: "slack:C1"},
	}
	s, err := New(Config{DB: db.SQL(), Logger: quiet, Skills: registry(t, &echo{}), ReportPaths: []string{"/var/log/app/*.log"},
		Posters: map[string]Poster{"slack": &poster{}}, Defs: defs})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"to-feishu":     "no feishu adapter",
		"no-skill":      `unknown skill "missing"`,
		"bad-args":      "args",
		"report-etc":    "outside the allowed report paths",
		"report-dotdot": "absolute and clean",
		"report-deeper": "outside the allowed report paths",
	}
	got := map[string]string{}
	for _, p := range s.Problems() {
		if !errors.Is(p, ErrInvalidDef) {
			t.Errorf("problem %v is not ErrInvalidDef", p)
		}
		for name := range want {
			if strings.Contains(p.Error(), `job "`+name+`"`) {
				got[name] = p.Error()
			}
		}
	}
	for name, reason := range want {
		if !strings.Contains(got[name], reason) {
			t.Errorf("job %s: problem %q; want it to say %q", name, got[name], reason)
		}
	}
	if len(s.Problems()) != len(want) {
		t.Errorf("problems = %v", s.Problems())
	}
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range list {
		names = append(names, in.Name)
	}
	if strings.Join(names, ",") != "echo-job,report-ok,report-one" {
		t.Errorf("accepted = %v", names)
	}
	// Without SLEUTH_REPORT_PATHS every log report is refused.
	s, _ = New(Config{DB: db.SQL(), Logger: quiet, Posters: map[string]Poster{"slack": &poster{}}, Defs: defs[4:5]})
	if len(s.Problems()) != 1 || !strings.Contains(s.Problems()[0].Error(), "SLEUTH_REPORT_PATHS") {
		t.Errorf("problems = %v", s.Problems())
	}
	// A bad config fails New.
	if _, err := New(Config{}); err == nil {
		t.Error("New without DB succeeded")
	}
	if _, err := New(Config{DB: db.SQL(), OwnerTarget: "slack:C9"}); err == nil {
		t.Error("owner channel without its adapter accepted")
	}
	if _, err := New(Config{DB: db.SQL(), ReportPaths: []string{"relative/*.log"}}); err == nil {
		t.Error("relative report path accepted")
	}
}

func counterValue(c interface{ Write(*dto.Metric) error }) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

func logOut() io.Writer {
	if os.Getenv("JOBS_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
