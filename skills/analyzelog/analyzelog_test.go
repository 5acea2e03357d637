package analyzelog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/skilltest"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// fakeEngine returns a canned report and counts its calls.
type fakeEngine struct {
	calls atomic.Int32
	delay time.Duration
}

func (f *fakeEngine) Analyze(ctx context.Context, paths []string, opt logscan.Options) (*logscan.Report, error) {
	f.calls.Add(1)
	time.Sleep(f.delay)
	fi, err := os.Stat(paths[0])
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("%s: %w", paths[0], logscan.ErrEmpty)
	}
	if opt.Top != analysisTop {
		return nil, fmt.Errorf("top %d, want %d", opt.Top, analysisTop)
	}
	ev := []logscan.Evidence{
		{Line: 12, Text: "2024-05-01 14:01:24.012 ERROR [worker-3] OrderService: request 7f3a timed out after 30000ms", Reason: "first error", Score: 9, TemplateID: "t-timeout"},
		{Line: 23, Text: "2024-05-01 14:02:20.020 WARN  [pool] HikariPool-1 - Connection is not available", Reason: "rare template", Score: 5, TemplateID: "t-pool"},
		{Line: 13, Text: "java.net.SocketTimeoutException: Read timed out", Reason: "exception", Score: 4},
	}
	return &logscan.Report{
		Files: paths, Lines: 44, Bytes: fi.Size(),
		TimeRange:  &logscan.TimeRange{Start: "2024-05-01 14:00:07.001", End: "2024-05-01 14:04:40.040", StartLine: 1, EndLine: 43},
		Levels:     map[string]int64{"info": 38, "error": 2, "warn": 1, "": 3},
		Templates:  []logscan.TemplateStat{{ID: "t-info", Template: "OrderService: processed order <*> in <*>ms", Count: 38, Level: "info", FirstLine: 1}, {ID: "t-pool", Template: "HikariPool-1 - Connection is not available", Count: 1, Level: "warn", FirstLine: 23}, {ID: "t-timeout", Template: "OrderService: request <*> timed out after <*>ms", Count: 2, Level: "error", FirstLine: 12}},
		Evidence:   ev,
		FirstError: &logscan.LineRef{Line: 12, Text: ev[0].Text},
		Bursts:     []logscan.Burst{{Start: "14:01:24", End: "14:03:30", StartLine: 12, EndLine: 33, Errors: 2, PerMinute: 0.9}},
		DurationMS: 3, ErrorTemplates: []string{"t-timeout"},
	}, nil
}

func newSkill(t testing.TB, eng Analyzer) *Skill {
	t.Helper()
	s, err := New(Config{Analyzer: eng})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t testing.TB, s *Skill, env skills.Env, args string) skills.Result {
	t.Helper()
	res, err := s.Run(context.Background(), skills.Call{Skill: "analyze-log", Args: json.RawMessage(args), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAnalyzeRender(t *testing.T) {
	eng := &fakeEngine{}
	s := newSkill(t, eng)
	env := skilltest.Env(t, "app.log")
	res := run(t, s, env, `{"top":2}`)
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	for _, w := range []string{
		"app.log: 44 lines", "2024-05-01 14:00:07.001 → 2024-05-01 14:04:40.040 (L1–L43)",
		"levels: error 2, warn 1, info 38, no level 3",
		"first error: L12: 2024-05-01 14:01:24.012 ERROR",
		"burst: 14:01:24 → 14:03:30 (L12–L33), 2 errors",
		"[t-timeout] error ×2 L12: OrderService: request <*> timed out",
		"[t-pool] warn ×1 L23",
		"L12 [first error]", "L23 [rare template]", "(1 more ranked lines; ask with a larger top)",
	} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, res.Output)
		}
	}
	if strings.Contains(res.Output, "t-info") {
		t.Errorf("info templates listed among errors:\n%s", res.Output)
	}
	if strings.Index(res.Output, "t-timeout") > strings.Index(res.Output, "t-pool") {
		t.Errorf("errors must come before warnings")
	}
	if len(res.Lines) != 2 || res.Lines[0].Line != 12 || res.Lines[0].File != "app.log" || res.Lines[0].Reason != "first error" {
		t.Errorf("lines %+v", res.Lines)
	}
	if len(res.Fingerprints) != 1 || res.Fingerprints[0] != "t-timeout" {
		t.Errorf("fingerprints %v", res.Fingerprints)
	}
}

