package logscan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rankOf reports the 1-based rank of line in the evidence, 0 when absent.
func rankOf(rep *Report, file string, line int) int {
	for i, e := range rep.Evidence {
		if e.Line == line && (file == "" || filepath.Base(e.File) == filepath.Base(file)) {
			return i + 1
		}
	}
	return 0
}

// reasonOf returns the reason line is evidence for, false when it is none.
func reasonOf(rep *Report, line int) (string, bool) {
	if r := rankOf(rep, "", line); r > 0 {
		return rep.Evidence[r-1].Reason, true
	}
	return "", false
}

// Logs written for these tests, each with a known cause line, across
// stacks. The cause must rank in the top 5.
func TestEvidenceKnownCauses(t *testing.T) {
	cases := []struct {
		file  string
		cause int
		text  string
	}{
		{"go-panic.log", 122, "panic: runtime error"},
		{"python-traceback.log", 205, "KeyError"},
		{"java-causedby.log", 157, "password authentication failed"},
		{"ci-build.log", 69, "error TS2339"},
		{"oom-killer.log", 102, "Out of memory: Killed process"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rep, err := Analyze(context.Background(), []string{filepath.Join("testdata", c.file)}, Options{Top: 5})
			if err != nil {
				t.Fatal(err)
			}
			r := rankOf(rep, "", c.cause)
			if r == 0 {
				for _, e := range rep.Evidence {
					t.Logf("L%d %.1f %s | %s", e.Line, e.Score, e.Text, e.Reason)
				}
				t.Fatalf("cause L%d not in the top 5", c.cause)
			}
			e := rep.Evidence[r-1]
			if !strings.Contains(e.Text, c.text) || e.Reason == "" || e.File == "" {
				t.Fatalf("evidence %+v", e)
			}
			t.Logf("cause L%d ranked %d", c.cause, r)
		})
	}
}

// The wrapper lines of a CI log must rank below the compiler error.
func TestEvidenceWrapperPenalty(t *testing.T) {
	rep, err := Analyze(context.Background(), []string{"testdata/ci-build.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evidence[0].Line != 69 {
		t.Fatalf("top evidence is L%d %q, want the compiler error", rep.Evidence[0].Line, rep.Evidence[0].Text)
	}
}

// The sample logs' README names their cause lines; each must be in the top
// 5 evidence lines.
func TestEvidenceSamples(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "logs", "samples")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("../shared/logs/samples is absent; skipping the sample evidence check")
	}
	cases := []struct {
		file  string
		lines []int
	}{
		{"esp32-uart.log", []int{199, 418}},
		{"payments-service.log", []int{525, 549, 1111}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rep, err := Analyze(context.Background(), []string{filepath.Join(dir, c.file)}, Options{Top: 5})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range c.lines {
				r := rankOf(rep, c.file, l)
				if r == 0 {
					for _, e := range rep.Evidence {
						t.Logf("L%d %.1f %s | %s", e.Line, e.Score, e.Text, e.Reason)
					}
					t.Fatalf("cause L%d not in the top 5", l)
				}
				t.Logf("%s: cause L%d ranked %d", c.file, l, r)
			}
		})
	}
}

func TestReportShape(t *testing.T) {
	rep, err := Analyze(context.Background(), []string{"testdata/java-causedby.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != 160 || rep.Bytes == 0 {
		t.Fatalf("lines %d bytes %d", rep.Lines, rep.Bytes)
	}
	if rep.FirstError == nil || rep.FirstError.Line != 151 {
		t.Fatalf("first error %+v", rep.FirstError)
	}
	if rep.TimeRange == nil || rep.TimeRange.StartLine != 1 || !strings.HasPrefix(rep.TimeRange.Start, "2025-03-04 12:00:00") {
		t.Fatalf("time range %+v", rep.TimeRange)
	}
	if rep.Levels["error"] < 1 || rep.Levels["info"] < 100 {
		t.Fatalf("levels %v", rep.Levels)
	}
	if len(rep.ErrorTemplates) == 0 || len(rep.Templates) == 0 {
		t.Fatalf("templates %d error templates %d", len(rep.Templates), len(rep.ErrorTemplates))
	}
	// Evidence lines exist and say what the file says.
	lines, _ := scanAll(t, "testdata/java-causedby.log", Options{})
	for _, e := range rep.Evidence {
		if e.Line < 1 || e.Line > len(lines) || lines[e.Line-1] != e.Text {
			t.Fatalf("evidence L%d %q does not match the file", e.Line, e.Text)
		}
	}
	b, _ := json.Marshal(rep)
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"files", "lines", "bytes", "time_range", "levels", "templates", "evidence", "first_error", "bursts", "duration_ms", "error_templates"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("report JSON lacks %q", k)
		}
	}
}

