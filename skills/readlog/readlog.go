// Package readlog is the read-log skill: lines of an attached file by
// keyword or regex, level, time range, or around a line number, each
// prefixed L123 and capped.
package readlog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

//go:embed SKILL.md
var skillMD []byte

// Defaults of Config.
const (
	DefaultMaxLines     = 100
	DefaultMaxChars     = 6000
	DefaultMaxLineChars = 400
	// sampleLines is how many lines the header detector learns from.
	sampleLines = 2000
)

// Scanner streams the lines of a file (logscan.Scan's shape).
type Scanner = engine.Scanner

// ScanFunc adapts a function to Scanner.
type ScanFunc = engine.ScanFunc

// Config configures the skill. The zero value is usable.
type Config struct {
	// Scanner reads files; nil means the log engine (logscan.Scan).
	Scanner Scanner
	// MaxLines caps the lines of one answer; 0 means DefaultMaxLines. The
	// call's max_lines may lower it, never raise it.
	MaxLines int
	// MaxChars caps the characters of one answer; 0 means DefaultMaxChars.
	MaxChars int
	// MaxLineChars cuts each line shown; 0 means DefaultMaxLineChars.
	MaxLineChars int
}

// Skill is read-log. Safe for concurrent use.
type Skill struct {
	cfg  Config
	spec skills.Spec
}

// New returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("read-log SKILL.md: %w", err)
	}
	if cfg.MaxLines < 0 || cfg.MaxChars < 0 || cfg.MaxLineChars < 0 {
		return nil, errors.New("read-log: limits must not be negative")
	}
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(logscan.Scan)
	}
	if cfg.MaxLines == 0 {
		cfg.MaxLines = DefaultMaxLines
	}
	if cfg.MaxChars == 0 {
		cfg.MaxChars = DefaultMaxChars
	}
	if cfg.MaxLineChars == 0 {
		cfg.MaxLineChars = DefaultMaxLineChars
	}
	return &Skill{cfg: cfg, spec: spec}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

