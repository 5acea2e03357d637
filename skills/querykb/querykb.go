// Package querykb is the query-issue-kb skill: a knowledge base of known
// failures (a starter set embedded from kb/, plus an operator's folder)
// matched against log lines, a file or a question by pattern, template and
// text.
package querykb

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

//go:embed SKILL.md
var skillMD []byte

//go:embed kb/*.md
var builtinKB embed.FS

// Scores of the three kinds of evidence.
const (
	scorePattern  = 3.0 // per distinct pattern matched (at most 3 count)
	scoreTemplate = 4.0 // a line with the template of an example
	scoreWord     = 0.8 // per query word shared with title, tags or cause (at most 4 count)
	// maxLinesPerEntry is how many matching lines an entry cites.
	maxLinesPerEntry = 3
	// DefaultTop is how many entries a call returns by default.
	DefaultTop = 5
)

// Scanner streams the lines of a file (logscan.Scan's shape).
type Scanner = engine.Scanner

// ScanFunc adapts a function to Scanner.
type ScanFunc = engine.ScanFunc

// Templater masks a line to its template (logscan.TemplateOf's shape).
type Templater interface {
	TemplateOf(line string) (id, template string)
}

// TemplateFunc adapts a function to Templater.
type TemplateFunc func(line string) (id, template string)

// TemplateOf calls f.
func (f TemplateFunc) TemplateOf(line string) (string, string) { return f(line) }

// Config configures the skill. The zero value is usable.
type Config struct {
	// Dir is an operator's folder of extra entries (SLEUTH_KB_DIR);
	// optional. An entry there replaces the built-in entry of the same
	// file name. A broken file is logged and skipped; a missing folder is
	// an error.
	Dir string
	// NoBuiltin leaves out the starter knowledge base shipped with sleuth.
	NoBuiltin bool
	// Scanner reads attached files; nil means logscan.Scan.
	Scanner Scanner
	// Templater masks lines; nil means logscan.TemplateOf.
	Templater Templater
}

// Skill is query-issue-kb. Immutable after New; safe for concurrent use.
type Skill struct {
	cfg      Config
	spec     skills.Spec
	entries  []*Entry
	problems []error

	ac       *automaton
	anchors  []patRef            // anchor id → pattern
	always   []patRef            // patterns with no anchor: tested on every line
	examples map[string][]string // example template id → entry ids
}

// patRef points at one pattern of one entry.
type patRef struct {
	entry int
	pat   int
}

// New loads the knowledge base and returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("query-issue-kb SKILL.md: %w", err)
	}
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(logscan.Scan)
	}
	if cfg.Templater == nil {
		cfg.Templater = TemplateFunc(logscan.TemplateOf)
	}
	s := &Skill{cfg: cfg, spec: spec, examples: map[string][]string{}}
	byID := map[string]int{}
	add := func(list []*Entry) {
		for _, e := range list {
			if i, ok := byID[e.ID]; ok {
				s.entries[i] = e
				continue
			}
			byID[e.ID] = len(s.entries)
			s.entries = append(s.entries, e)
		}
	}
	if !cfg.NoBuiltin {
		sub, err := fs.Sub(builtinKB, "kb")
		if err != nil {
			return nil, fmt.Errorf("query-issue-kb: %w", err)
		}
		list, problems := LoadFS(sub, "builtin")
		if len(problems) > 0 {
			return nil, fmt.Errorf("query-issue-kb: built-in knowledge base: %w", errors.Join(problems...))
		}
		add(list)
	}
	if cfg.Dir != "" {
		list, problems := LoadDir(cfg.Dir)
		if len(list) == 0 && len(problems) == 1 && !errors.Is(problems[0], ErrEntry) {
			return nil, fmt.Errorf("query-issue-kb: %w", problems[0])
		}
		for _, p := range problems {
			slog.Warn("query-issue-kb: skipping a knowledge-base file", "error", p)
		}
		s.problems = problems
		add(list)
	}
	var anchors []string
	for ei, e := range s.entries {
		for pi, p := range e.patterns {
			if p.anchor == "" {
				s.always = append(s.always, patRef{ei, pi})
				continue
			}
			anchors = append(anchors, p.anchor)
			s.anchors = append(s.anchors, patRef{ei, pi})
		}
		for _, ex := range e.Examples {
			if id, _ := cfg.Templater.TemplateOf(ex); id != "" {
				s.examples[id] = append(s.examples[id], e.ID)
			}
		}
	}
	s.ac = newAutomaton(anchors)
	return s, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

// Entries returns the loaded entries (read-only).
func (s *Skill) Entries() []*Entry { return s.entries }

// Problems returns the operator files that were skipped, and why.
func (s *Skill) Problems() []error { return s.problems }

