package miner

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"strings"
)

// The skeleton cache lets Add skip masking for a message whose shape it has
// seen: most lines of a log repeat a few shapes and differ only in their
// numbers and ids. A message's skeleton keeps every byte except these:
//
//   - in a word (white-space separated, as the masker splits them) with
//     digits but no ASCII letter, each run of digits becomes one '1':
//     "10.0.0.7:8080" and "192.168.1.20:80" share "1.1.1.1:1";
//   - in a word with digits and letters, each run of letters and digits
//     that holds a digit is rewritten byte for byte, keeping its length and
//     byte classes: digits become '1', a-f 'a', A-F 'A', other letters 'g'
//     or 'G', except 'x', 'X' and a digit before them ("0x1f" is hex, "5x"
//     is not); runs without digits ("Dec", "true") stay as written;
//   - a message containing `="` (the masker then follows a quoted value
//     across spaces, up to a byte limit) is rewritten that way everywhere,
//     and so is a letter-free word containing "://" (schemes are recognised
//     within a byte limit);
//   - outside that exact mode, a word holding a digit that the masker
//     replaces whole, whatever its neighbours (no '=', no punctuation
//     around it, and wholeVariable: an IP:port, a hex id, a path, a URL),
//     becomes the one byte skelVar, so ids of every length and letter
//     pattern share a skeleton; a word of ASCII letters and digits only
//     that the masker takes as one variable piece (variable: Brain's 30%
//     of digits, "0x"), such as a base-36 session id, becomes skelPVar
//     (the masker does not collapse it into a neighbouring variable, so it
//     is told apart from skelVar). A message with a literal skelVar or
//     skelPVar byte (never valid UTF-8, which the engine's lines are) is
//     not cached.
//
// The masker decides from byte classes, digit and letter counts, run
// lengths, month, day and boolean names (never next to a digit) and the
// "0x" prefix, so two messages with the same skeleton are split and masked
// alike. Their keys can still differ where a piece holding digits was kept
// as written ("ssh2", "jk2_init()"): the masker reports those pieces, the
// cache entry remembers where they are in the skeleton, and a hit also
// needs their bytes to be equal. FuzzSkeleton checks all of this against
// the masker itself. A mode byte at the start tells the length rules apart.
//
// Where the CPU has AVX2, a message of up to 64 bytes is classified whole
// first (classify: one bit per byte for separators, digits, letters and
// the rest), and the words with digits, their bounds, flags and counts
// come from those masks (skeletonMasks) instead of from reading their
// bytes one by one; FuzzSkeleton checks both paths against each other.

const (
	maxSkeletons     = 1 << 16  // cached skeletons and kept-byte variants; the cache restarts past it
	maxSkeletonBytes = 16 << 20 // bytes of cached keys; likewise

	// When fewer than 1 in skelMinHitShare lookups of a window of
	// skelWindow hit (every line a new shape, e.g. free-text names), the
	// cache only costs time: Add bypasses it for skelPause lines, then
	// tries again.
	skelDoorSlots   = 1 << 15 // skeletons remembered as seen once (a power of two)
	skelDoorFree    = 64      // entries admitted before the second-sighting rule starts
	skelWindow      = 8192
	skelMinHitShare = 2
	skelPause       = 1 << 18
)

// Skeleton byte classes: one kind (the low four bits) and flags.
const (
	skSep    = 1 << iota // the masker's word separators
	skDigit              // '0'..'9'
	skLetter             // ASCII letters
	skEq                 // '=': `="` switches the whole message to exact mode
	skNonHex             // not a digit, hex letter or joiner: the word is no hex id or number
	skSlash              // '/', '\\': the word may be a path or URL
	skBad                // skelVar itself: the message is not cached
	skOther              // not a separator, digit or ASCII letter: the word is no alphanumeric piece

	skKind = skSep | skDigit | skLetter | skEq
)

// skelVar stands for a word the masker replaces whole, skelPVar for an
// alphanumeric word it replaces as one piece (see above).
const (
	skelVar  = 0xff
	skelPVar = 0xfe
)

var skelClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isWordSep(b):
			t[c] = skSep
		case isDigit(b):
			t[c] = skDigit
		case isAlpha(b):
			t[c] = skLetter
		case b == '=':
			t[c] = skEq
		}
		switch {
		case isWordSep(b), isDigit(b), (b|0x20) >= 'a' && (b|0x20) <= 'f', strings.IndexByte(".:-/+,_", b) >= 0:
		default:
			t[c] |= skNonHex
		}
		if b == '/' || b == '\\' {
			t[c] |= skSlash
		}
		if t[c]&(skSep|skDigit|skLetter) == 0 {
			t[c] |= skOther
		}
	}
	t[skelVar] |= skBad
	t[skelPVar] |= skBad
	return t
}()

