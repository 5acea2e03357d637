package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/agent/eval"
	"github.com/sleuth-bot/sleuth/agent/llmtest"
)

func evalLookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestEvalBrokenTaskSetExits3(t *testing.T) {
	var out, errb bytes.Buffer
	dir := filepath.Join("..", "..", "agent", "eval", "testdata", "broken")
	code := runEval(context.Background(), []string{"--tasks", dir}, evalLookup(nil), &out, &errb)
	if code != 3 || !strings.Contains(errb.String(), "broken task set") {
		t.Errorf("exit %d, stderr %q; want 3 and the broken tasks", code, errb.String())
	}
	code = runEval(context.Background(), []string{"--run", "no-such-task"}, evalLookup(nil), &out, &errb)
	if code != 3 {
		t.Errorf("--run with no match: exit %d, want 3", code)
	}
	if code := runEval(context.Background(), []string{"--run", "("}, evalLookup(nil), &out, &errb); code != 2 {
		t.Errorf("bad --run: exit %d, want 2", code)
	}
}

// TestEvalCompareOfflineJSON runs one shipped task through buildCore with a
// scripted model and the offline brain side by side.
func TestEvalCompareOfflineJSON(t *testing.T) {
	srv := llmtest.New(t)
	for i := 0; i < 20; i++ {
		srv.Push(llmtest.Reply{Text: "I cannot find anything about S3 in cart-api-0625.log; the log does not show it."})
	}
	vars := map[string]string{"LLM_BASE_URL": srv.URL, "LLM_MODEL": "scripted", "LLM_API_KEY": "k", "SLEUTH_DATA_DIR": t.TempDir()}
	var out, errb bytes.Buffer
	code := runEval(context.Background(), []string{"--json", "--compare-offline", "--run", "^unanswerable$"}, evalLookup(vars), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var c eval.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if c.Offline == nil || len(c.Model.Results) != 1 || len(c.Offline.Results) != 1 {
		t.Fatalf("report = %+v", c)
	}
	m, o := c.Model.Results[0], c.Offline.Results[0]
	if m.Brain != "openai:scripted" || o.Brain != "offline" {
		t.Errorf("brains %q / %q", m.Brain, o.Brain)
	}
	if !m.Pass {
		t.Errorf("the honest scripted answer failed: %s", m.Reason)
	}
	if m.ModelCalls == 0 || m.PromptTokens == 0 || o.ModelCalls != 0 {
		t.Errorf("model calls %d (prompt %d), offline calls %d", m.ModelCalls, m.PromptTokens, o.ModelCalls)
	}
	if o.Reason == "" || c.Model.Totals.Tasks != 1 {
		t.Errorf("offline reason %q, totals %+v", o.Reason, c.Model.Totals)
	}

	// The text report shows both side by side.
	out.Reset()
	if code := runEval(context.Background(), []string{"--compare-offline", "--run", "^unanswerable$"}, evalLookup(vars), &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"model: openai:scripted", "baseline: offline", "unanswerable", "tokens/task"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}
