package logscan

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/sleuth-bot/sleuth/skills/logscan/miner"
)

// Engine limits; each bounds memory whatever the input size.
const (
	maxEvidenceText = 2048    // bytes of a line kept for evidence
	maxSubCands     = 100_000 // distinct (template, root cause) pairs tracked
	maxSeq          = 4 << 20 // events kept per side for the baseline alignment
	maxReturns      = 4096    // templates whose return, or escalation, is kept (each holds up to 2 lines' text)
)

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
	sub      uint64
	annBy    int  // line of the error that announced it (see announcer); 0 none
	bg       bool // a background error (see background), set by rank
	// back is, for a template's return after a silence (see returns),
	// the line of the template's first event before it; 0 otherwise
	back int
	// escFrom is, for a template's escalation (see noteEscalation), the
	// level of its events before; lvNone otherwise
	escFrom uint8
	// wrong is the line of the "* What went wrong:" whose account of the
	// failure holds it (see wrongStart), set by rank; 0 none
	wrong int
	// change is, for the last change before the errors (see
	// changeCands), the line the errors start at; 0 otherwise
	change int
	// foretold is, for a warning that foretold its file's incident in the
	// words of its errors (see foretold), the first of those errors' lines
	foretold int
	// failedFor is, for a warning shortly before a verdict that the run
	// failed for its warnings (see warnVerdicts), the verdict's line
	failedFor int
	// drift is, for a change candidate that is a setting differing from
	// its first event (see noteDrift), what changed
	drift string
	// late: that setting changed after the first error, before the last
	// (change is then the last error's line; see changeCands)
	late bool
}

type clusterStat struct {
	count           int64 // events in the analysed files
	base            int64 // events in the baseline
	file            int32
	first           int
	last            int
	firstMS, lastMS int64 // times of the first and last events, 0 none
	level           uint8
	firstLevel      uint8 // the first event's level
	kw              uint8
	kwSet           bool
	// runnerFail: its first message is a test runner's own report of a
	// failure (see runnerFailure), an error even under an info tag
	runnerFail bool
	// inner: the level its first message opens with under a wrapper's
	// (see wrappedLevel), which outranks an info or missing one
	inner uint8
	step  uint8 // stepLine of its first line, plus one; 0 not yet known
	// announce: its message ends the way a line that announces an error
	// on the next line does ("error during build:"); 0 not yet known,
	// 1 no, 2 yes (see announcer)
	announce uint8
	// change: whether its events below warning level are tested as
	// changes (see noteChange); 0 not yet known, 1 no longer, 2 yes
	change uint8
	// annBy is the line of the error event that announced the
	// cluster's first event on the line before it; 0 none
	annBy int
	text  string
	// settings: the first event's text past text's clip (up to
	// maxSettingsText), kept where it may report settings (see noteDrift)
	settings string
	// For the cluster's own candidate (events without a root-cause line).
	keyed    int64 // events that carried a root-cause line
	lastFile int32
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
	annLine            int           // head of the last event when it was an error announcing the next line; 0 none
	annField           int           // line of the last error that was a record's severity field (see fieldWindow); 0 none
	ev                 openEvent
	steps              stepTrack
	errs, warns        lineHist // errors and warnings by line, for the incident's change point
	changes            []change // events of change templates (see noteChange)
}

// lineHist counts events in buckets of consecutive lines; the buckets
// double in size when there are maxLineBuckets, so memory stays bounded.
type lineHist struct {
	n    []int32
	size int // lines per bucket
}

const maxLineBuckets = 4096

// add counts an event at line (1-based). Out of line: it runs for errors
// only.
//
//go:noinline
func (h *lineHist) add(line int) {
	if h.size == 0 {
		h.size = 8
	}
	i := (line - 1) / h.size
	for i >= maxLineBuckets {
		for j := 0; j < len(h.n); j += 2 {
			v := h.n[j]
			if j+1 < len(h.n) {
				v += h.n[j+1]
			}
			h.n[j/2] = v
		}
		h.n = h.n[:(len(h.n)+1)/2]
		h.size *= 2
		i = (line - 1) / h.size
	}
	for len(h.n) <= i {
		h.n = append(h.n, 0)
	}
	h.n[i]++
}

