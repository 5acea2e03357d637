package logscan

import (
	"bytes"
	"context"
	"github.com/sleuth-bot/sleuth/skills/logscan/internal/loggen"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchFile writes the benchmark log once per process, or returns
// SLEUTH_BENCH_FILE when set (a log written by an earlier run, kept with
// SLEUTH_BENCH_KEEP=path).
func benchFile(b *testing.B) (string, int64) {
	if p := os.Getenv("SLEUTH_BENCH_FILE"); p != "" {
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		return p, st.Size()
	}
	gb := os.Getenv("SLEUTH_BENCH_GB")
	if gb == "" {
		b.Skip("set SLEUTH_BENCH_GB=1 to run: writes a 1 GB log to a temporary directory")
	}
	size, err := strconv.ParseFloat(gb, 64)
	if err != nil || size <= 0 {
		b.Fatalf("SLEUTH_BENCH_GB=%q: want a positive number of GB", gb)
	}
	p := os.Getenv("SLEUTH_BENCH_KEEP")
	if p == "" {
		p = filepath.Join(b.TempDir(), "bench.log")
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := loggen.Write(f, int64(size*(1<<30)), 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(p)
	return p, st.Size()
}

// resetPeakRSS asks Linux to restart the VmHWM counter; peakRSS reads it.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// grepTime times `grep -c ERROR` on the same file, warm cache.
func grepTime(b *testing.B, path string) time.Duration {
	exec.Command("grep", "-c", "ERROR", path).Run() // warm the page cache
	t0 := time.Now()
	// Capture the output: GNU grep stops at the first match when stdout is /dev/null.
	if _, err := exec.Command("grep", "-c", "ERROR", path).Output(); err != nil {
		b.Logf("grep: %v", err)
	}
	return time.Since(t0)
}

// BenchmarkAnalyze1GB reports analyze throughput, its ratio to grep -c
// ERROR on the same file, and peak RSS. Run with:
//
//	SLEUTH_BENCH_GB=1 go test -run XXX -bench BenchmarkAnalyze1GB -benchtime 1x ./skills/logscan/
func BenchmarkAnalyze1GB(b *testing.B) {
	path, size := benchFile(b)
	g := grepTime(b, path)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(160 << 20) // as the sleuth CLI does
	}
	runtime.GC()
	resetPeakRSS()
	b.ResetTimer()
	cpu0 := cpuTime()
	t0 := time.Now()
	var rep *Report
	for i := 0; i < b.N; i++ {
		var err error
		rep, err = Analyze(context.Background(), []string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(t0) / time.Duration(b.N)
	cpu := (cpuTime() - cpu0) / time.Duration(b.N)
	b.StopTimer()
	mbs := float64(size) / (1 << 20) / d.Seconds()
	b.ReportMetric(cpu.Seconds(), "cpu_s")
	b.ReportMetric(mbs, "MB/s")
	b.ReportMetric(float64(d)/float64(g), "x_grep")
	b.ReportMetric(peakRSS(), "peakRSS_MB")
	b.ReportMetric(float64(rep.Lines)/d.Seconds(), "lines/s")
	b.Logf("%d MB, %d lines: analyze %v (%.0f MB/s, CPU %v), grep -c ERROR %v, ratio %.2f, peak RSS %.0f MB, %d templates, load %s",
		size>>20, rep.Lines, d.Round(time.Millisecond), mbs, cpu.Round(time.Millisecond), g.Round(time.Millisecond), float64(d)/float64(g), peakRSS(), len(rep.Templates), loadAvg())
}

// pythonDrainLinesPerSec is Python Drain's throughput the issue compares
// with (about 25k lines/s); the target is 50 times it.
const pythonDrainLinesPerSec = 25_000

// BenchmarkTemplates1GB reports `sleuth templates --jsonl` throughput in
// lines per second (output discarded).
func BenchmarkTemplates1GB(b *testing.B) {
	path, size := benchFile(b)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(160 << 20) // as the sleuth CLI does
	}
	runtime.GC()
	resetPeakRSS()
	b.ResetTimer()
	cpu0 := cpuTime()
	t0 := time.Now()
	var cw countWriter
	for i := 0; i < b.N; i++ {
		if err := WriteTemplatesJSONL(context.Background(), path, Options{}, &cw); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(t0) / time.Duration(b.N)
	b.StopTimer()
	cpu := (cpuTime() - cpu0) / time.Duration(b.N)
	lines := float64(cw.lines) / float64(b.N)
	b.ReportMetric(cpu.Seconds(), "cpu_s")
	b.ReportMetric(lines/d.Seconds(), "lines/s")
	b.ReportMetric(lines/d.Seconds()/pythonDrainLinesPerSec, "x_drain")
	b.ReportMetric(float64(size)/(1<<20)/d.Seconds(), "MB/s")
	b.ReportMetric(peakRSS(), "peakRSS_MB")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the 1-minute load average, "?" when unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

type countWriter struct{ lines int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// BenchmarkAnalyzeSmall measures a 64 MB log without the env gate.
func BenchmarkAnalyze64MB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "b.log")
	f, _ := os.Create(p)
	loggen.Write(f, 64<<20, 2)
	f.Close()
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(context.Background(), []string{p}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStages measures each pipeline stage alone, on one goroutine, in
// ns per line of a 16 MB generated log: split (lines of a block), parse
// (header, level, timestamp), group (event boundaries), mine (Miner.Add of
// each event head) and consume (mining plus the engine's statistics). Run:
//
//	go test -run XXX -bench BenchmarkStages -benchtime 3x ./skills/logscan/
func BenchmarkStages(b *testing.B) {
	var buf strings.Builder
	if err := loggen.Write(&buf, 16<<20, 4); err != nil {
		b.Fatal(err)
	}
	region := buf.String()
	lines := splitLines(nil, region, defaultMaxLineBytes)
	g := newGrouper(lines[:headerSample])
	recs := make([]rec, len(lines))
	for i, l := range lines {
		recs[i] = g.parse(l)
		g.group(&recs[i])
	}
	perLine := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/line")
	}
	b.Run("split", func(b *testing.B) {
		dst := make([]string, 0, len(lines))
		for b.Loop() {
			dst = splitLines(dst[:0], region, defaultMaxLineBytes)
		}
		perLine(b)
	})
	b.Run("parse", func(b *testing.B) {
		out := make([]rec, len(lines))
		for b.Loop() {
			for i, l := range lines {
				out[i] = g.parse(l)
			}
		}
		perLine(b)
	})
	b.Run("group", func(b *testing.B) {
		out := append([]rec(nil), recs...)
		for b.Loop() {
			g.groupState = groupState{}
			for i := range out {
				g.group(&out[i])
			}
		}
		perLine(b)
	})
	b.Run("mine", func(b *testing.B) {
		for b.Loop() {
			m := newEngine(Options{}).m
			for i := range recs {
				if !recs[i].cont && !recs[i].blank {
					m.Add(recs[i].msg)
				}
			}
		}
		perLine(b)
	})
	b.Run("consume", func(b *testing.B) {
		for b.Loop() {
			e := newEngine(Options{})
			fs := &fileState{name: "x", minutes: map[int64]*minuteBucket{}}
			e.phase = 1
			e.files = append(e.files, fs)
			e.consume(fs, 0, 1, recs, nil)
			e.finishEvent(fs, 0)
		}
		perLine(b)
	})
}

// BenchmarkCLI1GB measures the product as users run it: it builds the
// sleuth binary (with the profile-guided optimisation `go build` applies
// from cmd/sleuth/default.pgo) and runs `sleuth analyze --json` and
// `sleuth templates --jsonl` on the generated log, each round next to
// `grep -c ERROR` on the same file, so the ratios compare runs made under
// the same load. It reports medians over SLEUTH_BENCH_ROUNDS rounds
// (default 3). Run with:
//
//	SLEUTH_BENCH_GB=1 go test -run XXX -bench BenchmarkCLI1GB -benchtime 1x ./skills/logscan/
func BenchmarkCLI1GB(b *testing.B) {
	path, size := benchFile(b)
	rounds := 3
	if s := os.Getenv("SLEUTH_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("SLEUTH_BENCH_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	bin := filepath.Join(b.TempDir(), "sleuth")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sleuth-bot/sleuth/cmd/sleuth").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	type run struct {
		wall, cpu time.Duration
		rssMB     float64
	}
	exe := func(stdout bool, name string, args ...string) run {
		cmd := exec.Command(name, args...)
		var sink countWriter
		if stdout {
			cmd.Stdout = &sink // a pipe: GNU grep stops at the first match when stdout is /dev/null
		}
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		r := run{wall: time.Since(t0), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.rssMB = float64(ru.Maxrss) / 1024
		}
		return r
	}
	exe(true, "grep", "-c", "ERROR", path) // warm the page cache
	var grep, analyze, templates []run
	var ratioA, ratioT []float64
	b.ResetTimer()
	for range rounds {
		g := exe(true, "grep", "-c", "ERROR", path)
		a := exe(true, bin, "analyze", "--json", path)
		t := exe(true, bin, "templates", "--jsonl", path)
		grep, analyze, templates = append(grep, g), append(analyze, a), append(templates, t)
		ratioA = append(ratioA, float64(a.wall)/float64(g.wall))
		ratioT = append(ratioT, float64(t.wall)/float64(g.wall))
	}
	b.StopTimer()
	med := func(rs []run, f func(run) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return median(v)
	}
	wall := func(r run) float64 { return r.wall.Seconds() }
	mb := float64(size) / (1 << 20)
	lines := float64(countLines(b, path))
	b.ReportMetric(mb/med(analyze, wall), "analyze_MB/s")
	b.ReportMetric(median(ratioA), "analyze_x_grep")
	b.ReportMetric(lines/med(templates, wall)/pythonDrainLinesPerSec, "templates_x_drain")
	b.Logf("%.0f MB, %.0f lines, %d rounds (medians): grep -c ERROR %.2fs; analyze %.2fs = %.0f MB/s, CPU %.2fs, %.1f× grep, peak RSS %.0f MB; templates %.2fs = %.0f lines/s (%.0f× Python Drain), CPU %.2fs, %.1f× grep, peak RSS %.0f MB; load %s",
		mb, lines, rounds, med(grep, wall),
		med(analyze, wall), mb/med(analyze, wall), med(analyze, func(r run) float64 { return r.cpu.Seconds() }), median(ratioA), med(analyze, func(r run) float64 { return r.rssMB }),
		med(templates, wall), lines/med(templates, wall), lines/med(templates, wall)/pythonDrainLinesPerSec, med(templates, func(r run) float64 { return r.cpu.Seconds() }), median(ratioT), med(templates, func(r run) float64 { return r.rssMB }),
		loadAvg())
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// countLines counts the lines of path as the engine numbers them.
func countLines(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var cw countWriter
	buf := make([]byte, 1<<20)
	var last byte = '\n'
	for {
		n, err := f.Read(buf)
		if n > 0 {
			cw.Write(buf[:n])
			last = buf[n-1]
		}
		if err != nil {
			break
		}
	}
	if last != '\n' {
		cw.lines++
	}
	return cw.lines
}