// wholeWord reports whether the masker replaces word w (no separators in
// it) whole, whatever the words around it: it is one variable with no
// punctuation to trim and no '=' (masker.word's first branch).
func wholeWord(w string) bool {
	return w != "" && !isOpenPunct(w[0]) && !isClosePunct(w[len(w)-1]) &&
		strings.IndexByte(w, '=') < 0 && wholeVariable(w)
}

// wholeWordFlags is wholeWord(w) for a word whose bytes have the
// skeleton flags acc and hold nd digits and nl ASCII letters: without '/'
// or '\\' it can be no URL or path, so only wholeVariable's count of
// digits and hex letters decides, and a byte outside digits, hex letters
// and joiners rules it out.
func wholeWordFlags(w string, acc uint8, nd, nl int) bool {
	if acc&skSlash != 0 {
		return wholeWord(w)
	}
	if acc&skNonHex != 0 {
		return false
	}
	// Only digits, hex letters and joiners: no punctuation to trim but a
	// closing ',', '.' or ':', and no '='.
	if c := w[len(w)-1]; c == ',' || c == '.' || c == ':' {
		return false
	}
	return nd > 0 && (nl == 0 || nd+nl >= 8)
}

// skelMap rewrites the bytes of a run holding a digit.
var skelMap = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isDigit(b):
			b = '1'
		case b == 'x' || b == 'X':
		case b >= 'a' && b <= 'f':
			b = 'a'
		case b >= 'A' && b <= 'F':
			b = 'A'
		case b >= 'a' && b <= 'z':
			b = 'g'
		case b >= 'A' && b <= 'Z':
			b = 'G'
		}
		t[c] = b
	}
	return t
}()

// wordPos maps a rewritten-in-place word of the skeleton to the message:
// where it starts in the skeleton and in the message, and its length.
type wordPos struct{ skel, msg, n int32 }

// skeleton appends msg's skeleton to dst and the positions of its
// rewritten-in-place words, from the skeleton's start, to words. ok is
// false for a message the cache must not serve (longer than the
// masker's limit).
func skeleton(dst []byte, words []wordPos, msg string) ([]byte, []wordPos, bool) {
	if len(msg) > maxMsgBytes {
		return dst, words, false
	}
	out, w, st := skeletonMode(dst, words, msg, false)
	if st == skelExact {
		out, w, st = skeletonMode(dst, words, msg, true)
	}
	if st == skelBad {
		return dst, words, false
	}
	return out, w, true
}

// skeletonMode outcomes.
const (
	skelDone  = iota
	skelExact // `="` seen outside exact mode: start again in it
	skelBad   // a literal skelVar byte: not cacheable
)

// skeletonMode builds the skeleton with exact mode on or off; with it off
// it stops and reports skelExact when the message turns out to need it. Bytes
// are copied as they are up to a digit (copyPlain, the common case); a word
// holding digits is rewritten from its first digit to its end (digitWord).
// skeletonRef in the tests is the plain, word-by-word statement.
func skeletonMode(dst []byte, words []wordPos, msg string, exact bool) ([]byte, []wordPos, int) {
	base := len(dst)
	n := len(msg)
	// eight bytes of room past the skeleton's longest (see copySeg)
	if cap(dst)-base < n+9 {
		dst = append(dst[:cap(dst)], make([]byte, n+9)...)
	}
	out := dst[base : base+n+1]
	if exact {
		out[0] = 'E'
	} else {
		out[0] = 'C'
	}
	if useClassify && !exact && n > 0 && n <= 64 {
		var m byteMasks
		classify(msg, &m)
		if out, words, st := skeletonMasks(out[:n+9], words, msg, &m); st != skelSlow {
			if st != skelDone {
				return dst[:base], words, st
			}
			return dst[:base+len(out)], words, skelDone
		}
	}
	i, k := 0, 1
	for {
		i, k = copyPlain(out, msg, i, k, !exact)
		if i == n {
			break
		}
		if msg[i] == '=' {
			return dst[:base], words, skelExact // `="`: start again in exact mode
		}
		if msg[i] == skelVar || msg[i] == skelPVar {
			return dst[:base], words, skelBad
		}
		var st int
		i, k, words, st = digitWord(out, msg, i, k, exact, words)
		if st != skelDone {
			return dst[:base], words, st
		}
	}
	return dst[:base+k], words, skelDone
}