// engine runs one analysis. Not safe for concurrent use.
type engine struct {
	opt Options
	// settingsBytes counts the clusterStat.settings kept, up to
	// maxSettingsBytes: memory stays bounded however many long
	// configuration lines a file has
	settingsBytes int
	m             *miner.Miner
	cl            []clusterStat
	subs          map[subKey]*cand
	files         []*fileState
	phase         int // 0 baseline, 1 analysed files
	seq           [2][]int32
	seqLine       []int32 // line of each analysed event in seq[1] (first file only)
	levels        [7]int64
	tape          *tape
	seed          maphash.Seed
	// recordSeq keeps the order of events, for the baseline alignment.
	recordSeq bool

	divergeCluster int32 // set by diff; -1 none

	// returns holds, per cluster, its first event after a silence (see
	// noteReturn); escalations its first event at a higher level than all
	// before (see noteEscalation).
	returns     map[int32]episode
	escalations map[int32]episode

	changeTests int // messages tested by noteChange
}

// Returns. A warning or error a service printed once or twice hours ago,
// and again when things went wrong (a flood-stage watermark, a memory
// alarm, a rate limit, a dial timeout), is as much the incident's first
// sign as a template never seen before; but the template's evidence line
// is its first event, the harmless one. So its first event after its first
// silence is kept too, and ranked as a template of its own where it falls
// just before the errors (see rank). Only the first, and only for a
// template that showed up briefly before it: one that keeps coming back
// (a cron job, an hourly report) has a rhythm, not an incident. A silence
// is returnGapLines lines and returnGapMS of the log's time, or
// returnGapUntimed lines without timestamps.
const (
	returnGapLines   = 50
	returnGapMS      = 10 * 60 * 1000
	returnGapUntimed = 500
)

// episode is a template's first event after a silence (a return) or at a
// higher level than before (an escalation).
type episode struct {
	cluster        int32
	prev           int   // the template's last line before the silence
	silences       int   // the cluster's silences in all (see comeback)
	from, level    uint8 // an escalation's level before it and its own
	file           int32
	head, line     int // the event's first line and the line shown
	text, headText string
	sub            uint64 // shape of its root cause (see subKey), 0 none
	keyPri         uint8
	before         int64 // the template's events before it
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

// runFile streams one file through the pipeline and the miner; phase 0
// mines a baseline (counts and order only).
//
// The pipeline: one reader cuts the stream into blocks of whole lines;
// GOMAXPROCS parsers split and parse blocks in parallel (header, level,
// timestamp, and a provisional event grouping); one consumer takes the
// blocks in order, fixes the grouping of each block's lines before its first
// timestamped line (the only lines whose grouping depends on the previous
// block), mines the events and updates the statistics. Blocks are recycled
// through a free list, so nothing is allocated per line and memory is
// bounded by the number of blocks.
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
	pending, err := readSample(sp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var sample []string
	for _, lines := range pending {
		sample = append(sample, lines[:min(len(lines), headerSample-len(sample))]...)
	}
	g := newGrouper(sample)
	sample = nil

	parsers := max(1, runtime.GOMAXPROCS(0))
	nblocks := 2*parsers + 2
	free := make(chan *block, nblocks)
	for range nblocks {
		free <- &block{ready: make(chan struct{}, 1)}
	}
	// Neither queue ever blocks: at most nblocks blocks exist.
	work := make(chan *block, nblocks)
	order := make(chan *block, nblocks)
	eg, gctx := errgroup.WithContext(ctx)
	// Read buffers are recycled: a block's lines are views of the buffer
	// they were read into, which goes back to the pool once the consumer is
	// done with the last block cut from it. Blocks in flight hold at most
	// nblocks buffers, the splitter one more.
	var pool *bufPool
	if recycleBuffers {
		pool = newBufPool(nblocks+2, len(sp.buf))
		sp.getBuf = func() ([]byte, error) { return pool.get(gctx) }
	}
	eg.Go(func() error {
		defer close(order)
		defer close(work)
		return readBlocks(gctx, sp, pending, free, work, order)
	})
	for range parsers {
		eg.Go(func() error {
			p := &grouper{f: g.f, mp: g.f.NewParser(), headered: g.headered}
			for b := range work {
				p.parseBlock(b, e.opt.MaxLineBytes)
				b.ready <- struct{}{}
			}
			return nil
		})
	}
	eg.Go(func() error {
		lineNo := 1
		for b := range order {
			select {
			case <-b.ready:
			case <-gctx.Done():
				return gctx.Err()
			}
			g.fixBlock(b)
			e.consume(fs, fileIdx, lineNo, b.recs, &b.sk)
			lineNo += len(b.recs)
			if b.release != nil {
				fs.detach()
				pool.put(b.release)
			}
			b.reset()
			free <- b
		}
		return nil
	})
	if err := eg.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	e.finishEvent(fs, fileIdx)
	fs.steps.close(fs.lines, fs.lastErrLine)
	fs.bytes = sp.bytes
	if fs.lines == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrEmpty)
	}
	return fs, nil
}

