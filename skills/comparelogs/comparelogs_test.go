package comparelogs

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/skilltest"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// fakeEngine returns a canned diff of testdata/bad.log against good.log.
type fakeEngine struct{ gotBaseline, gotTarget string }

func (f *fakeEngine) Analyze(_ context.Context, paths []string, opt logscan.Options) (*logscan.Report, error) {
	f.gotTarget, f.gotBaseline = paths[0], opt.Baseline
	if filepath.Base(opt.Baseline) == "bad.log" && filepath.Base(paths[0]) == "good.log" {
		return &logscan.Report{Diff: &logscan.Diff{Baseline: opt.Baseline}}, nil
	}
	return &logscan.Report{
		ErrorTemplates: []string{"t-pool"},
		Diff: &logscan.Diff{
			Baseline: opt.Baseline,
			New: []logscan.Change{
				{ID: "t-export", Template: "Starting nightly settlement export", After: 1, FirstLine: 3},
				{ID: "t-pool", Template: "HikariPool-1 - Connection is not available, request timed out after <*>ms.", After: 2, FirstLine: 5},
			},
			Vanished:   []logscan.Change{{ID: "t-cache", Template: "Cache warmup finished", Before: 1}},
			Falling:    []logscan.Change{{ID: "t-paid", Template: "Processed payment <*> in <*>ms", Before: 3, After: 2, FirstLine: 4}},
			Divergence: &logscan.LineRef{Line: 3, Text: "engine text"},
		},
	}, nil
}

func TestCompareLogs(t *testing.T) {
	eng := &fakeEngine{}
	s, err := New(Config{Analyzer: eng, Scanner: ScanFunc(skilltest.Scanner(t))})
	if err != nil {
		t.Fatal(err)
	}
	env := skilltest.Env(t, "good.log", "bad.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"baseline":"good.log","target":"bad.log"}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	if filepath.Base(eng.gotBaseline) != "good.log" || filepath.Base(eng.gotTarget) != "bad.log" {
		t.Errorf("engine got target %s baseline %s", eng.gotTarget, eng.gotBaseline)
	}
	want := []string{
		"bad.log compared with good.log (the baseline), by template",
		"new in bad.log (2):\n  [t-pool] ×2 first L5: HikariPool-1",
		"  [t-export] ×1 first L3: Starting nightly settlement export",
		"vanished (only in good.log) (1):\n  [t-cache] ×1 before: Cache warmup finished",
		"falling (1):\n  [t-paid] 3 → 2 first L4",
		"divergence: L3: 2024-05-01 02:10:00.000 INFO  Starting nightly settlement export",
	}
	for _, w := range want {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, res.Output)
		}
	}
	if strings.Contains(res.Output, "rising") {
		t.Errorf("empty section shown:\n%s", res.Output)
	}
	got := map[int]string{}
	for _, l := range res.Lines {
		if l.File != "bad.log" {
			t.Errorf("line ref in %s", l.File)
		}
		got[l.Line] = l.Text
	}
	if got[5] != "2024-05-01 02:10:31.000 ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms." {
		t.Errorf("L5 text %q (must be the real line)", got[5])
	}
	if len(res.Fingerprints) != 1 || res.Fingerprints[0] != "t-pool" {
		t.Errorf("fingerprints %v", res.Fingerprints)
	}
}

func TestCompareLogsMistakes(t *testing.T) {
	s, err := New(Config{Analyzer: &fakeEngine{}, Scanner: ScanFunc(skilltest.PlainScan)})
	if err != nil {
		t.Fatal(err)
	}
	two := skilltest.Env(t, "good.log", "bad.log")
	one := skilltest.Env(t, "good.log")
	tests := []struct {
		env  skills.Env
		args string
		want string
	}{
		{one, `{"baseline":"good.log","target":"bad.log"}`, "needs two attached files"},
		{two, `{"target":"bad.log"}`, `name both files`},
		{two, `{"baseline":"x.log","target":"bad.log"}`, `no attached file is called "x.log"`},
		{two, `{"baseline":"bad.log","target":"BAD.LOG"}`, "are the same file"},
	}
	for _, tc := range tests {
		res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(tc.args), Env: tc.env})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != skills.StatusError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: got %s %q, want %q", tc.args, res.Status, res.Output, tc.want)
		}
	}
	// No difference at all.
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"baseline":"bad.log","target":"good.log"}`), Env: two})
	if err != nil || !strings.Contains(res.Output, "No difference") {
		t.Errorf("%v %q", err, res.Output)
	}
}

// TestCompareLogsWithEngine runs the real engine when it is there.
func TestCompareLogsWithEngine(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	env := skilltest.Env(t, "good.log", "bad.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"baseline":"good.log","target":"bad.log"}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "new in bad.log") || !strings.Contains(res.Output, "Connection is not available") {
		t.Errorf("engine comparison misses the new pool error:\n%s", res.Output)
	}
	t.Log(res.Output)
}