// Query is what to match.
type Query struct {
	Text  string   // a question or message in words
	Lines []string // log lines, optionally "L123: text" or "file L123: text"
	File  *skills.File
	Top   int // 0 means DefaultTop
}

// Match is one matching entry.
type Match struct {
	Entry *Entry
	Score float64
	Why   []string
	Lines []skills.LineRef
	Hits  int // matching lines
}

// matcher accumulates evidence per entry.
type matcher struct {
	s          *Skill
	patHit     []map[int]bool // entry → patterns matched
	tmplHit    []bool
	lines      [][]skills.LineRef
	hits       []int
	firstWhy   []map[int]string // entry → pattern → where first seen
	tmplWhy    []string
	buf        []byte
	seen       []int32 // per anchor: line stamp, to dedupe within a line
	entryStamp []int32 // per entry: line stamp of its last match
	matched    []int   // entries matched by the current line
	stamp      int32
}

func (s *Skill) newMatcher() *matcher {
	n := len(s.entries)
	m := &matcher{s: s, patHit: make([]map[int]bool, n), tmplHit: make([]bool, n), lines: make([][]skills.LineRef, n),
		hits: make([]int, n), firstWhy: make([]map[int]string, n), tmplWhy: make([]string, n),
		seen: make([]int32, len(s.anchors)), entryStamp: make([]int32, n)}
	for i := range m.patHit {
		m.patHit[i] = map[int]bool{}
		m.firstWhy[i] = map[int]string{}
	}
	return m
}

// line matches one line; where says where it came from ("app.log L12",
// "the query"; "" means file L<n>). It allocates only when the line
// matches something.
func (m *matcher) line(file string, n int, text, where string, withTemplate bool) {
	m.stamp++
	m.buf = lowerASCII(m.buf, text)
	m.matched = m.matched[:0]
	hit := func(ei int) {
		if m.entryStamp[ei] != m.stamp {
			m.entryStamp[ei] = m.stamp
			m.matched = append(m.matched, ei)
		}
	}
	try := func(r patRef) {
		p := m.s.entries[r.entry].patterns[r.pat]
		// A phrase is its own anchor: the automaton already matched it.
		if p.re != nil && !p.re.MatchString(text) {
			return
		}
		hit(r.entry)
		if !m.patHit[r.entry][r.pat] {
			m.patHit[r.entry][r.pat] = true
			m.firstWhy[r.entry][r.pat] = whereOf(where, file, n)
		}
	}
	m.s.ac.find(m.buf, func(id int32) {
		if m.seen[id] == m.stamp {
			return
		}
		m.seen[id] = m.stamp
		try(m.s.anchors[id])
	})
	for _, r := range m.s.always {
		try(r)
	}
	if withTemplate && len(m.s.examples) > 0 {
		if id, _ := m.s.cfg.Templater.TemplateOf(text); id != "" {
			for _, eid := range m.s.examples[id] {
				ei := m.s.index(eid)
				if ei < 0 {
					continue
				}
				hit(ei)
				if !m.tmplHit[ei] {
					m.tmplHit[ei] = true
					m.tmplWhy[ei] = whereOf(where, file, n)
				}
			}
		}
	}
	for _, ei := range m.matched {
		m.hits[ei]++
		if n > 0 && len(m.lines[ei]) < maxLinesPerEntry {
			m.lines[ei] = append(m.lines[ei], skills.LineRef{File: file, Line: n, Text: text, Reason: "matches " + m.s.entries[ei].Title})
		}
	}
}

func whereOf(where, file string, n int) string {
	if where != "" {
		return where
	}
	return fmt.Sprintf("%s L%d", file, n)
}

func (s *Skill) index(id string) int {
	for i, e := range s.entries {
		if e.ID == id {
			return i
		}
	}
	return -1
}

var lineRefRE = regexp.MustCompile(`^\s*(?:(\S+?)[: ]\s*)?L(\d+):\s?`)