// recycleBuffers turns the recycling of read buffers on (a variable so
// tests can compare with fresh buffers).
var recycleBuffers = true

// poisonRecycled makes tests overwrite a recycled buffer, so a string
// still pointing into it shows up as garbage.
var poisonRecycled = false

// bufPool recycles read buffers of one size; at most max are made.
type bufPool struct {
	c    chan []byte
	size int
	made int // touched by the reader only
	max  int
}

func newBufPool(max, size int) *bufPool {
	return &bufPool{c: make(chan []byte, max+1), size: size, max: max}
}

// get returns a free buffer, a new one while fewer than max exist, or
// waits for one to be put back.
func (p *bufPool) get(ctx context.Context) ([]byte, error) {
	select {
	case b := <-p.c:
		return b, nil
	default:
	}
	if p.made < p.max {
		p.made++
		return make([]byte, p.size), nil
	}
	select {
	case b := <-p.c:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put recycles b; a buffer beyond the pool's room is left to the GC.
func (p *bufPool) put(b []byte) {
	if poisonRecycled {
		for i := range b {
			b[i] = 'Z'
		}
	}
	if len(b) != p.size {
		return
	}
	select {
	case p.c <- b:
	default:
	}
}

// detach copies the strings the file's state keeps from the lines seen so
// far, before the buffer they point into is recycled.
func (fs *fileState) detach() {
	ev := &fs.ev
	if ev.active {
		ev.text, ev.msg, ev.time, ev.keyText = clone(ev.text), clone(ev.msg), clone(ev.time), clone(ev.keyText)
	} else {
		ev.text, ev.msg, ev.time, ev.keyText = "", "", "", ""
	}
	fs.endTime = clone(fs.endTime)
	if fs.curBucket != nil {
		fs.curBucket.lastTime = clone(fs.curBucket.lastTime)
	}
}

// block is a run of consecutive physical lines of one file.
type block struct {
	region string   // whole lines still to be split; "" when lines is set
	lines  []string // the lines, once split
	recs   []rec
	sk     miner.Sketch // skeletons of the messages to mine (rec.sk)
	// sync is the index of the first line that starts an event whatever
	// came before (-1: none); the grouping of the lines before it is
	// provisional, and state is the grouper's state after the block.
	sync  int
	state groupState
	ready chan struct{} // the parser is done with the block
	// release is the read buffer to recycle once this block is consumed
	// (set on the last block cut from it).
	release []byte
}

func (b *block) reset() {
	b.region, b.release = "", nil
	clear(b.lines)
	clear(b.recs)
	b.lines, b.recs = b.lines[:0], b.recs[:0]
	b.sk.Reset()
}

// maxRegion is about the most bytes of whole lines one block gets: it
// bounds the per-line records a block holds (a variable so tests can cut
// events at every possible place).
var maxRegion = 128 << 10

// maxSampleLines is the most lines one block of the header sample gets
// (a variable for the same tests).
var maxSampleLines = headerSample

// readSample reads the first headerSample lines (or the whole stream when
// shorter), for the header detector.
func readSample(sp *splitter) ([][]string, error) {
	var pending [][]string
	n := 0
	for n < headerSample {
		lines, err := sp.next(nil)
		if len(lines) > 0 {
			pending = append(pending, lines)
			n += len(lines)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return pending, nil
}

// readBlocks sends the sample's lines, then the rest of the stream, as
// blocks to the parsers (work) and, in the same order, to the consumer.
func readBlocks(ctx context.Context, sp *splitter, pending [][]string, free chan *block, work, order chan<- *block) error {
	get := func() (*block, error) {
		select {
		case b := <-free:
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	send := func(b *block) {
		order <- b
		work <- b
	}
	for _, lines := range pending {
		for len(lines) > 0 {
			b, err := get()
			if err != nil {
				return err
			}
			n := min(len(lines), maxSampleLines)
			b.lines = append(b.lines, lines[:n]...)
			lines = lines[n:]
			send(b)
		}
	}
	for {
		b, err := get()
		if err != nil {
			return err
		}
		var region string
		var owned []byte
		b.lines, region, owned, err = sp.chunk(b.lines)
		for len(region) > maxRegion {
			// Cut the region after the first line end past maxRegion.
			i := strings.IndexByte(region[maxRegion:], '\n')
			if i < 0 || maxRegion+i+1 == len(region) {
				break
			}
			b.region, region = region[:maxRegion+i+1], region[maxRegion+i+1:]
			send(b)
			if b, err = get(); err != nil {
				return err
			}
		}
		b.region, b.release = region, owned
		if len(b.lines) > 0 || b.region != "" {
			send(b)
		} else {
			free <- b
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parseBlock splits and parses a block's lines and groups them into
// events, starting from an empty grouper state.
func (g *grouper) parseBlock(b *block, maxLine int) {
	g.groupState = groupState{}
	b.sync = -1
	f := scanFlags(b.region)
	g.noCR = f&flagCR == 0
	g.noESC = f&flagESC == 0
	for _, l := range b.lines {
		g.noCR = g.noCR && strings.IndexByte(l, '\r') < 0
		g.noESC = g.noESC && strings.IndexByte(l, 0x1b) < 0
	}
	add := func(l string) {
		b.recs = append(b.recs, rec{})
		r := &b.recs[len(b.recs)-1]
		g.parseInto(r, l)
		if b.sync < 0 && r.startsEvent() {
			b.sync = len(b.recs) - 1
		}
		g.group(r)
		// The consumer mines the lines that start an event; before the
		// block's first timestamped line the grouping is provisional, so
		// those lines are sketched whatever it says.
		if !r.blank && (!r.cont || b.sync < 0) {
			r.sk = int32(b.sk.Add(r.msg)) + 1
		}
	}
	for _, l := range b.lines {
		add(l)
	}
	it := newLineIterFlags(b.region, maxLine, f)
	for {
		l, ok := it.next()
		if !ok {
			break
		}
		add(l)
	}
	g.resolveMode()
	b.state = g.groupState
	g.noCR, g.noESC = false, false
}

// fixBlock regroups the lines of b whose grouping depended on the previous
// block, from the consumer's grouper state, and takes over the state
// after b.
func (g *grouper) fixBlock(b *block) {
	end := b.sync
	if end < 0 {
		end = len(b.recs)
	}
	for i := range end {
		g.group(&b.recs[i])
	}
	g.resolveMode() // its head's message lies in a buffer to be recycled
	if b.sync >= 0 {
		g.groupState = b.state
	}
}

// consume mines the events of one block's lines, the first of which is
// line first, and updates the statistics; sk holds the skeletons the
// records point to (nil: none).
func (e *engine) consume(fs *fileState, fileIdx int32, first int, recs []rec, sk *miner.Sketch) {
	ev := &fs.ev
	for i := range recs {
		r := &recs[i]
		no := first + i
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
		var c int32
		if r.sk > 0 && sk != nil {
			c = int32(e.m.AddSketched(r.msg, sk, int(r.sk-1)))
		} else {
			c = int32(e.m.Add(r.msg))
		}
		for int(c) >= len(e.cl) {
			e.cl = append(e.cl, clusterStat{})
		}
		// Field by field: a struct literal is built on the stack and
		// copied with a bulk write barrier.
		ev.active, ev.cluster, ev.line, ev.ms, ev.level = true, c, no, r.ms, r.level
		ev.text, ev.msg, ev.time = r.text, r.msg, r.time
		ev.keyPri, ev.keyLine, ev.keyText = keyNone, 0, ""
		if e.tape != nil {
			e.tape.add(c)
		}
	}
	fs.lines = first + len(recs) - 1
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
		c.file, c.first, c.text, c.firstMS = fileIdx, ev.line, clip(ev.text), ev.ms
		if len(ev.text) > maxEvidenceText && e.settingsBytes < maxSettingsBytes && mayReportSettings(ev.text) {
			c.settings = validHead([]byte(ev.text), maxSettingsText)
			e.settingsBytes += len(c.settings)
		}
	}
	if c.count > 1 && ev.line-c.last >= returnGapLines {
		e.noteReturn(fs, c, fileIdx)
		if c.level < lvWarn && c.count <= maxDriftCount {
			e.noteDrift(fs, c, fileIdx)
		}
	}
	c.last, c.lastMS = ev.line, ev.ms
	if c.step == 0 {
		c.step = stepLine(ev.msg) + 1
	}
	if c.step > 1 {
		fs.steps.lastErr = fs.lastErrLine
		fs.steps.line(ev.msg, ev.line)
	}
	lvl := ev.level
	if lvl == lvNone || lvl == lvInfo && ev.keyPri == keyNone {
		if !c.kwSet {
			c.kw, c.kwSet = keywordLevel(ev.msg), true
			c.runnerFail = runnerFailure(ev.msg)
			if errorException(ev.msg) {
				// an exception is an error whatever level a wrapper
				// logged it at (DbUp's under Octopus' Info)
				c.kw, c.runnerFail = lvError, true
			}
			// the logger's own level under a wrapper's (see wrappedLevel)
			c.inner = wrappedLevel(ev.msg)
		}
		if lvl == lvNone || c.runnerFail {
			lvl = max(lvl, c.kw)
		}
		lvl = max(lvl, c.inner)
	}
	switch {
	case ev.keyPri == keyWarn:
		lvl = max(lvl, lvWarn)
	case ev.keyPri != keyNone:
		lvl = max(lvl, lvError)
	}
	if lvl > c.level {
		if c.count == 1 {
			c.firstLevel = lvl
		} else if lvl >= lvWarn {
			e.noteEscalation(fs, c, lvl, fileIdx)
		}
		c.level = lvl
	}
	e.levels[lvl]++
	if c.change != 1 && lvl < lvWarn {
		e.noteChange(fs, c)
	}

	c.lastFile = fileIdx
	if fs.annLine > 0 || fs.annField > 0 || lvl >= lvError {
		announced(fs, c, lvl)
	}
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
		} else {
			c.keyed--
		}
	}

	if ev.ms != 0 {
		if fs.startTime == "" {
			fs.startTime, fs.startMS, fs.startLine = clone(ev.time), ev.ms, ev.line
		}
		fs.endTime, fs.endMS, fs.endLine = ev.time, ev.ms, ev.line
	}
	if lvl == lvWarn {
		fs.warns.add(ev.line)
	}
	if lvl >= lvError {
		fs.errors++
		if fs.firstErr == nil {
			fs.firstErr = &LineRef{File: fs.name, Line: ev.line, Text: clip(ev.text)}
			fs.firstErrLine = ev.line
		}
		fs.lastErrLine = ev.line
		fs.errs.add(ev.line)
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

// noteReturn records the event fs.ev of cluster c, which came at least
// returnGapLines lines after the cluster's last event, when that was a
// silence (see returns). Out of line: it runs for few events.
//
//go:noinline
func (e *engine) noteReturn(fs *fileState, c *clusterStat, fileIdx int32) {
	ev := &fs.ev
	if c.lastFile != fileIdx {
		return
	}
	if ev.ms != 0 && c.lastMS != 0 {
		if ev.ms-c.lastMS < returnGapMS {
			return
		}
	} else if ev.line-c.last < returnGapUntimed {
		return
	}
	if ep, ok := e.returns[ev.cluster]; ok {
		ep.silences++
		e.returns[ev.cluster] = ep
		return
	}
	if len(e.returns) >= maxReturns {
		return
	}
	ep := e.episodeOf(ev, c, fileIdx)
	ep.prev, ep.silences = c.last, 1
	if e.returns == nil {
		e.returns = map[int32]episode{}
	}
	e.returns[ev.cluster] = ep
}

// episodeOf records the event ev of cluster c: the lines and texts an
// evidence candidate shows (its root cause when it has one).
func (e *engine) episodeOf(ev *openEvent, c *clusterStat, fileIdx int32) episode {
	ep := episode{cluster: ev.cluster, file: fileIdx, head: ev.line, line: ev.line, headText: clip(ev.text), before: c.count - 1}
	ep.text = ep.headText
	if ev.keyPri != keyNone {
		ep.line, ep.text, ep.keyPri = ev.keyLine, clip(ev.keyText), ev.keyPri
		ep.sub = shapeHash(e.seed, ev.keyText)
	}
	return ep
}

// Escalations. A template a service printed at info level all along and
// now prints as a warning or an error (the JVM pause monitor's "pause of
// 23611 ms" after hours of one-second pauses, a lag report crossing its
// threshold) says where things changed, as a return does; it is ranked
// the same way (see rank).

// noteEscalation records the event fs.ev of cluster c, at level lvl above
// any of the cluster's events before, which had a level. Out of line: it
// runs for few events.
//
//go:noinline
func (e *engine) noteEscalation(fs *fileState, c *clusterStat, lvl uint8, fileIdx int32) {
	ev := &fs.ev
	if _, ok := e.escalations[ev.cluster]; ok || c.level == lvNone || c.lastFile != fileIdx || len(e.escalations) >= maxReturns {
		return
	}
	ep := e.episodeOf(ev, c, fileIdx)
	ep.from, ep.level = c.level, lvl
	if e.escalations == nil {
		e.escalations = map[int32]episode{}
	}
	e.escalations[ev.cluster] = ep
}

// announced notes the event fs.ev of cluster c at level lvl: an error
// announcing the next line (see announcer), or the line an error on the
// line before announced (the announcing event then had one line: the
// next started after it). Kept out of line: finishEvent runs for every
// event and is inlined where it is hot.
//
//go:noinline
func announced(fs *fileState, c *clusterStat, lvl uint8) {
	ev := &fs.ev
	if fs.annLine > 0 && fs.annLine == ev.line-1 && c.count == 1 && !stackFrame(ev.msg) {
		c.annBy = fs.annLine
	}
	fs.annLine = 0
	if fs.annField > 0 && ev.line != fs.annField {
		switch {
		case ev.line-fs.annField > fieldWindow:
			fs.annField = 0
		case fieldKey(ev.msg, messageKeys):
			if c.count == 1 {
				c.annBy = fs.annField
			}
			fs.annField = 0
		}
	}
	if lvl >= lvError && fieldKey(ev.msg, severityKeys) {
		// a report's record: its message is a field a few lines on
		fs.annField = ev.line
	}
	if lvl >= lvError {
		if c.announce == 0 {
			c.announce = 1
			if announcer(ev.msg) {
				c.announce = 2
			}
		}
		if c.announce == 2 {
			fs.annLine = ev.line
		}
	}
}

// A report printed as JSON or YAML records (Apple's notary log, a
// linter's or scanner's report) gives each finding's severity and message
// as fields of their own: "severity": "error", then "path", then
// "message": "The executable requests …". The message is the finding, as
// the line after an announcing error is (see announcer), when it comes
// within fieldWindow lines of its severity.
const fieldWindow = 4

var (
	severityKeys = []string{"severity", "level", "type", "kind", "status"}
	messageKeys  = []string{"message", "msg", "description", "text", "reason", "detail", "details", "title", "summary"}
)

// fieldKey reports whether msg is a record's field, "key": value or
// key: value, with one of keys as its key.
func fieldKey(msg string, keys []string) bool {
	m := strings.TrimLeft(msg, " \t-")
	quoted := strings.HasPrefix(m, `"`)
	if quoted {
		m = m[1:]
	}
	for _, k := range keys {
		if len(m) > len(k) && strings.EqualFold(m[:len(k)], k) {
			r := m[len(k):]
			if quoted {
				if r[0] != '"' {
					continue
				}
				r = r[1:]
			}
			r = strings.TrimLeft(r, " ")
			if r != "" && (r[0] == ':' || r[0] == '=') {
				return true
			}
		}
	}
	return false
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
