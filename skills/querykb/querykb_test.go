package querykb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/skilltest"
)

// digitTemplater masks numbers, as the miner would.
var digitRE = regexp.MustCompile(`\d+`)

func digitTemplater(line string) (string, string) {
	t := digitRE.ReplaceAllString(strings.TrimSpace(line), "<*>")
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:4]), t
}

func newSkill(t testing.TB, cfg Config) *Skill {
	t.Helper()
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(skilltest.Scanner(t))
	}
	if cfg.Templater == nil {
		cfg.Templater = TemplateFunc(digitTemplater)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(ms []Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Entry.ID)
	}
	return out
}

func TestStarterKB(t *testing.T) {
	s := newSkill(t, Config{})
	if n := len(s.Entries()); n < 25 {
		t.Fatalf("starter KB has %d entries, want ≥ 25", n)
	}
	for _, e := range s.Entries() {
		if len(e.Cause) < 120 || len(e.Fix) < 120 {
			t.Errorf("%s: cause (%d chars) and fix (%d chars) should each say something useful", e.ID, len(e.Cause), len(e.Fix))
		}
		if len(e.Tags) == 0 {
			t.Errorf("%s: no tags", e.ID)
		}
		for _, p := range e.patterns {
			if p.re != nil && p.anchor == "" {
				t.Errorf("%s: pattern %q has no literal anchor; it would be tested on every line", e.ID, p.text)
			}
		}
		// Every example must find its own entry.
		for _, ex := range e.Examples {
			ms, err := s.Match(context.Background(), Query{Lines: []string{ex}, Top: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !contains(ids(ms), e.ID) {
				t.Errorf("%s: its example %q matches %v", e.ID, ex, ids(ms))
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestMatch(t *testing.T) {
	s := newSkill(t, Config{})
	tests := []struct {
		name  string
		q     Query
		first string   // expected best entry
		also  []string // expected among the results
		not   []string // must not match
	}{
		{name: "hikari line", q: Query{Lines: []string{"L549: 2024-05-01 02:10:31.377 ERROR [exec-7] HikariPool-1 - Connection is not available, request timed out after 30000ms."}}, first: "hikaricp-pool-exhausted"},
		{name: "java oom is not python", q: Query{Lines: []string{"L1111: java.lang.OutOfMemoryError: Java heap space"}}, first: "java-outofmemoryerror", not: []string{"python-memoryerror"}},
		{name: "python memory error", q: Query{Lines: []string{"MemoryError: Unable to allocate 8.00 GiB for an array"}}, first: "python-memoryerror"},
		{name: "go nil map", q: Query{Lines: []string{"panic: assignment to entry in nil map"}}, first: "go-nil-map"},
		{name: "go index", q: Query{Lines: []string{"panic: runtime error: index out of range [5] with length 5"}}, first: "go-index-out-of-range"},
		{name: "go deadlock", q: Query{Lines: []string{"fatal error: all goroutines are asleep - deadlock!"}}, first: "go-deadlock"},
		{name: "postgres", q: Query{Lines: []string{"FATAL:  remaining connection slots are reserved for non-replication superuser connections"}}, first: "postgres-too-many-connections"},
		{name: "kernel oom", q: Query{Lines: []string{"[812345.123] Out of memory: Killed process 4242 (java) total-vm:8123456kB"}}, first: "linux-oom-killer"},
		{name: "enospc both", q: Query{Lines: []string{"write /data/x: no space left on device"}}, also: []string{"disk-full", "inode-exhaustion"}},
		{name: "prose oomkilled", q: Query{Text: "pods keep restarting with OOMKilled"}, first: "k8s-oomkilled"},
		{name: "prose disk", q: Query{Text: "the disk is full on the build server"}, also: []string{"disk-full"}},
		{name: "prose about certificates", q: Query{Text: "did the TLS certificate expire?"}, also: []string{"tls-certificate-expired"}},
		{name: "nothing", q: Query{Lines: []string{"2024-05-01 INFO user logged in"}}},
		{name: "message in the question", q: Query{Text: "what does 'Connection is not available' mean?"}, first: "hikaricp-pool-exhausted"},
		{name: "rate limit", q: Query{Lines: []string{`level=warn msg="slack api" status=429 error="ratelimited"`}}, first: "rate-limited-429"},
		{name: "watchdog", q: Query{Lines: []string{"E (30123) task_wdt: Task watchdog got triggered. The following tasks did not reset the watchdog in time:"}}, first: "watchdog-reset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := s.Match(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(ms)
			if tc.first == "" && tc.also == nil && len(got) > 0 {
				t.Errorf("want no match, got %v", got)
			}
			if tc.first != "" && (len(got) == 0 || got[0] != tc.first) {
				t.Errorf("best %v, want %s first", got, tc.first)
			}
			for _, a := range tc.also {
				if !contains(got, a) {
					t.Errorf("results %v lack %s", got, a)
				}
			}
			for _, n := range tc.not {
				if contains(got, n) {
					t.Errorf("results %v include %s", got, n)
				}
			}
			for _, m := range ms {
				if len(m.Why) == 0 {
					t.Errorf("%s matched without a reason", m.Entry.ID)
				}
			}
		})
	}
}

func TestRunOnFile(t *testing.T) {
	s := newSkill(t, Config{})
	env := skilltest.Env(t, "esp.log")
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"file":"esp.log"}`), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != skills.StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Output)
	}
	for _, w := range []string{"[uart-overrun]", "[dma-descriptor-exhaustion]", "[esp32-guru-meditation]", `in esp.log L5`, "cause: ", "fix: "} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, res.Output)
		}
	}
	got := map[int]bool{}
	for _, l := range res.Lines {
		if l.File != "esp.log" {
			t.Errorf("line ref file %q", l.File)
		}
		got[l.Line] = true
	}
	for _, n := range []int{3, 4, 5, 6, 8} {
		if !got[n] {
			t.Errorf("L%d not cited; cited %v", n, got)
		}
	}
}

func TestRunLinesWithRefs(t *testing.T) {
	s := newSkill(t, Config{})
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"lines":["payments.log L549: HikariPool-1 - Connection is not available, request timed out after 30000ms."],"top":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, `patterns "Connection is not available, request timed out after", "Connection is not available", "HikariPool-1 - Connection is not available" in payments.log L549`) {
		t.Errorf("reason does not cite the line:\n%s", res.Output)
	}
	if strings.Count(res.Output, "score ") != 1 {
		t.Errorf("top 1 not honoured:\n%s", res.Output)
	}
	if len(res.Lines) != 1 || res.Lines[0].Line != 549 || res.Lines[0].File != "payments.log" || strings.HasPrefix(res.Lines[0].Text, "payments.log") {
		t.Errorf("lines %+v", res.Lines)
	}
}

func TestRunMistakes(t *testing.T) {
	s := newSkill(t, Config{})
	for args, want := range map[string]string{
		`{}`:                  "give a query",
		`{"file":"nope.log"}`: "no file is attached",
	} {
		res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != skills.StatusError || !strings.Contains(res.Output, want) {
			t.Errorf("%s: %s %q", args, res.Status, res.Output)
		}
	}
	res, err := s.Run(context.Background(), skills.Call{Args: json.RawMessage(`{"query":"the weather is nice"}`)})
	if err != nil || !strings.Contains(res.Output, "No known failure matches") {
		t.Errorf("%v %q", err, res.Output)
	}
}

func TestOperatorDir(t *testing.T) {
	s := newSkill(t, Config{Dir: filepath.Join("testdata", "kb")})
	if p := s.Problems(); len(p) != 1 || !errors.Is(p[0], ErrEntry) || !strings.Contains(p[0].Error(), "broken") {
		t.Errorf("problems %v, want the broken entry", p)
	}
	base := newSkill(t, Config{})
	if len(s.Entries()) != len(base.Entries())+1 {
		t.Errorf("entries %d, want %d", len(s.Entries()), len(base.Entries())+1)
	}
	ms, err := s.Match(context.Background(), Query{Lines: []string{"No space left on device"}})
	if err != nil {
		t.Fatal(err)
	}
	var disk *Entry
	for _, m := range ms {
		if m.Entry.ID == "disk-full" {
			disk = m.Entry
		}
	}
	if disk == nil || !strings.Contains(disk.Fix, "farm-gc") {
		t.Errorf("operator entry does not replace the built-in: %+v", disk)
	}
	// Template match: the pattern does not occur, the example's shape does.
	ms, err = s.Match(context.Background(), Query{Lines: []string{"ledger sync: replica 7 is 98 batches behind"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Entry.ID != "ledger-lag" || !strings.Contains(strings.Join(ms[0].Why, ";"), "same template as a known example") {
		t.Errorf("template match: %v", ids(ms))
	}
	if _, err := New(Config{Dir: filepath.Join("testdata", "missing")}); err == nil {
		t.Error("a missing KB dir must fail New")
	}
	only := newSkill(t, Config{Dir: filepath.Join("testdata", "kb"), NoBuiltin: true})
	if len(only.Entries()) != 2 {
		t.Errorf("NoBuiltin: %d entries", len(only.Entries()))
	}
}

func TestAutomaton(t *testing.T) {
	anchors := []string{"he", "she", "his", "hers", "connection is not available"}
	a := newAutomaton(anchors)
	for text, want := range map[string][]string{
		"ushers":                           {"he", "hers", "she"},
		"xx connection is not available x": {"connection is not available"},
		"nothing here":                     {"he"},
		"":                                 nil,
	} {
		var got []string
		seen := map[int32]bool{}
		a.find([]byte(text), func(id int32) {
			if !seen[id] {
				seen[id] = true
				got = append(got, anchors[id])
			}
		})
		sort.Strings(got)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: got %v, want %v", text, got, want)
		}
	}
	if a := literalAnchor(`\bMemoryError\b`); a != "memoryerror" {
		t.Errorf("anchor %q", a)
	}
	if a := literalAnchor(`Killed process \d+`); a != "killed process " {
		t.Errorf("anchor %q", a)
	}
	if a := literalAnchor(`exit(ed)? code`); a != "exit" {
		t.Errorf("anchor %q", a)
	}
	for expr, want := range map[string]string{
		`rx (fifo )?overrun`:         "",
		`\[signal SIGSEGV: x`:        "[signal sigsegv: x",
		`inode(s)? (exhausted|full)`: "inode",
		`(status|code)=429`:          "",
		`a|bcdef`:                    "",
		`exit(ed)? (with )?(code)`:   "exit",
		`abcd\.?e`:                   "abcd",
		`index out of range \[\d+\]`: "index out of range [",
	} {
		if got := literalAnchor(expr); got != want {
			t.Errorf("literalAnchor(%q) = %q, want %q", expr, got, want)
		}
	}
}

// BenchmarkScanFile measures a whole-file scan: 100,000 lines.
func BenchmarkScanFile(b *testing.B) {
	s := newSkill(b, Config{Scanner: ScanFunc(skilltest.PlainScan)})
	p := filepath.Join(b.TempDir(), "big.log")
	var sb strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&sb, "2024-05-01 02:%02d:%02d.%03d INFO [http-nio-8080-exec-%d] c.a.p.PaymentController - Processed payment %d in %dms\n", i/3600%60, i/60%60, i%1000, i%8, 4000+i, i%97)
	}
	sb.WriteString("2024-05-01 03:00:00.000 ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms.\n")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	f := skills.File{Name: "big.log", Path: p}
	b.SetBytes(int64(sb.Len()))
	for b.Loop() {
		ms, err := s.Match(context.Background(), Query{File: &f})
		if err != nil || len(ms) == 0 {
			b.Fatal(err, len(ms))
		}
	}
}

// TestTemplateMatchWithEngine matches by the real miner's templates.
func TestTemplateMatchWithEngine(t *testing.T) {
	s, err := New(Config{Dir: filepath.Join("testdata", "kb"), NoBuiltin: true, Scanner: ScanFunc(skilltest.PlainScan)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.examples) == 0 {
		t.Fatal("the engine's TemplateOf gave no template ids for the KB examples")
	}
	ms, err := s.Match(context.Background(), Query{Lines: []string{"L88: ledger sync: replica 12 is 7 batches behind"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Entry.ID != "ledger-lag" {
		t.Errorf("template match with the engine's miner: %v", ids(ms))
	}
}
