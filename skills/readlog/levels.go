package readlog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// levelRank orders levels; 0 means none.
func levelRank(level string) int {
	switch strings.ToLower(level) {
	case miner.LevelFatal, "panic", "critical", "crit", "severe", "emerg", "alert":
		return 5
	case miner.LevelError, "err", "e":
		return 4
	case miner.LevelWarn, "warning", "w":
		return 3
	case miner.LevelInfo, "notice", "i":
		return 2
	case miner.LevelDebug, "d", "v":
		return 1
	case miner.LevelTrace:
		return 1
	}
	return 0
}

// lineTime is a line's timestamp: Unix ms (when it has a date) and the
// time of day in ms.
type lineTime struct {
	ok      bool
	hasDate bool
	unixMS  int64
	todMS   int64
}

var (
	// Fallbacks for when the header detector finds nothing.
	levelWordRE = regexp.MustCompile(`\b(FATAL|PANIC|CRITICAL|CRIT|SEVERE|ERROR|ERR|WARNING|WARN|INFO|NOTICE|DEBUG|TRACE)\b`)
	levelKVRE   = regexp.MustCompile(`(?i)"?(?:level|lvl|severity)"?\s*[=:]\s*"?([a-z]+)`)
	espLevelRE  = regexp.MustCompile(`^\x1b?(?:\[[0-9;]*m)?([EWIDV]) \(\d+\)`)
	dateTimeRE  = regexp.MustCompile(`(\d{4})[-/](\d{2})[-/](\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?`)
	clockRE     = regexp.MustCompile(`(?:^|[\s\[])(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?`)
)

// headerSpan is how far into a line the fallbacks look for a level.
const headerSpan = 120

// classify returns the level rank and timestamp of a line, from the
// detector's header when it found one, else from common layouts.
func classify(h miner.Header, text string) (int, lineTime) {
	lvl := levelRank(h.Level)
	if lvl == 0 {
		head := text
		if len(head) > headerSpan {
			head = head[:headerSpan]
		}
		if m := espLevelRE.FindStringSubmatch(head); m != nil {
			lvl = levelRank(m[1])
		} else if m := levelWordRE.FindStringSubmatch(head); m != nil {
			lvl = levelRank(m[1])
		} else if m := levelKVRE.FindStringSubmatch(text); m != nil {
			lvl = levelRank(m[1])
		}
	}
	var t lineTime
	if h.UnixMS > 0 && h.UnixMS > 1e11 { // a real date, not a relative clock
		tt := time.UnixMilli(h.UnixMS).UTC()
		t = lineTime{ok: true, hasDate: true, unixMS: h.UnixMS, todMS: todOf(tt)}
	} else {
		head := text
		if len(head) > headerSpan {
			head = head[:headerSpan]
		}
		if m := dateTimeRE.FindStringSubmatch(head); m != nil {
			tt := time.Date(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), nanos(m[7]), time.UTC)
			t = lineTime{ok: true, hasDate: true, unixMS: tt.UnixMilli(), todMS: todOf(tt)}
		} else if m := clockRE.FindStringSubmatch(head); m != nil {
			tod := int64(atoi(m[1])*3600+atoi(m[2])*60+atoi(m[3]))*1000 + int64(nanos(m[4])/1e6)
			t = lineTime{ok: true, todMS: tod}
		}
	}
	return lvl, t
}

// continuation reports a line that belongs to the event above it (stack
// frames, "Caused by:", indented detail).
func continuation(text string) bool {
	if text == "" {
		return true
	}
	if text[0] == ' ' || text[0] == '\t' {
		return true
	}
	for _, p := range []string{"Caused by:", "Traceback ", "goroutine ", "panic: ", "...", "Backtrace:"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

func todOf(t time.Time) int64 {
	return int64(t.Hour()*3600+t.Minute()*60+t.Second())*1000 + int64(t.Nanosecond()/1e6)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func nanos(frac string) int {
	if frac == "" {
		return 0
	}
	for len(frac) < 9 {
		frac += "0"
	}
	return atoi(frac[:9])
}

// layout is a time format a from/to value may use, with the span it
// names ("14:05" is the whole minute).
type layout struct {
	format string
	span   time.Duration
}

var (
	absLayouts = []layout{{time.RFC3339Nano, time.Second}, {"2006-01-02T15:04:05", time.Second}, {"2006-01-02 15:04:05", time.Second},
		{"2006-01-02T15:04", time.Minute}, {"2006-01-02 15:04", time.Minute}, {"2006/01/02 15:04:05", time.Second}, {"2006-01-02", 24 * time.Hour}}
	todLayouts = []layout{{"15:04:05", time.Second}, {"15:04", time.Minute}}
)

// parseBound reads a from/to value; a "to" covers the whole span its
// precision names (to "14:05" includes 14:05:59).
func parseBound(s string, isTo bool) (bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return bound{}, nil
	}
	extend := func(ms int64, l layout) int64 {
		if isTo && !strings.ContainsAny(s, ".,") {
			return ms + l.span.Milliseconds() - 1
		}
		return ms
	}
	for _, l := range absLayouts {
		if t, err := time.Parse(l.format, s); err == nil {
			return bound{set: true, ms: extend(t.UnixMilli(), l)}, nil
		}
	}
	for _, l := range todLayouts {
		if t, err := time.Parse(l.format, s); err == nil {
			return bound{set: true, timeOfDay: true, ms: extend(todOf(t), l)}, nil
		}
	}
	return bound{}, fmt.Errorf("%q is not a time I can read; use \"2024-05-01 14:02:00\", \"2024-05-01T14:02:00Z\" or a time of day such as \"14:02\"", s)
}

// before reports whether b (a "from") is at or before t.
func (b bound) before(t lineTime) bool {
	if !b.set {
		return true
	}
	if b.timeOfDay {
		return b.ms <= t.todMS
	}
	return t.hasDate && b.ms <= t.unixMS
}

// after reports whether b (a "to") is at or after t.
func (b bound) after(t lineTime) bool {
	if !b.set {
		return true
	}
	if b.timeOfDay {
		return t.todMS <= b.ms
	}
	return t.hasDate && t.unixMS <= b.ms
}
