package eval

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// naiveRE is what the usual first attempt greps for.
var naiveRE = regexp.MustCompile(`(?i)error|fatal|fail|panic|exception`)

// TestEngineEvidenceVsGrepBaseline measures, on the first turn of every
// shipped task that pins cause lines in one attached log, how often a cause
// line is in the engine's top 5 evidence, against the naive baseline: the
// first 5 lines matching error|fatal|fail|panic|exception. The engine must
// do at least twice as well as the baseline, and find a cause in most tasks.
func TestEngineEvidenceVsGrepBaseline(t *testing.T) {
	tasks, err := Load(Shipped())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var n, engineHits, naiveHits int
	for i := range tasks {
		tk := &tasks[i]
		turn := tk.Turns[0]
		cites := append(append([]Cite(nil), turn.Expect.Cite...), turn.Expect.CiteAny...)
		if len(turn.Attach) != 1 || len(cites) == 0 {
			continue
		}
		name := turn.Attach[0]
		b, err := fs.ReadFile(tk.fsys, tk.dir+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		// Cause lines: pinned by number, or every line holding a cited text.
		want := map[int]bool{}
		lines := strings.Split(string(b), "\n")
		for _, c := range cites {
			if c.File != name {
				continue
			}
			for _, l := range c.lineSet() {
				want[l] = true
			}
			if len(c.lineSet()) == 0 && c.Text != "" {
				for i, l := range lines {
					if strings.Contains(l, c.Text) {
						want[i+1] = true
					}
				}
			}
		}
		if len(want) == 0 {
			continue
		}
		path := filepath.Join(dir, tk.Name+"-"+name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := logscan.Analyze(context.Background(), []string{path}, logscan.Options{Top: 5})
		if err != nil {
			t.Fatalf("%s: %v", tk.Name, err)
		}
		n++
		engine := false
		for _, e := range rep.Evidence {
			engine = engine || want[e.Line]
		}
		naive, seen := false, 0
		_ = logscan.Scan(context.Background(), path, logscan.Options{}, func(line int, text string) error {
			if naiveRE.MatchString(text) {
				naive = naive || want[line]
				if seen++; seen == 5 {
					return logscan.ErrStop
				}
			}
			return nil
		})
		if engine {
			engineHits++
		}
		if naive {
			naiveHits++
		}
		t.Logf("%-24s engine top5: %-5v  first 5 grep matches: %v", tk.Name, engine, naive)
	}
	t.Logf("cause in top 5: engine %d/%d, naive grep %d/%d", engineHits, n, naiveHits, n)
	if n < 10 {
		t.Fatalf("only %d tasks pin cause lines in one log", n)
	}
	// The product target is twice the naive rate measured on real CI logs
	// (29%), i.e. 58%; on this set the naive rate is higher, so the engine
	// must also beat it here by half again.
	if engineHits*100 < 58*n || engineHits*2 < 3*naiveHits {
		t.Errorf("engine finds the cause in %d/%d, naive grep in %d/%d: want at least 58%% and 1.5x grep", engineHits, n, naiveHits, n)
	}
}