// useClassify turns skeletonMasks on where the platform has classify (a
// variable so tests can compare it with the byte-by-byte path).
var useClassify = haveClassify

// byteMasks holds, for up to 64 bytes of a message, one bit per byte (bit
// i for byte i) in each class: the masker's word separators, digits, ASCII
// letters, hex letters (a-f, A-F), '=', '"', '/' and '\\', the joiners
// of a hex id or number (".:-/+,_"), and bytes outside ASCII. classify
// sets them, sixty-four bytes at once; the field order is its contract.
type byteMasks struct {
	sep, digit, letter, hexLetter, eq, quote, slash, joiner, high uint64
	// buf holds the 64 bytes classified, and room to read eight bytes
	// from any of them
	buf [72]byte
}

// skelSlow: skeletonMasks leaves this message to the byte-by-byte path (it
// holds a literal skelVar or skelPVar byte, which is never cached). Other
// bytes outside ASCII are neither separators, digits nor letters, in the
// masks as in skelClass.
const skelSlow = -1

// skeletonMasks is skeletonMode outside exact mode for a message of 1 to
// 64 bytes whose classes m holds: the bounds, flags and counts of each
// word with a digit come from the masks rather than from reading its
// bytes one by one, and the bytes between such words are copied whole.
// out is as skeletonMode's with eight bytes more (len(msg)+9); it returns
// the skeleton's part of out.
func skeletonMasks(out []byte, words []wordPos, msg string, m *byteMasks) ([]byte, []wordPos, int) {
	n := len(msg)
	valid := lowBits(n)
	if m.high&valid != 0 && (strings.IndexByte(msg, skelVar) >= 0 || strings.IndexByte(msg, skelPVar) >= 0) {
		return out, words, skelSlow
	}
	if (m.eq<<1)&m.quote&valid != 0 {
		return out, words, skelExact
	}
	sep, digit, letter := m.sep&valid, m.digit&valid, m.letter&valid
	other := valid &^ (sep | digit | letter)
	nonHex := valid &^ (sep | digit | m.hexLetter | m.joiner)
	slash := m.slash & valid
	i, k := 0, 1 // out[0] holds the mode byte
	for d := digit; d != 0; {
		p := bits.TrailingZeros64(d)
		below := uint64(1)<<(p&63) - 1
		// after the last separator before p (0 if none), up to the
		// first after it (n if none: TrailingZeros64(0) is 64)
		wm := bits.Len64(sep & below)
		after := sep &^ below
		we := min(bits.TrailingZeros64(after), n)
		upTo := after&-after - 1 // the bits below we (all of them if none)
		word := upTo & (^uint64(0) << (wm & 63))
		acc := uint8(skDigit)
		if letter&word != 0 {
			acc |= skLetter
		}
		if other&word != 0 {
			acc |= skOther
		}
		if nonHex&word != 0 {
			acc |= skNonHex
		}
		if slash&word != 0 {
			acc |= skSlash
		}
		k = copySeg(out, &m.buf, i, wm, k)
		w := msg[wm:we]
		if v := wordVar(w, acc, bits.OnesCount64(digit&word), bits.OnesCount64(letter&word)); v != 0 {
			out[k] = v
			i, k = we, k+1
		} else if acc&skLetter != 0 && (letter<<1|letter>>1)&digit&word == 0 {
			// No letter next to a digit ("status=200", "app-37"): every
			// run holding a digit is digits only, so each digit becomes
			// '1' and every other byte stays (rewriteWord's outcome).
			ws := k
			k = copySeg(out, &m.buf, wm, we, k)
			for dd := digit & word; dd != 0; dd &= dd - 1 {
				out[ws+bits.TrailingZeros64(dd)-wm] = '1'
			}
			words = append(words, wordPos{int32(ws), int32(wm), int32(we - wm)})
			i = we
		} else {
			ws := k
			k = copySeg(out, &m.buf, wm, p, k)
			i, k, words, _ = rewriteWord(out, msg, wm, p, ws, acc, false, words)
		}
		d &^= upTo
	}
	k = copySeg(out, &m.buf, i, n, k)
	return out[:k], words, skelDone
}

