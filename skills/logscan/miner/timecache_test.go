package miner

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// timeLine renders t in one of the timestamp shapes parseTime knows,
// followed by a message.
func timeLine(r *rand.Rand, t time.Time) string {
	zones := []string{"Z", "+00:00", "+05:30", "-0800", "+02", ""}
	frac := []string{"", ".123", ",5", ".123456789", ":042"}
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	days := []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	clk := fmt.Sprintf("%02d:%02d:%02d", h, mi, s)
	switch r.IntN(12) {
	case 0:
		return fmt.Sprintf("%04d-%02d-%02dT%s%s%s INFO x", y, mo, d, clk, frac[r.IntN(len(frac))], zones[r.IntN(len(zones))])
	case 1:
		return fmt.Sprintf("%04d/%02d/%02d %s%s WARN y", y, mo, d, clk, frac[r.IntN(len(frac))])
	case 2:
		return fmt.Sprintf("%04d%02d%02d-%s:%03d z", y, mo, d, clk, r.IntN(1000))
	case 3:
		return fmt.Sprintf("%02d%02d%02d %02d%02d%02d a", y%100, mo, d, h, mi, s)
	case 4:
		return fmt.Sprintf("%02d-%02d %s.%03d  123  456 I Tag: b", mo, d, clk, r.IntN(1000))
	case 5:
		return fmt.Sprintf("%02d/%s/%04d:%s %s c", d, months[mo-1], y, clk, []string{"+0000", "-0700", "+0530"}[r.IntN(3)])
	case 6:
		return fmt.Sprintf("%s %2d %s host prog[1]: d", months[mo-1], d, clk)
	case 7:
		return fmt.Sprintf("%s %s %d %s %04d e", days[t.Weekday()], months[mo-1], d, clk, y)
	case 8:
		return fmt.Sprintf("%s %d, %04d %s f", months[mo-1], d, y, clk)
	case 9:
		// a day of month that runs into more digits: never a cached prefix
		return fmt.Sprintf("%s %d%d %s g", months[mo-1], d, r.IntN(10), clk)
	case 10:
		return fmt.Sprintf("%04d-%02d-%02d h", y, mo, d)
	default:
		return fmt.Sprintf("%s, %s %02d %s i", days[r.IntN(7)], months[mo-1], d, clk)
	}
}

// TestTimeCacheMatchesUncached converts many random timestamps with and
// without the date cache, in sequences whose dates mostly repeat, roll over
// days, months, years and leap days, and sometimes jump backwards.
func TestTimeCacheMatchesUncached(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	starts := []time.Time{
		time.Date(2024, 2, 28, 23, 59, 50, 0, time.UTC),  // leap day
		time.Date(2023, 2, 28, 23, 59, 58, 0, time.UTC),  // no leap day
		time.Date(2100, 2, 28, 23, 59, 58, 0, time.UTC),  // century, no leap day
		time.Date(2000, 2, 28, 23, 59, 58, 0, time.UTC),  // 400 years, leap day
		time.Date(2023, 12, 31, 23, 59, 30, 0, time.UTC), // year rollover
		time.Date(2019, 4, 30, 23, 58, 0, 0, time.UTC),   // month rollover
		time.Date(2009, 9, 9, 9, 9, 9, 0, time.UTC),
	}
	year := 2024
	checked := 0
	for _, st := range starts {
		var tc timeCache
		now := st
		for n := 0; n < 4000; n++ {
			switch k := r.IntN(100); {
			case k < 80:
				now = now.Add(time.Duration(r.IntN(3000)) * time.Millisecond)
			case k < 95:
				now = now.Add(time.Duration(r.IntN(48)) * time.Hour)
			case k < 98:
				now = now.Add(-time.Duration(r.IntN(72)) * time.Hour)
			default:
				now = now.AddDate(0, r.IntN(14), r.IntN(40))
			}
			line := timeLine(r, now)
			e0, ms0, ok0 := parseTime(line, 0, year, nil)
			e1, ms1, ok1 := parseTime(line, 0, year, &tc)
			if e0 != e1 || ms0 != ms1 || ok0 != ok1 {
				t.Fatalf("%q: uncached (%d, %d, %v), cached (%d, %d, %v)", line, e0, ms0, ok0, e1, ms1, ok1)
			}
			if ok0 {
				checked++
			}
		}
	}
	if checked < 20000 {
		t.Fatalf("only %d of 28000 lines held a timestamp", checked)
	}
}

// TestTimeCacheReference checks cached conversion against package time on
// random instants in random zones, in order, so the cache is hit and missed.
func TestTimeCacheReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var tc timeCache
	now := time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 50000; n++ {
		now = now.Add(time.Duration(r.Int64N(int64(30 * time.Hour))))
		off := (r.IntN(29) - 14) * 3600
		if r.IntN(4) == 0 {
			off += 1800
		}
		loc := time.FixedZone("", off)
		tt := now.In(loc).Truncate(time.Millisecond)
		line := tt.Format("2006-01-02T15:04:05.000-07:00") + " msg"
		_, ms, ok := parseTime(line, 0, 2024, &tc)
		if !ok || ms != tt.UnixMilli() {
			t.Fatalf("%q: got (%d, %v) want %d", line, ms, ok, tt.UnixMilli())
		}
	}
}

