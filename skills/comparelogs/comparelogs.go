// Package comparelogs is the compare-logs skill: two attachments compared
// by template (new, vanished, rising, falling, divergence).
package comparelogs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

//go:embed SKILL.md
var skillMD []byte

// DefaultTop is how many templates a section lists by default.
const DefaultTop = 10

// maxTextChars cuts templates and lines in the output.
const maxTextChars = 240

// Analyzer runs the log engine (logscan.Analyze's shape).
type Analyzer = engine.Analyzer

// AnalyzeFunc adapts a function to Analyzer.
type AnalyzeFunc = engine.AnalyzeFunc

// Scanner streams the lines of a file (logscan.Scan's shape).
type Scanner = engine.Scanner

// ScanFunc adapts a function to Scanner.
type ScanFunc = engine.ScanFunc

// Config configures the skill. The zero value is usable.
type Config struct {
	// Analyzer runs the comparison; nil means logscan.Analyze.
	Analyzer Analyzer
	// Scanner reads the cited lines of the target; nil means logscan.Scan.
	Scanner Scanner
}

// Skill is compare-logs. Safe for concurrent use.
type Skill struct {
	cfg  Config
	spec skills.Spec
}

// New returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("compare-logs SKILL.md: %w", err)
	}
	if cfg.Analyzer == nil {
		cfg.Analyzer = AnalyzeFunc(logscan.Analyze)
	}
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(logscan.Scan)
	}
	return &Skill{cfg: cfg, spec: spec}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

type args struct {
	Baseline string `json:"baseline"`
	Target   string `json:"target"`
	Top      int    `json:"top"`
}

// Run compares the files.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	start := time.Now()
	var a args
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &a); !ok {
		return r, nil
	}
	if a.Top <= 0 {
		a.Top = DefaultTop
	}
	if len(c.Env.Files) < 2 {
		return skills.Errorf("compare-logs needs two attached files (a good run and a failing one); attached: %d. Ask the user for the other log", len(c.Env.Files)), nil
	}
	if a.Baseline == "" || a.Target == "" {
		return skills.Errorf("name both files: \"baseline\" (the good or older run) and \"target\" (the failing or newer run); attached: %s", strings.Join(c.Env.FileNames(), ", ")), nil
	}
	base, ok := c.Env.FileByName(a.Baseline)
	if !ok {
		return skills.UnknownFile(c.Env, a.Baseline), nil
	}
	target, ok := c.Env.FileByName(a.Target)
	if !ok {
		return skills.UnknownFile(c.Env, a.Target), nil
	}
	if base.Path == target.Path {
		return skills.Errorf("baseline and target are the same file (%s); name two different files", base.Name), nil
	}
	rep, err := s.cfg.Analyzer.Analyze(ctx, []string{target.Path}, logscan.Options{Baseline: base.Path, Top: a.Top})
	if err != nil {
		if r, ok := engine.InputError("compare", target.Name+" with "+base.Name, err); ok {
			return r, nil
		}
		return skills.Result{}, fmt.Errorf("compare-logs: %w", err)
	}
	if rep.Diff == nil {
		return skills.Result{}, errors.New("compare-logs: the engine returned no comparison")
	}
	texts, err := s.lineTexts(ctx, target.Path, wanted(rep.Diff, a.Top))
	if err != nil {
		return skills.Result{}, fmt.Errorf("compare-logs: read %s: %w", target.Name, err)
	}
	res := render(base.Name, target.Name, rep, a.Top, texts)
	res.Metadata = map[string]any{
		"baseline": base.Name, "target": target.Name, "duration_ms": time.Since(start).Milliseconds(),
		"new": len(rep.Diff.New), "vanished": len(rep.Diff.Vanished), "rising": len(rep.Diff.Rising), "falling": len(rep.Diff.Falling),
	}
	return res, nil
}

