package logscan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// Report limits.
const (
	maxReportTemplates = 50
	maxErrorTemplates  = 100
	maxBursts          = 10
	maxChanges         = 50
	burstMinErrors     = 5
)

func analyze(ctx context.Context, paths []string, opt Options) (*Report, error) {
	start := time.Now()
	if len(paths) == 0 {
		return nil, errors.New("no files to analyze")
	}
	e := newEngine(opt)
	e.recordSeq = opt.Baseline != ""
	var baseLines int64
	if opt.Baseline != "" {
		fs, err := e.runFile(ctx, opt.Baseline, 0)
		if err != nil {
			return nil, fmt.Errorf("baseline %w", err)
		}
		baseLines = int64(fs.lines)
	}
	for _, p := range paths {
		if _, err := e.runFile(ctx, p, 1); err != nil {
			return nil, err
		}
	}
	e.m.Finish()
	rep := e.report(opt.Baseline, baseLines)
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep, nil
}

// finalTemplates returns, per cluster, the final template after the
// miner's post-pass.
func (e *engine) finalTemplates() (ids, texts []string) {
	n := e.m.Clusters()
	ids, texts = make([]string, n), make([]string, n)
	for c := 0; c < n; c++ {
		t := e.m.Template(c)
		ids[c], texts[c] = t.ID, t.Text
	}
	return ids, texts
}

func (e *engine) report(baseline string, baseLines int64) *Report {
	ids, texts := e.finalTemplates()
	rep := &Report{Levels: map[string]int64{}, Templates: []TemplateStat{}, Evidence: []Evidence{}, Bursts: []Burst{}, ErrorTemplates: []string{}}
	for _, fs := range e.files {
		rep.Files = append(rep.Files, fs.name)
		rep.Lines += int64(fs.lines)
		rep.Bytes += fs.bytes
		if fs.startTime != "" {
			if rep.TimeRange == nil {
				rep.TimeRange = &TimeRange{Start: fs.startTime, StartLine: fs.startLine}
			}
			rep.TimeRange.End, rep.TimeRange.EndLine = clone(fs.endTime), fs.endLine
		}
		if rep.FirstError == nil && fs.firstErr != nil {
			rep.FirstError = fs.firstErr
		}
	}
	for l, n := range e.levels {
		if n > 0 {
			name := levelName(uint8(l))
			if name == "" {
				name = "none"
			}
			rep.Levels[name] = n
		}
	}
	// Templates, merged by final id.
	byID := map[string]*TemplateStat{}
	var order []*TemplateStat
	for c := range e.cl {
		cs := &e.cl[c]
		if cs.count == 0 {
			continue
		}
		t := byID[ids[c]]
		if t == nil {
			t = &TemplateStat{ID: ids[c], Template: texts[c], FirstLine: cs.first, File: e.files[cs.file].name}
			byID[ids[c]] = t
			order = append(order, t)
		}
		t.Count += cs.count
		if l := levelName(cs.level); levelOf(l) > levelOf(t.Level) {
			t.Level = l
		}
		if cs.file < indexOf(e.files, t.File) || (e.files[cs.file].name == t.File && cs.first < t.FirstLine) {
			t.FirstLine, t.File = cs.first, e.files[cs.file].name
		}
	}
	if len(e.files) == 1 {
		for _, t := range order {
			t.File = ""
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Count != order[j].Count {
			return order[i].Count > order[j].Count
		}
		return order[i].FirstLine < order[j].FirstLine
	})
	for _, t := range order {
		if len(rep.Templates) < maxReportTemplates {
			rep.Templates = append(rep.Templates, *t)
		}
	}
	var errT []*TemplateStat
	for _, t := range order {
		if levelOf(t.Level) >= lvError {
			errT = append(errT, t)
		}
	}
	sort.SliceStable(errT, func(i, j int) bool { return errT[i].FirstLine < errT[j].FirstLine })
	for _, t := range errT {
		if len(rep.ErrorTemplates) < maxErrorTemplates {
			rep.ErrorTemplates = append(rep.ErrorTemplates, t.ID)
		}
	}
	// Bursts.
	bursts := map[int32][]Burst{}
	for i, fs := range e.files {
		b := fileBursts(fs)
		bursts[int32(i)] = b
		for _, x := range b {
			if len(e.files) > 1 {
				x.File = fs.name
			}
			rep.Bursts = append(rep.Bursts, x)
		}
	}
	if len(rep.Bursts) > maxBursts {
		sort.SliceStable(rep.Bursts, func(i, j int) bool { return rep.Bursts[i].Errors > rep.Bursts[j].Errors })
		rep.Bursts = rep.Bursts[:maxBursts]
		sort.SliceStable(rep.Bursts, func(i, j int) bool { return rep.Bursts[i].StartLine < rep.Bursts[j].StartLine })
	}
	rc := rankCtx{files: e.files, bursts: bursts, ids: ids, texts: texts, diverge: -1, lines: rep.Lines, baseLines: baseLines}
	if baseline != "" {
		rc.baseline = true
		rep.Diff = e.diff(baseline, ids, texts, rep.Lines, baseLines)
		rc.diverge = e.divergeCluster
	}
	rep.Evidence = e.rank(rc, e.opt.Top)
	return rep
}

