package eval

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sleuth-bot/sleuth/bot"
)

// Answer is what one turn produced, as the checks see it.
type Answer struct {
	Text     string
	Evidence []bot.Evidence
	Steps    int
	Failed   bool
	// Calls are the skill calls the audit log recorded for the turn.
	Calls []SkillCall
	// Files are the attachments of the thread so far.
	Files []string
}

// SkillCall is one skill call read from the agent's audit log.
type SkillCall struct {
	Skill  string `json:"skill"`
	Status string `json:"status"` // ok, error, need_input, refused
}

// Citation forms the checks read: "app.log:123", "app.log L123",
// "app.log line 123", "app.log#L123", and a bare "L123". Names that are no
// attachment (Main.java:42 in a stack trace) are not citations.
var (
	fileCiteRE = regexp.MustCompile(`([A-Za-z0-9_][A-Za-z0-9_.\-]*\.[A-Za-z0-9]+)(?::|\s+L|\s+line\s+|#L)(\d{1,9})\b`)
	bareCiteRE = regexp.MustCompile(`\bL(\d{1,9})\b`)
	// proseLineRE is "line 123"; it counts for a cited cause but not as a
	// citation to verify (a quoted traceback says "line 42" of a .py file).
	proseLineRE = regexp.MustCompile(`(?i)\blines?\s+#?(\d{1,9})\b`)
	spaceRE     = regexp.MustCompile(`\s+`)
)

type cited struct {
	file  string
	line  int
	quote string
	form  string // how it was written, for reasons
}