func TestAnalyzeCache(t *testing.T) {
	eng := &fakeEngine{delay: 20 * time.Millisecond}
	s := newSkill(t, eng)
	env := skilltest.Env(t, "app.log")
	first := run(t, s, env, `{}`)
	if first.Metadata["cached"] != false || eng.calls.Load() != 1 {
		t.Fatalf("first call: cached=%v calls=%d", first.Metadata["cached"], eng.calls.Load())
	}
	start := time.Now()
	second := run(t, s, env, `{"file":"APP.LOG"}`)
	if took := time.Since(start); took > 5*time.Millisecond {
		t.Errorf("cached analysis took %v, want < 5ms", took)
	}
	if second.Metadata["cached"] != true || eng.calls.Load() != 1 {
		t.Errorf("second call: cached=%v calls=%d", second.Metadata["cached"], eng.calls.Load())
	}
	if second.Output != first.Output {
		t.Errorf("cached output differs")
	}

	// A restart: a new skill finds the report in the session workspace.
	s2 := newSkill(t, eng)
	third := run(t, s2, env, `{}`)
	if third.Metadata["cached"] != true || eng.calls.Load() != 1 {
		t.Errorf("after restart: cached=%v calls=%d", third.Metadata["cached"], eng.calls.Load())
	}
	if third.Output != first.Output {
		t.Errorf("report from disk renders differently:\n%s\n---\n%s", third.Output, first.Output)
	}

	// Another file with other content is analysed.
	other := filepath.Join(t.TempDir(), "other.log")
	if err := os.WriteFile(other, []byte("2024-05-01 14:00:00 ERROR boom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.Files = append(env.Files, skills.File{Name: "other.log", Path: other, Size: 31})
	run(t, s, env, `{"file":"other.log"}`)
	if eng.calls.Load() != 2 {
		t.Errorf("other content not analysed: calls=%d", eng.calls.Load())
	}
	// The same content under another name is not analysed again.
	copyPath := filepath.Join(t.TempDir(), "copy.log")
	b, _ := os.ReadFile(env.Files[0].Path)
	if err := os.WriteFile(copyPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	env.Files = append(env.Files, skills.File{Name: "copy.log", Path: copyPath, Size: int64(len(b))})
	if r := run(t, s, env, `{"file":"copy.log"}`); r.Metadata["cached"] != true || eng.calls.Load() != 2 {
		t.Errorf("same content, new name: cached=%v calls=%d", r.Metadata["cached"], eng.calls.Load())
	}
}

func TestAnalyzeConcurrentCallsRunOnce(t *testing.T) {
	eng := &fakeEngine{delay: 50 * time.Millisecond}
	s := newSkill(t, eng)
	env := skilltest.Env(t, "app.log")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := s.Run(context.Background(), skills.Call{Env: env}); err != nil || r.Status != skills.StatusOK {
				t.Errorf("%v %v", err, r.Status)
			}
		}()
	}
	wg.Wait()
	if n := eng.calls.Load(); n != 1 {
		t.Errorf("engine ran %d times, want 1", n)
	}
}

func TestAnalyzeMistakes(t *testing.T) {
	s := newSkill(t, &fakeEngine{})
	env := skilltest.Env(t, "app.log", "empty.log")
	tests := []struct{ args, want string }{
		{`{}`, "several files are attached"},
		{`{"file":"x.log"}`, `no attached file is called "x.log"; attached files: "app.log", "empty.log"`},
		{`{"file":"empty.log"}`, "cannot analyse empty.log: the file is empty"},
	}
	for _, tc := range tests {
		res := run(t, s, env, tc.args)
		if res.Status != skills.StatusError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: got %s %q, want error with %q", tc.args, res.Status, res.Output, tc.want)
		}
	}
	if _, err := New(Config{CacheEntries: -1}); err == nil {
		t.Error("negative cache size accepted")
	}
}

func TestAnalyzeLRUBound(t *testing.T) {
	eng := &fakeEngine{}
	s, err := New(Config{Analyzer: eng, CacheEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := skills.Env{} // no workspace: memory cache only
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("%d.log", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("line %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		env.Files = append(env.Files, skills.File{Name: filepath.Base(p), Path: p})
	}
	for _, n := range []string{"0.log", "1.log", "0.log"} {
		run(t, s, env, fmt.Sprintf(`{"file":%q}`, n))
	}
	if got := eng.calls.Load(); got != 3 {
		t.Errorf("calls %d, want 3 (0.log evicted by 1.log)", got)
	}
	if s.lru.Len() != 1 {
		t.Errorf("lru holds %d", s.lru.Len())
	}
}

// TestAnalyzeWithEngine runs the real engine when it is there.
func TestAnalyzeWithEngine(t *testing.T) {
	s := newSkill(t, nil)
	env := skilltest.Env(t, "app.log")
	res, err := s.Run(context.Background(), skills.Call{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	if !strings.Contains(res.Output, "first error: L12:") {
		t.Errorf("first error not L12:\n%s", res.Output)
	}
	if len(res.Fingerprints) == 0 {
		t.Errorf("no fingerprints")
	}
	found := false
	for _, l := range res.Lines {
		if l.Line == 12 || l.Line == 33 {
			found = true
		}
	}
	if !found {
		t.Errorf("evidence misses the error lines: %+v", res.Lines)
	}
}

func BenchmarkAnalyzeCached(b *testing.B) {
	s := newSkill(b, &fakeEngine{})
	env := skilltest.Env(b, "app.log")
	run(b, s, env, `{}`)
	b.ResetTimer()
	for b.Loop() {
		run(b, s, env, `{}`)
	}
}
