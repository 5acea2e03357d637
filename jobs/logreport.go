package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sleuth-bot/sleuth/bot"
	"github.com/sleuth-bot/sleuth/skills"
	"github.com/sleuth-bot/sleuth/skills/logscan"
)

const (
	defaultReportMaxBytes = 64 << 20
	defaultReportTop      = 8
	maxReportTemplates    = 5
)

// reportArgs are log-report's arguments:
//
//	args: {paths: ["/var/log/app/*.log"], top: 8}
type reportArgs struct {
	Paths []string
	Top   int
}

func parseReportArgs(args map[string]any) (reportArgs, error) {
	var raw struct {
		Paths any `json:"paths"`
		Path  any `json:"path"`
		Top   int `json:"top"`
	}
	if err := decodeArgs(args, &raw); err != nil {
		return reportArgs{}, fmt.Errorf("log-report args: %w", err)
	}
	var a reportArgs
	for _, v := range []any{raw.Paths, raw.Path} {
		switch t := v.(type) {
		case nil:
		case string:
			for _, p := range strings.Split(t, ",") {
				if p = strings.TrimSpace(p); p != "" {
					a.Paths = append(a.Paths, p)
				}
			}
		case []any:
			for _, x := range t {
				p, ok := x.(string)
				if !ok {
					return reportArgs{}, errors.New("log-report args: paths must be strings")
				}
				a.Paths = append(a.Paths, strings.TrimSpace(p))
			}
		default:
			return reportArgs{}, errors.New("log-report args: paths must be a string or a list of strings")
		}
	}
	if len(a.Paths) == 0 {
		return reportArgs{}, errors.New("log-report args: paths is required (a file or glob under SLEUTH_REPORT_PATHS)")
	}
	for _, p := range a.Paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return reportArgs{}, fmt.Errorf("log-report path %q must be absolute and clean (no .., no trailing /)", p)
		}
		if _, err := filepath.Match(p, ""); err != nil {
			return reportArgs{}, fmt.Errorf("log-report path %q: %w", p, err)
		}
	}
	a.Top = raw.Top
	if a.Top <= 0 {
		a.Top = defaultReportTop
	}
	return a, nil
}

// allowedPattern reports whether a job's path or glob lies within the
// allowed globs: it equals one, or, read literally, matches one. Every
// file it expands to is checked again at run time.
func (s *Scheduler) allowedPattern(p string) bool {
	for _, g := range s.cfg.ReportPaths {
		if p == g {
			return true
		}
		if ok, _ := filepath.Match(g, p); ok {
			return true
		}
	}
	return false
}

