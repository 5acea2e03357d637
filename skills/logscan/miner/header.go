package miner

import (
	"math"
	"strings"
	"time"
)

// Header item kinds found by the scanner.
const (
	kTime  = 'T' // a timestamp, bracketed or not
	kLevel = 'L' // a severity word, "<3>", "[error]", "level=error"
	kNum   = 'N' // a bare number (pid, tid, sequence)
	kBrack = 'B' // a short "[...]" field (thread, request id)
	kSep   = 'S' // "-", "---", "|", a lone ":"
	kField = 'F' // a word followed by a "|" separator
	kHost  = 'H' // the word after a syslog timestamp, before the program
	kComp  = 'C' // "component:" (one or two words ending in ':')
	kKV    = 'K' // a header key=value (time=, level=, pid=, logger=)
	kMsg   = 'M' // "msg=": the message starts at its value
	kRel   = 'R' // a relative clock "(1234)" or "[  12.345]"
)

const (
	maxItems     = 10  // header items scanned per line
	maxFieldLen  = 80  // longest bracket/field/component accepted
	maxLayoutLen = 12  // longest learned layout
	jsonMinShare = 0.5 // share of sample lines that must be JSON objects
)

type item struct {
	kind       byte
	start, end int // the item's text; the header ends at end
	ms         int64
	level      string
	far        int // scanning the item read s[:far] (see scanItem)
}

// farAll is an item's far when what its scan read is not cheap to bound.
const farAll = math.MaxInt

// Format is a header layout learned from a sample of one file's lines.
// Safe for concurrent use after Learn (it is never modified).
type Format struct {
	layout string // item kinds in order, e.g. "TNLC"
	json   bool   // lines are JSON objects
	year   int    // year assumed for timestamps that carry none
	// padded: lines may start with spaces before their timestamp (a pid
	// right-aligned in front of it); otherwise an indented line is a
	// continuation, with no header
	padded bool
	// marked: every record starts with a mark (WebLogic's "####<"), so
	// a line without it goes on the record before it
	marked bool
}

// Marked reports whether every record of the file starts with a mark
// (see parseWebLogic): a line without one continues the record before it.
func (f *Format) Marked() bool { return f != nil && f.marked }

// markedMinShare is the share of a sample's lines that must start with a
// record mark: the rest are records' further lines and stack traces.
const markedMinShare = 0.1

// Layout returns the learned item kinds, one letter each (T time, L level,
// N number, B bracket, S separator, F field, H host, C component, K key=value,
// M msg=, R relative clock); "json" for JSON lines; "" for no header.
func (f *Format) Layout() string {
	if f.json {
		return "json"
	}
	return f.layout
}

// Learn learns the header layout from the first lines of a file (a few
// thousand are plenty); it never fails: with no header found every line is
// all message. The layout is the most common sequence of header items among
// the sample lines that have a header at all.
func Learn(sample []string) *Format {
	f := &Format{year: time.Now().UTC().Year()}
	// Indented lines are scanned as if headers could be padded (see
	// padded) and counted apart, until the sample says whether they are.
	p := &Format{year: f.year, padded: true}
	var buf [maxItems]item
	counts, paddedCounts := map[string]int{}, map[string]int{}
	jsonLines, nonEmpty, padded, marked := 0, 0, 0, 0
	for _, ln := range sample {
		ln = trimLine(ln)
		if strings.TrimSpace(ln) == "" {
			continue
		}
		nonEmpty++
		var h Header
		if parseWebLogic(ln, &h) {
			marked++
			continue
		}
		if looksJSON(ln) {
			jsonLines++
			continue
		}
		into, its := counts, []item(nil)
		if isSpace(ln[0]) {
			into, its = paddedCounts, p.scan(ln, buf[:0])
			if len(its) > 0 && its[0].kind == kTime {
				padded++
			}
		} else {
			its = f.scan(ln, buf[:0])
		}
		if len(its) == 0 {
			continue
		}
		var k [maxItems]byte
		for i, it := range its {
			k[i] = it.kind
		}
		into[string(k[:len(its)])]++
	}
	if nonEmpty > 0 && float64(jsonLines) >= jsonMinShare*float64(nonEmpty) {
		f.json = true
		return f
	}
	if nonEmpty > 0 && float64(marked) >= markedMinShare*float64(nonEmpty) {
		f.marked = true
		return f
	}
	// Lines indented before a timestamp, when they are most of the
	// sample, are headers with a pid right-aligned in front of them.
	if nonEmpty > 0 && float64(padded) >= paddedMinShare*float64(nonEmpty) {
		f.padded = true
		for k, n := range paddedCounts {
			counts[k] += n
		}
	}
	// The layout with most lines wins; a layout is also credited with the
	// lines whose layout extends it only by optional trailing items, so
	// "TL" beats "TLB" when a few messages start with "[client ...]".
	best, bestN := "", 0
	for k, n := range counts {
		total := n
		for k2, n2 := range counts {
			if k2 != k && strings.HasPrefix(k2, k) && optionalTail(k2[len(k):]) {
				total += n2 / 2
			}
		}
		if total > bestN || (total == bestN && len(k) > len(best)) || (total == bestN && len(k) == len(best) && k < best) {
			best, bestN = k, total
		}
	}
	// A header seen on too few lines is noise (e.g. a number at the start of
	// some messages in a file with no header).
	headed := 0
	for _, n := range counts {
		headed += n
	}
	if nonEmpty == 0 || float64(bestN) < 0.3*float64(nonEmpty) {
		best = ""
	}
	if len(best) > maxLayoutLen {
		best = best[:maxLayoutLen]
	}
	f.layout = best
	return f
}

