package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixture = "../../skills/logscan/testdata/java-causedby.log"

func runCmd(t *testing.T, f func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := f(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func analyzeCmd(ctx context.Context, a []string, o, e *bytes.Buffer) int {
	return cmdAnalyze(ctx, a, o, e)
}
func templatesCmd(ctx context.Context, a []string, o, e *bytes.Buffer) int {
	return cmdTemplates(ctx, a, o, e)
}

func TestAnalyzeJSON(t *testing.T) {
	// Flags after the file name work as well as before it.
	code, out, errs := runCmd(t, analyzeCmd, fixture, "--json", "--top", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not one JSON object: %v", err)
	}
	if strings.Contains(out, `\u003c`) || !strings.Contains(out, "<*>") {
		t.Errorf("templates are HTML-escaped instead of readable <*>")
	}
	for _, k := range []string{"files", "lines", "bytes", "time_range", "levels", "templates", "evidence", "first_error", "bursts", "duration_ms"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("missing %q", k)
		}
	}
	var ev []struct {
		File   string  `json:"file"`
		Line   int     `json:"line"`
		Text   string  `json:"text"`
		Reason string  `json:"reason"`
		Score  float64 `json:"score"`
	}
	json.Unmarshal(m["evidence"], &ev)
	if len(ev) == 0 || len(ev) > 3 || ev[0].Line != 157 || ev[0].Reason == "" {
		t.Fatalf("evidence %+v", ev)
	}
	var tpl []map[string]any
	json.Unmarshal(m["templates"], &tpl)
	for _, k := range []string{"id", "template", "count", "level", "first_line"} {
		if _, ok := tpl[0][k]; !ok {
			t.Fatalf("template lacks %q", k)
		}
	}
}

func TestAnalyzeText(t *testing.T) {
	code, out, _ := runCmd(t, analyzeCmd, "--top", "2", fixture)
	if code != 0 || !strings.Contains(out, "Evidence, best first:") || !strings.Contains(out, "L157") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestAnalyzeBaseline(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.log")
	bad := filepath.Join(dir, "bad.log")
	os.WriteFile(good, []byte("start job\nstep one done\nstep two done\nall done\n"), 0o644)
	os.WriteFile(bad, []byte("start job\nstep one done\ndisk quota exceeded on /var\n"), 0o644)
	code, out, errs := runCmd(t, analyzeCmd, "--baseline", good, bad, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Diff *struct {
			Divergence *struct{ Line int } `json:"divergence"`
			New        []struct{ Template string }
		} `json:"diff"`
	}
	json.Unmarshal([]byte(out), &rep)
	if rep.Diff == nil || rep.Diff.Divergence == nil || rep.Diff.Divergence.Line != 3 || len(rep.Diff.New) != 1 {
		t.Fatalf("diff: %s", out)
	}
}

func TestBadInputExits(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	bin := filepath.Join(dir, "core")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 1, 2, 3}, 0o644)
	cases := map[string]string{
		filepath.Join(dir, "missing.log"): "no such file",
		dir:                               "not a regular file",
		empty:                             "empty",
		bin:                               "binary",
	}
	for path, want := range cases {
		for name, f := range map[string]func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) int{"analyze": analyzeCmd, "templates": templatesCmd} {
			code, out, errs := runCmd(t, f, path, "--jsonl")
			if name == "analyze" {
				code, out, errs = runCmd(t, f, path)
			}
			if code == 0 || out != "" {
				t.Fatalf("%s %s: exit %d out %q", name, path, code, out)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, want) {
				t.Fatalf("%s %s: message %q, want one line with %q", name, path, errs, want)
			}
		}
	}
	if code, _, _ := runCmd(t, analyzeCmd); code != exitUsage {
		t.Fatalf("no files: exit %d", code)
	}
	if code, _, _ := runCmd(t, analyzeCmd, "--nope", fixture); code != exitUsage {
		t.Fatalf("bad flag: exit %d", code)
	}
}

func TestTemplatesJSONL(t *testing.T) {
	code, out, errs := runCmd(t, templatesCmd, fixture, "--jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	data, _ := os.ReadFile(fixture)
	if len(rows) != bytes.Count(data, []byte("\n")) {
		t.Fatalf("%d rows for %d lines", len(rows), bytes.Count(data, []byte("\n")))
	}
	if strings.Contains(out, `\u003c`) || !strings.Contains(out, "<*>") {
		t.Errorf("templates are HTML-escaped instead of readable <*>")
	}
	for i, r := range rows {
		var tl struct {
			Line       int    `json:"line"`
			TemplateID string `json:"template_id"`
			Template   *string
		}
		if err := json.Unmarshal([]byte(r), &tl); err != nil || tl.Line != i+1 || tl.TemplateID == "" || tl.Template == nil {
			t.Fatalf("row %d: %q", i+1, r)
		}
	}
	code, out, _ = runCmd(t, templatesCmd, fixture)
	if code != 0 || !strings.Contains(out, "template") {
		t.Fatalf("table: exit %d %q", code, out)
	}
}