// TestParserMatchesFormat checks that a Parser gives every Header field
// exactly as Format.Parse does, on files whose date changes mid-file and on
// lines whose syslog day runs into more digits than the cached prefix.
func TestParserMatchesFormat(t *testing.T) {
	files := [][]string{
		{
			"Jan  5 23:59:59 host sshd[1]: a",
			"Jan  5 23:59:59 host sshd[1]: b",
			"Jan  6 00:00:00 host sshd[1]: c",
			"Jan  61 00:00:00 host sshd[1]: d",
			"Jan  6 00:00:01 host sshd[1]: e",
			"Jan  6  00:00:01 host sshd[1]: f",
			"Feb 29 12:00:00 host sshd[1]: g",
			"Jan  6 00:00:01",
			"Jan  6",
			"Jan  6 ",
			"Mon Jan  6 00:00:01 host sshd[1]: h",
		},
		{
			"2024-02-28 23:59:59.999 ERROR a",
			"2024-02-29 00:00:00.000 ERROR b",
			"2024-02-29 00:00:00,5 INFO c",
			"2024-03-01T00:00:00Z INFO d",
			"2023-12-31T23:59:59-01:00 INFO e",
			"2024-01-01T00:00:00+01:00 INFO f",
			"2024-13-01 00:00:00 INFO g",
			"2024-02-31 00:00:00 INFO h",
		},
		{
			`{"time":"2024-02-29T10:00:00Z","level":"info","msg":"a"}`,
			`{"time":"2024-02-29T10:00:01Z","level":"info","msg":"b"}`,
			`{"time":"2024-03-01T10:00:01+02:00","level":"info","msg":"c"}`,
		},
	}
	r := rand.New(rand.NewPCG(1, 2))
	var random []string
	now := time.Date(2023, 12, 30, 22, 0, 0, 0, time.UTC)
	for n := 0; n < 5000; n++ {
		now = now.Add(time.Duration(r.IntN(120)) * time.Second)
		random = append(random, timeLine(r, now))
	}
	files = append(files, random)
	for fi, lines := range files {
		f := Learn(lines)
		p := f.NewParser()
		for _, ln := range lines {
			if got, want := p.Parse(ln), f.Parse(ln); got != want {
				t.Fatalf("file %d %q: Parser %+v, Format %+v", fi, ln, got, want)
			}
		}
	}
	if h := (*Format)(nil).NewParser().Parse("Jan  5 23:59:59 x"); h != (Header{}) {
		t.Fatalf("nil format: %+v", h)
	}
}

// FuzzTimeCache: a line read after another that shares its first n bytes
// (so the date cache and the date-and-minutes cache are hit) parses as it
// does with no cache.
func FuzzTimeCache(f *testing.F) {
	for _, s := range []string{
		"2024-01-15 10:04:05.123 INFO x", "2024-01-15T10:04:05Z msg", "2024-01-15 10:04:05,1 +0100 x",
		"2024-01-15T10:04:05.123456789+01:00 x", "Jan 15 10:04:05 host x", "2024/01/15 10:04:059 x",
	} {
		f.Add(s, 17, "06.5 x")
	}
	f.Fuzz(func(t *testing.T, a string, n int, tail string) {
		if n < 0 || n > len(a) {
			return
		}
		b := a[:n] + tail
		var tc timeCache
		for _, s := range []string{a, b, a, b} {
			e0, ms0, ok0 := parseTime(s, 0, 2024, nil)
			e1, ms1, ok1 := parseTime(s, 0, 2024, &tc)
			if e0 != e1 || ms0 != ms1 || ok0 != ok1 {
				t.Fatalf("%q after %q: uncached (%d, %d, %v), cached (%d, %d, %v)", s, a, e0, ms0, ok0, e1, ms1, ok1)
			}
		}
	})
}

// TestISOPrefixCache: lines that share an ISO timestamp's date, hour and
// minute with the line before, and then go on in every way the reader
// branches on (one, two or three second digits, leap and bad seconds,
// fractions, zones, a second zone, no boundary, a date alone), parse as
// they do without the cache.
func TestISOPrefixCache(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	prefixes := []string{"2023-11-14 22:13:", "2023-11-14T22:13:", "2024/02/29 23:59:", "2023-11-14  09:05:", "2023-13-40 10:10:", "2023-11-14 25:10:"}
	secs := []string{"20", "5", "60", "61", "99", "205", "07", "0x", "", "3:"}
	fracs := []string{"", ".022", ",5", ":042", ".1234567890", ".", "000"}
	zones := []string{"", "Z", "+05:30", "-0800", "+02", " +0100", " -07:00 x", "Zulu", "+5"}
	tails := []string{" INFO x", "", "]", "x", ": y", "-", " "}
	var tc timeCache
	checked, hits := 0, 0
	prefix := prefixes[0]
	for n := 0; n < 200000; n++ {
		if r.IntN(8) == 0 {
			prefix = prefixes[r.IntN(len(prefixes))]
		}
		line := prefix + secs[r.IntN(len(secs))] + fracs[r.IntN(len(fracs))] +
			zones[r.IntN(len(zones))] + tails[r.IntN(len(tails))]
		if r.IntN(20) == 0 {
			line = line[:r.IntN(len(line)+1)]
		}
		if _, _, ok := tc.isoHit(line, 0); ok {
			hits++
		}
		e0, ms0, ok0 := parseTime(line, 0, 2024, nil)
		e1, ms1, ok1 := parseTime(line, 0, 2024, &tc)
		if e0 != e1 || ms0 != ms1 || ok0 != ok1 {
			t.Fatalf("%q: uncached (%d, %d, %v), cached (%d, %d, %v)", line, e0, ms0, ok0, e1, ms1, ok1)
		}
		if ok0 {
			checked++
		}
	}
	if checked < 50000 || hits < 5000 {
		t.Fatalf("%d lines held a timestamp, %d hit the prefix cache: the test no longer covers the cache", checked, hits)
	}
}