// paddedMinShare is the share of a sample's lines that must be indented
// before a timestamp for indented lines to carry headers: a pid
// right-aligned in a fixed width in front of it (Zabbix's
// "  2047:20240529:085755.556 message").
const paddedMinShare = 0.5

func optionalTail(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case kBrack, kComp, kNum, kSep, kHost:
		default:
			return false
		}
	}
	return true
}

// trimLine drops a trailing "\r" (CRLF files).
func trimLine(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\r' {
		return s[:n-1]
	}
	return s
}

func looksJSON(s string) bool {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '{' {
		return false
	}
	j := len(s) - 1
	for j > i && (isSpace(s[j]) || s[j] == '\r') {
		j--
	}
	return s[j] == '}'
}

// Parse splits one line. MsgStart is always within [0, len(line)].
func (f *Format) Parse(line string) Header {
	var h Header
	f.parse(line, nil, &h)
	return h
}

// Parser parses lines of one Format with a cache of the last date it
// converted, so lines that share a date (nearly all consecutive ones)
// convert only their time of day, and a memo of the header tails after the
// timestamp (see hdrMemo). Its results are exactly Format.Parse's.
// A Parser is not safe for concurrent use: take one per goroutine.
type Parser struct {
	f    *Format
	tc   timeCache
	memo hdrMemo
}

// NewParser returns a Parser for f; f may be nil (every line is all message).
func (f *Format) NewParser() *Parser { return &Parser{f: f} }

// Parse splits one line as Format.Parse does.
func (p *Parser) Parse(line string) Header {
	var h Header
	p.f.parse(line, p, &h)
	return h
}

// ParseTo is Parse writing into *h, which it overwrites.
func (p *Parser) ParseTo(line string, h *Header) {
	*h = Header{}
	p.f.parse(line, p, h)
}

