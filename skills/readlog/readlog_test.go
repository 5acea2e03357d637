package readlog

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/skilltest"
)

func newSkill(t *testing.T, cfg Config) *Skill {
	t.Helper()
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(skilltest.Scanner(t))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func lineNums(r skills.Result) []int {
	var out []int
	for _, l := range r.Lines {
		out = append(out, l.Line)
	}
	return out
}

func seq(a, b int) []int {
	var out []int
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

func TestReadLog(t *testing.T) {
	s := newSkill(t, Config{})
	env := skilltest.Env(t, "app.log", "esp.log")
	tests := []struct {
		name   string
		args   string
		status string
		lines  []int
		want   []string // substrings of Output
	}{
		{"keyword", `{"file":"app.log","pattern":"TIMED OUT"}`, "ok", []int{12, 13, 23, 33}, []string{`containing "TIMED OUT": 4 matching`, "L13: java.net.SocketTimeoutException: Read timed out"}},
		{"keyword alternatives", `{"file":"app.log","pattern":"read timed out|HikariPool"}`, "ok", []int{13, 23}, nil},
		{"only bars", `{"file":"app.log","pattern":"||"}`, "error", nil, []string{"has no keyword"}},
		{"regex", `{"file":"app.log","pattern":"request \\w+ timed out","regex":true}`, "ok", []int{12, 33}, []string{"matching /request \\w+ timed out/"}},
		{"bad regex", `{"file":"app.log","pattern":"(timed","regex":true}`, "error", nil, []string{"not a valid regular expression", `"regex": false`}},
		{"level error keeps stack trace", `{"file":"app.log","level":"error"}`, "ok", []int{12, 13, 14, 15, 33}, []string{"at level error or above: 5 matching"}},
		{"level and keyword", `{"file":"app.log","level":"warn","pattern":"timed out"}`, "ok", []int{12, 13, 23, 33}, nil},
		{"around a line", `{"file":"app.log","line":13,"context":1}`, "ok", []int{12, 13, 14}, []string{"app.log L12–L14 (around L13)", "L12: 2024-05-01 14:01:24.012 ERROR"}},
		{"around a line default context", `{"file":"app.log","line":3}`, "ok", seq(1, 13), []string{"(around L3)"}},
		{"line out of range", `{"file":"app.log","line":500}`, "error", nil, []string{"app.log has 44 lines; line 500 is out of range"}},
		{"start out of range", `{"file":"app.log","start_line":45}`, "error", nil, []string{"start_line 45 is out of range"}},
		{"range", `{"file":"app.log","start_line":40,"end_line":42}`, "ok", []int{40, 41, 42}, []string{"app.log L40–L42"}},
		{"range reversed", `{"file":"app.log","start_line":40,"end_line":2}`, "error", nil, []string{"end_line 2 is before start_line 40"}},
		{"unknown file", `{"file":"nope.log"}`, "error", nil, []string{`no attached file is called "nope.log"`, `"app.log", "esp.log"`}},
		{"file required with two attached", `{"pattern":"x"}`, "error", nil, []string{"several files are attached"}},
		{"time of day range", `{"file":"app.log","from":"14:03:00","to":"14:03"}`, "ok", seq(33, 42), []string{"10 matching"}},
		{"absolute range", `{"file":"app.log","from":"2024-05-01 14:03:00","to":"2024-05-01T14:03:59Z"}`, "ok", seq(33, 42), nil},
		{"time range and level", `{"file":"app.log","from":"14:03","level":"error"}`, "ok", []int{33}, nil},
		{"unreadable time", `{"file":"app.log","from":"yesterday"}`, "error", nil, []string{`"yesterday" is not a time I can read`}},
		{"mixed time kinds", `{"file":"app.log","from":"14:00","to":"2024-05-01 15:00"}`, "error", nil, []string{"both"}},
		{"no timestamps", `{"file":"esp.log","from":"14:00"}`, "error", nil, []string{"no timestamps recognised in esp.log"}},
		{"context around matches", `{"file":"app.log","pattern":"Connection is not available","context":1}`, "ok", []int{22, 23, 24}, nil},
		{"separators between context groups", `{"file":"app.log","pattern":"request 7f3a","context":1}`, "ok", []int{11, 12, 13}, nil},
		{"cap lines", `{"file":"app.log","pattern":"timed out","max_lines":2}`, "ok", []int{12, 13}, []string{"[2 more matching lines not shown (limit 2 lines"}},
		{"long line cut", `{"file":"app.log","start_line":44}`, "ok", []int{44}, []string{"…[+600 chars]", "[1 long lines cut to 400 characters]"}},
		{"CRLF stripped", `{"file":"app.log","line":2,"context":0}`, "ok", []int{2}, nil},
		{"esp levels", `{"file":"esp.log","level":"warn"}`, "ok", []int{1, 3}, nil},
		{"no match", `{"file":"esp.log","pattern":"kernel panic"}`, "ok", nil, []string{"No line matches (3 lines read)"}},
		{"whole small file", `{"file":"esp.log"}`, "ok", []int{1, 2, 3}, []string{"L2: I (1240) app: ok"}},
		{"unknown level", `{"file":"esp.log","level":"loud"}`, "error", nil, []string{`level "loud" is unknown`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Run(context.Background(), skills.Call{Skill: "read-log", Args: json.RawMessage(tc.args), Env: env})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tc.status, res.Output)
			}
			if tc.status == "ok" && !reflect.DeepEqual(lineNums(res), tc.lines) {
				t.Errorf("lines %v, want %v\n%s", lineNums(res), tc.lines, res.Output)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, res.Output)
				}
			}
			for _, l := range res.Lines {
				if strings.Contains(l.Text, "\r") {
					t.Errorf("L%d keeps a carriage return", l.Line)
				}
				if !strings.Contains(res.Output, fmt.Sprintf("L%d: %s", l.Line, l.Text)) {
					t.Errorf("Lines and Output disagree on L%d", l.Line)
				}
			}
		})
	}
}

