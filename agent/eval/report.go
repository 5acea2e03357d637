package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Report is the outcome of a task set under one brain.
type Report struct {
	Brain   string   `json:"brain"`
	Results []Result `json:"results"`
	Totals  Totals   `json:"totals"`
}

// Totals summarise a report.
type Totals struct {
	Tasks            int     `json:"tasks"`
	Passed           int     `json:"passed"`
	Errors           int     `json:"errors"` // tasks that could not run
	SuccessRate      float64 `json:"success_rate"`
	AvgSteps         float64 `json:"avg_steps"`
	ModelCalls       int     `json:"model_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TokensPerTask    float64 `json:"tokens_per_task"` // prompt + completion
	WallMS           int64   `json:"wall_ms"`
}

func totals(rs []Result) Totals {
	var t Totals
	steps := 0
	for _, r := range rs {
		t.Tasks++
		if r.Pass {
			t.Passed++
		}
		if r.Error != "" {
			t.Errors++
		}
		steps += r.Steps
		t.ModelCalls += r.ModelCalls
		t.PromptTokens += r.PromptTokens
		t.CompletionTokens += r.CompletionTokens
		t.WallMS += r.WallMS
	}
	if t.Tasks > 0 {
		t.SuccessRate = float64(t.Passed) / float64(t.Tasks)
		t.AvgSteps = float64(steps) / float64(t.Tasks)
		t.TokensPerTask = float64(t.PromptTokens+t.CompletionTokens) / float64(t.Tasks)
	}
	return t
}

// Comparison is a run with the configured model beside the offline
// baseline. Offline is nil when no comparison was asked for.
type Comparison struct {
	Model   Report  `json:"model"`
	Offline *Report `json:"offline,omitempty"`
}

// WriteJSON writes c as indented JSON.
func (c Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteText writes a table per task and the totals. With an offline
// report the two are shown side by side.
func (c Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if c.Offline == nil {
		fmt.Fprintf(tw, "brain: %s\n\n", c.Model.Brain)
		fmt.Fprintln(tw, "TASK\tKIND\tRESULT\tSTEPS\tCALLS\tPROMPT\tCOMPL\tWALL\tREASON")
		for _, r := range c.Model.Results {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", r.Task, r.Kind, verdict(r), r.Steps, r.ModelCalls,
				r.PromptTokens, r.CompletionTokens, wall(r.WallMS), truncate(r.Reason, 160))
		}
		fmt.Fprintln(tw)
		writeTotals(tw, c.Model)
		return tw.Flush()
	}
	off := map[string]Result{}
	for _, r := range c.Offline.Results {
		off[r.Task] = r
	}
	fmt.Fprintf(tw, "model: %s    baseline: %s\n\n", c.Model.Brain, c.Offline.Brain)
	fmt.Fprintln(tw, "TASK\tKIND\tMODEL\tSTEPS\tCALLS\tTOKENS\tWALL\tOFFLINE\tSTEPS\tWALL\tMODEL REASON\tOFFLINE REASON")
	for _, r := range c.Model.Results {
		o := off[r.Task]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Task, r.Kind,
			verdict(r), r.Steps, r.ModelCalls, r.PromptTokens+r.CompletionTokens, wall(r.WallMS),
			verdict(o), o.Steps, wall(o.WallMS), truncate(r.Reason, 80), truncate(o.Reason, 80))
	}
	fmt.Fprintln(tw)
	writeTotals(tw, c.Model)
	writeTotals(tw, *c.Offline)
	return tw.Flush()
}

func writeTotals(w io.Writer, r Report) {
	t := r.Totals
	fmt.Fprintf(w, "%s: %d/%d passed (%.0f%%), avg steps %.1f, model calls %d, tokens/task %.0f (prompt %d, completion %d), wall %s",
		r.Brain, t.Passed, t.Tasks, 100*t.SuccessRate, t.AvgSteps, t.ModelCalls, t.TokensPerTask,
		t.PromptTokens, t.CompletionTokens, wall(t.WallMS))
	if t.Errors > 0 {
		fmt.Fprintf(w, ", %d could not run", t.Errors)
	}
	fmt.Fprintln(w)
}

func verdict(r Result) string {
	switch {
	case r.Task == "":
		return "-"
	case r.Error != "":
		return "ERROR"
	case r.Pass:
		return "pass"
	default:
		return "FAIL"
	}
}

func wall(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}