// copySeg copies the message's bytes i to j (< 64), held in buf, to
// out[k:] and returns where they end in out. It copies eight bytes at a
// time and so may write seven bytes past that end: out has eight bytes
// more than the skeleton can take (see skeletonMode).
func copySeg(out []byte, buf *[72]byte, i, j, k int) int {
	for ; i < j; i, k = i+8, k+8 {
		binary.LittleEndian.PutUint64(out[k:], binary.LittleEndian.Uint64(buf[i&63:]))
	}
	return k - (i - j)
}

// lowBits is a mask of the n lowest bits (0 <= n <= 64).
func lowBits(n int) uint64 {
	return ^uint64(0) >> (64 - uint(n))
}

// copyPlain copies msg[i:] to out[k:] up to the first digit or skelVar,
// or the first `="` when stopEq. It tests eight bytes at a time (swarStop)
// and copies them whole, falling back to one byte at a time where a word
// holds a digit, '=', or a byte outside ASCII. Kept small and out of line
// so that its loop runs in registers.
//
// Eight bytes may be written at out[k:] where fewer are kept: out holds
// len(msg)+1 bytes and k never runs ahead of i+1, so the store stays in
// out, and bytes past the skeleton's end are never read.
//
//go:noinline
func copyPlain(out []byte, msg string, i, k int, stopEq bool) (int, int) {
	for i < len(msg) {
		if i+8 <= len(msg) && k+8 <= len(out) {
			x := load64(msg, i)
			binary.LittleEndian.PutUint64(out[k:], x)
			stop := swarStop(x)
			if stop == 0 {
				i += 8
				k += 8
				continue
			}
			z := bits.TrailingZeros64(stop) >> 3
			i += z
			k += z
		}
		c := msg[i]
		t := skelClass[c]
		if t&(skDigit|skBad|skEq) != 0 {
			if t&skEq == 0 || stopEq && i+1 < len(msg) && msg[i+1] == '"' {
				break
			}
		}
		out[k] = c
		k++
		i++
	}
	return i, k
}

// load64 reads msg[i:i+8] little-endian (one load once compiled).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarStop marks (the high bit of each byte) the bytes of x copyPlain must
// look at one by one: digits, '=', and any byte outside ASCII (skelVar is
// one). Once the bytes outside ASCII are set aside the sums below carry
// no bit from one byte into the next.
func swarStop(x uint64) uint64 {
	hi := x & swarHigh
	a := x &^ swarHigh                // the low seven bits of each byte
	ge0 := a + (0x80-'0')*swarOnes    // high bit set where a byte >= '0'
	ge10 := a + (0x80-'9'-1)*swarOnes // where a byte > '9'
	eq := a ^ '='*swarOnes
	ne := eq + 0x7f*swarOnes // high bit set where the byte is not '='
	return hi | (ge0&^ge10|^ne)&swarHigh
}

// digitWord rewrites a word from its first digit, msg[i], to its end; the
// word's bytes before i are already in out, as written, up to k. Outside
// exact mode a word the masker replaces whole becomes skelVar. A word
// kept exact (letters, "://", exact mode) is recorded in words; in a
// letter-free one each run of digits becomes one '1'. It returns where the
// word ends in msg and out, and skelExact for a `="` outside exact mode or
// skelBad for a skelVar byte.
func digitWord(out []byte, msg string, i, k int, exact bool, words []wordPos) (int, int, []wordPos, int) {
	// The word's flags decide first: a word replaced whole (most numbers,
	// addresses, ids) needs no rewriting.
	wm := i
	var acc uint8 // the flags of the word's bytes
	for wm > 0 {
		t := skelClass[msg[wm-1]]
		if t&skSep != 0 {
			break
		}
		acc |= t
		wm--
	}
	ws := k - (i - wm)
	we := i
	for we < len(msg) {
		t := skelClass[msg[we]]
		if t&skSep != 0 {
			break
		}
		acc |= t
		we++
	}
	if acc&skBad != 0 {
		return we, k, words, skelBad
	}
	if !exact {
		if v := wordVar(msg[wm:we], acc, -1, -1); v != 0 {
			out[ws] = v
			return we, ws + 1, words, skelDone
		}
	}
	return rewriteWord(out, msg, wm, i, ws, acc, exact, words)
}

