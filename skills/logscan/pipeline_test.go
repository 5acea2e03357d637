package logscan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sleuth-bot/sleuth/skills/logscan/internal/loggen"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

func templatesJSONL(t *testing.T, path string, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTemplatesJSONL(context.Background(), path, opt, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// templatesByLine returns the template of each line of path, as
// `sleuth templates --jsonl` writes them.
func templatesByLine(t *testing.T, path string) map[int]string {
	t.Helper()
	tmpl := map[int]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(templatesJSONL(t, path, Options{}))), "\n") {
		var x TemplateLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		tmpl[x.Line] = x.Template
	}
	return tmpl
}

// Blocks are parsed in parallel and grouped provisionally; the consumer
// fixes the lines before each block's first timestamp, and read buffers
// are recycled. Cutting the input into blocks of one or a few lines, so
// that block ends fall inside every stack trace, and recycling small
// buffers must give exactly the report and templates of large, fresh ones.
func TestBlockBoundariesDoNotChangeResults(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen.log")
	f, err := os.Create(gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := loggen.Write(f, 2<<20, 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Quiet minutes, then bursts of errors: the bursts' bounds are times
	// kept across read buffers.
	burst := filepath.Join(dir, "burst.log")
	var bl strings.Builder
	for i := range 3000 {
		ts := fmt.Sprintf("2024-03-01T10:%02d:%02d.%03dZ", i/60%60, i%60, i%1000)
		if i%600 >= 500 && i%600 < 540 {
			fmt.Fprintf(&bl, "%s ERROR db: query %d failed: connection reset by peer\n", ts, i)
		} else {
			fmt.Fprintf(&bl, "%s INFO  http: GET /api/items/%d 200\n", ts, i)
		}
	}
	if err := os.WriteFile(burst, []byte(bl.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	files = append(files, gen, burst)
	if len(files) < 3 {
		t.Fatalf("testdata has %d logs", len(files))
	}
	type result struct{ rep, tmpl []byte }
	run := func() map[string]result {
		out := map[string]result{}
		// Short lines make read buffers of 600 bytes: most events then
		// span a recycled buffer.
		for _, opt := range []Options{{}, {MaxLineBytes: 300}} {
			k := fmt.Sprint(opt.MaxLineBytes, " ")
			for _, p := range files {
				out[k+p] = result{analyzeJSON(t, []string{p}, opt), templatesJSONL(t, p, opt)}
			}
			out[k+"multi"] = result{rep: analyzeJSON(t, files[:3], opt)}
			opt.Baseline = files[0]
			out[k+"baseline"] = result{rep: analyzeJSON(t, []string{files[1]}, opt)}
		}
		return out
	}
	defer func(r, s, bb int, rb, pr bool) {
		maxRegion, maxSampleLines, blockBytes, recycleBuffers, poisonRecycled = r, s, bb, rb, pr
	}(maxRegion, maxSampleLines, blockBytes, recycleBuffers, poisonRecycled)
	// The reference: large blocks, every read buffer fresh.
	recycleBuffers = false
	want := run()
	// Then small read buffers, recycled and overwritten once released, so
	// a string kept from a recycled buffer shows up as garbage.
	recycleBuffers, poisonRecycled, blockBytes = true, true, 1
	for _, cut := range []struct{ region, sample int }{{128 << 10, headerSample}, {1, 1}, {40, 2}, {300, 7}} {
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
	if !bytes.Contains(want["0 "+burst].rep, []byte(`"bursts":[{`)) {
		t.Fatalf("burst log shows no burst: %.300s", want["0 "+burst].rep)
	}
	if g := want["0 "+gen]; len(g.tmpl) == 0 || !bytes.Contains(g.rep, []byte("SQLException")) {
		t.Fatalf("generated log gave no templates or lost its cause: %.300s", g.rep)
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

// The JSONL writer formats chunks of lines on several goroutines and
// writes them in order; a tape that spills to its temporary file and
// chunks of a few lines give the same bytes, and each row is what the
// Templates API reports for that line.
func TestTemplatesJSONLChunksAndSpill(t *testing.T) {
	gen := filepath.Join(t.TempDir(), "gen.log")
	f, err := os.Create(gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := loggen.Write(f, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := templatesJSONL(t, gen, Options{})
	defer func(m, c int) { tapeMem, jsonlChunk = m, c }(tapeMem, jsonlChunk)
	tapeMem, jsonlChunk = 1000, 7
	got := templatesJSONL(t, gen, Options{})
	if !bytes.Equal(got, want) {
		t.Fatalf("spilled tape and 7-line chunks: %d bytes, want %d identical bytes", len(got), len(want))
	}
	rows := bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n"))
	if len(rows) <= tapeMem {
		t.Fatalf("%d lines: the tape did not spill", len(rows))
	}
	n := 0
	err = Templates(context.Background(), gen, Options{}, func(tl TemplateLine) error {
		var row TemplateLine
		if n >= len(rows) {
			return fmt.Errorf("more lines than rows")
		}
		if err := json.Unmarshal(rows[n], &row); err != nil || row != tl {
			return fmt.Errorf("row %d %q, want %+v (%v)", n+1, rows[n], tl, err)
		}
		n++
		return nil
	})
	if err != nil || n != len(rows) {
		t.Fatalf("%v after %d of %d rows", err, n, len(rows))
	}
}

type failingWriter struct{ left int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		return 0, errors.New("disk full")
	}
	w.left -= len(p)
	return len(p), nil
}

// A writer that fails stops the formatters and the tape reader: the error
// comes back, nothing hangs.
func TestTemplatesJSONLWriterError(t *testing.T) {
	gen := filepath.Join(t.TempDir(), "gen.log")
	f, err := os.Create(gen)
	if err != nil {
		t.Fatal(err)
	}
	if err := loggen.Write(f, 4<<20, 3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	defer func(c int) { jsonlChunk = c }(jsonlChunk)
	jsonlChunk = 50
	err = WriteTemplatesJSONL(context.Background(), gen, Options{}, &failingWriter{left: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the writer's error", err)
	}
}

// Every warning word keywordLevel's expressions know passes the stem
// prefilter in front of them, and so does every error word of the second
// expression: a word added to one and not the other is never read.
func TestWarnWordsHaveStems(t *testing.T) {
	for _, c := range []struct {
		re   *regexp.Regexp
		want uint8
	}{{reWarnWord, lvWarn}, {reWarnWord2, lvWarn}, {reErrorWord2, lvError}} {
		src := c.re.String()
		i, j := strings.Index(src, `\b(`), strings.LastIndex(src, `)\b`)
		if i < 0 || j < i {
			t.Fatalf("cannot read the words of %s", src)
		}
		optional := regexp.MustCompile(`\([a-z ]+\)\?|.\?`)
		for _, w := range strings.Split(src[i+3:j], "|") {
			w = optional.ReplaceAllString(w, "")
			if w == "" || strings.ContainsAny(w, `\()[]`) {
				continue
			}
			if msg := "the " + w + " one"; keywordLevel(msg) < c.want {
				t.Errorf("%q: keywordLevel(%q) = %d, want %d (a stem for it in keywordStems?)", w, msg, keywordLevel(msg), c.want)
			}
		}
	}
}

// TestTwoLineRecords: a head that only says where a message came from
// (.NET's console "info: Category[14]", Samba's "file.c:344(fn)") has the
// message on the next, indented line, which is mined as an event of its
// own; a Go frame, "pkg.fn(0x1?)", keeps its indented file line.
func TestTwoLineRecords(t *testing.T) {
	tmpl := templatesByLine(t, "testdata/dotnet-console.log")
	if tmpl[8] == tmpl[7] || !strings.Contains(tmpl[8], "accepted for customer") || tmpl[8] != tmpl[10] {
		t.Errorf("L8 %q, L7 %q, L10 %q: want the messages' own template, shared by L8 and L10", tmpl[8], tmpl[7], tmpl[10])
	}
	if tmpl[25] != tmpl[24] || tmpl[27] != tmpl[24] {
		t.Errorf("the exception and its frames (L25 %q, L27 %q) should continue the message L24 %q", tmpl[25], tmpl[27], tmpl[24])
	}
	b, err := os.ReadFile("testdata/dotnet-console.log")
	if err != nil {
		t.Fatal(err)
	}
	rep := analyzeText(t, "dotnet.log", string(b), 3)
	found := false
	for _, e := range rep.Evidence {
		found = found || e.Line == 24 || e.Line == 25
		if strings.HasPrefix(e.Text, "info: ") || strings.HasPrefix(e.Text, "fail: ") {
			t.Errorf("L%d %q: a head that only names its category is no evidence", e.Line, e.Text)
		}
	}
	if !found {
		t.Errorf("evidence %+v, want the failed save (L24) or its exception (L25) in the top 3", rep.Evidence)
	}
	samba := "[2024/03/12 08:09:59.618855,  1] ../../source3/librpc/crypto/gse.c:631(gse_get_server_auth_token)\n" +
		"  gss_accept_sec_context failed with [ Miscellaneous failure (see text): Clock skew too great]\n" +
		"[2024/03/12 08:10:01.104211,  2] ../../source3/smbd/service.c:1121(make_connection_snum)\n" +
		"  10.30.12.204 (ipv4:10.30.12.204:53827) connect to service Finance\n"
	if !locationOnly("../../source3/librpc/crypto/gse.c:631(gse_get_server_auth_token)") || !locationOnly("Microsoft.Hosting.Lifetime[14]") {
		t.Error("Samba's and .NET's location heads not recognised")
	}
	for _, m := range []string{"runtime.checkmcount()", "main.handler(0xc000012345?)", "items [3]", "done (12)", "x[]"} {
		if locationOnly(m) {
			t.Errorf("%q is no location head", m)
		}
	}
	rep = analyzeText(t, "samba.log", samba, 3)
	if len(rep.Evidence) == 0 || rep.Evidence[0].Line != 2 {
		t.Errorf("samba evidence %+v, want the clock skew (L2) first", rep.Evidence)
	}
}

// TestKernelCallTrace: the kernel prints each line of a call trace with
// its own header; its frames, markers and register dump continue the
// trace's event (so no frame is evidence), in dmesg and in syslog alike,
// while an indented line that is no frame starts an event of its own.
func TestKernelCallTrace(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "[8120%02d.100000] [UFW BLOCK] IN=eno1 OUT= SRC=10.40.7.%d DST=10.40.1.17 LEN=60\n", i, i%9)
	}
	b.WriteString(`[814211.882914] nvme nvme1: controller is down; will reset: CSTS=0x3, PCI_STATUS=0x10
[814303.421474] INFO: task postgres:1901177 blocked for more than 120 seconds.
[814303.421496] Call Trace:
[814303.421505]  <TASK>
[814303.421516]  __schedule+0x351/0xa20
[814303.421546]  ? filemap_invalidate_unlock_two+0x50/0x50
[814303.421559]  xfs_file_buffered_read+0x52/0xd0 [xfs]
[814303.421589] RIP: 0033:0x7fa35558a960
[814303.421596] RSP: 002b:00007ffd0c6fe408 EFLAGS: 00000246 ORIG_RAX: 0000000000000011
[814303.421601] RAX: ffffffffffffffda RBX: 0000000000000000 RCX: 00007fa35558a960
[814303.421635]  </TASK>
[814303.421700]  eth0: renamed from veth12ab
[814340.293703] nvme nvme1: Disabling device after reset failure: -19
[814340.298131] XFS (nvme1n1p1): log I/O error -5
`)
	path := writeFile(t, "dmesg.log", []byte(b.String()))
	tmpl := templatesByLine(t, path)
	for l := 44; l <= 51; l++ {
		if tmpl[l] != tmpl[43] {
			t.Errorf("L%d %q should continue the call trace at L43 %q", l, tmpl[l], tmpl[43])
		}
	}
	if tmpl[52] == tmpl[43] {
		t.Errorf("L52, an indented line that is no frame, joined the trace: %q", tmpl[52])
	}
	rep := analyzeText(t, "dmesg.log", b.String(), 10)
	for _, e := range rep.Evidence {
		if e.Line >= 44 && e.Line <= 51 {
			t.Errorf("a line of the call trace is evidence: L%d %q", e.Line, e.Text)
		}
	}
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"xfs_file_read_iter+0x77/0xe0 [xfs]", true}, {"? __pfx_kthread+0x10/0x10", true}, {"[ 5898.891023]  dump_stack_lvl+0x44/0x5c", true},
		{"</IRQ>", true}, {"R13: 0000561a9615d1ab R14: 0000000000000000 R15: 0000000000000000", true},
		{"eth0: renamed from veth12ab", false}, {"total+0x10/0x20 was the offset", false}, {"PID: 1234 started", false},
		{"RAX: see above", false}, {"[ 12.345]  usb 1-1: new device", false},
	} {
		if got := kernelTraceLine(c.msg); got != c.want {
			t.Errorf("kernelTraceLine(%q) = %v", c.msg, got)
		}
	}
}

// TestBoxedMessages: Julia's logging draws a message with its fields in a
// box, and Terraform its diagnostics; the box's lines continue the message
// that opens it, so a field is no event (nor evidence) of its own.
func TestBoxedMessages(t *testing.T) {
	text := "Precompiling project...\n" +
		"┌ Error: could not parse record 3 of \"bad_rows.csv\", skipping\n" +
		"│   exception =\n" +
		"│    ArgumentError: invalid base 10 digit 'x' in \"12x4\"\n" +
		"└ @ Tidewater.IO ~/src/io.jl:88\n" +
		"Test Summary: | Pass  Fail  Total\n" +
		"╷\n" +
		"│ Error: Inconsistent dependency lock file\n" +
		"│ \n" +
		"│ provider registry.terraform.io/hashicorp/aws: locked version selection 5.31.0 doesn't match the updated version constraints\n" +
		"╵\n"
	path := writeFile(t, "boxes.log", []byte(text))
	tmpl := templatesByLine(t, path)
	for _, c := range [][2]int{{3, 2}, {4, 2}, {5, 2}, {9, 8}, {10, 8}, {11, 8}} {
		if tmpl[c[0]] != tmpl[c[1]] {
			t.Errorf("L%d %q should continue the box opened at L%d %q", c[0], tmpl[c[0]], c[1], tmpl[c[1]])
		}
	}
	if tmpl[6] == tmpl[2] {
		t.Errorf("L6 after the box joined it: %q", tmpl[6])
	}
	for _, e := range analyzeText(t, "boxes.log", text, 10).Evidence {
		if e.Line == 3 || e.Line == 9 || e.Line == 10 {
			t.Errorf("a line inside a box is evidence of its own: L%d %q", e.Line, e.Text)
		}
	}
}

// TestStackDumpUnderWarning: a program's dump of where a thread is, under
// its warning (discord.py's blocked event loop), is that warning's event;
// and a new warning a minute before a burst of errors precedes them, however
// many lines its dumps take.
func TestStackDumpUnderWarning(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 6, 3, 19, 0, 0, 0, time.UTC), step: 5 * time.Second, layout: "2006-01-02 15:04:05", format: "[%s] [%-8s] %s\n"}
	dump := func() {
		lg.b.WriteString("Loop thread traceback (most recent call last):\n")
		lg.line++
		for k := range 14 {
			fmt.Fprintf(&lg.b, "  File \"/app/cogs/stats.py\", line %d, in export_%d\n    rows = build_rows(conn)\n", 100+k, k)
			lg.line += 2
		}
	}
	warned, dumpAt, burst := 0, 0, 0
	for i := range 400 {
		switch {
		case i >= 300 && i < 304:
			lg.emit("WARNING", fmt.Sprintf("discord.gateway: Shard ID None heartbeat blocked for more than %d seconds.", 10*(i-299)))
			if warned == 0 {
				warned, dumpAt = lg.line, lg.line+1
			}
			dump()
		case i >= 310 && i < 340 && i%2 == 0:
			lg.emit("ERROR", fmt.Sprintf("discord.app_commands.tree: Ignoring exception in command 'export' (interaction %d): 404 Not Found (error code: 10062): Unknown interaction", 9000+i))
			if burst == 0 {
				burst = lg.line
			}
		case i%97 == 50:
			lg.emit("ERROR", fmt.Sprintf("cogs.reminders: ValueError: unknown time unit 'mins' in reminder %d", i))
		default:
			lg.emit("INFO", fmt.Sprintf("cogs.levels: member_%d reached level %d in #general", i%37, i%30))
		}
	}
	path := writeFile(t, "bot.log", []byte(lg.b.String()))
	tmpl := templatesByLine(t, path)
	for l := dumpAt; l < dumpAt+29; l++ {
		if tmpl[l] != tmpl[warned] {
			t.Fatalf("L%d %q is not part of the warning at L%d %q", l, tmpl[l], warned, tmpl[warned])
		}
	}
	if burst-warned <= precursorWindow {
		t.Fatalf("the warning at L%d is only %d lines before the errors at L%d: the test needs more", warned, burst-warned, burst)
	}
	rep := analyzeText(t, "bot.log", lg.b.String(), 5)
	for _, e := range rep.Evidence {
		if e.Line >= dumpAt && e.Line < dumpAt+29 {
			t.Errorf("a line of the dump is evidence: L%d %q", e.Line, e.Text)
		}
	}
	if why, ok := reasonOf(rep, warned); !ok || !strings.Contains(why, "lines before the errors starting at L") {
		t.Errorf("the warning at L%d, a minute before the errors at L%d, is not in the top 5 as what preceded them: %+v", warned, burst, rep.Evidence)
	}
}

// TestWarningOnlyIncident: in a service log whose incident only warns, a
// warning first seen shortly before the warnings rose is weighed as a new
// error is before a burst of errors.
func TestWarningOnlyIncident(t *testing.T) {
	lg := &timedLog{ts: time.Date(2024, 4, 17, 13, 0, 0, 0, time.UTC), step: 2 * time.Second, layout: "2006-01-02 15:04:05,000", format: "%[2]s  %[1]s [shard 5] %[3]s\n"}
	cause := 0
	for i := range 900 {
		switch {
		case i == 480:
			lg.emit("WARN", "large_data - Writing large partition telemetry/readings_by_device (63399391 bytes) to me-3g7k-big-Data.db")
			cause = lg.line
		case i > 600 && i%3 != 0:
			lg.emit("WARN", fmt.Sprintf("storage_proxy - read from telemetry.readings_by_device on 10.60.1.%d took %dms, over the 2000ms timeout", 11+i%3, 2000+i))
		case i%61 == 7:
			lg.emit("WARN", fmt.Sprintf("gossip - slow heartbeat from 10.60.1.%d (%dms)", 11+i%3, 900+i))
		default:
			lg.emit("INFO", fmt.Sprintf("compaction - Compacted %d sstables to %d bytes in %dms", 2+i%4, 1000000+i*37, 100+i%90))
		}
	}
	rep := analyzeText(t, "scylla.log", lg.b.String(), 5)
	if why, ok := reasonOf(rep, cause); !ok || !strings.Contains(why, "before the incident's rise of warnings") {
		t.Errorf("the warning at L%d, new shortly before the warnings rose, is not in the top 5 as such (%q): %+v", cause, why, rep.Evidence)
	}
}

// TestWarningsOfALogThatNeverErrs: a log with no error has its few
// warnings as evidence, even one printed twice with nothing else to say
// for it (Klipper's heater check before each shutdown).
func TestWarningsOfALogThatNeverErrs(t *testing.T) {
	var b strings.Builder
	warned := 0
	for i := 1; i <= 600; i++ {
		switch i {
		case 300, 520:
			b.WriteString("Heater extruder not heating at expected rate\n")
			if warned == 0 {
				warned = i
			}
		default:
			fmt.Fprintf(&b, "Stats %d.3: gcodein=0 mcu: mcu_awake=0.0%02d bytes_write=%d bytes_read=%d\n", 1000+i, i%90, 19000+i*37, 16000+i*11)
		}
	}
	rep := analyzeText(t, "klippy.log", b.String(), 5)
	if rankOf(rep, "", warned) > 0 {
		return
	}
	t.Errorf("the warning at L%d of a log that never errs is not evidence: %+v", warned, rep.Evidence)
}

// TestAntTasks: each line of an Ant task ("    [junit] …", its name
// right-aligned in brackets) is a message of its own, not a continuation
// of the target above it, so a failed test is not folded into "test:".
func TestAntTasks(t *testing.T) {
	for in, want := range map[string]bool{
		"    [junit] Tests run: 31, Failures: 1": true, "     [copy] Copying 14 files": true, "    [javac] 1 warning": true,
		"    [junit]": true, "    [junit": false, "  [junit] misaligned": false, "    at com.acme.Foo.bar(Foo.java:12)": false, "    [ERROR] x": false,
	} {
		if got := antTask(in); got != want {
			t.Errorf("antTask(%q) = %v, want %v", in, got, want)
		}
	}
	log := "test:\n" +
		"    [junit] Testsuite: com.acme.ledger.MoneyTest\n" +
		"    [junit] Tests run: 41, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.737 sec\n" +
		"    [junit] Testcase: accruesDailyInterestOnLeapDay(com.acme.ledger.interest.AccrualTest):\tFAILED\n" +
		"    [junit] expected:<1.37> but was:<1.36>\n" +
		"\n" +
		"BUILD FAILED\n"
	path := writeFile(t, "build.log", []byte(log))
	tmpl := templatesByLine(t, path)
	if tmpl[4] == tmpl[1] || tmpl[5] == tmpl[1] {
		t.Errorf("the failed test is folded into the target: L1 %q, L4 %q, L5 %q", tmpl[1], tmpl[4], tmpl[5])
	}
	rep := analyzeText(t, "build.log", log, 3)
	found := false
	for _, e := range rep.Evidence {
		found = found || e.Line == 4 || e.Line == 5
	}
	if !found {
		t.Errorf("the failed test is not in the top 3: %+v", rep.Evidence)
	}
}

// FuzzLineRules runs the line rules that index into a line (Ant's task
// column, Elm's headings, Python's stack listings, setting drift) on
// arbitrary text: none may panic, and each holds to what it claims.
func FuzzLineRules(f *testing.F) {
	for _, s := range []string{"    [junit] x", "    [junit", "-- DEBUG REMNANTS ---", "-- ", "Loop thread traceback (most recent call last):",
		"subnets: 6; DDNS: disabled", `"limit_mib": 400`, "Error:", "[!] x", "",
		"[Container] 2024/06/25 13:06:14.10 Running command x", "  ✅  Success - Main x", "[CI/x] ⭐ Run Main x",
		"(fail) x", "1: not ok 3 - x", "[INFO] --- jacoco:0.8.12:check (c) @ fx ---"} {
		f.Add(s, s+"1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if antTask(a) && (len(a) < 11 || a[10] != ']') {
			t.Fatalf("antTask(%q) without its bracket at the eleventh byte", a)
		}
		if elmHeading(a) && !strings.HasPrefix(a, "-- ") {
			t.Fatalf("elmHeading(%q) without its dashes", a)
		}
		_ = pythonStack(a)
		if d := settingDrift(a, a); d != "" {
			t.Fatalf("settingDrift of a line with itself = %q", d)
		}
		_ = settingDrift(a, b)
		_ = keywordLevel(a)
		_ = announcer(a)
		if l := detectLevel(a); l > lvFatal {
			t.Fatalf("detectLevel(%q) = %d", a, l)
		}
		if actMarker(a) != "" && !strings.Contains(a, actMarker(a)) {
			t.Fatalf("actMarker(%q) = %q, not in the line", a, actMarker(a))
		}
		_ = stepLine(a)
		_ = codeBuildRun(a)
	})
}