type args struct {
	File      string `json:"file"`
	Pattern   string `json:"pattern"`
	Regex     bool   `json:"regex"`
	Level     string `json:"level"`
	From      string `json:"from"`
	To        string `json:"to"`
	Line      int    `json:"line"`
	Context   *int   `json:"context"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	MaxLines  int    `json:"max_lines"`
}

// Run reads the lines. Mistakes (unknown file, bad regex, line out of
// range, unreadable time) are error results with a hint.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var a args
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &a); !ok {
		return r, nil
	}
	f, ok := c.Env.FileByName(a.File)
	if !ok {
		return skills.UnknownFile(c.Env, a.File), nil
	}
	q, res := s.plan(a)
	if res != nil {
		return *res, nil
	}
	start := time.Now()
	out, err := s.read(ctx, f, q)
	if err != nil {
		if r, ok := engine.InputError("read", f.Name, err); ok {
			return r, nil
		}
		return skills.Result{}, fmt.Errorf("read-log %s: %w", f.Name, err)
	}
	return s.result(out, f, q, time.Since(start)), nil
}

// query is a validated request.
type query struct {
	match     func(string) bool // nil: every line
	desc      []string          // what was asked, for the header
	minLevel  int               // 0: any
	needTime  bool
	from, to  bound
	lo, hi    int // line window; hi 0: to the end
	center    int // line asked for, 0 when none
	ctxLines  int
	maxLines  int
	startLine int
}

// bound is one end of a time range: absolute (Unix ms) or a time of day.
type bound struct {
	set       bool
	timeOfDay bool
	ms        int64 // Unix ms, or ms since midnight
}

func (s *Skill) plan(a args) (query, *skills.Result) {
	q := query{maxLines: s.cfg.MaxLines}
	if a.MaxLines > 0 && a.MaxLines < q.maxLines {
		q.maxLines = a.MaxLines
	}
	if a.Pattern != "" {
		if a.Regex {
			re, err := regexp.Compile(a.Pattern)
			if err != nil {
				r := skills.Errorf("pattern %q is not a valid regular expression (%v); fix it, or set \"regex\": false to search for plain text", a.Pattern, err)
				return q, &r
			}
			q.match = re.MatchString
			q.desc = append(q.desc, fmt.Sprintf("matching /%s/", a.Pattern))
		} else {
			// "timeout|refused" means either keyword, as grep -E users expect.
			var needles []string
			for _, n := range strings.Split(a.Pattern, "|") {
				if n = strings.ToLower(n); strings.TrimSpace(n) != "" {
					needles = append(needles, n)
				}
			}
			if len(needles) == 0 {
				r := skills.Errorf("pattern %q has no keyword", a.Pattern)
				return q, &r
			}
			q.match = func(line string) bool {
				l := strings.ToLower(line)
				for _, n := range needles {
					if strings.Contains(l, n) {
						return true
					}
				}
				return false
			}
			q.desc = append(q.desc, fmt.Sprintf("containing %q", a.Pattern))
		}
	}
	if a.Level != "" {
		q.minLevel = levelRank(a.Level)
		if q.minLevel == 0 {
			r := skills.Errorf("level %q is unknown; use one of fatal, error, warn, info, debug", a.Level)
			return q, &r
		}
		q.desc = append(q.desc, "at level "+a.Level+" or above")
	}
	var err error
	if q.from, err = parseBound(a.From, false); err != nil {
		r := skills.Errorf("from: %v", err)
		return q, &r
	}
	if q.to, err = parseBound(a.To, true); err != nil {
		r := skills.Errorf("to: %v", err)
		return q, &r
	}
	if q.from.set && q.to.set && q.from.timeOfDay != q.to.timeOfDay {
		r := skills.Errorf("from and to must both be dates with times or both times of day")
		return q, &r
	}
	if q.from.set || q.to.set {
		q.needTime = true
		q.desc = append(q.desc, "between "+orDash(a.From)+" and "+orDash(a.To))
	}
	switch {
	case a.Line > 0 && (a.StartLine > 0 || a.EndLine > 0):
		r := skills.Errorf("give either line (with context) or start_line/end_line, not both")
		return q, &r
	case a.Line > 0:
		q.ctxLines = 10
		if a.Context != nil {
			q.ctxLines = *a.Context
		}
		q.center = a.Line
		q.lo, q.hi = max(1, a.Line-q.ctxLines), a.Line+q.ctxLines
		q.ctxLines = 0 // the window already is the context
	case a.StartLine > 0 || a.EndLine > 0:
		q.lo = max(1, a.StartLine)
		q.hi = a.EndLine
		if q.hi > 0 && q.hi < q.lo {
			r := skills.Errorf("end_line %d is before start_line %d", a.EndLine, a.StartLine)
			return q, &r
		}
		q.startLine = a.StartLine
	default:
		if a.Context != nil {
			q.ctxLines = *a.Context
		}
	}
	return q, nil
}

func orDash(s string) string {
	if s == "" {
		return "…"
	}
	return s
}

// shown is one line of the answer.
type shown struct {
	line    int
	text    string
	matched bool
}

type outcome struct {
	lines     []shown
	matched   int // lines that passed the filters (context excluded)
	cutLines  int // lines that passed but were not shown
	total     int // lines scanned
	chars     int
	cutChars  int // lines shortened
	timeFound bool
	stopped   bool // stopped at the window's end
}

func (s *Skill) read(ctx context.Context, f skills.File, q query) (*outcome, error) {
	var format *miner.Format
	if q.minLevel > 0 || q.needTime {
		sample := make([]string, 0, 256)
		err := s.cfg.Scanner.Scan(ctx, f.Path, logscan.Options{}, func(_ int, text string) error {
			sample = append(sample, text)
			if len(sample) >= sampleLines {
				return logscan.ErrStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, logscan.ErrStop) {
			return nil, err
		}
		format = miner.Learn(sample)
	}
	o := &outcome{}
	var (
		curLevel int
		curTime  lineTime
		before   []shown // ring of context lines before the next match
		after    int     // context lines still to show after a match
		lastLine int
	)
	emit := func(sl shown) {
		if sl.line <= lastLine {
			return
		}
		if len(o.lines) >= q.maxLines || o.chars >= s.cfg.MaxChars {
			if sl.matched {
				o.cutLines++
			}
			return
		}
		text := engine.Cut(sl.text, s.cfg.MaxLineChars)
		if text != sl.text {
			o.cutChars++
		}
		sl.text = text
		o.lines = append(o.lines, sl)
		o.chars += len(text) + 8
		lastLine = sl.line
	}
	err := s.cfg.Scanner.Scan(ctx, f.Path, logscan.Options{}, func(n int, text string) error {
		o.total = n
		if q.hi > 0 && n > q.hi {
			o.stopped = true
			return logscan.ErrStop
		}
		if format != nil {
			h := format.Parse(text)
			lvl, t := classify(h, text)
			switch {
			case lvl > 0:
				curLevel = lvl
			case t.ok:
				curLevel = 0 // a new event without a level
			case continuation(text) || o.timeFound:
				// a line without a header belongs to the event above
			default:
				curLevel = 0
			}
			if t.ok {
				curTime = t
				o.timeFound = true
			}
		}
		if n < q.lo {
			return nil
		}
		ok := (q.match == nil || q.match(text)) &&
			(q.minLevel == 0 || curLevel >= q.minLevel) &&
			(!q.needTime || (curTime.ok && q.from.before(curTime) && q.to.after(curTime)))
		if ok {
			o.matched++
			for _, b := range before {
				emit(b)
			}
			before = before[:0]
			emit(shown{line: n, text: text, matched: true})
			after = q.ctxLines
			return nil
		}
		if after > 0 {
			after--
			emit(shown{line: n, text: text})
			return nil
		}
		if q.ctxLines > 0 {
			if len(before) == q.ctxLines {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, shown{line: n, text: text})
		}
		return nil
	})
	if err != nil && !errors.Is(err, logscan.ErrStop) {
		return nil, err
	}
	return o, nil
}

func (s *Skill) result(o *outcome, f skills.File, q query, took time.Duration) skills.Result {
	meta := map[string]any{
		"file": f.Name, "matched": o.matched, "shown": len(o.lines), "cut": o.cutLines,
		"lines_scanned": o.total, "duration_ms": took.Milliseconds(),
	}
	if q.center > 0 && o.total < q.center {
		r := skills.Errorf("%s has %d lines; line %d is out of range", f.Name, o.total, q.center)
		r.Metadata = meta
		return r
	}
	if q.startLine > 0 && o.total < q.startLine {
		r := skills.Errorf("%s has %d lines; start_line %d is out of range", f.Name, o.total, q.startLine)
		r.Metadata = meta
		return r
	}
	if q.needTime && !o.timeFound {
		r := skills.Errorf("no timestamps recognised in %s, so from/to cannot apply; search by pattern or line instead", f.Name)
		r.Metadata = meta
		return r
	}
	var b strings.Builder
	b.WriteString(f.Name)
	switch {
	case q.center > 0:
		fmt.Fprintf(&b, " L%d–L%d (around L%d)", q.lo, min(q.hi, o.total), q.center)
	case q.lo > 0:
		hi := o.total
		if q.hi > 0 {
			hi = min(q.hi, o.total)
		}
		fmt.Fprintf(&b, " L%d–L%d", q.lo, hi)
	}
	if len(q.desc) > 0 {
		b.WriteString(", lines " + strings.Join(q.desc, ", "))
	}
	filtered := q.match != nil || q.minLevel > 0 || q.needTime
	if filtered {
		fmt.Fprintf(&b, ": %d matching", o.matched)
	}
	b.WriteString("\n")
	if len(o.lines) == 0 {
		if filtered {
			fmt.Fprintf(&b, "No line matches (%d lines read). Try a shorter keyword, a lower level or a wider range.\n", o.total)
		} else {
			fmt.Fprintf(&b, "No lines in this range (%d lines read).\n", o.total)
		}
	}
	lines := make([]skills.LineRef, 0, len(o.lines))
	prev := 0
	for _, l := range o.lines {
		if prev > 0 && l.line > prev+1 && (q.ctxLines > 0 || !filtered) {
			b.WriteString("--\n")
		}
		fmt.Fprintf(&b, "L%d: %s\n", l.line, l.text)
		reason := "context"
		if l.matched {
			reason = "match"
		}
		lines = append(lines, skills.LineRef{File: f.Name, Line: l.line, Text: l.text, Reason: reason})
		prev = l.line
	}
	if o.cutLines > 0 {
		kind, how := "matching lines", "narrow the pattern, the level or the range"
		if !filtered {
			kind, how = "lines", "use start_line/end_line, a pattern or a level"
		}
		fmt.Fprintf(&b, "[%d more %s not shown (limit %d lines or %d characters); %s]\n", o.cutLines, kind, q.maxLines, s.cfg.MaxChars, how)
	}
	if o.cutChars > 0 {
		fmt.Fprintf(&b, "[%d long lines cut to %d characters]\n", o.cutChars, s.cfg.MaxLineChars)
	}
	return skills.Result{Status: skills.StatusOK, Output: strings.TrimRight(b.String(), "\n"), Lines: lines, Metadata: meta}
}
