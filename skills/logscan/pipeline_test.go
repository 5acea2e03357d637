package logscan

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// analyzeJSON returns the report of paths as JSON, without its duration.
func analyzeJSON(t *testing.T, paths []string, opt Options) []byte {
	t.Helper()
	rep, err := Analyze(context.Background(), paths, opt)
	if err != nil {
		t.Fatal(err)
	}
	rep.DurationMS = 0
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func templatesJSONL(t *testing.T, path string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTemplatesJSONL(context.Background(), path, Options{}, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Blocks are parsed in parallel and grouped provisionally; the consumer
// fixes the lines before each block's first timestamp. Cutting the input
// into blocks of one or a few lines, so that block ends fall inside every
// stack trace, must give exactly the report and templates of large blocks.
func TestBlockBoundariesDoNotChangeResults(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.log")
	f, err := os.Create(gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := genLog(f, 600<<10, 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	files = append(files, gen)
	if len(files) < 3 {
		t.Fatalf("testdata has %d logs", len(files))
	}
	type result struct{ rep, tmpl []byte }
	run := func() map[string]result {
		out := map[string]result{}
		for _, p := range files {
			out[p] = result{analyzeJSON(t, []string{p}, Options{}), templatesJSONL(t, p)}
		}
		out["baseline"] = result{rep: analyzeJSON(t, []string{files[1]}, Options{Baseline: files[0]})}
		out["multi"] = result{rep: analyzeJSON(t, files[:3], Options{})}
		return out
	}
	want := run()
	defer func(r, s int) { maxRegion, maxSampleLines = r, s }(maxRegion, maxSampleLines)
	for _, cut := range []struct{ region, sample int }{{1, 1}, {40, 2}, {300, 7}} {
		maxRegion, maxSampleLines = cut.region, cut.sample
		got := run()
		for k, w := range want {
			if !bytes.Equal(got[k].rep, w.rep) {
				t.Errorf("%s: blocks of %d bytes / %d sample lines change the report:\n got %.600s\nwant %.600s", k, cut.region, cut.sample, got[k].rep, w.rep)
			}
			if !bytes.Equal(got[k].tmpl, w.tmpl) {
				t.Errorf("%s: blocks of %d bytes / %d sample lines change the templates", k, cut.region, cut.sample)
			}
		}
	}
	if len(want[gen].tmpl) == 0 || !bytes.Contains(want[gen].rep, []byte("SQLException")) {
		t.Fatalf("generated log gave no templates or lost its cause: %.300s", want[gen].rep)
	}
}

// The one-pass keyword prefilter must agree with lower-casing the message
// and looking for every stem.
func TestMayHaveKeywordAgreesWithContains(t *testing.T) {
	slow := func(msg string) bool {
		if len(msg) > 512 {
			msg = msg[:512]
		}
		low := []byte(msg)
		for i, c := range low {
			if c >= 'A' && c <= 'Z' {
				low[i] = c + 'a' - 'A'
			}
		}
		for _, k := range keywordStems {
			if bytes.Contains(low, []byte(k)) {
				return true
			}
		}
		return false
	}
	msgs := []string{"", "ok", "ERROR", "Can't open", "cAN'T", "NOT found", "not", "xcept", "Timeout", "tim", "é ERR", strings.Repeat("a", 511) + "err", strings.Repeat("a", 510) + "err"}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, strings.Split(string(b), "\n")...)
	}
	hits := 0
	for _, m := range msgs {
		got, want := mayHaveKeyword(m), slow(m)
		if got != want {
			t.Errorf("mayHaveKeyword(%q) = %v, want %v", m, got, want)
		}
		if got {
			hits++
		}
	}
	if hits == 0 || hits == len(msgs) {
		t.Fatalf("%d of %d messages hit: the check proves nothing", hits, len(msgs))
	}
}
