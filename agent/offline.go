package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sleuth-bot/sleuth/skills"
)

const offlineName = "offline"

// OfflineBrain answers without a model. A new attachment gets the triage
// plan (analyze-log → query-issue-kb → generate-report); two new logs get
// both analysed, compared (the one with fewer errors as the baseline) and
// the failing one reported. Follow-ups are understood by simple intents
// ("around line 420", "grep timeout", "errors", "first error", "timeline",
// "compare", "help", "remember that …", "what do you remember about me?",
// "forget …", "have we seen this before?"). A question that asks for a
// specific fact first checks that the log mentions it at all. Everything
// it says comes from skill outputs. It is stateless and safe for
// concurrent use.
type OfflineBrain struct{}

// NewOfflineBrain returns the offline brain.
func NewOfflineBrain() *OfflineBrain { return &OfflineBrain{} }

// Name implements Brain.
func (*OfflineBrain) Name() string { return offlineName }

// planned is one call of the offline plan; args may depend on earlier results.
type planned struct {
	skill string
	args  func(st *State, spec skills.Spec) map[string]any
}

type intent struct {
	name string
	// plan is a fixed sequence of calls; each runs once.
	plan []planned
	// step, when set, replaces plan: it returns the next call given the
	// results so far, or false when the brain should answer.
	step func(st *State) (planned, bool)
	// outline is the plan shown in the progress line for step intents.
	outline []string
	compose func(st *State) string
	answer  string // a direct answer, no calls
}

var (
	aroundRE = regexp.MustCompile(`(?i)\b(?:around|near|at|show|read)?\s*(?:line|l)\s*#?(\d+)\b`)
	// grepRE matches deliberate search requests at the start of the
	// message: "grep X", "search for X", "look for X", "find lines with
	// X", "show lines containing X", `find "X"`. "can you find out why?"
	// is not one.
	grepRE = regexp.MustCompile(`(?i)^\s*(?:(?:please|can you|could you|would you)\s+)?(?:` +
		`grep(?:\s+for)?|` +
		`search(?:\s+(?:the\s+)?logs?)?\s+for|` +
		`look\s+for|` +
		`(?:find|show(?:\s+me)?|list)\s+(?:all\s+)?(?:the\s+)?(?:lines?|entries|messages|occurrences)\s+(?:with|containing|matching|mentioning|that\s+(?:contain|mention)|about|of)` +
		`)\s+["'` + "`" + `]?([^"'` + "`" + `\n]+?)["'` + "`" + `]?\s*[?.!]?\s*$`)
	findQuotedRE  = regexp.MustCompile(`(?i)^\s*(?:(?:please|can you|could you)\s+)?find\s+["'` + "`" + `]([^"'` + "`" + `\n]+)["'` + "`" + `]\s*[?.!]?\s*$`)
	firstPersonRE = regexp.MustCompile(`(?i)^\s*(?:i|i'm|i am|my|me)\b`)
	preferenceRE  = regexp.MustCompile(`(?i)\b(?:prefer|like|want|rather|always|never|please)\b`)
	rememberRE    = regexp.MustCompile(`(?i)^\s*(?:please\s+)?remember(?:\s+that)?\s+(.+)$`)
	forgetRE      = regexp.MustCompile(`(?i)^\s*(?:please\s+)?forget(?:\s+that|\s+about)?\s*(.*)$`)
	// historyRE matches questions about earlier incidents.
	historyRE = regexp.MustCompile(`(?i)\b(?:(?:seen|had|happened|hit|met)\s+(?:this|it|that|something like this|this error|this one)(?:\s+\w+)?\s+before|` +
		`before\s*\?|last\s+(?:[\w-]+\s+){0,2}(?:time|incident|outage|failure|crash|issue|problem)s?\b|previous(?:ly)?\s|earlier\s+(?:incident|outage|failure)|` +
		`(?:past|recent|earlier)\s+incidents?|incident\s+history|recurring|again\s*\?)`)
	// questionRE marks a question.
	questionRE = regexp.MustCompile(`(?i)\?\s*$|^\s*(?:who|what|which|when|where|why|how|did|have|has|was|were|is|are|do|does|can|could)\b`)
	// lookupRE marks a question that asks for a specific fact (who, which,
	// when, where, a time) rather than why something failed.
	lookupRE = regexp.MustCompile(`(?i)\b(?:who|whom|whose|which|when|where)\b|\bwhat\s+(?:time|ip|host|user|version|address|id)\b|\bat\s+\d{1,2}:\d{2}\b`)
)