// Continuation lines carry their event's template; one object per line.
func TestTemplatesContinuation(t *testing.T) {
	var got []TemplateLine
	err := Templates(context.Background(), "testdata/java-causedby.log", Options{}, func(tl TemplateLine) error {
		got = append(got, tl)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 160 {
		t.Fatalf("%d lines", len(got))
	}
	for i, tl := range got {
		if tl.Line != i+1 || tl.TemplateID == "" {
			t.Fatalf("line %d: %+v", i+1, tl)
		}
	}
	head := got[150].TemplateID // L151, the ERROR line
	for l := 152; l <= 159; l++ {
		if got[l-1].TemplateID != head {
			t.Fatalf("L%d has %q, want the head's %q", l, got[l-1].Template, got[150].Template)
		}
	}
	if got[159].TemplateID == head {
		t.Fatal("L160 is a new event")
	}
	var buf strings.Builder
	if err := WriteTemplatesJSONL(context.Background(), "testdata/java-causedby.log", Options{}, &buf); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(rows) != 160 {
		t.Fatalf("%d jsonl rows", len(rows))
	}
	for i, r := range rows {
		var tl TemplateLine
		if err := json.Unmarshal([]byte(r), &tl); err != nil || tl != got[i] {
			t.Fatalf("row %d %q != %+v (%v)", i, r, got[i], err)
		}
	}
}

func TestGroupingStacks(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		cont  []bool
	}{
		{"python", []string{"2024-01-01 10:00:00 ERROR boom", "Traceback (most recent call last):", `  File "a.py", line 1, in <module>`, "ValueError: x", "2024-01-01 10:00:01 INFO ok"}, []bool{false, true, true, true, false}},
		{"python ends at its exception", []string{"Traceback (most recent call last):", `  File "a.py", line 1, in <module>`, "ValueError: x", "", "next output", "ok"}, []bool{false, true, true, true, false, false}},
		{"python chained", []string{"Traceback (most recent call last):", `  File "a.py", line 1, in f`, "KeyError: 'a'", "", "During handling of the above exception, another exception occurred:", "", "Traceback (most recent call last):", `  File "a.py", line 3, in g`, "ValueError: b", "done"}, []bool{false, true, true, true, true, true, true, true, true, false}},
		{"go", []string{"panic: boom", "", "goroutine 1 [running]:", "main.main()", "\t/a/main.go:5 +0x1d", "exit status 2", "next"}, []bool{false, true, true, true, true, true, false}},
		{"rust", []string{"thread 'main' panicked at src/main.rs:2:5:", "index out of bounds", "note: run with `RUST_BACKTRACE=1`", "done"}, []bool{false, true, true, false}},
		{".net", []string{"Unhandled exception. System.InvalidOperationException: bad", " ---> System.IO.IOException: disk", "   at Foo.Bar() in /a.cs:line 3", "   --- End of inner exception stack trace ---", "other"}, []bool{false, true, true, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGrouper(c.lines)
			for i, l := range c.lines {
				r := g.line(l)
				if r.blank && !r.cont {
					g.inEvent = false
				}
				if r.cont != c.cont[i] {
					t.Fatalf("line %d %q: cont=%v", i+1, l, r.cont)
				}
			}
		})
	}
}

func TestLevels(t *testing.T) {
	cases := map[string]uint8{
		"2024-01-01 10:00:00 ERROR x":           lvError,
		"E (123) tag: x":                        lvError,
		"W/ActivityManager( 123): x":            lvWarn,
		"03-17 16:13:38.811  1702  2395 D Tag:": lvDebug,
		"<3>kernel: x":                          lvError,
		`time=1 level=warn msg=x`:               lvWarn,
		`{"level":"error","msg":"x"}`:           lvError,
		"[INFO] started":                        lvInfo,
		"I am fine":                             lvNone,
		"E1129 10:00:00.000 1 x.go:1] x":        lvError,
		// klog behind a journald prefix; the level letter, not "failed"
		"Jun 03 10:26:41 node-7 kubelet[1187]: W0603 10:26:41.208086    1187 eviction_manager.go:344] x":  lvWarn,
		"Jun 03 09:47:30 node-7 kubelet[1187]: I0603 09:47:30.459581    1187 prober.go:117] probe failed": lvInfo,
		"Jun 03 09:47:30 node-7 app[12]: I0603 is a ticket":                                               lvNone,
		// the level scan stops at byte 96, inside "FOR": no one-letter level "F"
		"2024-06-17 09:44:33.912 UTC [318] STATEMENT:  SELECT id, balance FROM accounts WHERE code = $1 FOR UPDATE": lvNone,
		// MySQL's error log
		"2024-06-03T10:49:36.181532Z 8369 [Note] [MY-013730] [Server] 'wait_timeout' period exceeded": lvInfo,
		// yarn's prefix and the symbols Node.js CLIs print as levels
		`info "fsevents@2.3.3" failed compatibility check`:             lvInfo,
		"[semantic-release] › ℹ  Analyzing commit: fix: crash on load": lvInfo,
		"[semantic-release] › ✘  ENONPMTOKEN No npm token specified.":  lvError,
		"[semantic-release] › ✔  Completed step \"fail\" of plugin":    lvInfo,
		" ⚠ Using edge runtime on a page disables static generation":   lvWarn,
		// the other ballot marks and check marks: a data check's result
		"[checkpoint]   ✗ expect_column_values_to_not_be_null(column=customer_id): 412 of 58931 unexpected": lvError,
		"[checkpoint]   ✓ expect_column_values_to_be_in_set(column=status, value_set=[placed, cancelled])":  lvInfo,
		"❌ lint failed":     lvError,
		"✅ no errors found": lvInfo,
		"⚠️  You're using a deprecated config option":      lvWarn,
		"information about ℹinfo":                          lvNone,
		"16:42:01.901 -- DEBUG REMNANTS -----------------": lvNone, // an Elm heading, see keywordLevel
		// bun test's results, whatever the test's name says
		"(fail) POST /webhooks/payments > retries ledger posting [5001.37ms]": lvError,
		"(pass) formatMoney > rejects NaN with an error [0.16ms]":             lvInfo,
		"2024-06-25T13:06:21Z (skip) dead-letters after ledger error":         lvInfo,
		"retry (fail) counter": lvNone,
		// Rollup's and Vite's warning mark
		"10:42:58.990	(!) Found dead link ./retries in file guide/backoff.md": lvWarn, "see note (!) here": lvNone,
		// TAP's results, also behind ctest's test number
		"1: ok 5 - corrupt checksum fails with QUILL_ERR_CHECKSUM": lvInfo, "not ok 3 - parses the header": lvError,
		"2024-06-11T09:17:02Z ok 12 - error path is covered": lvInfo, "look ok 4 me": lvNone,
		// ctest's progress, whatever the test's name says
		"      Start  3: errors": lvInfo, "3/4 Test  #3: errors ...........................   Passed    0.35 sec": lvInfo,
		"4/4 Test #4: fuzz_smoke .....................***Failed    0.10 sec": lvError,
		"2/9 Test #2: net_fail ...........***Timeout 1500.02 sec":            lvError,
		"Start of the ERROR section":                                         lvError,
		// a level word inside a name is none; one that starts a code is
		"-- Performing Test QUILL_HAVE_WNO_ERROR_DATE_TIME - Success": lvNone,
		" ERR_PNPM_OUTDATED_LOCKFILE  Cannot install":                 lvError,
		"(03112-38) _WARN: bayes: cannot open bayes databases":        lvWarn,
		// zerolog's console levels, as the header detector knows them
		"2:41PM WRN leaks found: 1": lvWarn, "2:41PM INF 3 commits scanned.": lvInfo,
	}
	for in, want := range cases {
		if got := detectLevel(in); got != want {
			t.Errorf("%q: %d want %d", in, got, want)
		}
	}
	for _, m := range []string{"Child (2314) died signal=9", "worker process 4242 exited on signal 11",
		// a program's abort: gfortran's bounds check, UBSan, std::terminate
		"Fortran runtime error: Index '131' of dimension 1 of array 'sendbuf' above upper bound of 130",
		"src/pack.c:41:17: runtime error: signed integer overflow", "terminate called after throwing an instance of 'std::bad_alloc'"} {
		if !reCrash.MatchString(m) {
			t.Errorf("%q is a crash marker", m)
		}
	}
	if reCrash.MatchString("RuntimeError: Event loop is closed") {
		t.Error("Python's RuntimeError is an exception, not a crash marker")
	}
	// a watchdog that fired is a crash marker; the word in a name is not
	for _, m := range []string{"E (5423) task_wdt: Task watchdog got triggered.", "watchdog: BUG: soft lockup - CPU#2 stuck for 22s!",
		"Killed", "/usr/bin/ld: final link failed: Killed", "worker 12 was killed by signal 9", "Process 4411 (java) killed, out of memory",
		"NETDEV WATCHDOG: eth0 (i40e): transmit queue 3 timed out"} {
		if !reCrash.MatchString(m) {
			t.Errorf("%q is a crash marker", m)
		}
	}
	for _, m := range []string{"Downloading watchdog-5.0.2-py3-none-manylinux2014_x86_64.whl (78 kB)",
		// a game's kill feed
		`L 06/03/2024 - 21:02:08: "Kyra<9><[U:1:55201938]><Blue>" killed "Pyro<4><[U:1:1]><Red>" with "scattergun"`,
		"[2024-03-12 18:16:08] watchdog.garden INFO : Restarting ffmpeg...", "Building C object main/CMakeFiles/__idf_main.dir/watchdog.c.obj"} {
		if reCrash.MatchString(m) {
			t.Errorf("%q is no crash marker", m)
		}
	}
	for in, want := range map[string]uint8{"0 errors, 3 warnings": lvWarn, "Build finished with no errors": lvNone, "connection failed": lvError, "all good": lvNone,
		// the Elm compiler's report headings; a SQL comment is none
		"-- DEBUG REMNANTS ----------------------------------": lvError, "-- TYPE MISMATCH ---------- src/Main.elm": lvError,
		"-- create the index first": lvNone, "-- A ---": lvNone,
		// CocoaPods' and fastlane's attention marker; Pester's skipped test is indented
		"[!] Try setting the MATCH_PASSWORD environment variable": lvWarn, "[!] Error installing Firebase": lvError,
		"   [!] reports what would change 2ms (0ms|2ms)": lvNone,
		// Gatling's assertions, whatever they are about
		"Global: 95th percentile of response time is less than or equal to 800.0 : false (actual : 1137.0)": lvError,
		"checkout: percentage of failed events is less than or equal to 1.0 : true (actual : 0.31)":         lvNone,
		// Robot Framework's results, whatever the test's name says
		"Login Fails With Wrong Password                                       | PASS |": lvNone,
		"Apply BUNDLE10 To Eligible Lines Only                                 | FAIL |": lvError,
		"The text of element 'css:.total' should have been '54.90' but it was '59.90'.":  lvError,
		"a | FAIL | b": lvError, "Error Banner Shown | SKIP |": lvNone,
		// a part that does not work as expected, but not an expectation met
		"Heater extruder not heating at expected rate": lvWarn, "fan not spinning as expected": lvWarn, "disk performing as expected": lvNone,
		// a resource at its limit, but not a full GC or sync
		"[zone: pf states] PF states limit reached": lvWarn, "The transaction log for database 'Orders' is full": lvWarn,
		"Pause Full (System.gc()) 812M->301M(2048M) 95.2ms": lvNone, "starting full resync with replica": lvNone,
		"batch response: This repository is over its data quota.": lvWarn, "write /data/seg-7: no space left on device": lvWarn,
		"accept tcp [::]:8080: accept4: too many open files": lvWarn, "listen tcp :8080: bind: address already in use": lvWarn,
		"remaining quota: 5 GB of 10 GB": lvNone, "address already known": lvNone,
		// a part worn out or running low, but not a low priority or a replaced config
		"UPS rack-ups@localhost battery needs to be replaced": lvWarn, "UPS rack-ups@localhost battery is low": lvWarn,
		"Disk /dev/sda1 is running low on space": lvWarn, "priority is low": lvNone, "config file replaced": lvNone,
		// pip check's unmet requirement
		"quaylib 2.1.0 has requirement pyarrow>=15.0, but you have pyarrow 14.0.2.": lvWarn,
		// a shell's missing command stops the script
		"remote:        sh: 1: tsc: not found": lvError, "/bin/bash: line 3: jq: command not found": lvError,
		"zsh: command not found: pnpm": lvError, "Cache entry not found": lvWarn,
		// a warning's class name, as Node.js, Python and .NET print them
		"(node:1) MaxListenersExceededWarning: Possible EventEmitter memory leak detected": lvWarn,
		"/app/db.py:12: SAWarning: relationship will copy column":                          lvWarn, "Warningless mode on": lvNone,
		// a part that is down, but not one shutting or scaling down
		"nvme nvme1: controller is down; will reset: CSTS=0x3": lvWarn, "Backend api-2 went down": lvWarn,
		"Received SIGTERM, shutting down": lvNone, "scaled down replica set web-7d9 to 2": lvNone,
		// the linker needs no failure word; a warning says so
		"/opt/esp/bin/../xtensa-esp-elf/bin/ld: region `iram0_0_seg' overflowed by 1184 bytes": lvError,
		"xtensa-esp32s3-elf-ld: IRAM0 segment data does not fit.":                              lvError, "ld.lld: duplicate symbol: init": lvError,
		"ld: warning: directory not found for option '-L/opt/x'": lvWarn, "cold: 12 items in the store": lvNone,
		// TeX's errors, Pester's failed and passed tests and its assertion
		"./chapters/results.tex:42: Undefined control sequence.": lvError, "! Emergency stop.": lvError,
		"[-] sets RetentionDays from the template 30ms (16ms|14ms)": lvError, "Expected 30, but got 90.": lvError,
		"[+] returns $false on failed connection 32ms (18ms|14ms)": lvNone,
		// a process that died
		"varnishd[812]: Child (2314) died signal=9": lvError} {
		if got := keywordLevel(in); got != want {
			t.Errorf("keywordLevel(%q) = %d want %d", in, got, want)
		}
	}
}

func TestBaseline(t *testing.T) {
	dir := t.TempDir()
	var good, bad strings.Builder
	steps := []string{"checkout", "restore cache", "install deps", "compile", "unit tests", "package", "upload"}
	for i, s := range steps {
		good.WriteString("step " + s + " started\n")
		good.WriteString("step " + s + " finished in 3s\n")
		if i < 4 {
			bad.WriteString("step " + s + " started\n")
			if s == "compile" {
				bad.WriteString("linker: cannot open shared object libfoo.so\n")
				bad.WriteString("warning: retrying compile\n")
				continue
			}
			bad.WriteString("step " + s + " finished in 3s\n")
		}
	}
	gp := filepath.Join(dir, "good.log")
	bp := filepath.Join(dir, "bad.log")
	os.WriteFile(gp, []byte(good.String()), 0o644)
	os.WriteFile(bp, []byte(bad.String()), 0o644)
	rep, err := Analyze(context.Background(), []string{bp}, Options{Baseline: gp})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Diff
	if d == nil || d.Baseline != gp {
		t.Fatalf("diff %+v", d)
	}
	if d.Divergence == nil || d.Divergence.Line != 8 {
		t.Fatalf("divergence %+v, want L8", d.Divergence)
	}
	if len(d.New) == 0 || d.New[0].FirstLine != 8 {
		t.Fatalf("new %+v", d.New)
	}
	if rep.Evidence[0].Line != 8 || !strings.Contains(rep.Evidence[0].Reason, "absent from the good run") {
		t.Fatalf("top evidence %+v", rep.Evidence[0])
	}
	// A run that only stops short diverges where it stopped.
	os.WriteFile(bp, []byte("step checkout started\nstep checkout finished in 3s\nstep restore cache started\n"), 0o644)
	rep, err = Analyze(context.Background(), []string{bp}, Options{Baseline: gp})
	if err != nil {
		t.Fatal(err)
	}
	if dv := rep.Diff.Divergence; dv == nil || dv.Line != 3 || !strings.Contains(dv.Text, "stopped") {
		t.Fatalf("stop: %+v", rep.Diff.Divergence)
	}
	if len(rep.Diff.Vanished) == 0 {
		t.Fatal("no vanished templates")
	}
}

func TestTemplateOf(t *testing.T) {
	id1, t1 := TemplateOf("connection to 10.0.0.1:5432 failed after 3 retries")
	id2, _ := TemplateOf("connection to 10.0.0.7:5432 failed after 5 retries")
	if id1 == "" || id1 != id2 || strings.Contains(t1, "10.0.0.1") {
		t.Fatalf("%q %q %q", id1, id2, t1)
	}
}

func TestMultipleFiles(t *testing.T) {
	rep, err := Analyze(context.Background(), []string{"testdata/go-panic.log", "testdata/oom-killer.log"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 2 || rankOf(rep, "go-panic.log", 122) == 0 || rankOf(rep, "oom-killer.log", 102) == 0 {
		t.Fatalf("%+v", rep.Evidence)
	}
}

// TestVisibleText: a carriage return inside a line rewrites it on a
// terminal; the engine reads and quotes what is left visible, and keeps
// counting lines by '\n' only.
func TestVisibleText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                             "plain",
		"\x1b[31mred\x1b[0m":                "red",
		"travis_fold:end:install\r\x1b[0K":  "travis_fold:end:install",
		"\r\x1b[0K$ make test":              "$ make test",
		"Progress 10%\rProgress 60%\rDone.": "Done.",
		"ERROR: disk full\r   \r":           "ERROR: disk full",
		"\r":                                "",
		"\x1b[33;1mRunning\x1b[0m\r\x1b[K\x1b[33;1mOK": "OK",
		// control strings: Buildkite's timestamps (APC), a hyperlink (OSC)
		"\x1b_bk;t=1718200463205\x07ld: region overflowed":             "ld: region overflowed",
		"see \x1b]8;;https://x.test/a\x1b\\the docs\x1b]8;;\x1b\\ now": "see the docs now",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "travis.log")
	var b strings.Builder
	b.WriteString("travis_fold:start:install\r\x1b[0K\x1b[33;1m$ make deps\x1b[0m\n")
	for i := 0; i < 30; i++ {
		b.WriteString("Downloading 10%\rDownloading 55%\rDownloading 100%\n")
		b.WriteString("fetched package ok\n")
	}
	b.WriteString("\r\x1b[0K$ make test 2>&1 | tee error.log\n")
	b.WriteString("cc -c store.c\n")
	b.WriteString("store.c:41:9: error: 'pgsz' undeclared (first use in this function)\r\x1b[0K\n")
	b.WriteString("\x1b[31;1mThe command \"make test\" exited with 2.\x1b[0m\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(context.Background(), []string{path}, Options{Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != 65 {
		t.Fatalf("%d lines, want 65", rep.Lines)
	}
	if len(rep.Evidence) == 0 || rep.Evidence[0].Line != 64 || rep.Evidence[0].Text != "store.c:41:9: error: 'pgsz' undeclared (first use in this function)" {
		t.Fatalf("top evidence %+v, want line 64 as a terminal shows it", rep.Evidence)
	}
	for _, e := range rep.Evidence {
		if strings.ContainsAny(e.Text, "\r\x1b") {
			t.Errorf("evidence %d %q: a control byte", e.Line, e.Text)
		}
	}
}

// An indented warning under a head with no level is that event's key line,
// at warning level, until an indented error in the same event takes its
// place.
func TestIndentedWarningKey(t *testing.T) {
	log := strings.Join([]string{
		"Loading composer repositories with package information",
		"Your requirements could not be resolved to an installable set of packages.",
		"",
		"  Problem 1",
		"    - Installation request for acme/lib 2.0 -> satisfiable by acme/lib[2.0].",
		"    - acme/lib 2.0 requires php ^8.1 -> your PHP version (7.4.3) does not satisfy that requirement.",
		"",
		"src/cart.js",
		"  3:1  warning  Unexpected console statement  no-console",
		"  9:5  error    'total' is not defined  no-undef",
		"",
		"done",
	}, "\n") + "\n"
	rep := analyzeText(t, "indented.log", log, 10)
	want := map[int]string{6: "warning inside the event at L4", 10: "exception of the event at L8"}
	for line, why := range want {
		r := rankOf(rep, "", line)
		if r == 0 {
			t.Fatalf("L%d is not evidence: %+v", line, rep.Evidence)
		}
		if e := rep.Evidence[r-1]; !strings.Contains(e.Reason, why) {
			t.Errorf("L%d reason %q, want %q", line, e.Reason, why)
		}
	}
	if e := rep.Evidence[rankOf(rep, "", 6)-1]; !strings.HasPrefix(e.Reason, "warning;") {
		t.Errorf("L6 reason %q: a warning key must leave its event at warning level", e.Reason)
	}
	if r := rankOf(rep, "", 9); r != 0 {
		t.Errorf("L9, the warning the error replaced as key line, is evidence at rank %d", r)
	}
}

// Gradle nests the causes of a failure one "> " deeper each; the deepest
// is the event's key line, as a "Caused by:" is.
func TestGradleNestedCauses(t *testing.T) {
	log := strings.Join([]string{
		"> Task :app:compileDebugKotlin",
		"> Task :app:mergeDexDebug FAILED",
		"",
		"FAILURE: Build failed with an exception.",
		"",
		"* What went wrong:",
		"Execution failed for task ':app:mergeDexDebug'.",
		"> A failure occurred while executing com.android.build.gradle.internal.tasks.DexMergingTaskDelegate",
		"   > There was a failure while executing work items",
		"      > com.android.builder.dexing.DexArchiveMergerException: Error while merging dex archives:",
		"        The number of method references in a .dex file cannot exceed 64K.",
		"",
		"BUILD FAILED in 2m 41s",
	}, "\n") + "\n"
	rep := analyzeText(t, "gradle.log", log, 10)
	r := rankOf(rep, "", 10)
	if r == 0 {
		t.Fatalf("the innermost cause L10 is not evidence: %+v", rep.Evidence)
	}
	if e := rep.Evidence[r-1]; !strings.Contains(e.Reason, "root cause") || r > 2 {
		t.Errorf("L10 ranked %d with reason %q, want a root cause in the top 2", r, e.Reason)
	}
	if r := rankOf(rep, "", 9); r != 0 {
		t.Errorf("L9, an outer cause the inner one replaced, is evidence at rank %d", r)
	}
}

// A job the CI runner stopped for printing nothing: what it printed last
// is what it was doing, and the runner's notice is a crash.
func TestRunnerStoppedJob(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "test_case_%d (tests.test_api.ApiTests) ... ok\n", i)
	}
	b.WriteString("test_websocket_reconnect (tests.test_ws.ReconnectTests) ... \n\n")
	b.WriteString("No output has been received in the last 10m0s, this potentially indicates a stalled build or something wrong with the build itself.\n")
	b.WriteString("The build has been terminated\n")
	rep := analyzeText(t, "stalled.log", b.String(), 5)
	hang, notice := rankOf(rep, "", 31), rankOf(rep, "", 33)
	if hang == 0 || notice == 0 {
		t.Fatalf("the hanging test (L31) ranks %d, the runner's notice (L33) %d: %+v", hang, notice, rep.Evidence)
	}
	if e := rep.Evidence[hang-1]; !strings.Contains(e.Reason, "last output before the runner stopped the job at L33") {
		t.Errorf("L31 reason %q", e.Reason)
	}
	if e := rep.Evidence[notice-1]; !strings.Contains(e.Reason, "crash marker") {
		t.Errorf("L33 reason %q", e.Reason)
	}
}