// allowedFile reports whether a file, and the file its links resolve to,
// match an allowed glob.
func (s *Scheduler) allowedFile(path string) bool {
	match := func(p string) bool {
		for _, g := range s.cfg.ReportPaths {
			if ok, _ := filepath.Match(g, p); ok {
				return true
			}
		}
		return false
	}
	if !match(path) {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	return err == nil && match(real)
}

// chunk is the new part of one file, copied for analysis.
type chunk struct {
	path     string // the real file
	tmp      string // the copy analysed
	lineBase int64  // lines of the real file before the copy
	next     offset // where the next run starts
	rotated  bool
	skipped  int64 // new bytes left out over the cap
}

// logReport is the log-report kind: it analyses only the complete lines
// appended to each allowed file since the last delivered report (from the
// start when the file was rotated or shrank), and cites real line numbers.
func (s *Scheduler) logReport(ctx context.Context, j *job) (*output, error) {
	a, err := parseReportArgs(j.def.Args)
	if err != nil {
		return nil, permanent{err}
	}
	var files []string
	seen := map[string]bool{}
	for _, p := range a.Paths {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, permanent{err}
		}
		for _, f := range m {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	tmpDir, err := os.MkdirTemp(s.cfg.TempDir, "sleuth-report-")
	if err != nil {
		return nil, fmt.Errorf("log report: %w", err)
	}
	defer os.RemoveAll(tmpDir)

	var chunks []chunk
	var notes []string
	for i, f := range files {
		if !s.allowedFile(f) {
			notes = append(notes, fmt.Sprintf("%s: skipped, it resolves outside the allowed report paths", f))
			continue
		}
		c, err := s.newLines(ctx, j.def.Name, f, filepath.Join(tmpDir, fmt.Sprintf("%03d-%s", i, filepath.Base(f))))
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		if c.tmp == "" {
			// Nothing new; still remember a rotation.
			if c.rotated {
				chunks = append(chunks, c)
			}
			continue
		}
		chunks = append(chunks, c)
	}
	commit := func(ctx context.Context) error {
		now := s.clock.Now()
		for _, c := range chunks {
			if err := s.st.setOffset(ctx, j.def.Name, c.path, c.next, now); err != nil {
				return err
			}
		}
		return nil
	}
	var paths []string
	byTmp := map[string]chunk{}
	var newLines int64
	for _, c := range chunks {
		if c.tmp != "" {
			paths = append(paths, c.tmp)
			byTmp[c.tmp] = c
			newLines += c.next.Lines - c.lineBase
		}
	}
	title := fmt.Sprintf("**Log report %s**", j.def.Name)
	if len(paths) == 0 {
		text := fmt.Sprintf("%s: no new lines in %d files since the last report.", title, len(files))
		if len(files) == 0 {
			text = fmt.Sprintf("%s: no file matches %s.", title, strings.Join(a.Paths, ", "))
		}
		text = withNotes(text, notes)
		return &output{reply: bot.Reply{Text: text}, empty: true, summary: firstLine(text), commit: commit}, nil
	}
	rep, err := s.cfg.Analyze(ctx, paths, logscan.Options{Top: a.Top})
	if err != nil {
		return nil, fmt.Errorf("log report: analyze: %w", err)
	}
	reply := renderReport(title, rep, byTmp, len(chunks), newLines, notes)
	return &output{reply: reply, summary: firstLine(reply.Text), fingerprints: rep.ErrorTemplates, commit: commit}, nil
}

// newLines copies the complete lines appended to path since the stored
// offset into tmp (at most ReportMaxBytes, the newest). c.tmp is empty
// when there is nothing new.
func (s *Scheduler) newLines(ctx context.Context, job, path, tmp string) (chunk, error) {
	c := chunk{path: path}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return c, err
	}
	if !fi.Mode().IsRegular() {
		return c, logscan.ErrNotFile
	}
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".gz" || ext == ".zip" || ext == ".tgz" {
		return c, errors.New("compressed files cannot be followed; point the report at the live log")
	}
	prev, ok, err := s.st.offset(ctx, job, path)
	if err != nil {
		return c, err
	}
	size, ino := fi.Size(), inode(fi)
	start, lines := prev.Offset, prev.Lines
	if ok && (prev.Inode != ino || size < prev.Offset) {
		c.rotated = true
		start, lines = 0, 0
	}
	c.next = offset{Inode: ino, Size: size, Offset: start, Lines: lines}
	if size == start {
		return c, nil
	}
	if size-start > s.cfg.ReportMaxBytes {
		skipTo := size - s.cfg.ReportMaxBytes
		n, err := countLines(io.NewSectionReader(f, start, skipTo-start))
		if err != nil {
			return c, err
		}
		c.skipped = skipTo - start
		start, lines = skipTo, lines+n
		// Start at a line boundary.
		buf := make([]byte, 64<<10)
		k, _ := f.ReadAt(buf, start)
		i := bytes.IndexByte(buf[:k], '\n')
		if i < 0 {
			return c, nil
		}
		start, lines = start+int64(i)+1, lines+1
		c.skipped += int64(i) + 1
	}
	// Only complete lines: a partial last line waits for the next run.
	end, err := lastNewline(f, start, size)
	if err != nil {
		return c, err
	}
	if end <= start {
		return c, nil
	}
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return c, err
	}
	cl := &lineCounter{w: out}
	_, err = io.Copy(cl, io.NewSectionReader(f, start, end-start))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return c, fmt.Errorf("copy new lines: %w", err)
	}
	c.tmp, c.lineBase = tmp, lines
	c.next = offset{Inode: ino, Size: size, Offset: end, Lines: lines + cl.n}
	return c, nil
}

