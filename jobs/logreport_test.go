package jobs

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// recordingAnalyzer stands in for the engine: it records the bytes it was
// given and reports every line containing "ERROR" as evidence, numbered
// within the file it read.
type recordingAnalyzer struct {
	mu    sync.Mutex
	calls []string
}

func (a *recordingAnalyzer) Analyze(_ context.Context, paths []string, _ logscan.Options) (*logscan.Report, error) {
	rep := &logscan.Report{Levels: map[string]int64{}}
	var seen []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		seen = append(seen, string(b))
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for n := 1; sc.Scan(); n++ {
			if strings.Contains(sc.Text(), "ERROR") {
				rep.Levels["error"]++
				rep.Evidence = append(rep.Evidence, logscan.Evidence{File: p, Line: n, Text: sc.Text(), Reason: "error"})
				if len(rep.Templates) == 0 {
					rep.Templates = append(rep.Templates, logscan.TemplateStat{ID: "t-err", Template: "ERROR <*>", Level: "error", FirstLine: n, File: p})
					rep.ErrorTemplates = []string{"t-err"}
				}
				rep.Templates[0].Count++
			}
		}
	}
	a.mu.Lock()
	a.calls = append(a.calls, strings.Join(seen, "|"))
	a.mu.Unlock()
	return rep, nil
}

func (a *recordingAnalyzer) last() (string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.calls) == 0 {
		return "", 0
	}
	return a.calls[len(a.calls)-1], len(a.calls)
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

