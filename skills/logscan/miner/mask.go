package miner

import "strings"

// The masker turns a message into a sequence of pieces with variables
// replaced by "<*>", in one pass over the bytes, without regexps. Pieces
// are separated by ' ' where the message had white space and by glue (0x01)
// where a word was split (after '=', ',', ';', ':', '|', '#', '@' and an
// opening bracket), so "uid=0" is two pieces, "uid=" and "<*>", and
// "user=root" keeps its key when its value varies. The result is the key
// of a leaf and the token sequence the clusterer compares.

const (
	glue         = '\x01'
	wild         = "<*>"
	maxMsgBytes  = 4096 // longer messages are masked up to here, then "<*>"
	maxQuoteSpan = 256  // a quoted value spanning spaces is followed this far
)

// isWordSep: white space, and the glue byte itself, which must never reach
// a key from the input.
func isWordSep(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' || c == glue
}

func isPieceDelim(c byte) bool {
	switch c {
	case '=', ',', ';', ':', '|', '#', '@', '(', '[', '{':
		return true
	}
	return false
}

func isOpenPunct(c byte) bool {
	switch c {
	case '(', '[', '{', '<', '"', '\'', '`':
		return true
	}
	return false
}

func isClosePunct(c byte) bool {
	switch c {
	case ')', ']', '}', '>', '"', '\'', '`', ',', '.', ';', ':', '!', '?', '=', '|', '#', '@', '(', '[', '{':
		return true
	}
	return false
}

type masker struct {
	out      []byte
	lastWild bool // the last emitted word was exactly "<*>"
	pieceW   bool // the last emitted piece ended in a wildcard + punctuation only
	// kept lists the pieces holding digits that were copied into out as
	// written (byte spans of the message); the skeleton cache compares them.
	// Not recorded while noKept is set.
	kept   []span
	noKept bool
}

// span is a byte range [start, end).
type span struct{ start, end int32 }

// mask writes the masked form of msg into m.out (reset first).
func (m *masker) mask(msg string) []byte {
	m.out = m.out[:0]
	m.kept = m.kept[:0]
	m.lastWild, m.pieceW = false, false
	n := len(msg)
	cut := false
	if n > maxMsgBytes {
		n, cut = maxMsgBytes, true
	}
	i := 0
	for i < n {
		for i < n && isWordSep(msg[i]) {
			i++
		}
		if i >= n {
			break
		}
		s := i
		for i < n && !isWordSep(msg[i]) {
			i++
		}
		// key="value with spaces": follow the quote.
		if q := indexQuoteOpen(msg[s:i]); q >= 0 {
			if e := closeQuote(msg, s+q+1, n); e > i {
				i = e
				for i < n && !isWordSep(msg[i]) {
					i++
				}
			}
		}
		m.word(msg[s:i], s)
	}
	if cut {
		m.word(wild, -1)
	}
	return m.out
}

// indexQuoteOpen finds `="` in w whose closing quote is not in w.
func indexQuoteOpen(w string) int {
	for k := 0; k+1 < len(w); k++ {
		if w[k] == '=' && w[k+1] == '"' {
			for j := k + 2; j < len(w); j++ {
				if w[j] == '"' {
					return -1
				}
			}
			return k + 1
		}
	}
	return -1
}

func closeQuote(s string, i, n int) int {
	lim := min(n, i+maxQuoteSpan)
	for j := i + 1; j < lim; j++ {
		if s[j] == '"' {
			return j + 1
		}
	}
	return -1
}

func (m *masker) sep(c byte) {
	if len(m.out) > 0 {
		m.out = append(m.out, c)
	}
}

// Byte classes for the word fast path.
const (
	cPlain   = 1 << iota // letters and harmless punctuation
	cSpecial             // digits, '/', '\\', delimiters, brackets, quotes
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isAlpha(b), b == '.', b == '-', b == '_', b == '!', b == '?', b == '*', b == '+', b == '&', b == '%', b == '$', b == '~', b >= 0x80:
			t[c] = cPlain
		default:
			t[c] = cSpecial
		}
	}
	return t
}()

