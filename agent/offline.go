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

// OfflineBrain answers without a model: a new attachment gets the triage
// plan (analyze-log → query-issue-kb → generate-report); follow-ups are
// understood by simple intents ("around line 420", "grep timeout",
// "errors", "first error", "timeline", "compare", "help", "remember that …",
// "what do you remember about me?", "forget …"). Everything it says comes
// from skill outputs. It is stateless and safe for concurrent use.
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
	name    string
	plan    []planned
	compose func(st *State) string
	answer  string // a direct answer, no calls
}

var (
	aroundRE   = regexp.MustCompile(`(?i)\b(?:around|near|at|show|read)?\s*(?:line|l)\s*#?(\d+)\b`)
	grepRE     = regexp.MustCompile(`(?i)\b(?:grep|search(?:\s+for)?|find|look\s+for)\s+["'` + "`" + `]?([^"'` + "`" + `\n]+?)["'` + "`" + `]?\s*$`)
	rememberRE = regexp.MustCompile(`(?i)^\s*(?:please\s+)?remember(?:\s+that)?\s+(.+)$`)
	forgetRE   = regexp.MustCompile(`(?i)^\s*(?:please\s+)?forget(?:\s+that|\s+about)?\s*(.*)$`)
)

// Next implements Brain.
func (b *OfflineBrain) Next(ctx context.Context, st *State) (Action, error) {
	it := b.intent(st)
	if it.answer != "" {
		return Action{Text: it.answer}, nil
	}
	done := map[string]int{}
	for _, c := range st.Results() {
		done[c.Skill]++
	}
	if st.MustAnswer == "" {
		for _, p := range it.plan {
			if done[p.skill] > 0 {
				done[p.skill]--
				continue
			}
			spec, ok := specOf(st, p.skill)
			if !ok {
				continue // not offered: skip that part of the plan
			}
			args, _ := json.Marshal(p.args(st, spec))
			act := Action{Calls: []Call{{Skill: p.skill, Args: args}}}
			if st.Step == 1 && len(it.plan) > 1 {
				act.Text = planText(it.plan)
			}
			return act, nil
		}
	}
	return Action{Text: it.compose(st)}, nil
}