// wanted lists the target lines the answer cites.
func wanted(d *logscan.Diff, top int) map[int]bool {
	w := map[int]bool{}
	for _, list := range [][]logscan.Change{d.New, d.Rising} {
		for i, c := range list {
			if i < top && c.FirstLine > 0 {
				w[c.FirstLine] = true
			}
		}
	}
	if d.Divergence != nil && d.Divergence.Line > 0 {
		w[d.Divergence.Line] = true
	}
	return w
}

// lineTexts reads the wanted lines of path in one pass.
func (s *Skill) lineTexts(ctx context.Context, path string, want map[int]bool) (map[int]string, error) {
	out := make(map[int]string, len(want))
	if len(want) == 0 {
		return out, nil
	}
	last := 0
	for n := range want {
		last = max(last, n)
	}
	err := s.cfg.Scanner.Scan(ctx, path, logscan.Options{}, func(n int, text string) error {
		if want[n] {
			out[n] = text
		}
		if n >= last {
			return logscan.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, logscan.ErrStop) {
		return nil, err
	}
	return out, nil
}

func render(baseName, targetName string, rep *logscan.Report, top int, texts map[int]string) skills.Result {
	d := rep.Diff
	var b strings.Builder
	var lines []skills.LineRef
	fmt.Fprintf(&b, "%s compared with %s (the baseline), by template\n", targetName, baseName)
	if len(d.New)+len(d.Vanished)+len(d.Rising)+len(d.Falling) == 0 && d.Divergence == nil {
		b.WriteString("No difference in templates or their order: the two runs log the same events at similar rates.\n")
	}
	section := func(title string, list []logscan.Change, kind string) {
		if len(list) == 0 {
			return
		}
		list = append([]logscan.Change(nil), list...)
		sort.SliceStable(list, func(i, j int) bool { return weight(list[i], kind) > weight(list[j], kind) })
		fmt.Fprintf(&b, "%s (%d):\n", title, len(list))
		for i, c := range list {
			if i == top {
				fmt.Fprintf(&b, "  (%d more)\n", len(list)-top)
				break
			}
			switch kind {
			case "new":
				fmt.Fprintf(&b, "  [%s] ×%d", c.ID, c.After)
			case "vanished":
				fmt.Fprintf(&b, "  [%s] ×%d before", c.ID, c.Before)
			default:
				fmt.Fprintf(&b, "  [%s] %d → %d", c.ID, c.Before, c.After)
			}
			if c.FirstLine > 0 && kind != "vanished" {
				fmt.Fprintf(&b, " first L%d", c.FirstLine)
				if text, ok := texts[c.FirstLine]; ok {
					lines = append(lines, skills.LineRef{File: targetName, Line: c.FirstLine, Text: text, Reason: kind + " template"})
				}
			}
			fmt.Fprintf(&b, ": %s\n", cut(c.Template))
		}
	}
	section("new in "+targetName, d.New, "new")
	section("vanished (only in "+baseName+")", d.Vanished, "vanished")
	section("rising", d.Rising, "rising")
	section("falling", d.Falling, "falling")
	if dv := d.Divergence; dv != nil {
		text := dv.Text
		if t, ok := texts[dv.Line]; ok {
			text = t
		}
		fmt.Fprintf(&b, "divergence: L%d: %s\n", dv.Line, cut(text))
		lines = append(lines, skills.LineRef{File: targetName, Line: dv.Line, Text: text, Reason: "divergence from the baseline"})
	}
	return skills.Result{
		Status:       skills.StatusOK,
		Output:       strings.TrimRight(b.String(), "\n"),
		Lines:        lines,
		Fingerprints: append([]string(nil), rep.ErrorTemplates...),
	}
}

// weight orders a section: most frequent new and vanished templates first,
// biggest changes first.
func weight(c logscan.Change, kind string) int64 {
	switch kind {
	case "new":
		return c.After
	case "vanished":
		return c.Before
	case "rising":
		return c.After - c.Before
	}
	return c.Before - c.After
}

func cut(s string) string { return engine.Cut(s, maxTextChars) }