// Next implements Brain.
func (b *OfflineBrain) Next(ctx context.Context, st *State) (Action, error) {
	it := b.intent(st)
	if it.answer != "" {
		return Action{Text: it.answer}, nil
	}
	if st.MustAnswer == "" {
		if it.step != nil {
			if p, ok := it.step(st); ok {
				if spec, offered := specOf(st, p.skill); offered {
					act := callAction(st, p, spec)
					if st.Step == 1 && len(it.outline) > 1 {
						act.Text = outlineText(it.outline)
					}
					return act, nil
				}
			}
			return Action{Text: it.compose(st)}, nil
		}
		done := map[string]int{}
		for _, c := range st.Results() {
			done[c.Skill]++
		}
		for _, p := range it.plan {
			if done[p.skill] > 0 {
				done[p.skill]--
				continue
			}
			spec, ok := specOf(st, p.skill)
			if !ok {
				continue // not offered: skip that part of the plan
			}
			act := callAction(st, p, spec)
			if st.Step == 1 && len(it.plan) > 1 {
				act.Text = planText(it.plan)
			}
			return act, nil
		}
	}
	return Action{Text: it.compose(st)}, nil
}

func callAction(st *State, p planned, spec skills.Spec) Action {
	args, _ := json.Marshal(p.args(st, spec))
	return Action{Calls: []Call{{Skill: p.skill, Args: args}}}
}

func planText(plan []planned) string {
	names := make([]string, len(plan))
	for i, p := range plan {
		names[i] = p.skill
	}
	return outlineText(names)
}

func outlineText(items []string) string {
	var b strings.Builder
	for i, s := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String()
}

func specOf(st *State, name string) (skills.Spec, bool) {
	for _, s := range st.Tools {
		if s.Name == name {
			return s, true
		}
	}
	return skills.Spec{}, false
}

// intent classifies the person's message.
func (b *OfflineBrain) intent(st *State) intent {
	g := strings.TrimSpace(st.Goal)
	low := strings.ToLower(g)
	withFile := func(spec skills.Spec, st *State, args map[string]any) map[string]any {
		if f := latestFile(st); f != "" && hasParam(spec, "file") {
			args["file"] = f
		}
		return args
	}
	readLog := func(args map[string]any) intent {
		return intent{name: "read", plan: []planned{{"read-log", func(st *State, spec skills.Spec) map[string]any {
			return withFile(spec, st, args)
		}}}, compose: composeOutputs("")}
	}
	logs := logFiles(st)
	newLogs := newLogFiles(st)
	switch {
	case low == "help" || strings.HasPrefix(low, "help ") || strings.Contains(low, "what can you do"):
		return intent{answer: helpText(st)}
	case rememberRE.MatchString(g) && !strings.Contains(low, "what do you remember"):
		content := rememberRE.FindStringSubmatch(g)[1]
		return intent{name: "remember", plan: []planned{{"remember", func(st *State, spec skills.Spec) map[string]any {
			args := map[string]any{firstParam(spec, "content", "text", "memory"): content}
			// "I prefer …", "my team …": about the person, so theirs alone.
			if firstPersonRE.MatchString(content) {
				if p := firstParam(spec, "scope", "", ""); p != "" {
					args[p] = "user"
				}
				if p := firstParam(spec, "type", "", ""); p != "" {
					args[p] = "fact"
					if preferenceRE.MatchString(content) {
						args[p] = "preference"
					}
				}
			}
			return args
		}}}, compose: composeOutputs("")}
	case strings.Contains(low, "what do you remember") || strings.Contains(low, "what do you know about me"):
		return intent{name: "recall", plan: []planned{{"search-memory", func(st *State, spec skills.Spec) map[string]any {
			args := map[string]any{}
			if p := firstParam(spec, "query", "text", ""); p != "" {
				args[p] = ""
			}
			return args
		}}}, compose: composeOutputs("Here is what I remember:")}
	case forgetRE.MatchString(g):
		what := strings.TrimSpace(forgetRE.FindStringSubmatch(g)[1])
		return intent{name: "forget", plan: []planned{{"forget", func(st *State, spec skills.Spec) map[string]any {
			return map[string]any{firstParam(spec, "query", "text", "content"): what}
		}}}, compose: composeOutputs("")}
	case historyRE.MatchString(g) && len(newLogs) == 0:
		return historyIntent(st, false)
	case len(logs) == 0 && questionRE.MatchString(g):
		// A question with nothing attached can only be about the past.
		return historyIntent(st, true)
	case len(logs) == 0:
		return intent{answer: attachHint + "\n\n" + helpText(st)}
	case strings.Contains(low, "first error"):
		return readLog(map[string]any{"level": "error", "max_lines": 5})
	case aroundRE.MatchString(g) && !strings.Contains(low, "timeline"):
		n, _ := strconv.Atoi(aroundRE.FindStringSubmatch(g)[1])
		return readLog(map[string]any{"line": n, "context": 10})
	case grepRE.MatchString(g):
		return readLog(map[string]any{"pattern": strings.TrimSpace(grepRE.FindStringSubmatch(g)[1]), "max_lines": 50})
	case findQuotedRE.MatchString(g):
		return readLog(map[string]any{"pattern": strings.TrimSpace(findQuotedRE.FindStringSubmatch(g)[1]), "max_lines": 50})
	case len(newLogs) >= 2:
		// Two logs with one question ("why did it fail?", "what changed?"):
		// compare them and report on the failing one.
		return pairIntent(newLogs[0], newLogs[1])
	case (strings.Contains(low, "compare") || strings.Contains(low, "what changed") || strings.Contains(low, "diff")) && len(logs) >= 2:
		return pairIntent(logs[len(logs)-2], logs[len(logs)-1])
	case strings.Contains(low, "timeline"):
		return intent{name: "timeline", plan: []planned{{"analyze-log", func(st *State, spec skills.Spec) map[string]any {
			return withFile(spec, st, map[string]any{})
		}}}, compose: composeOutputs("")}
	case low == "errors" || strings.HasPrefix(low, "errors") || strings.Contains(low, "show errors") || strings.Contains(low, "list errors") || strings.Contains(low, "all errors"):
		return readLog(map[string]any{"level": "error", "max_lines": 50})
	}
	// The triage plan: a new attachment, or any other question about the files.
	return triageIntent(st)
}

