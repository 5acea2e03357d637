package eval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShippedSetLoads(t *testing.T) {
	tasks := loadShipped(t)
	if len(tasks) < 20 {
		t.Fatalf("%d shipped tasks, want ≥ 20", len(tasks))
	}
	kinds := map[string]bool{}
	for _, tk := range tasks {
		kinds[tk.Kind] = true
		for _, f := range tk.Files() {
			if n := len(tk.Lines(f)); n < 50 || n > 2000 {
				t.Errorf("%s/%s has %d lines, want 50–2000", tk.Name, f, n)
			}
		}
	}
	for _, k := range []string{"java", "go", "python-ci", "embedded", "database", "network", "build", "comparison", "follow-up", "memory", "injection", "unanswerable"} {
		if !kinds[k] {
			t.Errorf("no task of kind %q", k)
		}
	}
}

func TestBrokenTaskSet(t *testing.T) {
	_, err := Load(os.DirFS(filepath.Join("testdata", "broken")))
	if !errors.Is(err, ErrTaskSet) {
		t.Fatalf("err = %v, want ErrTaskSet", err)
	}
	for _, want := range []string{
		`bad-line: turn 1: cite app.log L2 ("ERROR boom"): line 2 does not contain "ERROR boom"`,
		`line 7 does not exist (app.log has 3 lines)`,
		`name "wrong-name" must equal the folder name`,
		`attachment "nope.log"`,
		`cite other.log line with "x": file "other.log" is not attached in any turn`,
		`dont_know and cite contradict each other`,
		`field surprise not found`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestSplitLinesCountsNewlinesOnly(t *testing.T) {
	got := splitLines([]byte("a\r\nb\rstill b\nc"))
	if len(got) != 3 || got[0] != "a" || got[1] != "b\rstill b" || got[2] != "c" {
		t.Errorf("splitLines = %q", got)
	}
}

func TestCitations(t *testing.T) {
	files := []string{"app.log", "db.log"}
	text := "Pool exhausted at app.log:12 \"pool exhausted\", see L14 and db.log line 3.\n" +
		"Stack: at Main.java:42. Version 1.2.3. Also L7 — `x`."
	got := citations(text, files)
	want := []cited{{file: "app.log", line: 12, quote: "pool exhausted"}, {file: "app.log", line: 14}, {file: "db.log", line: 3}, {file: "db.log", line: 7, quote: "x"}}
	if len(got) != len(want) {
		t.Fatalf("citations = %+v", got)
	}
	for i := range want {
		if got[i].file != want[i].file || got[i].line != want[i].line || got[i].quote != want[i].quote {
			t.Errorf("citation %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestQuoteMatches(t *testing.T) {
	line := "2024-06-01 ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms password=hunter2"
	for q, want := range map[string]bool{
		"Connection is not available":                 true,
		"connection   IS not available":               true,
		"HikariPool-1 … timed out":                    true,
		"HikariPool-1 ... timed out":                  true,
		"timed out after 30000ms password=[REDACTED]": true,
		"Connection refused":                          false,
		"timed out … HikariPool-1":                    false,
	} {
		if quoteMatches(q, line) != want {
			t.Errorf("quoteMatches(%q) = %v", q, !want)
		}
	}
}

func TestDontKnowPhrases(t *testing.T) {
	for s, want := range map[string]bool{
		"I cannot find anything about S3 in this log.":    true,
		"The log does not show who deleted the bucket.":   true,
		"There is no evidence of a deletion in cart.log.": true,
		"I don't know; it is not in the log.":             true,
		"The bucket was deleted by ops-bot.":              false,
		"The export exhausted the pool (app.log:12).":     false,
	} {
		if dontKnowRE.MatchString(s) != want {
			t.Errorf("dontKnow(%q) = %v", s, !want)
		}
	}
}