// parse is Parse with an optional Parser's caches (nil: none), writing
// into *h, which must be zero.
func (f *Format) parse(line string, p *Parser, h *Header) {
	if f == nil {
		return
	}
	var tc *timeCache
	if p != nil {
		tc = &p.tc
	}
	if f.json || f.layout == "" && looksJSON(line) {
		parseJSON(line, h, f.yearOr(), tc)
		return
	}
	if len(line) > len(webLogicMark) && line[0] == '#' && parseWebLogic(line, h) {
		return
	}
	if f.layout == "" {
		// No learned header; still report a leading timestamp or level so
		// the caller can rank, but keep the whole line as the message.
		return
	}
	// Scan items and match them against the layout as they come: the
	// same items scan would collect, up to the first that does not fit.
	year := f.yearOr()
	if len(line) > 0 && isSpace(line[0]) && !f.padded {
		return // indented: a continuation line, no header
	}
	layout := f.layout
	// With a Parser and a layout that starts with the timestamp, the items
	// after it come from the memo, or are scanned with what they read
	// tracked (far) and remembered when the scan ended cleanly: on a
	// component or msg=, or at the end of the layout or of maxItems.
	var memo *hdrMemo
	if p != nil && layout[0] == kTime && !p.memo.off {
		memo = &p.memo
	}
	looked := false // the memo was asked about the bytes after the timestamp
	if memo != nil && len(line) > 0 && isDigit(line[0]) {
		// The common line: its date and minute those of the line before
		// (the time cache) and its tail a remembered one. parseTime would
		// go to the same isoHit (an ISO date starts with four digits).
		if e, ms, ok := tc.isoHit(line, 0); ok {
			looked = true
			if k := memo.lookup(line[e:]); k >= 0 {
				h.Time, h.UnixMS = line[:e], ms
				memo.fill(k, line, e, h)
				return
			}
		}
	}
	tEnd, far, compAt := -1, 0, -1
	clean := true // false: the scan stopped on bytes it did not keep
	j, cut := 0, -1
	var last byte
	var it item
	for n, i := 0, 0; n < maxItems && j < len(layout); n++ {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			clean = false
			break
		}
		if !scanItem(line, i, year, last, tc, &it) {
			clean = false
			break
		}
		for j < len(layout) && layout[j] != it.kind && optionalKind(layout[j]) {
			j++
		}
		if j >= len(layout) || layout[j] != it.kind {
			clean = false
			break
		}
		j++
		f.apply(line, &it, h)
		cut = it.end
		if n == 0 {
			if memo != nil && it.kind == kTime {
				tEnd, far = it.end, it.end
				if looked {
					// asked above about these bytes: no key holds
				} else if k := memo.lookup(line[tEnd:]); k >= 0 {
					memo.fill(k, line, tEnd, h)
					return
				}
			}
		} else {
			far = max(far, it.far)
			if compAt < 0 && h.Component != "" {
				compAt = it.start
			}
		}
		if it.kind == kComp || it.kind == kMsg {
			break
		}
		last, i = it.kind, it.end
	}
	if cut < 0 || layout[0] == kTime && h.Time == "" {
		// No header; or a line without the file's leading timestamp: a
		// continuation or a stray line, all message. Unless it is a
		// logfmt line among lines of another layout (InfluxDB's logfmt
		// between its access log lines).
		*h = Header{}
		if c := byteAt(line); (c == 't' || c == 'l') && layout[0] != kKV {
			parseLogfmt(line, year, tc, h)
		}
		return
	}
	for cut < len(line) && isSpace(line[cut]) {
		cut++
	}
	h.MsgStart = min(cut, len(line))
	if tEnd >= 0 && clean && cut < len(line) && far <= len(line) {
		// Skipping the spaces before the message read line[cut] only to
		// see it is not a space: a key that ends there says so (word)
		// rather than keeping that byte.
		e := memoParse{level: h.Level, msg: cut - tEnd, word: far <= cut}
		if compAt >= 0 {
			e.compOff, e.compLen = compAt-tEnd, len(h.Component)
		}
		memo.insert(line[tEnd:max(far, cut)], e)
	}
}

func (f *Format) yearOr() int {
	if f == nil || f.year == 0 {
		return time.Now().UTC().Year()
	}
	return f.year
}

func optionalKind(k byte) bool { return k != kTime }

func (f *Format) apply(line string, it *item, h *Header) {
	switch it.kind {
	case kTime, kRel:
		if h.Time == "" {
			s, e := it.start, it.end
			if s < e && (line[s] == '[' || line[s] == '(') {
				s, e = s+1, e-1
				for s < e && line[s] == ' ' {
					s++
				}
			}
			h.Time = line[s:e]
			h.UnixMS = it.ms
		}
	case kLevel, kKV:
		if it.level != "" && h.Level == "" {
			h.Level = it.level
		}
		if it.kind == kKV && it.ms != 0 && h.Time == "" {
			h.Time, h.UnixMS = kvValue(line[it.start:it.end]), it.ms
		}
	case kComp:
		if h.Component == "" {
			c := line[it.start:it.end]
			for len(c) > 0 && (c[len(c)-1] == ':' || c[len(c)-1] == ' ') {
				c = c[:len(c)-1]
			}
			h.Component = c
		}
		if it.level != "" && h.Level == "" {
			h.Level = it.level
		}
	case kField:
		if h.Component == "" {
			h.Component = line[it.start:it.end]
		}
	}
}

