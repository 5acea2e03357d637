package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/memory"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/writesnapshot"
)

type nopNotes struct{}

func (nopNotes) AddNote(context.Context, memory.Note) error { return nil }
func (nopNotes) Notes(context.Context, string) ([]memory.Note, error) {
	return nil, nil
}

func TestBuiltins(t *testing.T) {
	list, err := Builtins(Config{Notes: nopNotes{}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"analyze-log", "compare-logs", "generate-report", "query-issue-kb", "read-log", "write-snapshot"}
	var got []string
	for _, s := range list {
		got = append(got, s.Spec().Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("skills %v, want %v", got, want)
	}
	if _, err := skills.NewRegistry(list...); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		spec := s.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			if err := spec.Validate(); err != nil {
				t.Error(err)
			}
			if len(spec.WhenToUse) < 80 {
				t.Errorf("when_to_use is too thin: %q", spec.WhenToUse)
			}
			if !strings.Contains(strings.ToLower(spec.WhenToUse), "not ") {
				t.Errorf("when_to_use should say when not to use it")
			}
			if !strings.Contains(spec.Body, "## When not to use") || !strings.Contains(spec.Body, "## Example") {
				t.Errorf("SKILL.md body lacks 'When not to use' or 'Example' sections")
			}
			if spec.Parameters == nil || len(spec.Examples) == 0 {
				t.Fatalf("parameters or examples missing")
			}
			if spec.SideEffects {
				t.Errorf("a built-in log skill marked with side effects")
			}
			// Every example is a valid call.
			for _, ex := range spec.Examples {
				if _, err := skills.ValidateArgs(spec, json.RawMessage(ex)); err != nil {
					t.Errorf("example %s: %v", ex, err)
				}
			}
		})
	}
}

func TestBuiltinsConfig(t *testing.T) {
	if _, err := Builtins(Config{}); !errors.Is(err, writesnapshot.ErrNoNotes) {
		t.Errorf("err = %v, want ErrNoNotes", err)
	}
	if _, err := Builtins(Config{Notes: nopNotes{}, KBDir: "testdata/no-such-dir"}); err == nil {
		t.Error("a missing KB dir must fail")
	}
}