// wordVar returns what a word with a digit, w, becomes outside exact mode
// when the masker replaces it whole, skelVar or skelPVar, or 0 when it is
// rewritten in place. acc holds its flags; nd and nl count its digits and
// ASCII letters, or are -1 when not counted yet.
func wordVar(w string, acc uint8, nd, nl int) byte {
	// Only digits, letters and joiners (hex ids, numbers, IPs) or only
	// digits and letters (a variable piece): the counts decide.
	if acc&(skSlash|skNonHex) == 0 || acc&skOther == 0 {
		if nd < 0 {
			nd, nl = 0, 0
			for j := 0; j < len(w); j++ {
				t := skelClass[w[j]]
				nd += int(t>>1) & 1 // skDigit
				nl += int(t>>2) & 1 // skLetter
			}
		}
		if wholeWordFlags(w, acc, nd, nl) {
			return skelVar
		}
		// A word of ASCII letters and digits only: the masker neither
		// trims it nor splits it into pieces, and for it variable is
		// variableDigits.
		if acc&skOther == 0 && variableDigits(w, nd, nl, acc&skNonHex == 0) {
			return skelPVar
		}
		return 0
	}
	if acc&skSlash != 0 && wholeWord(w) {
		return skelVar
	}
	return 0
}

// rewriteWord rewrites the word starting at msg[wm] from its first digit,
// msg[i], to its end, the rest of digitWord; the word's bytes before i are
// in out as written from ws, and acc holds its flags.
func rewriteWord(out []byte, msg string, wm, i, ws int, acc uint8, exact bool, words []wordPos) (int, int, []wordPos, int) {
	k := ws + i - wm
	rd := false // in a run of letters and digits that holds a digit
	n := len(msg)
	for ; i < n; i++ {
		c := msg[i]
		t := skelClass[c]
		switch t & skKind {
		case skSep:
			goto settle
		case skDigit:
			if !rd {
				for m := k - 1; m >= ws && skelClass[out[m]]&skLetter != 0; m-- {
					out[m] = skelMap[out[m]]
				}
				rd = true
			}
			// the whole run of digits; the last stays as written before 'x'
			for i < n && isDigit(msg[i]) {
				out[k] = '1'
				k++
				i++
			}
			if i < n && msg[i]|0x20 == 'x' {
				out[k-1] = msg[i-1]
			}
			i--
			continue
		case skLetter:
			if rd {
				c = skelMap[c]
			}
		case skEq:
			if !exact && i+1 < n && msg[i+1] == '"' {
				return i, k, words, skelExact
			}
			rd = false
		default:
			rd = false
		}
		out[k] = c
		k++
	}
settle:
	if exact || acc&skLetter != 0 || strings.Contains(msg[wm:i], "://") {
		return i, k, append(words, wordPos{int32(ws), int32(wm), int32(i - wm)}), skelDone
	}
	// letter-free: every digit is a '1' and nothing else is
	w, prev := ws, false
	for r := ws; r < k; r++ {
		one := out[r] == '1'
		if one && prev {
			continue
		}
		prev = one
		out[w] = out[r]
		w++
	}
	return i, w, words, skelDone
}

// A Sketch holds the skeletons of a run of messages, computed where the
// messages are parsed, on any goroutine, so that the miner's goroutine
// only looks them up (Miner.AddSketched). The zero value is empty; Reset
// keeps the memory for the next run.
type Sketch struct {
	buf   []byte
	words []wordPos // skel positions relative to the message's skeleton
	spans []sketchSpan
}

type sketchSpan struct {
	b0, b1, w0, w1 int32
	ok             bool // the cache may serve the message
}

// Add computes msg's skeleton and returns its index for AddSketched.
func (s *Sketch) Add(msg string) int {
	b0, w0 := len(s.buf), len(s.words)
	var ok bool
	s.buf, s.words, ok = skeleton(s.buf, s.words, msg)
	s.spans = append(s.spans, sketchSpan{int32(b0), int32(len(s.buf)), int32(w0), int32(len(s.words)), ok})
	return len(s.spans) - 1
}

// Reset empties s.
func (s *Sketch) Reset() {
	s.buf, s.words, s.spans = s.buf[:0], s.words[:0], s.spans[:0]
}

// skelEntry is one cached skeleton: its leaf, or, when the key keeps some
// pieces as written, where they are and a leaf per value of their bytes.
type skelEntry struct {
	leaf int32
	kept []span           // skeleton spans; nil when the key keeps none
	vals map[string]int32 // kept bytes, concatenated -> leaf
}

// skelCache maps skeletons to leaves. Bounded by maxSkeletons and
// maxSkeletonBytes: when either is reached it starts again empty.
type skelCache struct {
	idx     map[string]int32 // skeleton -> entry
	entries []skelEntry
	n       int // keys held (skeletons and kept-byte variants)
	bytes   int
	buf     []byte    // Add's skeleton of the current message
	words   []wordPos // its rewritten words
	vbuf    []byte    // the current kept bytes

	probes, hits int // lookups and hits in the current window
	off          int // lines left to bypass the cache

	seen []uint32 // skeletons offered once (see seenBefore)
	seed maphash.Seed
}