func kvValue(s string) string {
	if i := strings.IndexByte(s, '='); i >= 0 {
		return strings.Trim(s[i+1:], `"`)
	}
	return s
}

// wordEnd returns the end of the token at i: up to a space, or a '|'.
func wordEnd(s string, i int) int {
	for i < len(s) && hdrClass[s[i]]&hStop == 0 {
		i++
	}
	return i
}

// Header byte classes.
const (
	hStop  = 1 << iota // ends a header token: ' ', '\t', '|'
	hEq                // '='
	hParen             // '(' ')'
	hOther             // ':' '[' ']' (with hParen: what "prog 1.2:" may not hold)
	hOpen              // '('
	hClose             // ')'
)

var hdrClass = func() (t [256]uint8) {
	t[' '], t['\t'], t['|'] = hStop, hStop, hStop
	t['='] = hEq
	t['('], t[')'] = hParen|hOpen, hParen|hClose
	t[':'], t['['], t[']'] = hOther, hOther, hOther
	return t
}()

// scan reads header items greedily from the start of a line.
func (f *Format) scan(s string, out []item) []item {
	year := f.yearOr()
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i > 0 && !f.padded {
		return out // indented: a continuation line, no header
	}
	for len(out) < maxItems && i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		var it item
		if !scanItem(s, i, year, lastKind(out), nil, &it) {
			break
		}
		out = append(out, it)
		if it.kind == kComp || it.kind == kMsg {
			break
		}
		i = it.end
	}
	return out
}

func lastKind(out []item) byte {
	if len(out) == 0 {
		return 0
	}
	return out[len(out)-1].kind
}

