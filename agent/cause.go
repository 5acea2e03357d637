package agent

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sleuth-bot/sleuth/skills"
)

// The offline conclusion reasons like an on-call engineer over the
// engine's ranked evidence (skills.LineRef with the engine's reason tags:
// "error; 34 times; root cause of the stack trace at L547; first error;
// known issue: resource pool exhausted"): it leads with the earliest
// causal event, then lists the symptoms in the order they happened.
//
// The cause, in order of preference:
//  1. With a comparison against a good run: where the failing run leaves
//     the good run's sequence, else the first template new in it.
//  2. The root cause of a stack trace ("Caused by"), unless it is itself
//     an exhaustion (a pool, memory, disk, a timeout): exhaustion is a
//     symptom whose cause is whatever consumed the resource.
//  3. When the first error (or that root cause) is an exhaustion: the
//     earliest new event shortly before the errors (the consumer).
//  4. When the first error is a generic wrapper ("exit code 1"): the new
//     lines right before it, which say what failed.
//  5. A new warning shortly before the errors.
//  6. The earliest error the engine recognises as a known failure.
//  7. The first error that is not a generic wrapper; else the top line.

// exhaustion are the engine's known-issue labels that describe running out
// of something: symptoms whose cause came earlier.
var exhaustion = map[string]bool{
	"resource pool exhausted": true, "out of memory": true, "disk full": true,
	"file descriptors exhausted": true, "timeout": true, "overrun": true,
}

// evLine is an evidence line with its reason split into tags.
type evLine struct {
	skills.LineRef
	tags []string
}

func newEv(l skills.LineRef) evLine {
	var tags []string
	for _, t := range strings.Split(l.Reason, ";") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return evLine{LineRef: l, tags: tags}
}