// Match ranks the entries for q, best first.
func (s *Skill) Match(ctx context.Context, q Query) ([]Match, error) {
	m := s.newMatcher()
	for _, l := range q.Lines {
		file, n, text := "", 0, l
		if sm := lineRefRE.FindStringSubmatchIndex(l); sm != nil {
			n, _ = strconv.Atoi(l[sm[4]:sm[5]])
			if sm[2] >= 0 {
				file = l[sm[2]:sm[3]]
			}
			text = l[sm[1]:]
		}
		where := "a given line"
		if n > 0 {
			where = fmt.Sprintf("L%d", n)
			if file != "" {
				where = file + " " + where
			}
		}
		m.line(file, n, text, where, true)
	}
	if q.Text != "" {
		for _, l := range strings.Split(q.Text, "\n") {
			m.line("", 0, l, "the question", true)
		}
	}
	if q.File != nil {
		name := q.File.Name
		err := s.cfg.Scanner.Scan(ctx, q.File.Path, logscan.Options{}, func(n int, text string) error {
			m.line(name, n, text, "", false)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	qtok := map[string]bool{}
	for _, t := range tokens(q.Text) {
		qtok[t] = true
	}
	var out []Match
	for ei, e := range s.entries {
		var score float64
		var why []string
		pats := make([]int, 0, len(m.patHit[ei]))
		for pi := range m.patHit[ei] {
			pats = append(pats, pi)
		}
		sort.Ints(pats)
		var wheres []string
		byWhere := map[string][]string{}
		for i, pi := range pats {
			if i < 3 {
				score += scorePattern
			}
			w := m.firstWhy[ei][pi]
			if byWhere[w] == nil {
				wheres = append(wheres, w)
			}
			byWhere[w] = append(byWhere[w], strconv.Quote(e.Patterns[pi]))
		}
		for _, w := range wheres {
			kind := "pattern"
			if len(byWhere[w]) > 1 {
				kind = "patterns"
			}
			why = append(why, fmt.Sprintf("%s %s in %s", kind, strings.Join(byWhere[w], ", "), w))
		}
		if m.tmplHit[ei] {
			score += scoreTemplate
			why = append(why, "same template as a known example, in "+m.tmplWhy[ei])
		}
		var shared []string
		for t := range qtok {
			if e.tokens[t] {
				shared = append(shared, t)
			}
		}
		sort.Strings(shared)
		// Prose alone must share two words (one for a one- or two-word query).
		if len(shared) >= 2 || (len(shared) == 1 && len(qtok) <= 2) || (len(shared) > 0 && score > 0) {
			score += scoreWord * math.Min(float64(len(shared)), 4)
			why = append(why, "words of the question: "+strings.Join(shared, ", "))
		}
		if score == 0 {
			continue
		}
		if m.hits[ei] > len(m.lines[ei]) && len(m.lines[ei]) > 0 {
			why = append(why, fmt.Sprintf("%d matching lines in all", m.hits[ei]))
		}
		out = append(out, Match{Entry: e, Score: score, Why: why, Lines: m.lines[ei], Hits: m.hits[ei]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Entry.ID < out[j].Entry.ID
	})
	top := q.Top
	if top <= 0 {
		top = DefaultTop
	}
	if len(out) > top {
		out = out[:top]
	}
	return out, nil
}

type args struct {
	Query string   `json:"query"`
	Lines []string `json:"lines"`
	File  string   `json:"file"`
	Top   int      `json:"top"`
}

// Run matches and renders the entries.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	start := time.Now()
	var a args
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Query) == "" && len(a.Lines) == 0 && a.File == "" {
		return skills.Errorf("give a query (words or an error message), lines (log lines to match) or file (an attached file to scan)"), nil
	}
	q := Query{Text: a.Query, Lines: a.Lines, Top: a.Top}
	if a.File != "" {
		f, ok := c.Env.FileByName(a.File)
		if !ok {
			return skills.UnknownFile(c.Env, a.File), nil
		}
		q.File = &f
	}
	matches, err := s.Match(ctx, q)
	if err != nil {
		if r, ok := engine.InputError("scan", a.File, err); ok {
			return r, nil
		}
		return skills.Result{}, fmt.Errorf("query-issue-kb: %w", err)
	}
	res := render(matches, len(s.entries))
	res.Metadata = map[string]any{"entries": len(s.entries), "matches": len(matches), "duration_ms": time.Since(start).Milliseconds()}
	return res, nil
}

func render(matches []Match, total int) skills.Result {
	var b strings.Builder
	var lines []skills.LineRef
	if len(matches) == 0 {
		fmt.Fprintf(&b, "No known failure matches (%d entries searched). Reason from the log's own evidence; do not force a match.", total)
		return skills.Result{Status: skills.StatusOK, Output: b.String()}
	}
	fmt.Fprintf(&b, "%d known failures match (best first; the log decides, check each against its lines):\n", len(matches))
	for i, m := range matches {
		e := m.Entry
		fmt.Fprintf(&b, "\n%d. %s [%s] score %.1f\n", i+1, e.Title, e.ID, m.Score)
		fmt.Fprintf(&b, "   why: %s\n", strings.Join(m.Why, "; "))
		fmt.Fprintf(&b, "   cause: %s\n", oneLine(e.Cause))
		fmt.Fprintf(&b, "   fix: %s\n", oneLine(e.Fix))
		if len(e.Tags) > 0 {
			fmt.Fprintf(&b, "   tags: %s\n", strings.Join(e.Tags, ", "))
		}
		lines = append(lines, m.Lines...)
	}
	return skills.Result{Status: skills.StatusOK, Output: strings.TrimRight(b.String(), "\n"), Lines: lines}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