// word masks one white-space separated word; off is its offset in the
// message (-1 when it is not from the message).
func (m *masker) word(w string, off int) {
	special := uint8(0)
	for i := 0; i < len(w); i++ {
		special |= byteClass[w[i]]
	}
	if special&cSpecial == 0 {
		// Fast path: letters and plain punctuation only, the common case.
		// Only booleans and month/day names are variables here.
		a, b := 0, len(w)
		for b > a && isClosePunct(w[b-1]) {
			b--
		}
		m.sep(' ')
		if b > a && variable(w[a:b]) {
			m.out = append(m.out, wild...)
			m.out = append(m.out, w[b:]...)
			m.pieceW = true
		} else {
			m.out = append(m.out, w...)
			m.pieceW = false
		}
		m.lastWild = false
		return
	}
	// Trim surrounding punctuation to test the word as a whole.
	a, b := 0, len(w)
	for a < b && isOpenPunct(w[a]) {
		a++
	}
	for b > a && isClosePunct(w[b-1]) {
		b--
	}
	core := w[a:b]
	if core == "" && (w == "()" || w == "[]" || w == "{}") {
		m.sep(' ')
		m.out = append(m.out, w[0])
		m.out = append(m.out, wild...)
		m.out = append(m.out, w[1])
		m.lastWild, m.pieceW = false, false
		return
	}
	if core != "" && (len(core) > 3 && hasScheme(core) || strings.IndexByte(core, '=') < 0 && wholeVariable(core)) {
		if a == 0 && b == len(w) {
			if m.lastWild {
				return // collapse runs of wildcards
			}
			m.sep(' ')
			m.out = append(m.out, wild...)
			m.lastWild, m.pieceW = true, true
			return
		}
		m.sep(' ')
		m.out = append(m.out, w[:a]...)
		m.out = append(m.out, wild...)
		m.out = append(m.out, w[b:]...)
		m.lastWild, m.pieceW = false, true
		return
	}
	// Split into pieces after delimiter runs.
	first := true
	p := 0
	for p < len(w) {
		q := p
		if p == 0 {
			// opening brackets at the start of a word stay with the piece
			// that follows: "(uid=" not "(" + "uid="
			for q < len(w) && isPieceDelim(w[q]) {
				q++
			}
		}
		afterEq := p > 0 && w[p-1] == '='
		if afterEq {
			// a value runs to the next ',', ';' or '|': "ws=WorkSource{1}"
			for q < len(w) && w[q] != ',' && w[q] != ';' && w[q] != '|' && w[q] != '=' {
				q++
			}
		} else {
			for q < len(w) && !isPieceDelim(w[q]) {
				q++
			}
		}
		for q < len(w) && isPieceDelim(w[q]) {
			q++
		}
		po := -1
		if off >= 0 {
			po = off + p
		}
		m.piece(w[p:q], first, afterEq, po)
		first = false
		p = q
	}
	m.lastWild = false
}

// piece masks one piece of a word; first tells whether it starts the word;
// off is its offset in the message.
func (m *masker) piece(pc string, first, afterEq bool, off int) {
	a, b := 0, len(pc)
	for a < b && isOpenPunct(pc[a]) {
		a++
	}
	for b > a && isClosePunct(pc[b-1]) {
		b--
	}
	core := pc[a:b]
	isVar := core != "" && (variable(core) || (afterEq && (pc[0] == '"' || hasDigit(core))))
	if isVar && !first && m.pieceW && a == 0 && mergeable(m.out) {
		// "<*>:" followed by "50010:" — one variable; keep the new suffix.
		m.trimPunctAfterWild()
		m.out = append(m.out, pc[b:]...)
		return
	}
	if first {
		m.sep(' ')
	} else {
		m.out = append(m.out, glue)
	}
	if !isVar {
		m.out = append(m.out, pc...)
		m.pieceW = false
		if off >= 0 && !m.noKept && hasDigit(pc) {
			m.kept = append(m.kept, span{int32(off), int32(off + len(pc))})
		}
		return
	}
	m.out = append(m.out, pc[:a]...)
	m.out = append(m.out, wild...)
	m.out = append(m.out, pc[b:]...)
	m.pieceW = true
}

// mergeable reports whether the output ends in "<*>" plus only joining
// punctuation (. : / @ # - _ and glue), so a following variable joins it.
func mergeable(out []byte) bool {
	k := len(out) - 1
	for k >= 0 {
		switch out[k] {
		case '.', ':', '/', '@', '#', '-', '_', glue:
			k--
			continue
		}
		break
	}
	return k >= 2 && out[k] == '>' && out[k-1] == '*' && out[k-2] == '<'
}

func (m *masker) trimPunctAfterWild() {
	for len(m.out) > 0 && m.out[len(m.out)-1] != '>' {
		m.out = m.out[:len(m.out)-1]
	}
}

// wholeVariable reports whether a whole word (punctuation trimmed) is one
// variable: URL, path, IP[:port], UUID, time, or digits with joining
// punctuation ("1.5", "10:00:01", "2024-01-01").
func wholeVariable(s string) bool {
	if len(s) > 3 && hasScheme(s) {
		return true
	}
	if isPath(s) {
		return true
	}
	nd, other := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			nd++
		case c == '.' || c == ':' || c == '-' || c == '/' || c == '+' || c == ',' || c == '_':
		case (c|0x20) >= 'a' && (c|0x20) <= 'f':
			other++
		default:
			return false
		}
	}
	if nd == 0 {
		return false
	}
	// hex runs (ids, hashes) and IPv6 count when digits are present
	return other == 0 || nd+other >= 8
}