func (e evLine) has(prefix string) bool {
	for _, t := range e.tags {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

func (e evLine) contains(s string) bool {
	for _, t := range e.tags {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func (e evLine) level() string {
	if len(e.tags) == 0 {
		return ""
	}
	switch e.tags[0] {
	case "fatal", "error", "warning":
		return e.tags[0]
	}
	return ""
}

func (e evLine) isError() bool {
	l := e.level()
	return l == "error" || l == "fatal" || e.has("crash marker")
}

func (e evLine) known() string {
	for _, t := range e.tags {
		if k, ok := strings.CutPrefix(t, "known issue: "); ok {
			return k
		}
	}
	return ""
}

func (e evLine) exhausted() bool  { return exhaustion[e.known()] }
func (e evLine) precursor() bool  { return e.contains("lines before the errors") }
func (e evLine) wrapper() bool    { return e.has("generic wrapper") }
func (e evLine) root() bool       { return e.has("root cause of the stack trace") }
func (e evLine) firstError() bool { return e.has("first error") }

// reasoned is the conclusion and the evidence to show, cause first.
type reasoned struct {
	conclusion string
	evidence   []skills.LineRef
}

// reason builds the conclusion from the analysis lines of one file and,
// when it was compared with a good run, the comparison's lines.
func reason(lines, changes []skills.LineRef) reasoned {
	if len(lines) == 0 && len(changes) == 0 {
		return reasoned{conclusion: "The analysis found no line that stands out as an error."}
	}
	evs := make([]evLine, 0, len(lines))
	for _, l := range lines {
		evs = append(evs, newEv(l))
	}
	byLine := func(list []evLine) []evLine {
		out := append([]evLine(nil), list...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
		return out
	}
	var errs, pre []evLine
	var first, root *evLine
	for i := range evs {
		e := &evs[i]
		if e.isError() {
			errs = append(errs, *e)
		}
		if e.precursor() {
			pre = append(pre, *e)
		}
		if e.firstError() && first == nil {
			first = e
		}
		if e.root() && (root == nil || e.Line < root.Line) {
			root = e
		}
	}
	errs, pre = byLine(errs), byLine(pre)
	if first == nil && len(errs) > 0 {
		first = &errs[0]
	}
	anchor := first
	if root != nil {
		anchor = root
	}

	var cause []evLine
	var why string
	if c, w, ok := changedCause(changes); ok {
		cause, why = []evLine{newEv(c)}, w
	}
	switch {
	case cause != nil:
	case root != nil && !root.exhausted():
		cause, why = []evLine{*root}, "the root cause at the bottom of the stack trace"
	case anchor != nil && anchor.exhausted() && len(pre) > 0:
		cause = pre[:1]
		why = fmt.Sprintf("the earliest new event before the errors, which are an exhaustion (%s): something consumed the resource first", anchor.known())
	case first != nil && first.wrapper() && len(pre) > 0:
		cause = pre
		if len(cause) > 4 {
			cause = cause[len(cause)-4:]
		}
		why = "the output right before the generic failure message, which says what failed"
	default:
		for _, p := range pre {
			if p.level() == "warning" {
				cause, why = []evLine{p}, "a new warning shortly before the first errors"
				break
			}
		}
	}
	if cause == nil {
		for _, e := range errs {
			if e.known() != "" && !e.wrapper() {
				cause, why = []evLine{e}, "the earliest error the engine recognises as a known failure ("+e.known()+")"
				break
			}
		}
	}
	if cause == nil {
		for _, e := range errs {
			if !e.wrapper() {
				cause, why = []evLine{e}, "the first error"
				break
			}
		}
	}
	if cause == nil && len(evs) > 0 {
		cause, why = evs[:1], "the line the analysis ranks first"
	}

	isCause := map[string]bool{}
	for _, c := range cause {
		isCause[key(c.LineRef)] = true
	}
	var b strings.Builder
	if len(cause) == 1 {
		c := cause[0]
		fmt.Fprintf(&b, "Most likely cause: %s L%d `%s` — %s.", c.File, c.Line, quoteOf(c.Text, 160), why)
	} else {
		fmt.Fprintf(&b, "Most likely cause: %s.", why)
		for _, c := range cause {
			fmt.Fprintf(&b, "\n- %s L%d `%s`", c.File, c.Line, quoteOf(c.Text, 160))
		}
	}
	// The symptoms, in the order they happened.
	var sym []evLine
	for _, e := range errs {
		if !isCause[key(e.LineRef)] {
			sym = append(sym, e)
		}
	}
	for _, ch := range changes {
		e := newEv(ch)
		if !isCause[key(ch)] && e.has("new template") && !inList(sym, ch) {
			sym = append(sym, e)
		}
	}
	sym = byLine(sym)
	if len(sym) > 0 {
		b.WriteString("\nThe symptoms, in the order they happened:")
		for i, s := range sym {
			if i == 5 {
				fmt.Fprintf(&b, "\n- and %d more lines in the evidence below", len(sym)-5)
				break
			}
			fmt.Fprintf(&b, "\n- %s L%d `%s`", s.File, s.Line, quoteOf(s.Text, 120))
			t := symptomTags(s)
			if s.Line < cause[0].Line {
				t = strings.TrimPrefix(t+", already before the cause", ", ")
			}
			if t != "" {
				b.WriteString(" (" + t + ")")
			}
		}
	}

	// Evidence: the cause first, then the other top-ranked lines in the
	// order they happened.
	var ev []skills.LineRef
	seen := map[string]bool{}
	add := func(l skills.LineRef) {
		if !seen[key(l)] {
			seen[key(l)] = true
			ev = append(ev, l)
		}
	}
	for _, c := range cause {
		add(c.LineRef)
	}
	var rest []skills.LineRef
	for _, l := range lines {
		if len(rest)+len(cause) >= 8 {
			break
		}
		if !isCause[key(l)] {
			rest = append(rest, l)
		}
	}
	for _, l := range changes {
		if len(rest)+len(cause) >= 8 {
			break
		}
		if !isCause[key(l)] {
			rest = append(rest, l)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Line < rest[j].Line })
	for _, l := range rest {
		add(l)
	}
	return reasoned{conclusion: b.String(), evidence: ev}
}

// changedCause picks the cause from a comparison with a good run: where
// the failing run left the good run's sequence, else its first new line.
func changedCause(changes []skills.LineRef) (skills.LineRef, string, bool) {
	var firstNew *skills.LineRef
	for i, c := range changes {
		e := newEv(c)
		if e.contains("divergence") {
			return c, "where this run first departs from the good run's sequence of events", true
		}
		if e.has("new template") && (firstNew == nil || c.Line < firstNew.Line) {
			firstNew = &changes[i]
		}
	}
	if firstNew != nil {
		return *firstNew, "the earliest event that never happens in the good run", true
	}
	return skills.LineRef{}, "", false
}

func inList(list []evLine, l skills.LineRef) bool {
	for _, e := range list {
		if key(e.LineRef) == key(l) {
			return true
		}
	}
	return false
}

func key(l skills.LineRef) string { return fmt.Sprintf("%s:%d", l.File, l.Line) }

// symptomTags keeps the tags a reader of a symptom list needs: how often,
// what kind, and crash or exit.
func symptomTags(e evLine) string {
	var out []string
	for _, t := range e.tags {
		switch {
		case strings.HasSuffix(t, " times"), t == "crash marker", t == "exit marker", strings.HasPrefix(t, "known issue: "), t == "new template":
			out = append(out, strings.TrimPrefix(t, "known issue: "))
		}
	}
	return strings.Join(out, ", ")
}

// firstTags returns the first n tags of an engine reason.
func firstTags(reason string, n int) string {
	parts := strings.Split(reason, ";")
	if len(parts) > n {
		parts = parts[:n]
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, "; ")
}

// leadingStampRE is a timestamp at the start of a line.
var leadingStampRE = regexp.MustCompile(`^\s*(?:\d{4}[-/]\d\d[-/]\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?(?:\s+UTC)?|[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d)\s+`)

// quoteOf renders a line for a backtick quote that the evidence guardrail
// verifies: the exact text, with a leading timestamp and an over-long tail
// replaced by "…" (which matches any text). A backtick in the line ends
// the quote there, since it would end the code span.
func quoteOf(text string, n int) string {
	s := strings.TrimSpace(text)
	prefix := ""
	if m := leadingStampRE.FindStringIndex(s); m != nil && m[1] < len(s) {
		s, prefix = s[m[1]:], "…"
	}
	cut := false
	if i := strings.IndexByte(s, '`'); i >= 0 {
		s, cut = s[:i], true
	}
	if len(s) > n {
		s, cut = cutQuote(s, n), true
	}
	s = strings.TrimRight(s, " ")
	if cut {
		s += "…"
	}
	return prefix + s
}

// citationRE finds line citations: "app.log:12", "app.log L12",
// "app.log line 12", "app.log#L12", and a bare "L12".
var citationRE = regexp.MustCompile(`\b([A-Za-z0-9_][A-Za-z0-9_.\-]*\.[A-Za-z0-9]+)(?::|\s+L|\s+line\s+|#L)\d{1,9}\b|\bL\d{1,9}\b`)

// stripCitations removes line numbers from text kept beyond the thread
// (memories): a line number means nothing without its attachment. A cited
// file keeps its name.
func stripCitations(s string) string {
	out := citationRE.ReplaceAllStringFunc(s, func(m string) string {
		if sub := citationRE.FindStringSubmatch(m); sub[1] != "" {
			return sub[1]
		}
		return ""
	})
	return strings.TrimSpace(spaceRunRE.ReplaceAllString(out, " "))
}

var spaceRunRE = regexp.MustCompile(`[ \t]{2,}`)
