package logscan

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// Engine limits; each bounds memory whatever the input size.
const (
	maxEvidenceText = 2048    // bytes of a line kept for evidence
	maxSubCands     = 100_000 // distinct (template, root cause) pairs tracked
	maxSeq          = 4 << 20 // events kept per side for the baseline alignment
	batchQueue      = 4       // batches in flight between the reader and the miner
)

// batch is a run of consecutive physical lines of one file.
type batch struct {
	first int // line number of recs[0]
	recs  []rec
}

// cand is one evidence candidate: a template, or a template together with
// the shape of the root cause its events carry.
type cand struct {
	cluster  int32
	file     int32
	line     int    // the line shown: the root cause when there is one
	head     int    // the event's first line
	text     string // text of line
	headText string
	count    int64
	lastFile int32
	lastLine int
	level    uint8
	keyPri   uint8
	firstErr bool // holds the first error of its file
	lastErr  bool // holds the last error of its file
	sub      uint64
}

type clusterStat struct {
	count int64 // events in the analysed files
	base  int64 // events in the baseline
	file  int32
	first int
	last  int
	level uint8
	kw    uint8
	kwSet bool
	text  string
	// For the cluster's own candidate (events without a root-cause line).
	keyed    int64 // events that carried a root-cause line
	lastFile int32
	firstErr bool
}

// openEvent is the event being assembled by the consumer.
type openEvent struct {
	active  bool
	cluster int32
	line    int
	text    string
	msg     string
	time    string
	ms      int64
	level   uint8
	keyPri  uint8
	keyLine int
	keyText string
}

type minuteBucket struct {
	n           int
	firstLine   int
	lastLine    int
	firstTime   string
	lastTime    string
	firstMS     int64
	lastMS      int64
	startMinute int64
}

// fileState is what the engine learns about one analysed file.
type fileState struct {
	name               string
	lines              int
	bytes              int64
	errors             int64
	firstErr           *LineRef
	firstErrLine       int
	lastErrLine        int
	startTime, endTime string
	startMS, endMS     int64
	startLine, endLine int
	minutes            map[int64]*minuteBucket
	curBucket          *minuteBucket // the bucket whose lastTime may share a block
	ev                 openEvent
}

// engine runs one analysis. Not safe for concurrent use.
type engine struct {
	opt     Options
	m       *miner.Miner
	cl      []clusterStat
	subs    map[subKey]*cand
	files   []*fileState
	phase   int // 0 baseline, 1 analysed files
	seq     [2][]int32
	seqLine []int32 // line of each analysed event in seq[1] (first file only)
	levels  [7]int64
	tape    *tape
	seed    maphash.Seed
	// recordSeq keeps the order of events, for the baseline alignment.
	recordSeq bool

	divergeCluster int32 // set by diff; -1 none
}

type subKey struct {
	cluster int32
	shape   uint64
}

func newEngine(opt Options) *engine {
	return &engine{opt: opt.limits(), m: miner.New(), subs: map[subKey]*cand{}, seed: maphash.MakeSeed()}
}

// blankCluster marks a blank line; it is not mined.
const blankCluster = -1

