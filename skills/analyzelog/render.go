package analyzelog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// levelOrder is the order levels are listed in.
var levelOrder = []string{"fatal", "error", "warn", "info", "debug", "trace", ""}

// Render turns a report into the result the model reads: a summary, the
// error templates with their ids, and the top evidence lines (also in
// Result.Lines); Fingerprints are the report's error templates.
func Render(name string, rep *logscan.Report, top int) skills.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d lines, %s", name, rep.Lines, skills.HumanBytes(rep.Bytes))
	if tr := rep.TimeRange; tr != nil && tr.Start != "" {
		fmt.Fprintf(&b, ", %s → %s (L%d–L%d)", tr.Start, tr.End, tr.StartLine, tr.EndLine)
	}
	b.WriteString("\n")
	if len(rep.Levels) > 0 {
		var parts []string
		seen := map[string]bool{}
		for _, l := range levelOrder {
			if n, ok := rep.Levels[l]; ok && n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", levelName(l), n))
			}
			seen[l] = true
		}
		var rest []string
		for l, n := range rep.Levels {
			if !seen[l] && n > 0 {
				rest = append(rest, fmt.Sprintf("%s %d", l, n))
			}
		}
		sort.Strings(rest)
		parts = append(parts, rest...)
		fmt.Fprintf(&b, "levels: %s\n", strings.Join(parts, ", "))
	}
	if fe := rep.FirstError; fe != nil {
		fmt.Fprintf(&b, "first error: L%d: %s\n", fe.Line, cut(fe.Text))
	} else {
		b.WriteString("first error: none found\n")
	}
	for i, bu := range rep.Bursts {
		if i == 3 {
			fmt.Fprintf(&b, "(%d more bursts)\n", len(rep.Bursts)-3)
			break
		}
		fmt.Fprintf(&b, "burst: %s → %s (L%d–L%d), %d errors, %.1f/min\n", bu.Start, bu.End, bu.StartLine, bu.EndLine, bu.Errors, bu.PerMinute)
	}

	tmpls := errorTemplates(rep)
	if len(tmpls) > 0 {
		b.WriteString("error and warning templates (id ×count, first line):\n")
		for i, t := range tmpls {
			if i == maxTemplates {
				fmt.Fprintf(&b, "  (%d more)\n", len(tmpls)-maxTemplates)
				break
			}
			fmt.Fprintf(&b, "  [%s] %s ×%d L%d: %s\n", t.ID, levelName(t.Level), t.Count, t.FirstLine, cut(t.Template))
		}
	}

	ev := rep.Evidence
	if len(ev) > top {
		ev = ev[:top]
	}
	lines := make([]skills.LineRef, 0, len(ev))
	if len(ev) == 0 {
		b.WriteString("evidence: no line stands out as an error\n")
	} else {
		b.WriteString("evidence (best first):\n")
		for _, e := range ev {
			text := cut(e.Text)
			fmt.Fprintf(&b, "  L%d [%s] %s\n", e.Line, e.Reason, text)
			file := e.File
			if file == "" || len(rep.Files) <= 1 {
				file = name
			}
			lines = append(lines, skills.LineRef{File: file, Line: e.Line, Text: e.Text, Reason: e.Reason})
		}
		if len(rep.Evidence) > top {
			fmt.Fprintf(&b, "  (%d more ranked lines; ask with a larger top)\n", len(rep.Evidence)-top)
		}
	}
	if rep.Diff != nil {
		fmt.Fprintf(&b, "against %s: %d new, %d vanished, %d rising, %d falling templates\n",
			rep.Diff.Baseline, len(rep.Diff.New), len(rep.Diff.Vanished), len(rep.Diff.Rising), len(rep.Diff.Falling))
	}
	return skills.Result{
		Status:       skills.StatusOK,
		Output:       strings.TrimRight(b.String(), "\n"),
		Lines:        lines,
		Fingerprints: append([]string(nil), rep.ErrorTemplates...),
	}
}

// errorTemplates returns fatal and error templates, then warnings, each
// group most frequent first.
func errorTemplates(rep *logscan.Report) []logscan.TemplateStat {
	var out []logscan.TemplateStat
	for _, t := range rep.Templates {
		switch t.Level {
		case "fatal", "error", "warn":
			out = append(out, t)
		}
	}
	rank := func(l string) int {
		if l == "warn" {
			return 1
		}
		return 0
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank(out[i].Level) != rank(out[j].Level) {
			return rank(out[i].Level) < rank(out[j].Level)
		}
		return out[i].Count > out[j].Count
	})
	return out
}

func levelName(l string) string {
	if l == "" {
		return "no level"
	}
	return l
}

func cut(s string) string { return engine.Cut(s, maxTextChars) }
