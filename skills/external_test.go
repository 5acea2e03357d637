package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func loadTestSkills(t *testing.T) map[string]Skill {
	t.Helper()
	list, problems := LoadDir(filepath.Join("testdata", "external"))
	byName := map[string]Skill{}
	for _, s := range list {
		byName[s.Spec().Name] = s
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %v, want 2 (broken, no-program)", problems)
	}
	joined := errors.Join(problems...).Error()
	for _, w := range []string{"broken", "must be lowercase", "description is required", "no-program"} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems %q lack %q", joined, w)
		}
	}
	if !errors.Is(errors.Join(problems...), ErrNoProgram) {
		t.Errorf("no-program problem does not wrap ErrNoProgram")
	}
	return byName
}

func TestLoadDir(t *testing.T) {
	byName := loadTestSkills(t)
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	for _, want := range []string{"bad-json", "chatty", "echo-env", "fail", "slow"} {
		if byName[want] == nil {
			t.Errorf("skill %s not loaded (got %v)", want, names)
		}
	}
	if got := byName["slow"].(*External).Timeout(); got != 300*time.Millisecond {
		t.Errorf("slow timeout = %v, want 300ms from metadata", got)
	}
	if got := byName["fail"].(*External).Timeout(); got != DefaultExternalTimeout {
		t.Errorf("default timeout = %v", got)
	}
	if _, problems := LoadDir(filepath.Join("testdata", "missing")); len(problems) != 1 {
		t.Errorf("missing dir: problems = %v", problems)
	}
}

func TestLoadExternalNameMustMatchFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "other-name")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: echo-env\ndescription: x\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadExternal(dir); !errors.Is(err, ErrNameDir) {
		t.Errorf("err = %v, want ErrNameDir", err)
	}
	if err := os.Chmod(filepath.Join(dir, "run"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: other-name\ndescription: x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadExternal(dir); !errors.Is(err, ErrNoProgram) {
		t.Errorf("non-executable run: err = %v, want ErrNoProgram", err)
	}
}

func TestExternalRunEnvAndCwd(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("LLM_API_KEY", "sk-secret")
	byName := loadTestSkills(t)
	ws := t.TempDir()
	call := Call{Skill: "echo-env", Args: json.RawMessage(`{"word":"hi"}`), Env: Env{
		SessionKey: "local:t:c:1", Workspace: ws, User: "u1",
		Files: []File{{Name: "app.log", Path: filepath.Join(ws, "app.log"), Size: 12}},
	}}
	res, err := byName["echo-env"].Run(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Output)
	}
	realWS, _ := filepath.EvalSymlinks(ws)
	if !strings.Contains(res.Output, "cwd="+realWS+";") && !strings.Contains(res.Output, "cwd="+ws+";") {
		t.Errorf("cwd not the workspace: %s", res.Output)
	}
	envPart := res.Output[strings.Index(res.Output, "env="):]
	var keys []string
	for _, kv := range strings.Split(strings.TrimPrefix(envPart, "env="), ";") {
		if k, _, ok := strings.Cut(kv, "="); ok {
			keys = append(keys, k)
		}
	}
	// sh itself may export PWD, SHLVL and _; nothing else may leak.
	allowed := map[string]bool{"PATH": true, "HOME": true, "LANG": true, "PWD": true, "SHLVL": true, "_": true, "OLDPWD": true}
	for _, k := range keys {
		if !allowed[k] {
			t.Errorf("environment leaks %s", k)
		}
	}
	if strings.Contains(res.Output, "secret") {
		t.Errorf("secret reached the skill: %s", res.Output)
	}
	if !strings.Contains(res.Output, "HOME="+ws) {
		t.Errorf("HOME is not the workspace: %s", res.Output)
	}
	in, _ := json.Marshal(res.Metadata["input"])
	for _, w := range []string{`"args":{"word":"hi"}`, `"session":"local:t:c:1"`, `"name":"app.log"`, `"size":12`} {
		if !strings.Contains(string(in), w) {
			t.Errorf("stdin %s lacks %s", in, w)
		}
	}
	if _, ok := res.Metadata["duration_ms"]; !ok {
		t.Errorf("metadata lacks duration_ms: %v", res.Metadata)
	}
}

func TestExternalRunFailures(t *testing.T) {
	byName := loadTestSkills(t)
	tests := []struct {
		skill string
		want  string
		max   time.Duration
	}{
		{"slow", "timed out after 300ms", 5 * time.Second},
		{"bad-json", "invalid JSON", time.Second * 5},
		{"fail", "exit status 3): cannot reach the ticket system", time.Second * 5},
		{"chatty", "more than 1048576 bytes", time.Second * 10},
	}
	for _, tc := range tests {
		t.Run(tc.skill, func(t *testing.T) {
			start := time.Now()
			res, err := byName[tc.skill].Run(context.Background(), Call{Skill: tc.skill, Env: Env{Workspace: t.TempDir()}})
			if err != nil {
				t.Fatalf("Go error %v; want an error result", err)
			}
			if res.Status != StatusError || !strings.Contains(res.Output, tc.want) {
				t.Errorf("got %s %q, want error containing %q", res.Status, res.Output, tc.want)
			}
			if took := time.Since(start); took > tc.max {
				t.Errorf("took %v", took)
			}
		})
	}
}

func TestExternalRunNoWorkspace(t *testing.T) {
	byName := loadTestSkills(t)
	res, err := byName["echo-env"].Run(context.Background(), Call{Skill: "echo-env"})
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(res.Output, "sleuth-skill-") {
		t.Errorf("want a temporary workspace, got %s", res.Output)
	}
}

func TestExternalRunCancelled(t *testing.T) {
	byName := loadTestSkills(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := byName["echo-env"].Run(ctx, Call{Skill: "echo-env", Env: Env{Workspace: t.TempDir()}}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRegistryDuplicate(t *testing.T) {
	byName := loadTestSkills(t)
	if _, err := NewRegistry(byName["fail"], byName["slow"], byName["fail"]); !errors.Is(err, ErrDuplicate) {
		t.Errorf("err = %v, want ErrDuplicate", err)
	}
	r, err := NewRegistry(byName["slow"], byName["fail"])
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "fail,slow" {
		t.Errorf("names %s", got)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get of an unknown name")
	}
}