// scanItem reads one header item at s[i]; last is the kind of the item
// before it (0 at the start of the line). On success out.far bounds what
// the scan read: it looked at s[:out.far] only, and how long s is mattered
// only if out.far > len(s) (the header memo relies on this; farAll when the
// bound is not cheap to state).
func scanItem(s string, i, year int, last byte, tc *timeCache, out *item) bool {
	c := s[i]
	far := i + 1
	// Timestamps (parseTime rejects any other first byte at once).
	if isDigit(c) || syslogFirst[c] {
		if e, ms, ok := parseTime(s, i, year, tc); ok {
			*out = item{kind: kTime, start: i, end: e, ms: ms, far: farAll}
			return true
		}
		far = failedTimeFar(s, i)
		if t, e, ms, ok := pidTime(s, i, year, tc); ok {
			*out = item{kind: kTime, start: t, end: e, ms: ms, far: farAll}
			return true
		}
	}
	switch c {
	case '[':
		close := strings.IndexByte(s[i:min(len(s), i+maxFieldLen)], ']')
		if close < 0 {
			return false
		}
		e := i + close + 1
		j := i + 1
		for j < e && s[j] == ' ' {
			j++
		}
		if s[j] == '"' {
			// `["message"]`: a quoted message in brackets (the unified
			// log format of TiDB, TiKV and PD), where the header ends
			return false
		}
		if c := s[j]; isDigit(c) || syslogFirst[c] {
			te, ms, ok := parseTime(s, j, year, tc)
			if ok && te == e-1 {
				*out = item{kind: kTime, start: i, end: e, ms: ms, far: farAll}
				return true
			}
			if ok {
				far = farAll
			} else {
				far = max(far, failedTimeFar(s, j))
			}
		}
		far = max(far, e)
		if ms, ok := relClock(s[j : e-1]); ok {
			*out = item{kind: kRel, start: i, end: e, ms: ms, far: far}
			return true
		}
		if lv := levelWord(s[j : e-1]); lv != "" {
			*out = item{kind: kLevel, start: i, end: e, level: lv, far: far}
			return true
		}
		far = max(far, e+2) // s[e] and, after a ':', s[e+1]
		if e < len(s) && s[e] == ':' && (e+1 == len(s) || s[e+1] == ' ') {
			*out = item{kind: kComp, start: i, end: e + 1, far: far}
			return true
		}
		*out = item{kind: kBrack, start: i, end: e, far: far}
		return true
	case '(':
		// ESP-IDF "I (1234) tag: msg": a relative clock in milliseconds.
		e := runDigits(s, i+1)
		if e > i+1 && e < len(s) && s[e] == ')' && e-i-1 <= 12 {
			v, _ := digits(s, i+1, e-i-1)
			*out = item{kind: kRel, start: i, end: e + 1, ms: int64(v), far: e + 1}
			return true
		}
		return false
	case '<':
		// syslog priority "<13>"
		e := runDigits(s, i+1)
		if e > i+1 && e-i-1 <= 3 && e < len(s) && s[e] == '>' {
			v, _ := digits(s, i+1, e-i-1)
			*out = item{kind: kLevel, start: i, end: e + 1, level: syslogLevel(v), far: e + 1}
			return true
		}
		return false
	case '|':
		*out = item{kind: kSep, start: i, end: i + 1, far: far}
		return true
	}
	e, cls := wordEndClass(s, i)
	w := s[i:e]
	if w == "" {
		return false
	}
	far = max(far, e+1)
	if len(w) <= 3 && (w == "-" || w == "--" || w == "---" || w == ":" || w == "::" || w == ">" || w == "-->" || w == "=>") {
		*out = item{kind: kSep, start: i, end: e, far: far}
		return true
	}
	// key=value header fields (logfmt, slog text)
	eq := -1
	if cls&hEq != 0 {
		eq = strings.IndexByte(w, '=')
	}
	if eq > 0 {
		key := strings.ToLower(w[:eq])
		ve := e
		if eq+1 < len(w) && w[eq+1] == '"' {
			if q := strings.IndexByte(s[i+eq+2:], '"'); q >= 0 {
				ve = i + eq + 2 + q + 1
				far = max(far, ve)
			} else {
				far = farAll
			}
		}
		val := strings.Trim(s[i+eq+1:ve], `"`)
		switch key {
		case "msg", "message":
			*out = item{kind: kMsg, start: i, end: i + eq + 1, far: far}
			return true
		case "level", "lvl", "severity", "loglevel", "log.level":
			*out = item{kind: kKV, start: i, end: ve, level: levelWord(val), far: far}
			return true
		case "time", "ts", "timestamp", "t", "date", "@timestamp":
			*out = item{kind: kKV, start: i, end: ve, far: far}
			if _, ms, ok := parseTime(val, 0, year, tc); ok {
				out.ms = ms
			}
			return true
		case "pid", "tid", "thread", "logger", "caller", "component", "module", "source", "app", "service", "host", "hostname", "name":
			*out = item{kind: kKV, start: i, end: ve, far: far}
			return true
		}
		return false
	}
	// Pure number: pid, tid; or a percentage (FreeSWITCH's idle CPU,
	// "97.06%").
	if d := runDigits(s, i); d == e || isPercent(s, d, e) {
		*out = item{kind: kNum, start: i, end: e, far: far}
		return true
	}
	// A UUID opening the line: the session a line belongs to, before its
	// timestamp (FreeSWITCH's "c782923a-335e-… 2024-03-12 11:00:23.118340").
	if last == 0 && isUUID(w) {
		*out = item{kind: kNum, start: i, end: e, far: far}
		return true
	}
	// Level words: "ERROR", "E", "[error]" handled above, "ERROR:".
	core := w
	if n := len(core); n > 1 && core[n-1] == ':' {
		core = core[:n-1]
	}
	if lv := levelWord(core); lv != "" && (len(core) > 1 || e == len(s) || s[e] == ' ') {
		if len(core) == 1 {
			// A lone capital is a level only when something header-like
			// follows (ESP-IDF "I (12)", logcat "D Tag:").
			far = max(far, e+2)
			if !(e+1 < len(s) && (s[e+1] == '(' || s[e+1] == '[')) {
				ok, nf := nextIsComp(s, e)
				far = max(far, nf)
				if !ok {
					return false
				}
			}
		}
		*out = item{kind: kLevel, start: i, end: e, level: lv, far: far}
		return true
	}
	// Android brief "E/Tag(123):" or "E/Tag:".
	if len(w) > 2 && w[1] == '/' && levelWord(w[:1]) != "" {
		ce, nf := compEnd(s, i)
		far = max(far, nf)
		if ce > 0 {
			*out = item{kind: kComp, start: i, end: ce, level: levelWord(w[:1]), far: far}
			return true
		}
	}
	// A word between separators: "- app.worker -" (Python logging).
	if last == kSep && e < len(s) && s[e] == ' ' && e-i <= maxFieldLen {
		far = max(far, e+3) // whether e+2 < len(s)
		if e+2 < len(s) {
			k := wordEnd(s, e+1)
			far = max(far, k+1)
			if k > e+1 && k < len(s) && s[k] == ' ' {
				if sw := s[e+1 : k]; sw == "-" || sw == "|" || sw == "---" {
					*out = item{kind: kField, start: i, end: e, far: far}
					return true
				}
			}
		}
	}
	// Pipe-delimited field: "Step_LSC|".
	if e < len(s) && s[e] == '|' && e-i <= maxFieldLen {
		*out = item{kind: kField, start: i, end: e, far: far}
		return true
	}
	// Host after a syslog timestamp, when a component follows.
	if last == kTime && e-i <= maxFieldLen && (e == len(s) || s[e-1] != ':') {
		ok, nf := nextIsComp(s, e)
		far = max(far, nf)
		if ok {
			*out = item{kind: kHost, start: i, end: e, far: far}
			return true
		}
	}
	// Component "name:" or "name[pid]:" or "prog 1.2:" (two words), or
	// "name :" (Spring Boot).
	ce, nf := compEndAt(s, i, e, cls)
	if ce > 0 {
		*out = item{kind: kComp, start: i, end: ce, far: max(far, nf)}
		return true
	}
	return false
}

