package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSkill makes an external skill folder under dir.
func writeSkill(t *testing.T, dir, name, md, run string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if run != "" {
		if err := os.WriteFile(filepath.Join(d, "run"), []byte(run), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

const goodSkillMD = `---
name: open-ticket
description: Opens a ticket in the team's tracker with a title and the evidence.
side_effects: true
parameters:
  type: object
  required: [title]
  properties:
    title: {type: string}
examples:
  - '{"title": "payments: pool exhausted"}'
---
Opens a ticket. Use it when the user asks for one; not otherwise.
`

func TestSkillsList(t *testing.T) {
	ext := t.TempDir()
	writeSkill(t, ext, "open-ticket", goodSkillMD, "#!/bin/sh\necho '{\"status\":\"ok\",\"output\":\"opened\"}'\n")
	writeSkill(t, ext, "broken", "---\nname: broken\n---\n", "#!/bin/sh\n")
	t.Setenv("SLEUTH_SKILLS_DIR", ext)
	t.Setenv("SLEUTH_KB_DIR", "")
	var out, errb bytes.Buffer
	if code := cmdSkills(context.Background(), []string{"list"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"NAME", "analyze-log", "compare-logs", "generate-report", "query-issue-kb", "read-log", "write-snapshot", "open-ticket"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("list lacks %s:\n%s", w, out.String())
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "open-ticket") && !strings.Contains(l, "yes") {
			t.Errorf("side effects not shown: %q", l)
		}
		if strings.HasPrefix(l, "read-log") && !strings.Contains(l, " no ") {
			t.Errorf("read-log side effects: %q", l)
		}
	}
	if !strings.Contains(errb.String(), "skipped:") || !strings.Contains(errb.String(), "description is required") {
		t.Errorf("broken skill not reported: %q", errb.String())
	}

	out.Reset()
	if code := cmdSkills(context.Background(), []string{"list", "--json"}, &out, &errb); code != 0 {
		t.Fatal(code)
	}
	// The ten skills serve registers (built-in, memory, digest) plus open-ticket.
	if n := strings.Count(out.String(), "\n"); n != 11 {
		t.Errorf("--json printed %d lines, want 11:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), `{"name":"analyze-log","source":"builtin","side_effects":false,"description":`) {
		t.Errorf("json shape: %s", out.String())
	}
}

func TestSkillsValidate(t *testing.T) {
	root := t.TempDir()
	good := writeSkill(t, root, "open-ticket", goodSkillMD, "#!/bin/sh\n")
	var out, errb bytes.Buffer
	if code := cmdSkills(context.Background(), []string{"validate", good}, &out, &errb); code != 0 {
		t.Fatalf("good skill: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "ok  open-ticket") {
		t.Errorf("out %q", out.String())
	}

	bad := t.TempDir()
	writeSkill(t, bad, "no-run", "---\nname: no-run\ndescription: x\n---\nbody\n", "")
	writeSkill(t, bad, "Bad_Name", "---\nname: Bad_Name\ndescription: x\n---\nbody\n", "#!/bin/sh\n")
	writeSkill(t, bad, "bad-example", strings.Replace(goodSkillMD, "open-ticket", "bad-example", 1)+"", "#!/bin/sh\n")
	if err := os.WriteFile(filepath.Join(bad, "bad-example", "SKILL.md"), []byte(strings.NewReplacer("open-ticket", "bad-example", `{"title": "payments: pool exhausted"}`, `{"titel": 1}`).Replace(goodSkillMD)), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := cmdSkills(context.Background(), []string{"validate", bad}, &out, &errb); code != 1 {
		t.Fatalf("bad skills: exit %d", code)
	}
	for _, w := range []string{"no executable 'run'", "must be lowercase", `missing required parameter "title"`} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("problems lack %q:\n%s", w, errb.String())
		}
	}
	if code := cmdSkills(context.Background(), []string{"validate", t.TempDir()}, &out, &errb); code != 1 {
		t.Errorf("empty folder: exit %d", code)
	}
	if code := cmdSkills(context.Background(), []string{"frobnicate"}, &out, &errb); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
}