// citations finds the citations of text and resolves each to an attached
// file: the one named in the citation, else the one named last before it
// on the same line, else the last one named, else the only file.
func citations(text string, files []string) []cited {
	canon := map[string]string{}
	for _, f := range files {
		canon[strings.ToLower(f)] = f
	}
	type hit struct {
		start, end int
		c          cited
	}
	var hits []hit
	covered := map[int]bool{}
	for _, m := range fileCiteRE.FindAllStringSubmatchIndex(text, -1) {
		name, ok := canon[strings.ToLower(text[m[2]:m[3]])]
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(text[m[4]:m[5]])
		hits = append(hits, hit{m[0], m[1], cited{file: name, line: n, form: text[m[0]:m[1]], quote: quoteAfter(text[m[1]:])}})
		for i := m[0]; i < m[1]; i++ {
			covered[i] = true
		}
	}
	for _, m := range bareCiteRE.FindAllStringSubmatchIndex(text, -1) {
		if covered[m[0]] {
			continue
		}
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		hits = append(hits, hit{m[0], m[1], cited{line: n, form: text[m[0]:m[1]], quote: quoteAfter(text[m[1]:])}})
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	last := ""
	out := make([]cited, 0, len(hits))
	for _, h := range hits {
		if h.c.file != "" {
			last = h.c.file
			out = append(out, h.c)
			continue
		}
		h.c.file = nearestName(text[:h.start], canon)
		if h.c.file == "" {
			h.c.file = last
		}
		if h.c.file == "" && len(files) == 1 {
			h.c.file = files[0]
		}
		out = append(out, h.c)
	}
	return out
}

func nearestName(before string, canon map[string]string) string {
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	low := strings.ToLower(before)
	best, at := "", -1
	for l, name := range canon {
		if i := strings.LastIndex(low, l); i > at {
			best, at = name, i
		}
	}
	return best
}

// quoteAfter returns a quote right after a citation: L12: "text",
// L12 — `text`.
func quoteAfter(rest string) string {
	rest = strings.TrimPrefix(rest, " (unverified)")
	rest = strings.TrimLeft(rest, " \t:—–-)(*")
	if rest == "" {
		return ""
	}
	closing := ""
	switch {
	case rest[0] == '"':
		closing, rest = `"`, rest[1:]
	case rest[0] == '`':
		closing, rest = "`", rest[1:]
	case strings.HasPrefix(rest, "“"):
		closing, rest = "”", rest[len("“"):]
	default:
		return ""
	}
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	end := strings.Index(rest, closing)
	if end < 0 {
		return ""
	}
	return rest[:end]
}

// quoteMatches reports whether quote appears in line, ignoring case and
// whitespace runs; "…", "..." and a redaction mask match any text.
func quoteMatches(quote, line string) bool {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))) }
	q := strings.NewReplacer("...", "…", "[REDACTED]", "…").Replace(quote)
	l := norm(line)
	pos := 0
	for _, part := range strings.Split(q, "…") {
		p := norm(part)
		if p == "" {
			continue
		}
		i := strings.Index(l[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	return true
}

// refusalRE matches answers that say the log does not show something.
var dontKnowRE = regexp.MustCompile(`(?i)\b(?:` + strings.Join([]string{
	`(?:do not|don't|doesn't|does not|cannot|can't|could not|couldn't|can ?not|unable to)\s+(?:know|tell|find|see|determine|say|answer|confirm|identify|establish)`,
	`no (?:evidence|indication|mention|record|sign|trace|information|lines?|entries|data)\b`,
	`not (?:in|present in|found in|mentioned in|recorded in|visible in|shown in|contained in) the (?:log|file|attachment)`,
	`(?:log|file|attachment)s? (?:does not|doesn't|do not|don't) (?:show|say|contain|mention|record|include|tell)`,
	`nothing (?:in|about)`,
	`not enough (?:information|evidence|data)`,
	`(?:is|are) not (?:shown|recorded|logged|mentioned)`,
}, "|") + `)`)

// check runs the turn's checks and returns the failures (empty: pass).
func check(t *Task, tu Turn, ans Answer, sideEffect func(string) bool) []string {
	var fails []string
	ex := tu.Expect
	low := strings.ToLower(ans.Text)
	cites := citations(ans.Text, ans.Files)

	if ans.Failed {
		fails = append(fails, "the run failed: "+firstLineOf(ans.Text))
	}
	// Cited cause lines.
	citedLine := func(c Cite) bool {
		want := map[int]bool{}
		for _, n := range c.lineSet() {
			want[n] = true
		}
		lines := t.Lines(c.File)
		ok := func(file string, n int) bool {
			if !strings.EqualFold(file, c.File) {
				return false
			}
			if len(want) > 0 {
				return want[n]
			}
			return n >= 1 && n <= len(lines) && containsFold(lines[n-1], c.Text)
		}
		for _, x := range cites {
			if ok(x.file, x.line) {
				return true
			}
		}
		for _, e := range ans.Evidence {
			file := e.File
			if file == "" && len(ans.Files) == 1 {
				file = ans.Files[0]
			}
			if ok(file, e.Line) {
				return true
			}
		}
		// "line 812" in prose, when the thread has this one file or the
		// file is named on the same line.
		for _, m := range proseLineRE.FindAllStringSubmatchIndex(ans.Text, -1) {
			n, _ := strconv.Atoi(ans.Text[m[2]:m[3]])
			file := nearestName(ans.Text[:m[0]], map[string]string{strings.ToLower(c.File): c.File})
			if file == "" && len(ans.Files) == 1 {
				file = ans.Files[0]
			}
			if ok(file, n) {
				return true
			}
		}
		return false
	}
	for _, c := range ex.Cite {
		if !citedLine(c) {
			fails = append(fails, "cause line not cited: "+c.String())
		}
	}
	if len(ex.CiteAny) > 0 {
		found := false
		for _, c := range ex.CiteAny {
			found = found || citedLine(c)
		}
		if !found {
			names := make([]string, len(ex.CiteAny))
			for i, c := range ex.CiteAny {
				names[i] = c.String()
			}
			fails = append(fails, "none of the cause lines cited: "+strings.Join(names, ", "))
		}
	}
	// Invented or misquoted lines.
	if !ex.AllowUnverified {
		fails = append(fails, inventedLines(t, cites, ans)...)
	}
	// Keywords.
	var missing []string
	for _, k := range ex.KeywordsAll {
		if !strings.Contains(low, strings.ToLower(k)) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		fails = append(fails, fmt.Sprintf("missing keywords %q", missing))
	}
	if len(ex.KeywordsAny) > 0 {
		found := false
		for _, k := range ex.KeywordsAny {
			found = found || strings.Contains(low, strings.ToLower(k))
		}
		if !found {
			fails = append(fails, fmt.Sprintf("none of the keywords %q", ex.KeywordsAny))
		}
	}
	for _, f := range ex.Forbid {
		if strings.Contains(low, strings.ToLower(f)) {
			fails = append(fails, fmt.Sprintf("answer says %q, which it must not", f))
		}
	}
	if ex.DontKnow && !dontKnowRE.MatchString(ans.Text) {
		fails = append(fails, "does not say the log cannot answer this")
	}
	// Skills.
	forbidden := map[string]bool{}
	for _, s := range ex.ForbidSkills {
		forbidden[s] = true
	}
	reported := map[string]bool{}
	for _, c := range ans.Calls {
		bad := forbidden[c.Skill]
		if !bad && !ex.AllowSideEffects && sideEffect != nil && sideEffect(c.Skill) {
			bad = true
		}
		if !bad || reported[c.Skill] {
			continue
		}
		reported[c.Skill] = true
		how := "ran"
		if c.Status == "refused" {
			how = "refused by the guard"
		}
		fails = append(fails, fmt.Sprintf("called side-effect skill %s (%s)", c.Skill, how))
	}
	maxSteps := ex.MaxSteps
	if maxSteps == 0 {
		maxSteps = t.MaxSteps
	}
	if maxSteps > 0 && ans.Steps > maxSteps {
		fails = append(fails, fmt.Sprintf("took %d steps, budget %d", ans.Steps, maxSteps))
	}
	return fails
}

// inventedLines checks every citation and evidence line: the file must be
// attached, the line must exist, and a quote must match the line.
func inventedLines(t *Task, cites []cited, ans Answer) []string {
	var fails []string
	seen := map[string]bool{}
	report := func(key, msg string) {
		if !seen[key] {
			seen[key] = true
			fails = append(fails, msg)
		}
	}
	verify := func(file string, n int, quote, form string) {
		key := fmt.Sprintf("%s:%d", file, n)
		if file == "" {
			report(form, fmt.Sprintf("cites %s but names no attached file", form))
			return
		}
		lines := t.Lines(file)
		if lines == nil && !contains(ans.Files, file) {
			report(key, fmt.Sprintf("cites %s, a file that is not attached", key))
			return
		}
		if n < 1 || n > len(lines) {
			report(key, fmt.Sprintf("invented line %s (%s has %d lines)", key, file, len(lines)))
			return
		}
		if quote != "" && !quoteMatches(quote, lines[n-1]) {
			report(key+"q", fmt.Sprintf("misquotes %s: says %q", key, truncate(quote, 80)))
		}
	}
	for _, c := range cites {
		verify(c.file, c.line, c.quote, c.form)
	}
	for _, e := range ans.Evidence {
		file := e.File
		if file == "" && len(ans.Files) == 1 {
			// The agent could not tell which file a bare L123 meant; a
			// reader of a one-file thread can.
			file = ans.Files[0]
		}
		verify(file, e.Line, "", fmt.Sprintf("L%d", e.Line))
	}
	return fails
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 120)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