// logfmtStart reports whether line starts with a logfmt time or level
// key: "ts=", "time=", "t=", "level=", "lvl=".
func logfmtStart(line string) bool {
	for _, k := range [...]string{"ts=", "time=", "t=", "level=", "lvl="} {
		if strings.HasPrefix(line, k) {
			return true
		}
	}
	return false
}

// parseLogfmt reads a logfmt line's header fields (see logfmtStart) up to
// its "msg=", where
// the message starts; with no "msg=" among the first maxItems fields the
// line has no header (h is left zero).
//
//go:noinline
func parseLogfmt(line string, year int, tc *timeCache, h *Header) {
	if !logfmtStart(line) {
		return
	}
	var it item
	var f Format
	i := 0
	for n := 0; n < maxItems; n++ {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) || !scanItem(line, i, year, kKV, tc, &it) || it.kind != kKV && it.kind != kMsg {
			*h = Header{}
			return
		}
		f.apply(line, &it, h)
		if it.kind == kMsg {
			h.MsgStart = it.end
			return
		}
		i = it.end
	}
	*h = Header{}
}

// isPercent reports whether the word ending at e, whose digits run up to
// d, is a percentage: "97", an optional ".06", then "%".
func isPercent(s string, d, e int) bool {
	if e-1 <= d || s[e-1] != '%' {
		return false
	}
	if d == e-1 {
		return true
	}
	return s[d] == '.' && d+1 < e-1 && runDigits(s, d+1) == e-1
}

// isUUID reports whether w is a UUID in its canonical 8-4-4-4-12 form.
func isUUID(w string) bool {
	if len(w) != 36 {
		return false
	}
	for k := 0; k < 36; k++ {
		switch c := w[k]; k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
				return false
			}
		}
	}
	return true
}

// pidTime reads a timestamp behind a process id and a colon, as Zabbix
// prints "2047:20240529:085755.556"; it returns where the timestamp
// starts and ends.
func pidTime(s string, i, year int, tc *timeCache) (int, int, int64, bool) {
	d := runDigits(s, i)
	if d-i > 7 || d+1 >= len(s) || s[d] != ':' || !isDigit(s[d+1]) {
		return 0, 0, 0, false
	}
	e, ms, ok := parseTime(s, d+1, year, tc)
	return d + 1, e, ms, ok
}

