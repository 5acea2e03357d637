package miner

import (
	"github.com/sleuth-bot/sleuth/skills/logscan/internal/loggen"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkParseAndAdd measures the per-line hot path the log engine runs:
// Format.Parse then Miner.Add on the message. Sub-benchmarks: "spring" is
// synthetic Spring Boot lines (testdata, numbers varied, always present);
// the others are the Loghub-2k files when ../shared is present. ns/op is
// per line; MB/s counts line bytes.
//
//	go test -run '^$' -bench ParseAndAdd -benchtime 2s ./skills/logscan/miner/
func BenchmarkParseAndAdd(b *testing.B) {
	for _, c := range benchCorpora() {
		b.Run(c.name, func(b *testing.B) { benchLines(b, c.lines) })
	}
}

// BenchmarkParse and BenchmarkAdd measure the two halves of the hot path
// separately on the same corpora.
func BenchmarkParse(b *testing.B) {
	for _, c := range benchCorpora() {
		b.Run(c.name, func(b *testing.B) {
			f := Learn(c.lines[:min(len(c.lines), 2000)])
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			n := 0
			for i := 0; i < b.N; i++ {
				n += f.Parse(c.lines[i%len(c.lines)]).MsgStart
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/line")
			sinkInt = n
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, c := range benchCorpora() {
		b.Run(c.name, func(b *testing.B) {
			msgs := corpusMsgs(c.lines)
			m := New()
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				m.Add(msgs[i%len(msgs)])
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/line")
		})
	}
}

var sinkInt int

type benchCorpus struct {
	name  string
	lines []string
}

// benchCorpora: "mixed" (a realistic service log, every line fresh),
// "spring" (synthetic Spring Boot lines), "ids" (messages full of random
// identifiers, ids_test.go), then the Loghub-2k files when
// ../shared is present (cycled, so they measure repeats of known shapes).
func benchCorpora() []benchCorpus {
	ids, _ := idCorpus(1, 200000)
	out := []benchCorpus{{"mixed", mixedLines(200000)}, {"spring", springLines(20000)}, {"names", nameLines(200000, 100000)}, {"ids", ids}}
	dir, err := os.Getwd()
	if err != nil {
		return out
	}
	for _, d := range gaDatasets {
		p := filepath.Join(dir, "..", "..", "..", "..", "shared", "logs", "loghub2k", d, d+"_2k.log")
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		out = append(out, benchCorpus{d, strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")})
	}
	return out
}

// mixedLines is the start of the engine's 1 GB benchmark log (package
// loggen): ISO timestamps, levels, thread and logger fields, a dozen
// message shapes with ids, numbers, IPs, hex and base-36 tokens, floats,
// and Java stack traces after some errors.
func mixedLines(n int) []string {
	var b strings.Builder
	for size := int64(n) * 128; ; size *= 2 {
		b.Reset()
		if err := loggen.Write(&b, size, 1); err != nil {
			panic(err)
		}
		if lines := strings.Split(b.String(), "\n"); len(lines) > n {
			return lines[:n]
		}
	}
}

// nameLines is a worst case for the skeleton cache: sshd lines naming one
// of k random user names, so most lines bring a shape the cache has not
// kept.
func nameLines(n, k int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	names := make([]string, k)
	for i := range names {
		b := make([]byte, 6+r.IntN(5))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		names[i] = string(b)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = "Dec 10 09:12:" + strconv.Itoa(10+r.IntN(50)) + " LabSZ sshd[" + strconv.Itoa(1000+r.IntN(9000)) +
			"]: Invalid user " + names[r.IntN(k)] + " from 10.0." + strconv.Itoa(r.IntN(256)) + "." + strconv.Itoa(r.IntN(256)) +
			" port " + strconv.Itoa(1024+r.IntN(60000))
	}
	return out
}

func benchLines(b *testing.B, lines []string) {
	f := Learn(lines[:min(len(lines), 2000)])
	m := New()
	total := 0
	for _, l := range lines {
		total += len(l) + 1
	}
	b.SetBytes(int64(total / len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		l := lines[i%len(lines)]
		h := f.Parse(l)
		m.Add(h.Msg(l))
	}
	// CPU time per line: honest on a loaded machine, where wall-clock
	// ns/op also counts time spent waiting for a core.
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/line")
}

// cpuTime returns the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// springLines varies the numbers of the Spring Boot sample lines.
func springLines(n int) []string {
	base := []string{
		"2026-11-28 09:58:04.128  INFO 1 --- [http-nio-8080-exec-132] c.e.payments.api.ChargeController : POST /v1/charges merchant=63359 amount=82659 status=201 in 86ms",
		"2026-11-28 09:58:04.229 DEBUG 1 --- [http-nio-8080-exec-115] c.e.payments.fraud.FraudClient : score=0.303 merchant=12884",
		"2026-11-28 09:58:05.618  INFO 1 --- [http-nio-8080-exec-190] c.e.payments.api.ChargeController : GET /v1/charges/ch_a69d95847e status=200 in 7ms",
		"2026-11-28 10:02:11.004  WARN 1 --- [http-nio-8080-exec-17] com.zaxxer.hikari.pool.HikariPool : HikariPool-1 - Thread starvation or clock leap detected (housekeeper delta=1m2s).",
		"2026-11-28 10:02:40.512 ERROR 1 --- [http-nio-8080-exec-88] c.e.payments.api.ChargeController : charge failed for merchant 4711: Connection is not available, request timed out after 30000ms",
	}
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		b := []byte(base[r.IntN(len(base))])
		for k, c := range b {
			if c >= '0' && c <= '9' && k > 24 {
				b[k] = byte('0' + r.IntN(10))
			}
		}
		out[i] = string(b)
	}
	return out
}

// BenchmarkSkeleton measures the skeleton pass alone (Sketch.Add, what the
// engine's parsers run on every message) on the messages of each corpus.
//
//	go test -run '^$' -bench Skeleton -benchtime 2s ./skills/logscan/miner/
func BenchmarkSkeleton(b *testing.B) {
	for _, c := range benchCorpora() {
		b.Run(c.name, func(b *testing.B) {
			msgs := corpusMsgs(c.lines)
			var s Sketch
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%1024 == 0 {
					s.Reset()
				}
				s.Add(msgs[i%len(msgs)])
			}
		})
	}
}

// corpusMsgs returns the messages of lines, past the headers a format
// learnt from their start finds.
func corpusMsgs(lines []string) []string {
	f := Learn(lines[:min(len(lines), 2000)])
	msgs := make([]string, len(lines))
	for i, l := range lines {
		msgs[i] = f.Parse(l).Msg(l)
	}
	return msgs
}