// TestServiceIncident: in a service log, an error that recurs from the
// first minutes to the end is background; the incident's cause is the
// first other error, shortly before the largest burst of errors, and it
// outranks both the background and the burst's louder consequences.
func TestServiceIncident(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 10, 0, 0, 0, time.UTC), step: time.Second, layout: "2006-01-02 15:04:05.000", format: "%s %s [main] %s\n"}
	emit := lg.emit
	cause := 0
	for i := range 400 {
		switch {
		case i%20 == 3:
			emit("ERROR", fmt.Sprintf("sshd: Failed password for root from 198.51.100.%d port %d", i%250, 40000+i))
		case i == 250:
			emit("ERROR", "pool: remaining connection slots are reserved for superuser connections")
			cause = lg.line
		case i > 300 && i < 340:
			emit("ERROR", fmt.Sprintf("GET /api/orders/%d failed: upstream request timeout after 30000 ms", 1000+i))
		default:
			emit("INFO", fmt.Sprintf("GET /api/orders/%d 200 in %d ms", 1000+i, 10+i%40))
		}
	}
	rep := analyzeText(t, "svc.log", lg.b.String(), 10)
	rank := map[int]int{}
	reasons := map[int]string{}
	for i, e := range rep.Evidence {
		rank[e.Line], reasons[e.Line] = i+1, e.Reason
	}
	if rank[cause] != 1 {
		t.Errorf("the cause L%d ranks %d, want 1; evidence %+v", cause, rank[cause], rep.Evidence)
	}
	if !strings.Contains(reasons[cause], "first error after the background ones") {
		t.Errorf("the cause's reason %q, want it called the first error after the background ones", reasons[cause])
	}
	if r, ok := reasons[4]; ok && !strings.Contains(r, "recurs through the whole log") {
		t.Errorf("the ssh failures (L4) are not called background: %q", r)
	}
}