// runFile streams one file through the reader goroutine and the miner.
// phase 0 mines a baseline (counts and order only).
func (e *engine) runFile(ctx context.Context, path string, phase int) (*fileState, error) {
	src, err := openLog(path, e.opt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fs := &fileState{name: path, minutes: map[int64]*minuteBucket{}}
	e.phase = phase
	fileIdx := int32(len(e.files))
	if phase == 1 {
		e.files = append(e.files, fs)
	}
	sp := newSplitter(src.r, e.opt.MaxLineBytes)
	out := make(chan *batch, batchQueue)
	free := make(chan []rec, batchQueue+2)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(out)
		return produce(gctx, sp, out, free)
	})
	g.Go(func() error {
		for b := range out {
			if err := gctx.Err(); err != nil {
				return err
			}
			e.consume(fs, fileIdx, b)
			select {
			case free <- b.recs[:0]:
			default:
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	e.finishEvent(fs, fileIdx)
	fs.bytes = sp.bytes
	if fs.lines == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	return fs, nil
}

// produce reads lines, learns the header layout from the first ones,
// groups events and sends batches. It closes nothing; the caller closes out.
func produce(ctx context.Context, sp *splitter, out chan<- *batch, free chan []rec) error {
	var pending [][]string
	var sample []string
	var err error
	for len(sample) < headerSample {
		var lines []string
		lines, err = sp.next(nil)
		if len(lines) > 0 {
			pending = append(pending, lines)
			sample = append(sample, lines[:min(len(lines), headerSample-len(sample))]...)
		}
		if err != nil {
			break
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	g := newGrouper(sample)
	lineNo := 1
	send := func(lines []string) error {
		var recs []rec
		select {
		case recs = <-free:
		default:
			recs = make([]rec, 0, len(lines))
		}
		for _, l := range lines {
			r := g.line(l)
			if r.blank && !r.cont {
				g.inEvent = false
			}
			recs = append(recs, r)
		}
		b := &batch{first: lineNo, recs: recs}
		lineNo += len(lines)
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, p := range pending {
		if e := send(p); e != nil {
			return e
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	buf := make([]string, 0, 16384)
	for {
		lines, err := sp.next(buf[:0])
		if len(lines) > 0 {
			if e := send(lines); e != nil {
				return e
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// consume mines the events of one batch and updates the statistics.
func (e *engine) consume(fs *fileState, fileIdx int32, b *batch) {
	ev := &fs.ev
	for i := range b.recs {
		r := &b.recs[i]
		no := b.first + i
		if r.cont && ev.active {
			if r.key != keyNone && (r.key > ev.keyPri || (r.key == keyCause && ev.keyPri == keyCause)) {
				ev.keyPri, ev.keyLine, ev.keyText = r.key, no, r.text
			}
			if e.tape != nil {
				e.tape.add(ev.cluster)
			}
			continue
		}
		e.finishEvent(fs, fileIdx)
		if r.blank {
			if e.tape != nil {
				e.tape.add(blankCluster)
			}
			continue
		}
		c := int32(e.m.Add(r.msg))
		for int(c) >= len(e.cl) {
			e.cl = append(e.cl, clusterStat{})
		}
		*ev = openEvent{active: true, cluster: c, line: no, text: r.text, msg: r.msg, time: r.time, ms: r.ms, level: r.level}
		if e.tape != nil {
			e.tape.add(c)
		}
	}
	fs.lines = b.first + len(b.recs) - 1
}

// finishEvent accounts for the event being assembled, if any.
func (e *engine) finishEvent(fs *fileState, fileIdx int32) {
	ev := &fs.ev
	if !ev.active {
		return
	}
	ev.active = false
	c := &e.cl[ev.cluster]
	if e.recordSeq && len(e.seq[e.phase]) < maxSeq {
		e.seq[e.phase] = append(e.seq[e.phase], ev.cluster)
		if e.phase == 1 && fileIdx == 0 {
			e.seqLine = append(e.seqLine, int32(ev.line))
		}
	}
	if e.phase == 0 {
		c.base++
		return
	}
	if e.tape != nil && e.tape.only {
		return
	}
	c.count++
	if c.count == 1 {
		c.file, c.first, c.text = fileIdx, ev.line, clip(ev.text)
	}
	c.last = ev.line
	lvl := ev.level
	if lvl == lvNone || lvl == lvInfo && ev.keyPri == keyNone {
		if !c.kwSet {
			c.kw, c.kwSet = keywordLevel(ev.msg), true
		}
		if lvl == lvNone {
			lvl = c.kw
		}
	}
	if ev.keyPri != keyNone && lvl < lvError {
		lvl = lvError
	}
	if lvl > c.level {
		c.level = lvl
	}
	e.levels[lvl]++

	c.lastFile = fileIdx
	firstErr := lvl >= lvError && fs.firstErr == nil
	if ev.keyPri != keyNone {
		c.keyed++
		k := subKey{cluster: ev.cluster, shape: shapeHash(e.seed, ev.keyText)}
		cd := e.subs[k]
		if cd == nil && len(e.subs) < maxSubCands {
			cd = &cand{cluster: ev.cluster, sub: k.shape, keyPri: ev.keyPri}
			e.subs[k] = cd
		}
		if cd != nil {
			cd.count++
			if cd.count == 1 {
				cd.file, cd.head, cd.headText = fileIdx, ev.line, clip(ev.text)
				cd.line, cd.text = ev.keyLine, clip(ev.keyText)
			}
			cd.lastFile, cd.lastLine = fileIdx, ev.line
			cd.level = max(cd.level, lvl)
			cd.firstErr = cd.firstErr || firstErr
		} else {
			c.keyed--
			c.firstErr = c.firstErr || firstErr
		}
	} else {
		c.firstErr = c.firstErr || firstErr
	}

	if ev.ms != 0 {
		if fs.startTime == "" {
			fs.startTime, fs.startMS, fs.startLine = clone(ev.time), ev.ms, ev.line
		}
		fs.endTime, fs.endMS, fs.endLine = ev.time, ev.ms, ev.line
	}
	if lvl >= lvError {
		fs.errors++
		if fs.firstErr == nil {
			fs.firstErr = &LineRef{File: fs.name, Line: ev.line, Text: clip(ev.text)}
			fs.firstErrLine = ev.line
		}
		fs.lastErrLine = ev.line
		if ev.ms != 0 {
			min := ev.ms / 60000
			bk := fs.minutes[min]
			if fs.curBucket != nil && fs.curBucket != bk {
				// Keep no substring of an old block alive.
				fs.curBucket.lastTime = clone(fs.curBucket.lastTime)
			}
			if bk == nil {
				bk = &minuteBucket{firstLine: ev.line, firstTime: clone(ev.time), firstMS: ev.ms, startMinute: min}
				fs.minutes[min] = bk
			}
			bk.n++
			bk.lastLine, bk.lastTime, bk.lastMS = ev.line, ev.time, ev.ms
			fs.curBucket = bk
		}
	}
}

// shapeHash hashes a line with its digits removed, so root causes that
// differ only in numbers share a candidate.
func shapeHash(seed maphash.Seed, s string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	start := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			h.WriteString(s[start:i])
			start = i + 1
		}
	}
	h.WriteString(s[start:])
	return h.Sum64() | 1
}

// clip returns a copy of s cut to maxEvidenceText bytes.
func clip(s string) string {
	if len(s) > maxEvidenceText {
		return validHead([]byte(s), maxEvidenceText) + " …"
	}
	return clone(s)
}

func clone(s string) string { return string([]byte(s)) }
