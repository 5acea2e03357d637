package generatereport

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/skilltest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func newSkill(t *testing.T) *Skill {
	t.Helper()
	s, err := New(Config{Scanner: ScanFunc(skilltest.Scanner(t))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const reportArgs = `{
  "title": "payments-service: pool exhausted by the settlement export",
  "conclusion": "The nightly settlement export holds all pool connections from 02:10, so API requests time out; the export then runs out of heap. Fairly sure: the timeouts start 31 s after the export.",
  "evidence": [
    {"file": "payments.log", "line": 5, "quote": "Starting nightly settlement export", "why": "the export starts"},
    {"file": "payments.log", "line": 9, "quote": "L9: HikariPool-1 - connection is NOT available ... timed out after 30000ms", "why": "first request that found no connection"},
    {"line": 27, "quote": "\"java.lang.OutOfMemoryError: Java heap space\"", "why": "the export runs out of heap"},
    {"file": "payments.log", "line": 12, "quote": "Connection reset by peer", "why": "a claim the line does not support"},
    {"file": "payments.log", "line": 4000, "quote": "GC overhead limit exceeded"},
    {"file": "other.log", "line": 3, "quote": "anything"}
  ],
  "next_steps": ["Give the export its own connection pool, or run it off-peak.", "  ", "Stream the export rows instead of collecting them in memory (ReportJob.collectRows)."]
}`

func TestGenerateReportGolden(t *testing.T) {
	s := newSkill(t)
	env := skilltest.Env(t, "payments.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(reportArgs), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	golden := filepath.Join("testdata", "report.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(res.Output+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if res.Output+"\n" != string(want) {
		t.Errorf("report differs from %s (run with -update if intended):\n%s", golden, res.Output)
	}
	if got := res.Metadata["verified"]; got != 3 {
		t.Errorf("verified = %v, want 3", got)
	}
	if got := res.Metadata["unverified"]; got != 3 {
		t.Errorf("unverified = %v, want 3", got)
	}
	var nums []int
	for _, l := range res.Lines {
		nums = append(nums, l.Line)
		if l.File != "payments.log" || l.Text == "" {
			t.Errorf("line ref %+v", l)
		}
	}
	if len(nums) != 3 || nums[0] != 5 || nums[1] != 9 || nums[2] != 27 {
		t.Errorf("verified lines %v, want [5 9 27]", nums)
	}
}

func TestQuoteMatches(t *testing.T) {
	text := "2024-05-01 02:10:31.377 ERROR [exec-7] HikariPool-1 - Connection is not available, request timed out after 30000ms."
	tests := []struct {
		quote string
		want  bool
	}{
		{"", true},
		{"Connection is not available", true},
		{"connection   IS not\tavailable", true},
		{"`Connection is not available`", true},
		{"L9: Connection is not available", true},
		{"payments.log:9: Connection is not available", true},
		{"HikariPool-1 ... timed out after 30000ms", true},
		{"HikariPool-1 … timed out", true},
		{"timed out ... HikariPool-1", false}, // wrong order
		{"Connection reset", false},
		{"timed out after 5000ms", false},
	}
	for _, tc := range tests {
		if got := quoteMatches(tc.quote, text); got != tc.want {
			t.Errorf("quoteMatches(%q) = %v, want %v", tc.quote, got, tc.want)
		}
	}
}

func TestGenerateReportMistakes(t *testing.T) {
	s := newSkill(t)
	env := skilltest.Env(t, "payments.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"conclusion":"  "}`), Env: env})
	if err != nil || res.Status != skills.StatusError || !strings.Contains(res.Output, "conclusion is empty") {
		t.Errorf("empty conclusion: %v %+v", err, res)
	}
	res, err = s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"conclusion":"Nothing failed."}`), Env: env})
	if err != nil || res.Status != skills.StatusOK || !strings.Contains(res.Output, "(no log lines cited)") {
		t.Errorf("no evidence: %v %+v", err, res)
	}
	if strings.Contains(res.Output, "Next steps") {
		t.Errorf("empty next steps rendered:\n%s", res.Output)
	}
	if _, err := skills.ValidateArgs(s.Spec(), json.RawMessage(`{"conclusion":"x","evidence":{"line":"9"},"next_steps":"restart"}`)); err != nil {
		t.Errorf("schema rejects a coercible call: %v", err)
	}
}