// TestTraceLineByLine: logcat (like journald and syslog) gives every line
// of a stack trace its own header; the frames and causes still belong to
// the exception's event, and its last "Caused by:" is the evidence shown.
func TestTraceLineByLine(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "06-03 10:09:%02d.100  1402  1542 I ActivityManager: Start proc %d:com.acme.app/u0a%d\n", i%60, 18000+i, 100+i)
	}
	b.WriteString(`06-03 10:09:45.974 18342 18342 E AndroidRuntime: FATAL EXCEPTION: main
06-03 10:09:45.974 18342 18342 E AndroidRuntime: Process: com.acme.notes, PID: 18342
06-03 10:09:45.975 18342 18342 E AndroidRuntime: java.lang.IllegalStateException: could not save draft
06-03 10:09:45.975 18342 18342 E AndroidRuntime: 	at com.acme.notes.DraftRepository.save(DraftRepository.kt:88)
06-03 10:09:45.975 18342 18342 E AndroidRuntime: 	at com.acme.notes.EditorViewModel.onPause(EditorViewModel.kt:41)
06-03 10:09:45.975 18342 18342 E AndroidRuntime: Caused by: android.database.sqlite.SQLiteConstraintException: UNIQUE constraint failed: drafts.client_id (code 2067)
06-03 10:09:45.975 18342 18342 E AndroidRuntime: 	at android.database.sqlite.SQLiteConnection.nativeExecuteForLastInsertedRowId(Native Method)
06-03 10:09:45.975 18342 18342 E AndroidRuntime: 	... 12 more
06-03 10:09:46.010  1402  1542 I ActivityManager: Process com.acme.notes (pid 18342) has died
`)
	rep := analyzeText(t, "logcat.log", b.String(), 5)
	if len(rep.Evidence) == 0 || rep.Evidence[0].Line != 46 {
		t.Fatalf("top evidence %+v, want the Caused by line (L46)", rep.Evidence)
	}
	for _, e := range rep.Evidence {
		if e.Line == 44 || e.Line == 45 || e.Line == 47 || e.Line == 48 {
			t.Errorf("a frame is evidence on its own: %+v", e)
		}
	}
}

