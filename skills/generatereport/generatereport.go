// Package generatereport is the generate-report skill: the final report,
// conclusion first, then evidence lines verified against the files, then
// next steps.
package generatereport

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/internal/engine"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

//go:embed SKILL.md
var skillMD []byte

// maxLineChars cuts the line text shown for a piece of evidence.
const maxLineChars = 240

// Scanner streams the lines of a file (logscan.Scan's shape).
type Scanner = engine.Scanner

// ScanFunc adapts a function to Scanner.
type ScanFunc = engine.ScanFunc

// Config configures the skill. The zero value is usable.
type Config struct {
	// Scanner reads the cited lines; nil means logscan.Scan.
	Scanner Scanner
}

// Skill is generate-report. Safe for concurrent use.
type Skill struct {
	cfg  Config
	spec skills.Spec
}

// New returns the skill.
func New(cfg Config) (*Skill, error) {
	spec, err := skills.ParseSpec(skillMD)
	if err != nil {
		return nil, fmt.Errorf("generate-report SKILL.md: %w", err)
	}
	if cfg.Scanner == nil {
		cfg.Scanner = ScanFunc(logscan.Scan)
	}
	return &Skill{cfg: cfg, spec: spec}, nil
}

// Spec returns the parsed SKILL.md.
func (s *Skill) Spec() skills.Spec { return s.spec }

// Ref is one piece of evidence as the model cites it.
type Ref struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Quote string `json:"quote"`
	Why   string `json:"why"`
}

// Input is the report the model asks for.
type Input struct {
	Title      string   `json:"title"`
	Conclusion string   `json:"conclusion"`
	Evidence   []Ref    `json:"evidence"`
	NextSteps  []string `json:"next_steps"`
}

// Checked is a Ref after verification.
type Checked struct {
	Ref
	File     string // the attachment's name, when found
	Text     string // the line as the file has it, when it exists
	Verified bool
	Problem  string // why it is unverified
}

// Run verifies the evidence and renders the report. Unverified lines are
// marked in the report, not dropped; the status stays ok.
func (s *Skill) Run(ctx context.Context, c skills.Call) (skills.Result, error) {
	var in Input
	if r, ok := skills.DecodeArgs(s.spec, c.Args, &in); !ok {
		return r, nil
	}
	if strings.TrimSpace(in.Conclusion) == "" {
		return skills.Errorf("conclusion is empty; state the cause (or your best hypothesis) in two or three sentences"), nil
	}
	checked, err := s.Verify(ctx, c.Env, in.Evidence)
	if err != nil {
		return skills.Result{}, fmt.Errorf("generate-report: %w", err)
	}
	out := Render(in, checked)
	var lines []skills.LineRef
	unverified := 0
	for _, ch := range checked {
		if !ch.Verified {
			unverified++
			continue
		}
		lines = append(lines, skills.LineRef{File: ch.File, Line: ch.Line, Text: ch.Text, Reason: ch.Why})
	}
	res := skills.Result{
		Status: skills.StatusOK, Output: out, Lines: lines,
		Metadata: map[string]any{"evidence": len(checked), "verified": len(checked) - unverified, "unverified": unverified},
	}
	return res, nil
}

