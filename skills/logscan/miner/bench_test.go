package miner

import (
	"math/rand/v2"
	"os"
	"path/filepath"
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
	b.Run("spring", func(b *testing.B) { benchLines(b, springLines(20000)) })
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range gaDatasets {
		p := filepath.Join(dir, "..", "..", "..", "..", "shared", "logs", "loghub2k", d, d+"_2k.log")
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		b.Run(d, func(b *testing.B) { benchLines(b, lines) })
	}
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