func hasScheme(s string) bool {
	for i := 0; i+2 < len(s) && i < 16; i++ {
		c := s[i]
		if c == ':' {
			return i > 0 && s[i+1] == '/' && s[i+2] == '/'
		}
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return false
}

func isPath(s string) bool {
	if len(s) < 2 {
		return false
	}
	switch {
	case s[0] == '/' && s[1] != '/' && s[1] != '>':
		return true
	case s[0] == '~' && s[1] == '/':
		return true
	case s[0] == '.' && (s[1] == '/' || (len(s) > 2 && s[1] == '.' && s[2] == '/')):
		return true
	case len(s) > 2 && isAlpha(s[0]) && s[1] == ':' && s[2] == '\\':
		return true
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == '\\' {
			slashes++
		}
	}
	return slashes >= 2
}

// variable reports whether a piece's core is a variable value.
func variable(s string) bool {
	nd, nl := 0, 0
	hex, slash, colon := true, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			nd++
		case isAlpha(c):
			nl++
			if (c | 0x20) > 'f' {
				hex = false
			}
		default:
			switch c {
			case '/', '\\':
				slash = true
			case ':':
				colon = true
			}
			if c != '-' && c != '_' && c != '.' {
				hex = false
			}
		}
	}
	if nd > 0 {
		return variableDigits(s, nd, nl, hex) || wholeVariable(s)
	}
	if slash && isPath(s) || colon && len(s) > 3 && hasScheme(s) {
		return true
	}
	if nl != len(s) {
		return false
	}
	switch s {
	case "true", "false", "True", "False", "TRUE", "FALSE", "null", "nil", "None", "NULL", "undefined":
		return true
	}
	if (len(s) == 3 || len(s) >= 6) && s[0] >= 'A' && s[0] <= 'Z' {
		if month3(s, 0) != 0 && (len(s) == 3 || isMonthName(s)) {
			return true
		}
		if day3(s, 0) && (len(s) == 3 || isDayName(s)) {
			return true
		}
	}
	return false
}

// variableDigits is variable's verdict on a piece holding nd > 0 digits
// and nl ASCII letters, hex when no letter is past 'f' and nothing but
// '-', '_' and '.' joins them, before wholeVariable's: the skeleton calls
// it with the counts of a word of letters and digits only, for which
// wholeVariable adds nothing.
func variableDigits(s string, nd, nl int, hex bool) bool {
	// Brain's rule: at least 30% digits; long hex ids too.
	if nd*10 >= 3*(nd+nl) || (hex && nd+nl >= 8) {
		return true
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return true
	}
	return nd+nl == len(s) && randomID(s)
}

// randomID reports whether s, ASCII letters and digits with at least one
// digit, reads as a generated id rather than a word: ten bytes or more,
// letters of one case, and a letter after a digit ("jhbr550gavnq",
// "1ycyzkqzjpijr": base-36 session and request ids). Brain's share of
// digits misses such ids, and the tree then meets every one as a new
// shape. Names keep their digits at the end ("partition12", "sha256") or
// mix cases ("Log4jFactory").
func randomID(s string) bool {
	if len(s) < 10 {
		return false
	}
	lower, upper, inside := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
			inside = inside || i > 0 && isDigit(s[i-1])
		case c >= 'A' && c <= 'Z':
			upper = true
			inside = inside || i > 0 && isDigit(s[i-1])
		}
	}
	return inside && !(lower && upper)
}

var fullMonths = [...]string{"January", "February", "March", "April", "June", "July", "August", "September", "October", "November", "December"}
var fullDays = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func isMonthName(s string) bool {
	for _, m := range fullMonths {
		if s == m {
			return true
		}
	}
	return false
}

func isDayName(s string) bool {
	for _, d := range fullDays {
		if s == d {
			return true
		}
	}
	return false
}

// punctSig returns the punctuation around a piece's core: a template piece
// "<*>)" and a shape piece "host)" share the signature ")".
func punctSig(s string) (string, string) {
	if i := strings.Index(s, wild); i >= 0 {
		return s[:i], s[i+len(wild):]
	}
	a, b := 0, len(s)
	for a < b && isOpenPunct(s[a]) {
		a++
	}
	for b > a && isClosePunct(s[b-1]) {
		b--
	}
	if a == b {
		return s, "" // all punctuation: no core
	}
	return s[:a], s[b:]
}

// generalised returns the template piece covering pieces t and s: "<*>"
// with the punctuation both share kept around it.
func generalised(t, s string) string {
	tp, ts := punctSig(t)
	sp, ss := punctSig(s)
	if tp == sp && ts == ss && !(tp == t && ts == "") {
		return tp + wild + ts
	}
	return wild
}