// Verify checks each reference against the attached files, reading each
// file once. A missing file or line, or a quote the line does not contain,
// makes the reference unverified with a reason; only I/O failures are
// errors.
func (s *Skill) Verify(ctx context.Context, env skills.Env, refs []Ref) ([]Checked, error) {
	out := make([]Checked, len(refs))
	need := map[string]map[int]bool{} // path → lines
	paths := map[int]string{}
	for i, r := range refs {
		out[i] = Checked{Ref: r}
		f, ok := env.FileByName(r.File)
		switch {
		case !ok && r.File == "":
			out[i].Problem = "no file named"
			continue
		case !ok:
			out[i].Problem = "no attached file is called " + r.File
			continue
		case r.Line < 1:
			out[i].File = f.Name
			out[i].Problem = "no line number"
			continue
		}
		out[i].File = f.Name
		paths[i] = f.Path
		if need[f.Path] == nil {
			need[f.Path] = map[int]bool{}
		}
		need[f.Path][r.Line] = true
	}
	texts := map[string]map[int]string{}
	totals := map[string]int{}
	for path, want := range need {
		last := 0
		for n := range want {
			last = max(last, n)
		}
		got := map[int]string{}
		err := s.cfg.Scanner.Scan(ctx, path, logscan.Options{}, func(n int, text string) error {
			totals[path] = n
			if want[n] {
				got[n] = text
			}
			if n >= last {
				return logscan.ErrStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, logscan.ErrStop) {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		texts[path] = got
	}
	for i := range out {
		path, ok := paths[i]
		if !ok {
			continue
		}
		text, ok := texts[path][out[i].Line]
		if !ok {
			out[i].Problem = fmt.Sprintf("%s has only %d lines", out[i].File, totals[path])
			continue
		}
		out[i].Text = text
		if quoteMatches(out[i].Quote, text) {
			out[i].Verified = true
		} else {
			out[i].Problem = "the line does not say " + strconvQuote(out[i].Quote)
		}
	}
	return out, nil
}

var (
	spaceRE  = regexp.MustCompile(`\s+`)
	lineTag  = regexp.MustCompile(`^(?:[\w.\-]+:)?L?\d+:\s*`)
	ellipsis = regexp.MustCompile(`\s*(?:\.\.\.|…)\s*`)
)

// quoteMatches reports whether text contains quote, ignoring case, runs of
// white space, surrounding quotes and an "L123:" prefix; "..." or "…" in
// the quote joins pieces that must appear in order. An empty quote matches.
func quoteMatches(quote, text string) bool {
	q := strings.TrimSpace(quote)
	q = strings.Trim(q, "`\"'“”")
	q = lineTag.ReplaceAllString(q, "")
	q = norm(q)
	if q == "" {
		return true
	}
	t := norm(text)
	pos := 0
	for _, piece := range ellipsis.Split(q, -1) {
		if piece == "" {
			continue
		}
		i := strings.Index(t[pos:], piece)
		if i < 0 {
			return false
		}
		pos += i + len(piece)
	}
	return true
}

func norm(s string) string {
	return strings.ToLower(strings.TrimSpace(spaceRE.ReplaceAllString(s, " ")))
}

// Render writes the report: title, conclusion, evidence, next steps, in
// plain markdown the adapters convert.
func Render(in Input, checked []Checked) string {
	var b strings.Builder
	if t := strings.TrimSpace(in.Title); t != "" {
		fmt.Fprintf(&b, "**%s**\n\n", t)
	}
	fmt.Fprintf(&b, "**Conclusion:** %s\n", strings.TrimSpace(in.Conclusion))
	b.WriteString("\n**Evidence**\n")
	if len(checked) == 0 {
		b.WriteString("- (no log lines cited)\n")
	}
	unverified := 0
	for _, c := range checked {
		why := strings.TrimSpace(c.Why)
		switch {
		case c.Verified:
			fmt.Fprintf(&b, "- %s L%d: `%s`", c.File, c.Line, cut(c.Text))
		default:
			unverified++
			name := c.File
			if name == "" {
				name = orUnknown(c.Ref.File)
			}
			fmt.Fprintf(&b, "- %s L%d: _unverified: %s_", name, c.Line, c.Problem)
			if c.Text != "" {
				fmt.Fprintf(&b, "; the line reads `%s`", cut(c.Text))
			}
		}
		if why != "" {
			fmt.Fprintf(&b, " — %s", why)
		}
		b.WriteString("\n")
	}
	if unverified > 0 {
		fmt.Fprintf(&b, "_%d of %d cited lines could not be verified; treat the claims that rest on them with care._\n", unverified, len(checked))
	}
	var steps []string
	for _, s := range in.NextSteps {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	if len(steps) > 0 {
		b.WriteString("\n**Next steps**\n")
		for i, s := range steps {
			fmt.Fprintf(&b, "%d. %s\n", i+1, s)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func orUnknown(s string) string {
	if s == "" {
		return "(no file)"
	}
	return s
}

func strconvQuote(s string) string {
	if s = strings.TrimSpace(s); utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return "“" + s + "”"
}

// cut shortens a line for an inline code span (no backticks inside).
func cut(s string) string { return engine.Cut(strings.ReplaceAll(s, "`", "'"), maxLineChars) }