func indexOf(files []*fileState, name string) int32 {
	for i, f := range files {
		if f.name == name {
			return int32(i)
		}
	}
	return int32(len(files))
}

// fileBursts finds runs of minutes whose error count is well above the
// file's mean rate (and at least burstMinErrors).
func fileBursts(fs *fileState) []Burst {
	if len(fs.minutes) == 0 {
		return nil
	}
	mins := make([]*minuteBucket, 0, len(fs.minutes))
	for _, b := range fs.minutes {
		mins = append(mins, b)
	}
	sort.Slice(mins, func(i, j int) bool { return mins[i].startMinute < mins[j].startMinute })
	span := float64(fs.endMS-fs.startMS)/60000 + 1
	mean := float64(fs.errors) / max(span, 1)
	thr := max(float64(burstMinErrors), 2*mean)
	if len(mins) == 1 {
		thr = burstMinErrors
	}
	var out []Burst
	var cur *Burst
	var prevMin int64
	for _, b := range mins {
		if float64(b.n) < thr {
			cur = nil
			continue
		}
		if cur != nil && b.startMinute == prevMin+1 {
			cur.End, cur.EndLine, cur.endMS = clone(b.lastTime), b.lastLine, b.lastMS
			cur.Errors += b.n
		} else {
			out = append(out, Burst{Start: b.firstTime, End: clone(b.lastTime), StartLine: b.firstLine, EndLine: b.lastLine, Errors: b.n,
				startMS: b.firstMS, endMS: b.lastMS})
			cur = &out[len(out)-1]
		}
		prevMin = b.startMinute
		cur.PerMinute = float64(cur.Errors)
	}
	for i := range out {
		// minutes covered
		n := 1.0
		for _, b := range mins {
			if b.firstLine > out[i].StartLine && b.lastLine <= out[i].EndLine {
				n++
			}
		}
		out[i].PerMinute = float64(int(float64(out[i].Errors)/n*10)) / 10
	}
	return out
}

// mineFile mines path keeping each line's cluster on the tape, and returns
// the engine (call its tape's close when done) with the final template ids
// and texts by cluster.
func mineFile(ctx context.Context, path string, opt Options) (e *engine, ids, texts []string, err error) {
	e = newEngine(opt)
	e.tape = newTape(true)
	if _, err := e.runFile(ctx, path, 1); err != nil {
		e.tape.close()
		return nil, nil, nil, err
	}
	e.m.Finish()
	ids, texts = e.finalTemplates()
	return e, ids, texts, nil
}

func templates(ctx context.Context, path string, opt Options, fn func(TemplateLine) error) error {
	e, ids, texts, err := mineFile(ctx, path, opt)
	if err != nil {
		return err
	}
	defer e.tape.close()
	blankID := miner.TemplateID("")
	return e.tape.each(func(line int, c int32) error {
		if c == blankCluster {
			return fn(TemplateLine{Line: line, TemplateID: blankID, Template: ""})
		}
		return fn(TemplateLine{Line: line, TemplateID: ids[c], Template: texts[c]})
	})
}

func scan(ctx context.Context, path string, opt Options, fn func(int, string) error) error {
	opt = opt.limits()
	src, err := openLog(path, opt)
	if err != nil {
		return err
	}
	defer src.Close()
	sp := newSplitter(src.r, opt.MaxLineBytes)
	no := 0
	var buf []string
	for {
		lines, err := sp.next(buf[:0])
		for _, l := range lines {
			no++
			if e := fn(no, l); e != nil {
				if errors.Is(e, ErrStop) {
					return nil
				}
				return e
			}
		}
		buf = lines
		if errors.Is(err, io.EOF) {
			if no == 0 {
				return fmt.Errorf("%s: %w", path, ErrEmpty)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func templateOf(line string) (string, string) {
	line = visible(line)
	f := miner.Learn([]string{line})
	h := f.Parse(line)
	msg := line
	if h.MsgStart > 0 && h.MsgStart <= len(line) {
		msg = line[h.MsgStart:]
	}
	m := miner.New()
	c := m.Add(msg)
	m.Finish()
	t := m.Template(c)
	return t.ID, t.Text
}