// TestComeback: a warning printed briefly early on and again, after hours
// of silence, just before the errors is shown where it came back (its
// first line is the harmless one) and is not background; a template that
// pauses and comes back again and again keeps its rhythm and its
// background status.
func TestComeback(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 8, 0, 0, 0, time.UTC), step: 15 * time.Second, layout: "2006-01-02 15:04:05.000", format: "%s %s [main] %s\n"}
	emit := lg.emit
	first, back := 0, 0
	for i := range 1200 {
		switch {
		case i == 100:
			emit("WARN", "flood stage disk watermark [95%] exceeded on node-2, all indices on this node will be marked read-only")
			first = lg.line
		case i == 900:
			emit("WARN", "flood stage disk watermark [95%] exceeded on node-3, all indices on this node will be marked read-only")
			back = lg.line
		case i > 900 && i%30 == 0:
			emit("WARN", fmt.Sprintf("flood stage disk watermark [95%%] exceeded on node-3, all indices on this node will be marked read-only (%d)", i))
		case i%150 == 7:
			// hourly, from start to end, with a pause every time
			emit("WARN", fmt.Sprintf("report job took %d s, longer than usual", 60+i%7))
		case i > 930 && i%3 == 0:
			emit("ERROR", fmt.Sprintf("index [carts] blocked by: [FORBIDDEN/12/index read-only / allow delete (api)]; request %d", i))
		default:
			emit("INFO", fmt.Sprintf("GET /api/carts/%d 200 in %d ms", 1000+i, 10+i%40))
		}
	}
	rep := analyzeText(t, "es.log", lg.b.String(), 5)
	rank := map[int]int{}
	reasons := map[int]string{}
	for i, e := range rep.Evidence {
		rank[e.Line], reasons[e.Line] = i+1, e.Reason
	}
	if rank[back] == 0 || !strings.Contains(reasons[back], fmt.Sprintf("back after a silence (first at L%d)", first)) {
		t.Errorf("the return L%d: rank %d, reason %q; want it in the top 5, back after the silence since L%d; evidence %+v", back, rank[back], reasons[back], first, rep.Evidence)
	}
	for l, r := range reasons {
		if strings.Contains(r, "report job") || strings.Contains(r, "back") && l != back {
			t.Errorf("L%d %q: only the watermark came back", l, r)
		}
	}
	for _, e := range rep.Evidence {
		if strings.Contains(e.Text, "report job") {
			t.Errorf("the hourly report (L%d) is evidence: %q", e.Line, e.Reason)
		}
	}
}