func TestReadLogSeparators(t *testing.T) {
	s := newSkill(t, Config{})
	env := skilltest.Env(t, "app.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"pattern":"timed out after","context":1}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(res.Output, "\n--\n"); got != 2 {
		t.Errorf("want 2 group separators, got %d:\n%s", got, res.Output)
	}
	for _, l := range res.Lines {
		want := "context"
		if l.Line == 12 || l.Line == 23 || l.Line == 33 {
			want = "match"
		}
		if l.Reason != want {
			t.Errorf("L%d reason %s, want %s", l.Line, l.Reason, want)
		}
	}
}

func TestReadLogCaps(t *testing.T) {
	s := newSkill(t, Config{MaxLines: 10, MaxChars: 300})
	env := skilltest.Env(t, "app.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"max_lines":400}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Lines); n == 0 || n > 10 {
		t.Errorf("shown %d lines, want 1..10", n)
	}
	if len(res.Output) > 300+400 {
		t.Errorf("output %d chars, over the cap", len(res.Output))
	}
	if !strings.Contains(res.Output, "more lines not shown (limit 10 lines or 300 characters); use start_line/end_line") {
		t.Errorf("no note of what was cut:\n%s", res.Output)
	}
}

func TestNewRejectsNegativeLimits(t *testing.T) {
	if _, err := New(Config{MaxLines: -1}); err == nil {
		t.Fatal("want an error")
	}
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec().Name != "read-log" {
		t.Errorf("spec name %q", s.Spec().Name)
	}
	if _, err := skills.ValidateArgs(s.Spec(), json.RawMessage(`{"line":"549","context":"5"}`)); err != nil {
		t.Errorf("schema rejects a valid call: %v", err)
	}
}
