package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

// Exit codes of the analyze and templates subcommands.
const (
	exitOK    = 0
	exitInput = 1 // bad input: missing, empty, binary, corrupted file
	exitUsage = 2 // bad flags
)

// cliMemoryLimit is the soft heap limit of the one-shot analyze and
// templates commands (unless GOMEMLIMIT is set): the engine's live data is
// bounded, this keeps the garbage collector's headroom inside the 256 MB
// peak RSS target for inputs of any size.
const cliMemoryLimit = 160 << 20

func setCLIMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cliMemoryLimit)
	}
}

// cmdAnalyze runs `sleuth analyze FILE... [--json] [--top N] [--baseline GOOD]`.
func cmdAnalyze(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	top := fs.Int("top", 10, "evidence lines to show")
	baseline := fs.String("baseline", "", "log of a good run to compare with")
	maxLine := fs.Int("max-line", 0, "cut lines longer than this many bytes (default 64 KiB)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sleuth analyze FILE... [--json] [--top N] [--baseline GOOD.log]")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(files) == 0 {
		fs.Usage()
		return exitUsage
	}
	if *top <= 0 {
		fmt.Fprintln(stderr, "sleuth analyze: --top must be positive")
		return exitUsage
	}
	setCLIMemoryLimit()
	rep, err := logscan.Analyze(ctx, files, logscan.Options{Top: *top, Baseline: *baseline, MaxLineBytes: *maxLine})
	if err != nil {
		fmt.Fprintf(stderr, "sleuth analyze: %s\n", oneLine(err))
		return exitInput
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false) // log lines keep their <, > and & readable
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "sleuth analyze: %s\n", oneLine(err))
			return exitInput
		}
		return exitOK
	}
	writeReport(stdout, rep)
	return exitOK
}

// cmdTemplates runs `sleuth templates FILE [--jsonl]`.
func cmdTemplates(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("templates", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonl := fs.Bool("jsonl", false, "one JSON object per input line: line, template_id, template")
	top := fs.Int("top", 50, "templates to list (without --jsonl)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sleuth templates FILE [--jsonl] [--top N]")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(files) != 1 {
		fs.Usage()
		return exitUsage
	}
	setCLIMemoryLimit()
	if *jsonl {
		if err := logscan.WriteTemplatesJSONL(ctx, files[0], logscan.Options{}, stdout); err != nil {
			fmt.Fprintf(stderr, "sleuth templates: %s\n", oneLine(err))
			return exitInput
		}
		return exitOK
	}
	rep, err := logscan.Analyze(ctx, files, logscan.Options{Top: 1})
	if err != nil {
		fmt.Fprintf(stderr, "sleuth templates: %s\n", oneLine(err))
		return exitInput
	}
	fmt.Fprintf(stdout, "%d lines, %d templates shown (most frequent first)\n", rep.Lines, min(*top, len(rep.Templates)))
	fmt.Fprintf(stdout, "%9s  %-5s  %-12s  %7s  %s\n", "count", "level", "id", "first", "template")
	for i, t := range rep.Templates {
		if i >= *top {
			break
		}
		fmt.Fprintf(stdout, "%9d  %-5s  %-12s  %7s  %s\n", t.Count, short(t.Level), t.ID, fmt.Sprintf("L%d", t.FirstLine), clipText(t.Template, 160))
	}
	return exitOK
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (file names, job names, search words) and returns
// those; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return files, nil
		}
		if args[0] == "--" {
			return append(files, args[1:]...), nil
		}
		files = append(files, args[0])
		args = args[1:]
	}
}

// oneLine makes an error fit one human line.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func writeReport(w io.Writer, r *logscan.Report) {
	names := make([]string, len(r.Files))
	for i, f := range r.Files {
		names[i] = filepath.Base(f)
	}
	fmt.Fprintf(w, "sleuth analyze: %s\n", strings.Join(names, ", "))
	fmt.Fprintf(w, "  %d lines, %s", r.Lines, skills.HumanBytes(r.Bytes))
	if r.TimeRange != nil {
		fmt.Fprintf(w, ", %s → %s (L%d–L%d)", r.TimeRange.Start, r.TimeRange.End, r.TimeRange.StartLine, r.TimeRange.EndLine)
	}
	fmt.Fprintln(w)
	var lv []string
	for _, k := range []string{"fatal", "error", "warn", "info", "debug", "trace", "none"} {
		if n, ok := r.Levels[k]; ok {
			lv = append(lv, fmt.Sprintf("%s %d", k, n))
		}
	}
	fmt.Fprintf(w, "  events by level: %s\n", strings.Join(lv, " · "))
	if r.FirstError != nil {
		fmt.Fprintf(w, "  first error: L%d  %s\n", r.FirstError.Line, clipText(r.FirstError.Text, 140))
	}
	multi := len(r.Files) > 1
	fmt.Fprintln(w, "\nEvidence, best first:")
	if len(r.Evidence) == 0 {
		fmt.Fprintln(w, "  (nothing stands out)")
	}
	for i, e := range r.Evidence {
		loc := fmt.Sprintf("L%d", e.Line)
		if multi {
			loc = filepath.Base(e.File) + ":" + loc
		}
		fmt.Fprintf(w, "%3d. %-8s %s\n", i+1, loc, clipText(e.Text, 160))
		fmt.Fprintf(w, "     %s (score %.1f)\n", e.Reason, e.Score)
	}
	if len(r.Bursts) > 0 {
		fmt.Fprintln(w, "\nError bursts:")
		for _, b := range r.Bursts {
			fmt.Fprintf(w, "  L%d–L%d  %s → %s  %d errors, %.1f/min\n", b.StartLine, b.EndLine, b.Start, b.End, b.Errors, b.PerMinute)
		}
	}
	if d := r.Diff; d != nil {
		fmt.Fprintf(w, "\nAgainst the good run %s:\n", filepath.Base(d.Baseline))
		if d.Divergence != nil {
			fmt.Fprintf(w, "  diverged at L%d  %s\n", d.Divergence.Line, clipText(d.Divergence.Text, 140))
		}
		writeChanges(w, "new", d.New, true)
		writeChanges(w, "rising", d.Rising, true)
		writeChanges(w, "falling", d.Falling, true)
		writeChanges(w, "vanished", d.Vanished, false)
	}
	fmt.Fprintln(w, "\nTop templates:")
	for i, t := range r.Templates {
		if i >= 8 {
			break
		}
		fmt.Fprintf(w, "  %8d  %-5s  L%-7d %s\n", t.Count, short(t.Level), t.FirstLine, clipText(t.Template, 120))
	}
	fmt.Fprintf(w, "\n%d templates, %d at error level; analysed in %d ms\n", len(r.Templates), len(r.ErrorTemplates), r.DurationMS)
}

func writeChanges(w io.Writer, label string, cs []logscan.Change, withLine bool) {
	const show = 5
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s templates: %d\n", label, len(cs))
	for i, c := range cs {
		if i >= show {
			break
		}
		at := ""
		if withLine && c.FirstLine > 0 {
			at = fmt.Sprintf("L%d ", c.FirstLine)
		}
		fmt.Fprintf(w, "    %s%d → %d  %s\n", at, c.Before, c.After, clipText(c.Template, 110))
	}
}

func short(level string) string {
	if level == "" {
		return "-"
	}
	return level
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