func TestLogReportReadsOnlyNewLines(t *testing.T) {
	clk := newClock(t0)
	logs := t.TempDir()
	app := filepath.Join(logs, "app")
	os.MkdirAll(app, 0o700)
	api := filepath.Join(app, "api.log")
	an := &recordingAnalyzer{}
	p := &poster{}
	db := openDB(t, t.TempDir(), clk.Now)
	s, err := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Analyze: an.Analyze, Sleep: (&sleeps{}).Sleep, MaxAttempts: 1,
		ReportPaths: []string{filepath.Join(app, "*.log")}, Posters: map[string]Poster{"slack": p}, TempDir: t.TempDir(),
		Defs: []Def{{Name: "api-report", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": filepath.Join(app, "*.log")}, Target: "slack:C1", SkipEmpty: true}}})
	if err != nil || len(s.Problems()) > 0 {
		t.Fatal(err, s.Problems())
	}
	ctx := context.Background()
	run := func() Run {
		t.Helper()
		clk.Advance(time.Second)
		r, _ := s.RunNow(ctx, "api-report")
		return r
	}

	appendTo(t, api, "INFO start\nERROR db timeout 1\nINFO ok\nINFO part")
	r := run()
	if got, _ := an.last(); got != "INFO start\nERROR db timeout 1\nINFO ok\n" {
		t.Fatalf("first run analysed %q; want the three complete lines", got)
	}
	if r.Status != StatusDelivered {
		t.Fatalf("run = %+v", r)
	}
	post := p.all()[0]
	if len(post.Reply.Evidence) != 1 || post.Reply.Evidence[0].File != api || post.Reply.Evidence[0].Line != 2 {
		t.Errorf("evidence = %+v; want %s L2", post.Reply.Evidence, api)
	}
	if !strings.Contains(post.Reply.Text, "3 new lines") || !strings.Contains(post.Reply.Text, "1× `ERROR <*>`") || !strings.Contains(post.Reply.Text, "api.log L2") {
		t.Errorf("report text:\n%s", post.Reply.Text)
	}

	// The partial line completes; one more error. Line numbers continue.
	appendTo(t, api, "ial\nERROR db timeout 2\n")
	run()
	if got, _ := an.last(); got != "INFO partial\nERROR db timeout 2\n" {
		t.Fatalf("second run analysed %q; want only the new lines", got)
	}
	if ev := p.all()[1].Reply.Evidence; len(ev) != 1 || ev[0].Line != 5 || ev[0].Text != "ERROR db timeout 2" {
		t.Errorf("evidence = %+v; want L5 of the real file", ev)
	}

	// Nothing new: no analysis, nothing posted (skip_empty).
	_, calls := an.last()
	r = run()
	if _, c := an.last(); c != calls || r.Status != StatusSkipped || len(p.all()) != 2 {
		t.Errorf("idle run: status %s, analyses %d→%d, posts %d", r.Status, calls, c, len(p.all()))
	}

	// Delivery fails: the offset stays, the next run reports the lines again.
	appendTo(t, api, "ERROR db timeout 3\n")
	p.mu.Lock()
	p.failures, p.tries = 1, 0
	p.mu.Unlock()
	if r := run(); r.Status != StatusFailed {
		t.Fatalf("run with a failing post = %+v", r)
	}
	run()
	if got, _ := an.last(); got != "ERROR db timeout 3\n" {
		t.Errorf("after a failed delivery the lines were not reported again: %q", got)
	}
	if ev := p.all()[2].Reply.Evidence; len(ev) != 1 || ev[0].Line != 6 {
		t.Errorf("evidence = %+v; want L6", ev)
	}

	// Rotation: a new file under the same name starts over.
	os.Rename(api, api+".1")
	appendTo(t, api, "ERROR fresh start\n")
	run()
	if got, _ := an.last(); got != "ERROR fresh start\n" {
		t.Errorf("after rotation analysed %q", got)
	}
	last := p.all()[len(p.all())-1]
	if !strings.Contains(last.Reply.Text, "rotated") || last.Reply.Evidence[0].Line != 1 {
		t.Errorf("rotated report:\n%s\n%+v", last.Reply.Text, last.Reply.Evidence)
	}

	// Truncated in place (same inode, smaller): starts over too.
	os.WriteFile(api, []byte("ERROR x\n"), 0o600)
	run()
	if got, _ := an.last(); got != "ERROR x\n" {
		t.Errorf("after truncation analysed %q", got)
	}
}

func TestLogReportCapsAndRefusesLinksOutside(t *testing.T) {
	clk := newClock(t0)
	app := filepath.Join(t.TempDir(), "app")
	os.MkdirAll(app, 0o700)
	secret := filepath.Join(t.TempDir(), "secret.log")
	os.WriteFile(secret, []byte("ERROR password=hunter2\n"), 0o600)
	os.Symlink(secret, filepath.Join(app, "evil.log"))
	big := filepath.Join(app, "big.log")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString("INFO line number ")
		b.WriteString(strings.Repeat("x", 3))
		b.WriteString("\n") // 21 bytes a line
	}
	b.WriteString("ERROR at the end\n")
	os.WriteFile(big, []byte(b.String()), 0o600)

	an := &recordingAnalyzer{}
	p := &poster{}
	db := openDB(t, t.TempDir(), clk.Now)
	s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, Analyze: an.Analyze, ReportMaxBytes: 100,
		ReportPaths: []string{filepath.Join(app, "*.log")}, Posters: map[string]Poster{"slack": p},
		Defs: []Def{{Name: "r", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": filepath.Join(app, "*.log")}, Target: "slack:C1"}}})
	r, err := s.RunNow(context.Background(), "r")
	if err != nil || r.Status != StatusDelivered {
		t.Fatalf("run = %+v, %v", r, err)
	}
	got, _ := an.last()
	if strings.Contains(got, "hunter2") {
		t.Fatal("a symlink to a file outside the allowed paths was read")
	}
	if len(got) > 100 || !strings.HasSuffix(got, "ERROR at the end\n") || !strings.HasPrefix(got, "INFO") {
		t.Errorf("capped chunk = %q; want the newest whole lines within 100 bytes", got)
	}
	rep := p.all()[0].Reply
	if len(rep.Evidence) != 1 || rep.Evidence[0].Line != 101 {
		t.Errorf("evidence = %+v; want L101 (line numbers count the skipped part)", rep.Evidence)
	}
	if !strings.Contains(rep.Text, "resolves outside the allowed report paths") || !strings.Contains(rep.Text, "left out (cap)") {
		t.Errorf("report text:\n%s", rep.Text)
	}
}

// TestLogReportWithEngine runs the real log engine when it is there and
// checks that every cited line says what the file says at that number.
func TestLogReportWithEngine(t *testing.T) {
	probe := filepath.Join(t.TempDir(), "probe.log")
	os.WriteFile(probe, []byte("2025-01-01 00:00:00 ERROR probe\n"), 0o600)
	if _, err := logscan.Analyze(context.Background(), []string{probe}, logscan.Options{}); err != nil {
		t.Fatalf("log engine: %v", err)
	}
	clk := newClock(t0)
	app := t.TempDir()
	f := filepath.Join(app, "svc.log")
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString("2025-03-10 08:00:00 INFO request served in 12ms\n")
	}
	appendTo(t, f, b.String())
	p := &poster{}
	db := openDB(t, t.TempDir(), clk.Now)
	s, _ := New(Config{DB: db.SQL(), Clock: clk, Logger: quiet, ReportPaths: []string{filepath.Join(app, "*.log")}, Posters: map[string]Poster{"slack": p},
		Defs: []Def{{Name: "r", Schedule: "@hourly", Skill: KindLogReport, Args: map[string]any{"paths": f}, Target: "slack:C1"}}})
	if _, err := s.RunNow(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, f, "2025-03-10 08:01:00 INFO request served in 11ms\n2025-03-10 08:01:01 ERROR connection refused to db-1:5432\n2025-03-10 08:01:02 INFO retry\n")
	clk.Advance(time.Second)
	if _, err := s.RunNow(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	rep := p.all()[1].Reply
	lines := strings.Split(b.String()+"2025-03-10 08:01:00 INFO request served in 11ms\n2025-03-10 08:01:01 ERROR connection refused to db-1:5432\n", "\n")
	found := false
	for _, e := range rep.Evidence {
		if e.Line < 1 || e.Line > len(lines) || lines[e.Line-1] != e.Text {
			t.Errorf("evidence L%d %q does not match the file", e.Line, e.Text)
		}
		found = found || e.Line == 52
	}
	if !found {
		t.Errorf("the error at L52 is not cited: %+v\n%s", rep.Evidence, rep.Text)
	}
}