// TestChangePoint: the split of a log where its rate of errors rose.
func TestChangePoint(t *testing.T) {
	var h lineHist
	for l := 1; l <= 5000; l++ {
		if l%250 == 0 || l > 3000 && l%10 == 0 {
			h.add(l)
		}
	}
	cp := changePoint(h, 5000)
	if cp < 2900 || cp > 3100 {
		t.Errorf("change point L%d, want about L3000", cp)
	}
	var flat lineHist
	for l := 100; l <= 5000; l += 100 {
		flat.add(l)
	}
	if cp := changePoint(flat, 5000); cp != 0 {
		t.Errorf("a steady rate has a change point at L%d", cp)
	}
}

// TestLineHist: buckets double and counts are kept as a file grows.
func TestLineHist(t *testing.T) {
	var h lineHist
	n := 0
	for l := 1; l <= 200_000; l += 3 {
		h.add(l)
		n++
	}
	sum := 0
	for _, v := range h.n {
		sum += int(v)
	}
	if sum != n || len(h.n) > maxLineBuckets || h.size < 200_000/maxLineBuckets {
		t.Errorf("%d buckets of %d lines hold %d events, want %d in at most %d buckets", len(h.n), h.size, sum, n, maxLineBuckets)
	}
}

// TestEvidenceDeterministic: the same file gets the same evidence, in the
// same order, on every run (the ranking walks maps; ties must not depend
// on their order).
func TestEvidenceDeterministic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "svc", "*.log"))
	if len(files) == 0 {
		t.Fatal("no logs in testdata/svc")
	}
	runs, step := 2, 1
	if raceEnabled {
		runs, step = 2, 6 // a sample: this is about ranking, not concurrency
	}
	for i, f := range files {
		if i%step != 0 {
			continue
		}
		var first string
		for run := range runs {
			rep, err := Analyze(context.Background(), []string{f}, Options{Top: 10})
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(rep.Evidence)
			if run == 0 {
				first = got
			} else if got != first {
				t.Errorf("%s: run %d's evidence differs from the first run's:\n%s\n%s", f, run, got, first)
				break
			}
		}
	}
}

