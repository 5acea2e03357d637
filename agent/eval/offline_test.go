package eval

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestOfflineShippedSet runs the shipped set with the offline brain: the
// run completes, every result has a reason, and the success rate stays at
// or above the floor measured when the set was written.
func TestOfflineShippedSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole task set")
	}
	tasks := loadShipped(t)
	rep, err := newRunner(t, nil).Run(context.Background(), tasks, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(tasks) {
		t.Fatalf("%d results for %d tasks", len(rep.Results), len(tasks))
	}
	for _, r := range rep.Results {
		if r.Reason == "" {
			t.Errorf("%s: no reason", r.Task)
		}
		if r.Error != "" {
			t.Errorf("%s could not run: %s", r.Task, r.Error)
		}
		if r.Brain != "offline" {
			t.Errorf("%s: brain %q, want offline", r.Task, r.Brain)
		}
		if r.ModelCalls != 0 || r.PromptTokens != 0 {
			t.Errorf("%s: offline run reports %d model calls, %d prompt tokens", r.Task, r.ModelCalls, r.PromptTokens)
		}
	}
	var b strings.Builder
	Comparison{Model: rep}.WriteText(&b)
	t.Logf("\n%s", b.String())
	// Measured: 24/24 (100%), 4.4 steps per task. The floor leaves a
	// margin of two tasks.
	const floor = 22
	if rep.Totals.Passed < floor {
		t.Errorf("offline passed %d/%d, floor %d", rep.Totals.Passed, rep.Totals.Tasks, floor)
	}
	if rep.Totals.AvgSteps > 6 {
		t.Errorf("offline avg steps %.1f, want ≤ 6 (the triage plan is 3 calls and an answer)", rep.Totals.AvgSteps)
	}
	if os.Getenv("EVAL_DUMP") != "" {
		for _, r := range rep.Results {
			for _, tu := range r.Turns {
				t.Logf("==== %s: %s\n%s", r.Task, tu.Text, tu.Reply)
			}
		}
	}
}