// count records one lookup; past a window with too few hits it turns the
// cache off for a while.
func (c *skelCache) count(hit bool) {
	c.probes++
	if hit {
		c.hits++
	}
	if c.probes < skelWindow {
		return
	}
	if c.hits*skelMinHitShare < c.probes {
		c.off = skelPause
	}
	c.probes, c.hits = 0, 0
}

// keptBytes appends the message bytes under the skeleton spans kept;
// ok is false when a span is not inside a rewritten word.
func keptBytes(dst []byte, kept []span, words []wordPos, msg string) ([]byte, bool) {
	k := 0
	for _, sp := range kept {
		for k < len(words) && words[k].skel+words[k].n <= sp.start {
			k++
		}
		if k == len(words) || sp.start < words[k].skel || sp.end > words[k].skel+words[k].n {
			return dst, false
		}
		off := words[k].msg - words[k].skel
		dst = append(dst, msg[sp.start+off:sp.end+off]...)
	}
	return dst, true
}

// lookup returns the cached leaf of msg, whose skeleton is key with the
// rewritten words words.
func (c *skelCache) lookup(key []byte, words []wordPos, msg string) (int32, bool) {
	ei, ok := c.idx[string(key)]
	if !ok {
		return 0, false
	}
	e := &c.entries[ei]
	if e.kept == nil {
		return e.leaf, true
	}
	v, ok := keptBytes(c.vbuf[:0], e.kept, words, msg)
	c.vbuf = v
	if !ok {
		return 0, false
	}
	id, ok := e.vals[string(v)]
	return id, ok
}

// seenBefore reports whether the skeleton key was offered before,
// and notes it. A direct-mapped table of hash tags: a collision only
// delays or hastens caching, never changes a result. It keeps shapes that
// never repeat (a line with a fresh hex id) out of the cache, so they cost
// no allocation.
func (c *skelCache) seenBefore(key []byte) bool {
	if c.seen == nil {
		if c.n < skelDoorFree {
			return true // a small cache admits freely: a one-line miner allocates no table
		}
		c.seen = make([]uint32, skelDoorSlots)
		c.seed = maphash.MakeSeed()
	}
	h := maphash.Bytes(c.seed, key)
	slot, tag := h&(skelDoorSlots-1), uint32(h>>32)|1
	if c.seen[slot] == tag {
		return true
	}
	c.seen[slot] = tag
	return false
}

// store remembers that msg, whose skeleton is key with the rewritten
// words words, went to leaf id;
// kept are the message spans the masker copied as written.
func (c *skelCache) store(key []byte, words []wordPos, msg string, kept []span, id int32) {
	if c.idx == nil || c.n >= maxSkeletons || c.bytes > maxSkeletonBytes {
		c.idx = make(map[string]int32, 1024)
		c.entries = c.entries[:0]
		c.n, c.bytes = 0, 0
	}
	ei, ok := c.idx[string(key)]
	if !ok {
		if !c.seenBefore(key) {
			return // a skeleton is kept from its second sighting on
		}
		e := skelEntry{leaf: id}
		if len(kept) > 0 {
			// message spans -> skeleton spans, through the rewritten words
			e.kept = make([]span, 0, len(kept))
			k := 0
			for _, sp := range kept {
				for k < len(words) && words[k].msg+words[k].n <= sp.start {
					k++
				}
				if k == len(words) || sp.start < words[k].msg || sp.end > words[k].msg+words[k].n {
					return // not in a rewritten word: do not cache
				}
				off := words[k].skel - words[k].msg
				e.kept = append(e.kept, span{sp.start + off, sp.end + off})
			}
			e.vals = map[string]int32{}
		}
		ei = int32(len(c.entries))
		c.entries = append(c.entries, e)
		c.idx[string(key)] = ei
		c.n++
		c.bytes += len(key)
	}
	e := &c.entries[ei]
	if e.kept == nil {
		return
	}
	v, ok := keptBytes(c.vbuf[:0], e.kept, words, msg)
	c.vbuf = v
	if !ok {
		return
	}
	if _, seen := e.vals[string(v)]; !seen {
		e.vals[string(v)] = id
		c.n++
		c.bytes += len(v)
	}
}