// TestEscalation: a template printed at info level for hours and then as
// a warning just before the errors is shown where it first warned.
func TestEscalation(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 4, 8, 0, 0, 0, time.UTC), step: 10 * time.Second, layout: "2006-01-02 15:04:05,000", format: "%s %-5s [Thread-2] %s\n"}
	emit := lg.emit
	first, warn := 0, 0
	for i := range 1000 {
		switch {
		case i%120 == 40 && i < 800:
			emit("INFO", fmt.Sprintf("Detected pause in JVM or host machine (eg GC): pause of approximately %d ms", 1100+i))
			if first == 0 {
				first = lg.line
			}
		case i == 850:
			emit("WARN", "Detected pause in JVM or host machine (eg GC): pause of approximately 23611 ms")
			warn = lg.line
		case i > 870 && i%4 == 0:
			emit("ERROR", fmt.Sprintf("Unexpected exception causing shutdown while sock still open, session 0x%x", 4096+i))
		default:
			emit("INFO", fmt.Sprintf("Processing ruok command from /127.0.0.1:%d", 40000+i))
		}
	}
	rep := analyzeText(t, "zk.log", lg.b.String(), 5)
	want := fmt.Sprintf("first at warn level (info before, first at L%d)", first)
	for _, e := range rep.Evidence {
		if e.Line == warn {
			if !strings.Contains(e.Reason, want) {
				t.Errorf("L%d's reason %q, want %q", warn, e.Reason, want)
			}
			return
		}
	}
	t.Errorf("the first warning L%d is not in the top 5: %+v", warn, rep.Evidence)
}

// TestWarningIncident: an incident that only warns (no error at all)
// starts where the warnings rose, and a new line just before it is its
// precursor.
func TestWarningIncident(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 12, 0, 0, 0, time.UTC), step: 7 * time.Second, layout: "2006-01-02 15:04:05.000", format: "%s UTC [812] %s %s\n"}
	emit := lg.emit
	pause := 0
	for i := range 1000 {
		switch {
		case i == 700:
			emit("LOG", "PAUSE command issued")
			pause = lg.line
		case i > 730 && i%3 == 0:
			emit("WARNING", fmt.Sprintf("C-0x55e8c4dbdc%02x: appdb/app@10.0.3.13:%d pooler error: query_wait_timeout", i%256, 30000+i))
		case i%250 == 17:
			emit("WARNING", fmt.Sprintf("C-0x55e8c4aa%04x: appdb/report@10.0.9.4:%d pooler error: no such user", i, 40000+i))
		default:
			emit("LOG", fmt.Sprintf("stats: %d xacts/s, %d queries/s, in %d B/s, out %d B/s, xact %d us, query %d us, wait %d us", 40+i%9, 120+i%17, 9000+i, 31000+i, 900+i%50, 300+i%40, i%7))
		}
	}
	rep := analyzeText(t, "pgbouncer.log", lg.b.String(), 5)
	for _, e := range rep.Evidence {
		if e.Line == pause {
			// new, or the last change, before the errors: either needs
			// the incident's start
			if !strings.Contains(e.Reason, "before the errors starting at") {
				t.Errorf("L%d's reason %q, want it placed before the incident", pause, e.Reason)
			}
			return
		}
	}
	t.Errorf("the PAUSE (L%d) is not in the top 5: %+v", pause, rep.Evidence)
}

// TestShortlist: past n candidates, the ones score could rank highest are
// kept (a level, rarity, a root cause), the earliest first among equals.
func TestShortlist(t *testing.T) {
	var all []*cand
	for i := range 30 {
		c := &cand{line: 100 - i, count: 1, level: lvInfo}
		switch i % 3 {
		case 0:
			c.level = lvError
		case 1:
			c.level, c.count = lvError, 9 // less rare
		}
		all = append(all, c)
	}
	all = append(all, &cand{line: 500, count: 40, level: lvWarn, keyPri: keyCause})
	got := shortlist(all, 12)
	if len(got) != 12 {
		t.Fatalf("%d kept, want 12", len(got))
	}
	if got[0].level != lvError || got[0].count != 1 || got[0].line != 73 {
		t.Errorf("first kept %+v, want the earliest error seen once (L73)", *got[0])
	}
	for _, c := range got {
		if c.level == lvInfo {
			t.Errorf("an info line L%d kept over errors", c.line)
		}
	}
	if kept := shortlist(all[:5], 12); len(kept) != 5 {
		t.Errorf("%d of 5 kept under the limit", len(kept))
	}
}

// timedLog builds a log a line at a time, each line step after the one
// before: format gets the timestamp (in layout), the level and the message.
type timedLog struct {
	b              strings.Builder
	ts             time.Time
	step           time.Duration
	line           int
	layout, format string
}

func (l *timedLog) emit(level, msg string) {
	l.line++
	fmt.Fprintf(&l.b, l.format, l.ts.Format(l.layout), level, msg)
	l.ts = l.ts.Add(l.step)
}

// TestIncidentStart: bursts of errors a few minutes apart are one incident,
// which starts at its first; the incident is the run with most errors.
func TestIncidentStart(t *testing.T) {
	minute := int64(60_000)
	b := func(line, errors int, start, end int64) Burst {
		return Burst{StartLine: line, Errors: errors, startMS: start * minute, endMS: end * minute}
	}
	for _, c := range []struct {
		bursts []Burst
		want   int
	}{
		// waves two to four minutes apart, none the largest alone
		{[]Burst{b(100, 12, 1, 1), b(546, 10, 41, 41), b(611, 22, 44, 44), b(691, 53, 47, 49), b(862, 59, 51, 54)}, 546},
		// a long lull: the later, larger run
		{[]Burst{b(100, 30, 1, 2), b(900, 20, 30, 30), b(950, 20, 33, 33)}, 900},
		// one burst
		{[]Burst{b(40, 5, 3, 3)}, 40},
	} {
		if got, ok := incidentStart(c.bursts); !ok || got != c.want {
			t.Errorf("incidentStart(%+v) = L%d, want L%d", c.bursts, got, c.want)
		}
	}
	if _, ok := incidentStart(nil); ok {
		t.Error("an incident without bursts")
	}
}