func planText(plan []planned) string {
	var b strings.Builder
	for i, p := range plan {
		fmt.Fprintf(&b, "%d. %s\n", i+1, p.skill)
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
	file := func(st *State) string { return latestFile(st) }
	withFile := func(spec skills.Spec, st *State, args map[string]any) map[string]any {
		if f := file(st); f != "" && hasParam(spec, "file") {
			args["file"] = f
		}
		return args
	}
	readLog := func(args map[string]any) intent {
		return intent{name: "read", plan: []planned{{"read-log", func(st *State, spec skills.Spec) map[string]any {
			return withFile(spec, st, args)
		}}}, compose: composeOutputs("")}
	}
	switch {
	case low == "help" || strings.HasPrefix(low, "help ") || strings.Contains(low, "what can you do"):
		return intent{answer: helpText(st)}
	case rememberRE.MatchString(g) && !strings.Contains(low, "what do you remember"):
		content := rememberRE.FindStringSubmatch(g)[1]
		return intent{name: "remember", plan: []planned{{"remember", func(st *State, spec skills.Spec) map[string]any {
			return map[string]any{firstParam(spec, "content", "text", "memory"): content}
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
	case len(st.Files) == 0:
		return intent{answer: "Attach a log file and mention me, and I will find what went wrong.\n\n" + helpText(st)}
	case strings.Contains(low, "first error"):
		return readLog(map[string]any{"level": "error", "max_lines": 5})
	case aroundRE.MatchString(g) && !strings.Contains(low, "timeline"):
		n, _ := strconv.Atoi(aroundRE.FindStringSubmatch(g)[1])
		return readLog(map[string]any{"line": n, "context": 10})
	case grepRE.MatchString(g):
		return readLog(map[string]any{"pattern": strings.TrimSpace(grepRE.FindStringSubmatch(g)[1]), "max_lines": 50})
	case strings.Contains(low, "compare") || strings.Contains(low, "what changed") || strings.Contains(low, "diff"):
		return intent{name: "compare", plan: []planned{{"compare-logs", compareArgs}}, compose: composeOutputs("")}
	case strings.Contains(low, "timeline"):
		return intent{name: "timeline", plan: []planned{{"analyze-log", func(st *State, spec skills.Spec) map[string]any {
			return withFile(spec, st, map[string]any{})
		}}}, compose: composeOutputs("")}
	case low == "errors" || strings.HasPrefix(low, "errors") || strings.Contains(low, "show errors") || strings.Contains(low, "list errors") || strings.Contains(low, "all errors"):
		return readLog(map[string]any{"level": "error", "max_lines": 50})
	}
	// The triage plan: a new attachment, or any other question about the files.
	return intent{name: "triage", plan: []planned{
		{"analyze-log", func(st *State, spec skills.Spec) map[string]any { return withFile(spec, st, map[string]any{}) }},
		{"query-issue-kb", kbArgs},
		{"generate-report", func(st *State, spec skills.Spec) map[string]any {
			if hasParam(spec, "conclusion") {
				return reportArgs(st)
			}
			return withFile(spec, st, map[string]any{})
		}},
	}, compose: composeTriage}
}

// latestFile is the newest attachment of this message, or the newest of the thread.
func latestFile(st *State) string {
	if n := len(st.NewFiles); n > 0 {
		return st.NewFiles[0]
	}
	for i := len(st.Files) - 1; i >= 0; i-- {
		if !strings.HasPrefix(st.Files[i].Name, "output-step") {
			return st.Files[i].Name
		}
	}
	return ""
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

// kbArgs queries the knowledge base with the top evidence of the analysis.
func kbArgs(st *State, spec skills.Spec) map[string]any {
	var q string
	var fps []string
	for _, c := range st.Results() {
		if c.Skill != "analyze-log" || c.Status != skills.StatusOK {
			continue
		}
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
	if f := latestFile(st); f != "" && hasParam(spec, "file") {
		args["file"] = f
	}
	return args
}

func compareArgs(st *State, spec skills.Spec) map[string]any {
	var names []string
	for _, f := range st.Files {
		if !strings.HasPrefix(f.Name, "output-step") {
			names = append(names, f.Name)
		}
	}
	args := map[string]any{}
	if len(names) >= 2 {
		args[firstParam(spec, "baseline", "before", "old", "a")] = names[len(names)-2]
		args[firstParam(spec, "file", "after", "new", "b")] = names[len(names)-1]
	}
	return args
}

// composeTriage answers with the report, or with what the analysis and
// the knowledge base said when there is no report.
func composeTriage(st *State) string {
	var report, analysis, kb string
	for _, c := range st.Results() {
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
		}
	}
	if report != "" {
		return strings.TrimSpace(report)
	}
	var parts []string
	if analysis != "" {
		parts = append(parts, strings.TrimSpace(analysis))
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

// reportArgs builds generate-report's arguments from what the analysis and
// the knowledge base returned: nothing is invented.
func reportArgs(st *State) map[string]any {
	var lines []skills.LineRef
	var kb string
	for _, c := range st.Results() {
		if c.Status != skills.StatusOK {
			continue
		}
		switch c.Skill {
		case "analyze-log":
			lines = append(lines, c.Result.Lines...)
		case "query-issue-kb":
			kb = firstLines(c.Result.Output, 3)
		}
	}
	var concl []string
	if len(lines) > 0 {
		concl = append(concl, fmt.Sprintf("The analysis ranks %s:%d first: %s", lines[0].File, lines[0].Line, truncate(strings.TrimSpace(lines[0].Text), 300)))
	} else {
		concl = append(concl, "The analysis found no ranked evidence.")
	}
	if kb != "" {
		concl = append(concl, "Knowledge base: "+truncate(kb, 600))
	}
	var ev []map[string]any
	for _, l := range lines {
		if len(ev) == 8 {
			break
		}
		e := map[string]any{"file": l.File, "line": l.Line, "quote": cutQuote(strings.TrimSpace(l.Text), 200)}
		if l.Reason != "" {
			e["why"] = l.Reason
		}
		ev = append(ev, e)
	}
	args := map[string]any{"conclusion": truncate(strings.Join(concl, "\n"), 1400)}
	if len(ev) > 0 {
		args["evidence"] = ev
	}
	if f := latestFile(st); f != "" {
		args["title"] = truncate(f+": offline analysis", 120)
	}
	return args
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