// lastNewline returns the offset just after the last '\n' in [start, end),
// or start when there is none.
func lastNewline(f io.ReaderAt, start, end int64) (int64, error) {
	const block = 64 << 10
	buf := make([]byte, block)
	for hi := end; hi > start; {
		lo := max(hi-block, start)
		n, err := f.ReadAt(buf[:hi-lo], lo)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return lo + int64(i) + 1, nil
		}
		hi = lo
	}
	return start, nil
}

func countLines(r io.Reader) (int64, error) {
	lc := &lineCounter{w: io.Discard}
	_, err := io.Copy(lc, r)
	return lc.n, err
}

type lineCounter struct {
	w io.Writer
	n int64
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += int64(bytes.Count(p, []byte{'\n'}))
	return l.w.Write(p)
}

// renderReport writes the report with real file names and line numbers.
func renderReport(title string, rep *logscan.Report, byTmp map[string]chunk, nfiles int, newLines int64, notes []string) bot.Reply {
	real := func(tmp string, line int) (string, int) {
		c, ok := byTmp[tmp]
		if !ok && len(byTmp) == 1 {
			for _, only := range byTmp {
				c, ok = only, true
			}
		}
		if !ok {
			return tmp, line
		}
		return c.path, line + int(c.lineBase)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d new lines in %d files", title, newLines, nfiles)
	if rep.Levels != nil {
		var lv []string
		for _, k := range []string{"fatal", "error", "warn"} {
			if n := rep.Levels[k]; n > 0 {
				lv = append(lv, fmt.Sprintf("%d %s", n, k))
			}
		}
		if len(lv) > 0 {
			fmt.Fprintf(&b, " — %s", strings.Join(lv, ", "))
		}
	}
	b.WriteString("\n")
	for _, c := range byTmp {
		if c.rotated {
			fmt.Fprintf(&b, "- %s was rotated or truncated; read from its start\n", c.path)
		}
		if c.skipped > 0 {
			fmt.Fprintf(&b, "- %s: %s of older new lines left out (cap); the newest are analysed\n", c.path, skills.HumanBytes(c.skipped))
		}
	}
	errIDs := map[string]bool{}
	for _, id := range rep.ErrorTemplates {
		errIDs[id] = true
	}
	shown := 0
	for _, t := range rep.Templates {
		if !errIDs[t.ID] || shown == maxReportTemplates {
			continue
		}
		if shown == 0 {
			b.WriteString("\n**Top error signatures**\n")
		}
		shown++
		file, line := real(t.File, t.FirstLine)
		fmt.Fprintf(&b, "- %d× `%s` (`%s`, first at %s L%d)\n", t.Count, oneLine(t.Template, 160), t.ID, filepath.Base(file), line)
	}
	if shown == 0 {
		b.WriteString("\nNo errors in the new lines.\n")
	}
	var ev []bot.Evidence
	for _, e := range rep.Evidence {
		file, line := real(e.File, e.Line)
		ev = append(ev, bot.Evidence{File: file, Line: line, Text: e.Text, Reason: e.Reason, Verified: true})
	}
	return bot.Reply{Text: withNotes(strings.TrimRight(b.String(), "\n"), notes), Evidence: ev}
}

func withNotes(text string, notes []string) string {
	if len(notes) == 0 {
		return text
	}
	return text + "\n\nNot read:\n- " + strings.Join(notes, "\n- ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
