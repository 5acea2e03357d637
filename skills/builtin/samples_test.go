package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
)

// samplesDir is ../shared/logs/samples seen from the repository root.
var samplesDir = filepath.Join("..", "..", "..", "shared", "logs", "samples")

func sampleEnv(t *testing.T, names ...string) skills.Env {
	t.Helper()
	env := skills.Env{SessionKey: "local:t:c:samples", Workspace: t.TempDir()}
	for _, n := range names {
		p, err := filepath.Abs(filepath.Join(samplesDir, n))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Skipf("shared samples not available (%v)", err)
		}
		env.Files = append(env.Files, skills.File{Name: n, Path: p, Size: fi.Size()})
	}
	return env
}

func call(t *testing.T, reg *skills.Registry, env skills.Env, name, args string) skills.Result {
	t.Helper()
	s, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no skill %s", name)
	}
	valid, err := skills.ValidateArgs(s.Spec(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	res, err := s.Run(context.Background(), skills.Call{Skill: name, Args: valid, Env: env})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s: %s", name, res.Status, res.Output)
	}
	return res
}

// TestSamplesTriage runs the offline triage plan (analyze → knowledge base
// → report) on the shared samples and checks the cause lines their README
// names come out, verified.
func TestSamplesTriage(t *testing.T) {
	list, err := Builtins(Config{Notes: nopNotes{}})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := skills.NewRegistry(list...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file       string
		causeLines []int    // lines the README names
		kb         []string // entries the evidence must find
	}{
		{"esp32-uart.log", []int{199, 418}, []string{"uart-overrun", "esp32-guru-meditation"}},
		{"payments-service.log", []int{549, 1111}, []string{"hikaricp-pool-exhausted", "java-outofmemoryerror"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			env := sampleEnv(t, tc.file)
			an := call(t, reg, env, "analyze-log", fmt.Sprintf(`{"file":%q,"top":"20"}`, tc.file))
			if len(an.Fingerprints) == 0 {
				t.Errorf("no fingerprints")
			}
			cited := map[int]bool{}
			var lines []string
			for _, l := range an.Lines {
				cited[l.Line] = true
				lines = append(lines, fmt.Sprintf("L%d: %s", l.Line, l.Text))
			}
			for _, n := range tc.causeLines {
				if !cited[n] {
					t.Errorf("analyze-log evidence misses L%d:\n%s", n, an.Output)
				}
			}
			kb := call(t, reg, env, "query-issue-kb", mustJSON(map[string]any{"lines": lines}))
			for _, id := range tc.kb {
				if !strings.Contains(kb.Output, "["+id+"]") {
					t.Errorf("knowledge base misses %s:\n%s", id, kb.Output)
				}
			}
			var ev []map[string]any
			for _, l := range an.Lines[:min(4, len(an.Lines))] {
				ev = append(ev, map[string]any{"file": l.File, "line": l.Line, "quote": l.Text, "why": l.Reason})
			}
			rep := call(t, reg, env, "generate-report", mustJSON(map[string]any{"conclusion": "test", "evidence": ev}))
			if rep.Metadata["unverified"] != 0 {
				t.Errorf("engine evidence did not verify:\n%s", rep.Output)
			}
			around := call(t, reg, env, "read-log", fmt.Sprintf(`{"line":%d,"context":2}`, tc.causeLines[0]))
			if len(around.Lines) != 5 {
				t.Errorf("read-log around L%d: %d lines", tc.causeLines[0], len(around.Lines))
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