// isAgentOutput reports whether a thread file is one of the agent's own
// saved tool outputs (output-step3-read-log.txt), not an attachment.
func isAgentOutput(name string) bool { return agentOutputRE.MatchString(name) }

var agentOutputRE = regexp.MustCompile(`^output-step\d+-[a-z0-9-]+\.txt$`)

// logFiles are the thread's attachments, oldest first, without the
// agent's saved outputs.
func logFiles(st *State) []string {
	var out []string
	for _, f := range st.Files {
		if !isAgentOutput(f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

func newLogFiles(st *State) []string {
	var out []string
	for _, n := range st.NewFiles {
		if !isAgentOutput(n) {
			out = append(out, n)
		}
	}
	return out
}

// latestFile is the file a single-file intent works on: with two or more
// logs analysed this turn, the one with the most errors; else the newest
// attachment of this message, or the newest of the thread.
func latestFile(st *State) string {
	if t := failingAnalysed(st); t != "" {
		return t
	}
	if n := newLogFiles(st); len(n) > 0 {
		return n[len(n)-1]
	}
	if l := logFiles(st); len(l) > 0 {
		return l[len(l)-1]
	}
	return ""
}

// failingAnalysed returns, when two or more files were analysed this turn,
// the one the engine counts most errors in.
func failingAnalysed(st *State) string {
	best, bestN, n := "", -1, 0
	for _, c := range st.Results() {
		if c.Skill != "analyze-log" || c.Status != skills.StatusOK {
			continue
		}
		n++
		if e := errorCount(c.Result.Output); e > bestN {
			best, bestN = argFile(c), e
		}
	}
	if n < 2 {
		return ""
	}
	return best
}

func hasParam(spec skills.Spec, name string) bool {
	props, _ := spec.Parameters["properties"].(map[string]any)
	_, ok := props[name]
	return ok
}

// firstParam returns the first candidate the schema declares, else the
// first candidate.
func firstParam(spec skills.Spec, candidates ...string) string {
	for _, c := range candidates {
		if c != "" && hasParam(spec, c) {
			return c
		}
	}
	return candidates[0]
}

// argFile is the "file" argument of a call.
func argFile(c Call) string {
	var a struct {
		File string `json:"file"`
	}
	_ = json.Unmarshal(c.Args, &a)
	return a.File
}

// analysisOf returns the successful analyze-log call for file.
func analysisOf(st *State, file string) (Call, bool) {
	for _, c := range st.Results() {
		if c.Skill == "analyze-log" && c.Status == skills.StatusOK && argFile(c) == file {
			return c, true
		}
	}
	return Call{}, false
}

var (
	levelsLineRE = regexp.MustCompile(`(?m)^(?:levels|events by level):\s*(.*)$`)
	levelCountRE = regexp.MustCompile(`\b(fatal|error|critical|panic)\s+(\d+)`)
)

// errorCount reads the engine's level counts from an analyze-log output
// ("levels: error 40, warn 5"): fatal and error lines together. Crash
// lines the engine found without a level count once.
func errorCount(output string) int {
	n := 0
	if m := levelsLineRE.FindStringSubmatch(output); m != nil {
		for _, lc := range levelCountRE.FindAllStringSubmatch(m[1], -1) {
			k, _ := strconv.Atoi(lc[2])
			n += k
		}
	}
	if n == 0 && strings.Contains(output, "crash marker") {
		n = 1
	}
	return n
}

// kbArgs queries the knowledge base with the top evidence of the analysis
// of the file in focus.
func kbArgs(st *State, spec skills.Spec) map[string]any {
	var q string
	var fps []string
	focus := latestFile(st)
	for _, c := range st.Results() {
		if c.Skill != "analyze-log" || c.Status != skills.StatusOK {
			continue
		}
		if f := argFile(c); f != "" && focus != "" && f != focus {
			continue
		}
		q = ""
		for _, l := range c.Result.Lines {
			if q != "" {
				q += "\n"
			}
			q += l.Text
			if len(q) > 600 {
				break
			}
		}
		if q == "" {
			q = firstLines(c.Result.Output, 8)
		}
		fps = c.Result.Fingerprints
	}
	if q == "" {
		q = st.Goal
	}
	args := map[string]any{firstParam(spec, "query", "text", "error", "q"): truncate(q, 800)}
	if hasParam(spec, "fingerprints") && len(fps) > 0 {
		args["fingerprints"] = fps
	}
	if focus != "" && hasParam(spec, "file") {
		args["file"] = focus
	}
	return args
}

// pairIntent analyses both logs, compares them with the one that has
// fewer errors as the baseline, and reports on the failing one.
func pairIntent(a, b string) intent {
	analyze := func(name string) planned {
		return planned{"analyze-log", func(st *State, spec skills.Spec) map[string]any {
			args := map[string]any{}
			if hasParam(spec, "file") {
				args["file"] = name
			}
			return args
		}}
	}
	compare := planned{"compare-logs", func(st *State, spec skills.Spec) map[string]any {
		base, target := pairOrder(st, a, b)
		return map[string]any{
			firstParam(spec, "baseline", "before", "old", "a"): base,
			firstParam(spec, "target", "after", "new", "b"):    target,
		}
	}}
	seq := []planned{analyze(a), analyze(b), compare, {"query-issue-kb", kbArgs}, {"generate-report", pairReportArgs(a, b)}}
	return intent{
		name:    "compare",
		outline: []string{"analyze-log " + a, "analyze-log " + b, "compare-logs", "query-issue-kb", "generate-report"},
		step:    sequence(seq),
		compose: composeTriage,
	}
}

// sequence runs the calls in order, each once (a call counts as made
// whatever its status, so a refused or failed call is not retried).
func sequence(seq []planned) func(st *State) (planned, bool) {
	return func(st *State) (planned, bool) {
		made := 0
		for _, s := range st.Steps {
			made += len(s.Calls)
		}
		var offered []planned // a skill not offered is skipped
		for _, p := range seq {
			if _, ok := specOf(st, p.skill); ok {
				offered = append(offered, p)
			}
		}
		if made < len(offered) {
			return offered[made], true
		}
		return planned{}, false
	}
}

// pairOrder returns (baseline, target): the target is the log the engine
// counts more errors in; on a tie, the later one.
func pairOrder(st *State, a, b string) (string, string) {
	ca, okA := analysisOf(st, a)
	cb, okB := analysisOf(st, b)
	if okA && okB && errorCount(ca.Result.Output) > errorCount(cb.Result.Output) {
		return b, a
	}
	return a, b
}

// triageIntent is the plan for one log: analyze, (for a question about a
// specific fact, check that the log mentions it), knowledge base, report.
func triageIntent(st *State) intent {
	terms := lookupTerms(st)
	analyze := planned{"analyze-log", func(st *State, spec skills.Spec) map[string]any {
		args := map[string]any{}
		if f := latestFile(st); f != "" && hasParam(spec, "file") {
			args["file"] = f
		}
		return args
	}}
	kb := planned{"query-issue-kb", kbArgs}
	report := planned{"generate-report", func(st *State, spec skills.Spec) map[string]any {
		if hasParam(spec, "conclusion") {
			return reportArgs(st)
		}
		args := map[string]any{}
		if f := latestFile(st); f != "" && hasParam(spec, "file") {
			args["file"] = f
		}
		return args
	}}
	if len(terms) == 0 {
		return intent{name: "triage", plan: []planned{analyze, kb, report}, compose: composeTriage}
	}
	stems := make([]string, len(terms))
	for i, t := range terms {
		stems[i] = searchStem(t)
	}
	search := planned{"read-log", func(st *State, spec skills.Spec) map[string]any {
		args := map[string]any{"pattern": strings.Join(stems, "|"), "max_lines": 20}
		if f := latestFile(st); f != "" && hasParam(spec, "file") {
			args["file"] = f
		}
		return args
	}}
	seq := sequence([]planned{analyze, search, kb, report})
	return intent{
		name:    "lookup",
		outline: []string{"analyze-log", "read-log (" + strings.Join(terms, ", ") + ")", "query-issue-kb", "generate-report"},
		step: func(st *State) (planned, bool) {
			if _, _, ok := termsAbsent(st); ok {
				return planned{}, false
			}
			return seq(st)
		},
		compose: func(st *State) string {
			if file, lines, ok := termsAbsent(st); ok {
				return composeAbsent(st, file, terms, lines)
			}
			return composeTriage(st)
		},
	}
}

// termsAbsent reports whether the term search of this turn found no line.
func termsAbsent(st *State) (file string, scanned int, absent bool) {
	for _, c := range st.Results() {
		if c.Skill != "read-log" || c.Status != skills.StatusOK {
			continue
		}
		var a struct {
			Pattern string `json:"pattern"`
		}
		_ = json.Unmarshal(c.Args, &a)
		if a.Pattern == "" || len(c.Result.Lines) > 0 {
			return "", 0, false
		}
		if m, ok := c.Result.Metadata["matched"]; ok && fmt.Sprint(m) != "0" {
			return "", 0, false
		}
		if n, ok := c.Result.Metadata["lines_scanned"]; ok {
			scanned, _ = strconv.Atoi(fmt.Sprint(n))
		}
		file = argFile(c)
		if file == "" {
			file = latestFile(st)
		}
		return file, scanned, true
	}
	return "", 0, false
}

// composeAbsent says plainly that the log does not show what was asked,
// and what it does cover.
func composeAbsent(st *State, file string, terms []string, scanned int) string {
	var b strings.Builder
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = "“" + t + "”"
	}
	fmt.Fprintf(&b, "I can't find anything about %s in %s", strings.Join(quoted, ", "), file)
	if scanned > 0 {
		fmt.Fprintf(&b, " (%d lines searched)", scanned)
	}
	b.WriteString(": none of these words appear in it, so the log does not show the answer to this question. ")
	b.WriteString("It may be in another system's log (an audit trail, the platform's event history).\n\n")
	if an, ok := analysisOf(st, file); ok {
		b.WriteString("**What " + file + " does cover**\n")
		head := firstLines(an.Result.Output, 3)
		for _, l := range strings.Split(head, "\n") {
			if strings.HasPrefix(l, "first error:") {
				continue // its line is cited below, with its file
			}
			b.WriteString("- " + l + "\n")
		}
		for i, l := range an.Result.Lines {
			if i == 3 {
				break
			}
			fmt.Fprintf(&b, "- %s L%d `%s`", file, l.Line, quoteOf(l.Text, 140))
			if l.Reason != "" {
				fmt.Fprintf(&b, " — %s", firstTags(l.Reason, 3))
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// lookupTerms returns the key terms of a question that asks for a specific
// fact ("which user deleted the bucket?", "what happened at 14:30?"): the
// words beyond stop words and generic incident words. Other questions
// ("why did it fail?") return none: any log answers them.
func lookupTerms(st *State) []string {
	if !lookupRE.MatchString(st.Goal) {
		return nil
	}
	skip := map[string]bool{}
	for _, f := range st.Files {
		skip[strings.ToLower(f.Name)] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range termRE.FindAllString(strings.ToLower(st.Goal), -1) {
		w = strings.Trim(w, ".-:")
		if w == "" || skip[w] || seen[w] || lookupStop[w] || stopWords[w] || genericWords[w] {
			continue
		}
		if len(w) < 3 && !strings.ContainsAny(w, "0123456789") {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// searchStem shortens a word so a substring search also finds its other
// forms: "deleted" finds "delete", "users" finds "user", "logged" finds
// "log".
func searchStem(w string) string {
	if strings.ContainsAny(w, "0123456789:-_.") {
		return w
	}
	s := stem(w)
	if n := len(s); n >= 4 && s[n-1] == s[n-2] && !strings.ContainsRune("aeiou", rune(s[n-1])) {
		s = s[:n-1]
	}
	return s
}

var termRE = regexp.MustCompile(`[a-z0-9][a-z0-9_.:\-]*`)

// lookupStop are question and filler words that name nothing in a log.
var lookupStop = setOf(`who whom whose which when where what why how was were are did does do done can could would should will may might
have has had not yes please there here about from into since after before during over under again keep keeps kept get got gets
any some all each every then than very just still also only tell show find look see know explain happened happen happens
yesterday today tonight overnight night morning evening last first now ago hour hours minute minutes day days time times
our we us they them their your you i me my it its this that these those the and or of to in on at by as for with be is am`)

// genericWords describe any incident; they do not say what to look for.
var genericWords = setOf(`error errors fail fails failed failing failure broke broken break crash crashes crashed restart restarts
restarted reboot reboots rebooted die died down problem issue issues bug cause caused reason log logs file files attached
start started starting starts begin began begun stop stopped stops end ended wrong slow slower fine work works working worked
service services server servers app application system line lines thing things something anything everything first last
exactly actually happening going`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// historyIntent answers a question about earlier incidents from long-term
// memory: a search with the question's words, then the latest incidents
// when nothing matches.
func historyIntent(st *State, nothingAttached bool) intent {
	query := strings.Join(historyTerms(st.Goal), " ")
	search := planned{"search-memory", func(st *State, spec skills.Spec) map[string]any {
		args := map[string]any{}
		if p := firstParam(spec, "query", "text", ""); p != "" {
			args[p] = query
		}
		return args
	}}
	latest := planned{"search-memory", func(st *State, spec skills.Spec) map[string]any {
		args := map[string]any{}
		if hasParam(spec, "type") {
			args["type"] = "incident"
		}
		if hasParam(spec, "limit") {
			args["limit"] = 5
		}
		return args
	}}
	return intent{
		name: "history",
		step: func(st *State) (planned, bool) {
			calls := 0
			for _, c := range st.Results() {
				if c.Skill != "search-memory" {
					continue
				}
				calls++
				if c.Status == skills.StatusOK && memoryCount(c) > 0 {
					return planned{}, false
				}
			}
			switch {
			case calls == 0 && query != "":
				return search, true
			case calls == 0 || (calls == 1 && query != ""):
				return latest, true
			}
			return planned{}, false
		},
		outline: []string{"search-memory", "search-memory (latest incidents)"},
		compose: func(st *State) string {
			if text, ok := composeHistory(st); ok || !nothingAttached {
				return text
			}
			return attachHint + "\n\n" + helpText(st)
		},
	}
}

const attachHint = "Attach a log file and mention me, and I will find what went wrong."

func historyTerms(goal string) []string {
	var out []string
	for _, w := range termRE.FindAllString(strings.ToLower(goal), -1) {
		w = strings.Trim(w, ".-:")
		if len(w) < 3 || lookupStop[w] || stopWords[w] || historyStop[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

var historyStop = setOf(`seen before last previous previously earlier recent past incident incidents channel again recurring cause`)

func memoryCount(c Call) int {
	if n, ok := c.Result.Metadata["count"]; ok {
		k, _ := strconv.Atoi(fmt.Sprint(n))
		return k
	}
	out := strings.TrimSpace(c.Result.Output)
	if out == "" || strings.HasPrefix(out, "No memories") {
		return 0
	}
	return strings.Count(out, "\n") + 1
}

// composeHistory answers from the memories found, or from the memories
// recalled for this turn when the search skill is not offered. ok is
// false when memory holds nothing.
func composeHistory(st *State) (string, bool) {
	for _, c := range st.Results() {
		if c.Skill == "search-memory" && c.Status == skills.StatusOK && memoryCount(c) > 0 {
			return "From long-term memory (this channel and you), most relevant first:\n\n" + stripCitations(strings.TrimSpace(c.Result.Output)), true
		}
	}
	if len(st.Memories) > 0 {
		var b strings.Builder
		b.WriteString("From long-term memory (this channel and you):\n\n")
		for _, m := range st.Memories {
			b.WriteString("- " + stripCitations(m) + "\n")
		}
		return strings.TrimSpace(b.String()), true
	}
	return "I don't remember any earlier incident here: nothing in long-term memory for this channel or for you matches. Attach the log and I will analyse it.", false
}

// composeTriage answers with the report, or with what the analysis and
// the knowledge base said when there is no report.
func composeTriage(st *State) string {
	var report, analysis, kb, cmp string
	var unreadable []string // analyses the engine refused: empty, binary, corrupt …
	for _, c := range st.Results() {
		if c.Skill == "analyze-log" && c.Status == skills.StatusError {
			// The skill's hint to a model ("; tell the user …") is not for people.
			msg, _, _ := strings.Cut(strings.TrimSpace(c.Result.Output), "; tell the user")
			unreadable = append(unreadable, msg+".")
		}
		if c.Status != skills.StatusOK {
			continue
		}
		switch c.Skill {
		case "generate-report":
			report = c.Result.Output
		case "analyze-log":
			analysis = c.Result.Output
		case "query-issue-kb":
			kb = c.Result.Output
		case "compare-logs":
			cmp = c.Result.Output
		}
	}
	if len(unreadable) > 0 && analysis == "" {
		// Nothing was analysed: say why, rather than report on nothing.
		return strings.Join(unreadable, "\n") + "\n\nAttach the log as text, or as .gz, .zip or .tar.gz, and ask again."
	}
	if report != "" {
		if len(unreadable) > 0 {
			report += "\n\nNot analysed: " + strings.Join(unreadable, "; ")
		}
		return strings.TrimSpace(report)
	}
	var parts []string
	if analysis != "" {
		parts = append(parts, strings.TrimSpace(analysis))
	}
	if cmp != "" {
		parts = append(parts, strings.TrimSpace(cmp))
	}
	if kb != "" {
		parts = append(parts, "**Knowledge base**\n"+strings.TrimSpace(kb))
	}
	if len(parts) == 0 {
		return composeOutputs("")(st)
	}
	return strings.Join(parts, "\n\n")
}

// composeOutputs answers with the outputs of the calls, errors included.
func composeOutputs(lead string) func(st *State) string {
	return func(st *State) string {
		var parts []string
		if lead != "" {
			parts = append(parts, lead)
		}
		for _, c := range st.Results() {
			out := strings.TrimSpace(c.Result.Output)
			if c.Status == StatusRefused {
				out = strings.TrimPrefix(c.Output, "error: ")
			}
			if out == "" {
				continue
			}
			parts = append(parts, out)
		}
		if len(parts) == 0 || (lead != "" && len(parts) == 1) {
			return "I have nothing to show for that. " + shortHelp
		}
		return strings.Join(parts, "\n\n")
	}
}

const shortHelp = `Try "errors", "first error", "around line 420", "grep timeout", "timeline", "compare", or "help".`

func helpText(st *State) string {
	var b strings.Builder
	b.WriteString("I read attached logs and explain what went wrong, with the line numbers.\n\n")
	b.WriteString("Follow-ups I understand without a model:\n")
	for _, l := range []string{
		"`errors` / `first error` — the error lines",
		"`around line 420` — the lines around a line number",
		"`grep timeout` — lines containing a word",
		"`timeline` — when things happened",
		"`compare` — what changed between the last two attached logs",
		"`have we seen this before?` — earlier incidents from memory",
		"`remember that …`, `what do you remember about me?`, `forget …`",
	} {
		b.WriteString("- " + l + "\n")
	}
	if len(st.Tools) > 0 {
		var names []string
		for _, t := range st.Tools {
			names = append(names, "`"+t.Name+"`")
		}
		b.WriteString("\nSkills: " + strings.Join(names, ", ") + ".")
	}
	return strings.TrimSpace(b.String())
}

// reportArgs builds generate-report's arguments for one log from what the
// analysis and the knowledge base returned: nothing is invented.
func reportArgs(st *State) map[string]any {
	file := latestFile(st)
	var lines []skills.LineRef
	if an, ok := analysisOf(st, file); ok {
		lines = an.Result.Lines
	} else {
		for _, c := range st.Results() {
			if c.Skill == "analyze-log" && c.Status == skills.StatusOK {
				lines = append(lines, c.Result.Lines...)
			}
		}
	}
	r := reason(lines, nil)
	concl := r.conclusion
	if kb := kbLine(st); kb != "" {
		concl += "\n" + kb
	}
	return reportFrom(file, concl, r.evidence)
}

// pairReportArgs builds the report for two compared logs: the failing
// one's analysis read against the comparison.
func pairReportArgs(a, b string) func(st *State, spec skills.Spec) map[string]any {
	return func(st *State, spec skills.Spec) map[string]any {
		base, target := pairOrder(st, a, b)
		var lines, changes []skills.LineRef
		var errsBase, errsTarget int
		if c, ok := analysisOf(st, target); ok {
			lines = c.Result.Lines
			errsTarget = errorCount(c.Result.Output)
		}
		if c, ok := analysisOf(st, base); ok {
			errsBase = errorCount(c.Result.Output)
		}
		for _, c := range st.Results() {
			if c.Skill == "compare-logs" && c.Status == skills.StatusOK {
				changes = c.Result.Lines
			}
		}
		r := reason(lines, changes)
		lead := fmt.Sprintf("%s is the failing run (%d error lines; %s, the baseline, has %d).", target, errsTarget, base, errsBase)
		if errsTarget == errsBase {
			lead = fmt.Sprintf("%s and %s have as many error lines (%d); %s, attached later, is read as the failing run.", base, target, errsTarget, target)
		}
		concl := lead + "\n" + r.conclusion
		if kb := kbLine(st); kb != "" {
			concl += "\n" + kb
		}
		if !hasParam(spec, "conclusion") {
			args := map[string]any{}
			if hasParam(spec, "file") {
				args["file"] = target
			}
			return args
		}
		return reportFrom(target, concl, r.evidence)
	}
}

func reportFrom(file, concl string, evidence []skills.LineRef) map[string]any {
	var ev []map[string]any
	for _, l := range evidence {
		if len(ev) == 8 {
			break
		}
		e := map[string]any{"file": l.File, "line": l.Line, "quote": cutQuote(strings.TrimSpace(l.Text), 200)}
		if l.Reason != "" {
			e["why"] = l.Reason
		}
		ev = append(ev, e)
	}
	args := map[string]any{"conclusion": truncateLines(concl, 1400)}
	if len(ev) > 0 {
		args["evidence"] = ev
	}
	if file != "" {
		args["title"] = truncate(file+": offline analysis", 120)
	}
	return args
}

// kbLine is the knowledge base's best match in one line, or that none matched.
func kbLine(st *State) string {
	for _, c := range st.Results() {
		if c.Skill != "query-issue-kb" || c.Status != skills.StatusOK {
			continue
		}
		out := strings.TrimSpace(c.Result.Output)
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "1. ") {
				return "Closest known failure in the knowledge base (check it against the lines): " + truncate(strings.TrimPrefix(l, "1. "), 200)
			}
		}
		if f := firstLine(out); f != "" {
			return "Knowledge base: " + truncate(f, 200)
		}
	}
	return ""
}

// truncateLines keeps whole lines of s within n bytes, so a quote is never
// cut in the middle.
func truncateLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if b.Len()+len(l)+1 > n {
			break
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(l)
	}
	if b.Len() == 0 {
		return truncate(s, n)
	}
	return b.String()
}

// cutQuote keeps a prefix of s (a prefix still matches the line).
func cutQuote(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}
