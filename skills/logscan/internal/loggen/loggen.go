// Package loggen writes a realistic generated service log for the log
// engine's and the miner's benchmarks and tests, so both measure the same
// input.
package loggen

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Write writes a realistic service log of about size bytes: ISO
// timestamps, levels, thread and logger fields, a few hundred templates with
// ids, numbers, IPs, durations; occasional Java stack traces and warnings.
func Write(w io.Writer, size int64, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 7))
	bw := bufio.NewWriterSize(w, 1<<20)
	levels := []string{" INFO", " INFO", " INFO", " INFO", "DEBUG", " INFO", " WARN", "ERROR"}
	loggers := []string{"c.e.api.OrderController", "c.e.db.Pool", "c.e.cache.Redis", "o.a.kafka.Consumer", "c.e.auth.TokenFilter", "c.e.jobs.Scheduler"}
	verbs := []string{"GET", "POST", "PUT", "DELETE"}
	var buf []byte
	var n int64
	ms := int64(1_700_000_000_000)
	for line := 0; n < size; line++ {
		ms += int64(r.IntN(40))
		buf = buf[:0]
		buf = time.UnixMilli(ms).UTC().AppendFormat(buf, "2006-01-02 15:04:05.000")
		buf = append(buf, ' ')
		lv := levels[r.IntN(len(levels))]
		if lv == "ERROR" && r.IntN(8) != 0 {
			lv = " INFO"
		}
		buf = append(buf, lv...)
		buf = append(buf, " 1 --- [worker-"...)
		buf = strconv.AppendInt(buf, int64(r.IntN(64)), 10)
		buf = append(buf, "] "...)
		buf = append(buf, loggers[r.IntN(len(loggers))]...)
		buf = append(buf, " : "...)
		switch k := r.IntN(12); k {
		case 0, 1, 2, 3:
			buf = append(buf, verbs[r.IntN(4)]...)
			buf = append(buf, " /v1/orders/"...)
			buf = strconv.AppendInt(buf, int64(r.IntN(1_000_000)), 10)
			buf = append(buf, " status=200 in "...)
			buf = strconv.AppendInt(buf, int64(r.IntN(300)), 10)
			buf = append(buf, "ms"...)
		case 4, 5:
			buf = append(buf, "cache hit ratio="...)
			buf = strconv.AppendFloat(buf, r.Float64(), 'f', 3, 64)
			buf = append(buf, " keys="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(100000)), 10)
		case 6:
			buf = append(buf, "connection from 10."...)
			buf = strconv.AppendInt(buf, int64(r.IntN(255)), 10)
			buf = append(buf, '.')
			buf = strconv.AppendInt(buf, int64(r.IntN(255)), 10)
			buf = append(buf, ".7:"...)
			buf = strconv.AppendInt(buf, int64(1024+r.IntN(60000)), 10)
			buf = append(buf, " accepted"...)
		case 7:
			buf = append(buf, "consumer group rebalanced, partitions="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(32)), 10)
			buf = append(buf, " generation="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(5000)), 10)
		case 8:
			buf = append(buf, "user "...)
			buf = strconv.AppendUint(buf, r.Uint64(), 16)
			buf = append(buf, " logged in from session "...)
			buf = strconv.AppendUint(buf, r.Uint64(), 36)
		case 9:
			buf = append(buf, "job "...)
			buf = strconv.AppendInt(buf, int64(r.IntN(50)), 10)
			buf = append(buf, " finished in "...)
			buf = strconv.AppendFloat(buf, r.Float64()*10, 'f', 2, 64)
			buf = append(buf, "s, rows="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(1e6)), 10)
		case 10:
			buf = append(buf, "pool stats active="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(10)), 10)
			buf = append(buf, " idle="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(10)), 10)
			buf = append(buf, " waiting="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(3)), 10)
		default:
			buf = append(buf, "token refresh for client app-"...)
			buf = strconv.AppendInt(buf, int64(r.IntN(200)), 10)
			buf = append(buf, " expires_in="...)
			buf = strconv.AppendInt(buf, int64(r.IntN(3600)), 10)
		}
		buf = append(buf, '\n')
		if lv == "ERROR" {
			buf = append(buf, "java.lang.IllegalStateException: order "...)
			buf = strconv.AppendInt(buf, int64(r.IntN(1_000_000)), 10)
			buf = append(buf, " in bad state\n\tat c.e.api.OrderService.place(OrderService.java:88)\n\tat c.e.api.OrderController.post(OrderController.java:41)\nCaused by: java.sql.SQLException: deadlock detected\n\t... 12 more\n"...)
		}
		m, err := bw.Write(buf)
		if err != nil {
			return err
		}
		n += int64(m)
	}
	return bw.Flush()
}