// TestDiversify: a template that is a near copy of one ranked above it
// (GET for POST) loses a share of its score per copy above it, so a
// different line with a lower score comes first; scores stay in order, and
// templates that only share some words keep theirs.
func TestDiversify(t *testing.T) {
	texts := []string{
		`upstream timed out (<*>: Connection timed out) while reading response header from upstream, client: <*>, request: "GET <*>", upstream: "<*>"`,
		`upstream timed out (<*>: Connection timed out) while reading response header from upstream, client: <*>, request: "POST <*>", upstream: "<*>"`,
		`upstream timed out (<*>: Connection timed out) while reading response header from upstream, client: <*>, request: "GET <*>=<*>", upstream: "<*>"`,
		`connect() failed (<*>: Connection refused) while connecting to upstream, client: <*>, request: "GET <*>", upstream: "<*>"`,
		`worker process <*> exited on signal <*>`,
	}
	rc := rankCtx{ids: []string{"a", "b", "c", "d", "e"}, texts: texts}
	in := []scored{
		{c: &cand{cluster: 0, line: 10}, score: 6},
		{c: &cand{cluster: 1, line: 20}, score: 5.8},
		{c: &cand{cluster: 2, line: 30}, score: 5.6},
		{c: &cand{cluster: 3, line: 5}, score: 4.5},
		{c: &cand{cluster: 4, line: 40}, score: 3},
	}
	out := diversify(in, rc)
	var lines []int
	for i, s := range out {
		lines = append(lines, s.c.line)
		if i > 0 && s.score > out[i-1].score {
			t.Errorf("scores out of order: %v", out)
		}
	}
	if want := []int{10, 5, 20, 40, 30}; !slices.Equal(lines, want) {
		t.Errorf("order %v, want %v", lines, want)
	}
	if out[1].score != 4.5 {
		t.Errorf("the refused connect keeps its score 4.5, got %v", out[1].score)
	}
	if r := out[2].reasons; len(r) == 0 || r[len(r)-1] != "like L10 above" {
		t.Errorf("near copy's reasons %q, want it to say which line it copies", r)
	}
	if in[1].score != 5.8 || len(in[1].reasons) != 0 {
		t.Error("diversify changed its input")
	}
}

// TestNearCopyRun: two templates that share a long run of tokens are one
// report with a different head (the client) and tail (the statement), as
// Pgpool logs a statement timeout; a short shared run is not enough.
func TestNearCopyRun(t *testing.T) {
	pg := func(app, stmt string) []string {
		return strings.Fields(app + ` pid <*>: LOG: pool_send_and_wait: Error or notice message from backend: : DB node id: <*> backend pid: <*> statement: "` + stmt + `" message: "canceling statement due to statement timeout"`)
	}
	a := pg("checkout", "SELECT c.id, c.customer_id, ci.product_id, ci.qty FROM carts c JOIN cart_items ci ON ci.cart_id = c.id WHERE c.id = $1 AND c.status = $2 ORDER BY ci.id")
	b := pg("search-indexer", "SELECT p.id, p.title, p.description, p.updated_at FROM products p WHERE p.updated_at > $1 ORDER BY p.updated_at LIMIT 500")
	if !nearCopy(a, b) {
		t.Error("two statement timeouts of two clients are not near copies")
	}
	c := strings.Fields(`connect() failed (<*>: Connection refused) while connecting to upstream, client: <*>, request: "GET <*>", upstream: "<*>"`)
	d := strings.Fields(`upstream timed out (<*>: Connection timed out) while reading response header from upstream, client: <*>, request: "GET <*>", upstream: "<*>"`)
	if nearCopy(c, d) {
		t.Error("a refused connect and a timeout are near copies")
	}
}

// TestWrapperNamingCause: a line that points elsewhere "for more details"
// is a generic wrapper, unless it also names a known cause.
func TestWrapperNamingCause(t *testing.T) {
	text := "starting spill worker\n" +
		"E local_object_manager.cc:371: Failed to spill objects: IOError: [Errno 28] No space left on device: '/tmp/ray/spill/a4f0'. Please see the spill worker log for more details.\n" +
		"E raylet: job 7 failed, see the log for more details\n"
	rep := analyzeText(t, "spill.log", text, 5)
	got := map[int]string{}
	for _, e := range rep.Evidence {
		got[e.Line] = e.Reason
	}
	if r, ok := got[2]; !ok || strings.Contains(r, "generic wrapper") || !strings.Contains(r, "disk full") {
		t.Errorf("L2 reason %q (in the top 5: %v), want a known issue and no wrapper", r, ok)
	}
	if r, ok := got[3]; ok && !strings.Contains(r, "generic wrapper") {
		t.Errorf("L3 reason %q, want a generic wrapper", r)
	}
}

// TestPendingJavaMode: whether an event's head opens a Java trace is
// worked out only when a line needs it (modePending); the answer is the
// one exceptionLine gives: a trace printed a line at a time, each line
// with its header, goes on an INFO head that is an exception, and starts
// events of its own after a plain head.
func TestPendingJavaMode(t *testing.T) {
	g := newGrouper([]string{"2024-06-03 10:00:00 INFO a", "2024-06-03 10:00:01 INFO b"})
	for _, c := range []struct {
		head string
		cont bool
	}{
		{"2024-06-03 10:00:02 INFO java.lang.IllegalStateException: pool closed", true},
		{"2024-06-03 10:00:02 INFO request served in 12 ms", false},
	} {
		g.line(c.head)
		r := g.line("2024-06-03 10:00:02 INFO at com.example.Pool.get(Pool.java:41)")
		if r.cont != c.cont {
			t.Errorf("a frame after %q: cont %v, want %v", c.head, r.cont, c.cont)
		}
		g.line("2024-06-03 10:00:03 INFO next")
	}
	// a block's state is never left pending: its head's message lies in
	// the block's buffer
	g.line("2024-06-03 10:00:04 INFO request served in 9 ms")
	if g.mode != modePending {
		t.Fatalf("mode %d after a plain head, want pending", g.mode)
	}
	if g.resolveMode() != modeNone || g.pendMsg != "" {
		t.Errorf("resolved to %d with %q kept", g.mode, g.pendMsg)
	}
}