// failedTimeFar bounds what a parseTime(s, i) that returned false read:
// s[:far]; farAll where that is not cheap to state.
func failedTimeFar(s string, i int) int {
	c := s[i]
	if !isDigit(c) {
		// A month or weekday name goes on into syslogTime; any other word
		// stops at s[i+3].
		if i+3 < len(s) && (s[i+3] == ' ' || s[i+3] == ',' || isAlpha(s[i+3])) && (month3(s, i) != 0 || day3(s, i)) {
			return farAll
		}
		return i + 4
	}
	e := runDigits(s, i)
	switch e - i {
	case 1, 2:
		// clock, monthDay and dayMonYear give up on the byte after the
		// digits unless it is one of ":-/"; clock's fast path also reads
		// s[i+2], and more when that is ':'.
		if e < len(s) && (s[e] == ':' || s[e] == '-' || s[e] == '/') || i+2 < len(s) && s[i+2] == ':' {
			return farAll
		}
		return i + 3
	case 4:
		if e < len(s) && (s[e] == '-' || s[e] == '/' || s[e] == '.') {
			return farAll
		}
	case 6:
		if e < len(s) && s[e] == ' ' {
			return farAll
		}
	case 8, 10, 13:
		return farAll
	}
	return e + 1
}

// nextIsComp reports whether a component starts after position e, and
// bounds what it read as scanItem's far does.
func nextIsComp(s string, e int) (bool, int) {
	j := e
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	far := j + 1
	if j >= len(s) || j == e {
		return false, far
	}
	// allow one separator such as "--" in "combo  -- root[2421]:"
	k := wordEnd(s, j)
	far = max(far, k+1)
	if k-j <= 3 && allDashes(s[j:k]) && k < len(s) {
		j = k
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		far = max(far, j+1)
	}
	ce, cf := compEnd(s, j)
	return ce > 0, max(far, cf)
}

func allDashes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '-' {
			return false
		}
	}
	return true
}

// compEnd returns the end of a component at i ("name:", "name[12]:",
// "prog 1.4.1:", "name :") or 0, and bounds what it read as scanItem's far
// does.
func compEnd(s string, i int) (int, int) {
	e, cls := wordEndClass(s, i)
	return compEndAt(s, i, e, cls)
}

// wordEndClass is wordEnd, with the header classes of the word's bytes.
func wordEndClass(s string, i int) (int, uint8) {
	var cls uint8
	for i < len(s) {
		k := hdrClass[s[i]]
		if k&hStop != 0 {
			break
		}
		cls |= k
		i++
	}
	return i, cls
}

// compEndAt is compEnd for the word s[i:e] whose classes are cls (s[e],
// the byte that ended the word, counts as read).
func compEndAt(s string, i, e int, cls uint8) (int, int) {
	far := e + 1
	w := s[i:e]
	if len(w) == 0 || len(w) > maxFieldLen || cls&hEq != 0 || w[0] == '"' {
		return 0, far
	}
	// "Tag( 1702):" — a padded pid in parentheses
	if cls&hOpen != 0 && cls&hClose == 0 {
		if c := strings.IndexByte(s[e:min(len(s), e+12)], ')'); c >= 0 {
			j := e + c + 1
			far = max(far, j+2)
			if j < len(s) && s[j] == ':' && (j+1 == len(s) || s[j+1] == ' ') {
				return j + 1, far
			}
		} else {
			far = max(far, e+13) // the whole window, and whether s ended in it
		}
	}
	if len(w) > 1 && w[len(w)-1] == ':' && w[len(w)-2] != ':' && (e == len(s) || isSpace(s[e])) {
		return e, far
	}
	// "name :" — Spring Boot pads the logger and puts a lone colon after.
	j := e
	for j < len(s) && s[j] == ' ' {
		j++
	}
	far = max(far, j+1)
	if j > e && j < len(s) && s[j] == ':' {
		far = max(far, j+2)
		if j+1 == len(s) || s[j+1] == ' ' {
			return j + 1, far
		}
	}
	// two words, the second ending in ':' ("syslogd 1.4.1:")
	if j > e && j < len(s) && e-i <= 24 && cls&(hParen|hOther) == 0 {
		e2 := wordEnd(s, j)
		far = max(far, e2+1)
		w2 := s[j:e2]
		if len(w2) > 1 && len(w2) <= 24 && w2[len(w2)-1] == ':' && (e2 == len(s) || isSpace(s[e2])) && hasDigit(w2) {
			return e2, far
		}
	}
	return 0, far
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// relClock reads a kernel-style uptime "12.345678" in seconds.
func relClock(s string) (int64, bool) {
	if len(s) > 0 && s[0] < 0x80 && !isDigit(s[0]) && asciiSpace[s[0]] == 0 {
		return 0, false // TrimSpace would keep this byte first: no digits
	}
	s = strings.TrimSpace(s)
	d := runDigits(s, 0)
	if d == 0 || d >= len(s) || s[d] != '.' {
		return 0, false
	}
	f := runDigits(s, d+1)
	if f != len(s) || f == d+1 {
		return 0, false
	}
	sec, _ := digits(s, 0, min(d, 12))
	frac, _ := digits(s, d+1, min(3, f-d-1))
	for k := f - d - 1; k < 3; k++ {
		frac *= 10
	}
	return int64(sec)*1000 + int64(frac), true
}

func syslogLevel(p int) string {
	switch p % 8 {
	case 0, 1, 2:
		return LevelFatal
	case 3:
		return LevelError
	case 4:
		return LevelWarn
	case 5, 6:
		return LevelInfo
	}
	return LevelDebug
}

// asciiSpace marks the ASCII bytes strings.TrimSpace trims.
var asciiSpace = [256]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}

// levelFirst marks the first letters (either case) of the level words of
// two or more letters that levelWord knows.
var levelFirst = func() (t [256]uint8) {
	for _, c := range "fceapwindtsv" {
		t[c], t[c-'a'+'A'] = 1, 1
	}
	return t
}()

// levelWords maps the severity words of two or more letters, lower case,
// to their level.
var levelWords = map[string]string{
	"fatal": LevelFatal, "crit": LevelFatal, "critical": LevelFatal, "emerg": LevelFatal,
	"emergency": LevelFatal, "alert": LevelFatal, "panic": LevelFatal, "fatl": LevelFatal,
	"error": LevelError, "err": LevelError, "severe": LevelError, "eror": LevelError, "fail": LevelError,
	"warn": LevelWarn, "warning": LevelWarn, "wrn": LevelWarn,
	"info": LevelInfo, "inf": LevelInfo, "notice": LevelInfo, "information": LevelInfo, "informational": LevelInfo,
	"debug": LevelDebug, "dbg": LevelDebug, "fine": LevelDebug, "debg": LevelDebug, "dbug": LevelDebug,
	"trace": LevelTrace, "trc": LevelTrace, "trce": LevelTrace, "finer": LevelTrace, "finest": LevelTrace, "verbose": LevelTrace,
}

// levelCands lists the words of levelWords by their first two letters
// (their low five bits, so either case): most words are rejected on those,
// and the rest compare with a handful of candidates.
var levelCands = func() (t [32][32][]levelCand) {
	for w, lv := range levelWords {
		t[w[0]&31][w[1]&31] = append(t[w[0]&31][w[1]&31], levelCand{w, lv})
	}
	return t
}()

type levelCand struct{ word, level string }

// levelWord normalises a severity word; "" when w is none.
func levelWord(w string) string {
	if len(w) == 1 {
		switch w[0] {
		case 'F', 'A':
			return LevelFatal
		case 'E':
			return LevelError
		case 'W':
			return LevelWarn
		case 'I':
			return LevelInfo
		case 'D':
			return LevelDebug
		case 'V', 'T':
			return LevelTrace
		}
		return ""
	}
	if len(w) == 0 || len(w) > 11 || levelFirst[w[0]] == 0 {
		return ""
	}
	cands := levelCands[(w[0]|0x20)&31][(w[1]|0x20)&31]
	if len(cands) == 0 {
		return ""
	}
	var b [11]byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	for _, c := range cands {
		if c.word == string(b[:len(w)]) {
			return c.level
		}
	}
	return ""
}

// byteAt returns s[0], or 0 for "".
func byteAt(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}
