package miner

import "strings"

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
//     within a byte limit).
//
// The masker decides from byte classes, digit and letter counts, run
// lengths, month, day and boolean names (never next to a digit) and the
// "0x" prefix, so two messages with the same skeleton are split and masked
// alike. Their keys can still differ where a piece holding digits was kept
// as written ("ssh2", "jk2_init()"): the masker reports those pieces, the
// cache entry remembers where they are in the skeleton, and a hit also
// needs their bytes to be equal. FuzzSkeleton checks all of this against
// the masker itself. A mode byte at the start tells the length rules apart.

const (
	maxSkeletons     = 1 << 16  // cached skeletons and kept-byte variants; the cache restarts past it
	maxSkeletonBytes = 16 << 20 // bytes of cached keys; likewise
)

// Skeleton byte classes.
const (
	skSep    = 1 << iota // the masker's word separators
	skDigit              // '0'..'9'
	skLetter             // ASCII letters
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
		}
	}
	return t
}()

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

// wordPos maps a rewritten-in-place word of the skeleton to the message.
type wordPos struct{ skel, msg, n int32 }

// skeleton appends msg's skeleton to dst and the positions of its
// rewritten-in-place words to words. ok is false for a message the cache
// must not serve (longer than the masker's limit).
func skeleton(dst []byte, words []wordPos, msg string) ([]byte, []wordPos, bool) {
	if len(msg) > maxMsgBytes {
		return dst, words, false
	}
	exact := strings.Contains(msg, `="`)
	if exact {
		dst = append(dst, 'E')
	} else {
		dst = append(dst, 'C')
	}
	i := 0
	for i < len(msg) {
		s := i
		var cls uint8
		for i < len(msg) {
			k := skelClass[msg[i]]
			if k&skSep != 0 {
				break
			}
			cls |= k
			i++
		}
		w := msg[s:i]
		switch {
		case cls&skDigit == 0:
			dst = append(dst, w...)
		case exact || cls&skLetter != 0 || strings.Contains(w, "://"):
			words = append(words, wordPos{int32(len(dst)), int32(s), int32(len(w))})
			dst = rewriteRuns(dst, w)
		default:
			for j := 0; j < len(w); j++ {
				c := w[j]
				if isDigit(c) {
					dst = append(dst, '1')
					for j+1 < len(w) && isDigit(w[j+1]) {
						j++
					}
					continue
				}
				dst = append(dst, c)
			}
		}
		// separators are kept as written
		for i < len(msg) && skelClass[msg[i]]&skSep != 0 {
			dst = append(dst, msg[i])
			i++
		}
	}
	return dst, words, true
}

// rewriteRuns appends w with each letter-and-digit run that holds a digit
// rewritten byte for byte.
func rewriteRuns(dst []byte, w string) []byte {
	for j := 0; j < len(w); {
		if skelClass[w[j]]&(skDigit|skLetter) == 0 {
			dst = append(dst, w[j])
			j++
			continue
		}
		r, digit := j, false
		for j < len(w) {
			k := skelClass[w[j]]
			if k&(skDigit|skLetter) == 0 {
				break
			}
			if k == skDigit {
				digit = true
			}
			j++
		}
		if !digit {
			dst = append(dst, w[r:j]...)
			continue
		}
		for k := r; k < j; k++ {
			c := w[k]
			if !isDigit(c) || k+1 == j || w[k+1]|0x20 != 'x' {
				c = skelMap[c]
			}
			dst = append(dst, c)
		}
	}
	return dst
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
	buf     []byte    // the current skeleton
	words   []wordPos // the current skeleton's rewritten words
	vbuf    []byte    // the current kept bytes
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

// lookup returns the cached leaf of msg, whose skeleton is in c.buf.
func (c *skelCache) lookup(msg string) (int32, bool) {
	ei, ok := c.idx[string(c.buf)]
	if !ok {
		return 0, false
	}
	e := &c.entries[ei]
	if e.kept == nil {
		return e.leaf, true
	}
	v, ok := keptBytes(c.vbuf[:0], e.kept, c.words, msg)
	c.vbuf = v
	if !ok {
		return 0, false
	}
	id, ok := e.vals[string(v)]
	return id, ok
}

// store remembers that msg, whose skeleton is in c.buf, went to leaf id;
// kept are the message spans the masker copied as written.
func (c *skelCache) store(msg string, kept []span, id int32) {
	if c.idx == nil || c.n >= maxSkeletons || c.bytes > maxSkeletonBytes {
		c.idx = make(map[string]int32, 1024)
		c.entries = c.entries[:0]
		c.n, c.bytes = 0, 0
	}
	ei, ok := c.idx[string(c.buf)]
	if !ok {
		e := skelEntry{leaf: id}
		if len(kept) > 0 {
			// message spans -> skeleton spans, through the rewritten words
			e.kept = make([]span, 0, len(kept))
			k := 0
			for _, sp := range kept {
				for k < len(c.words) && c.words[k].msg+c.words[k].n <= sp.start {
					k++
				}
				if k == len(c.words) || sp.start < c.words[k].msg || sp.end > c.words[k].msg+c.words[k].n {
					return // not in a rewritten word: do not cache
				}
				off := c.words[k].skel - c.words[k].msg
				e.kept = append(e.kept, span{sp.start + off, sp.end + off})
			}
			e.vals = map[string]int32{}
		}
		ei = int32(len(c.entries))
		c.entries = append(c.entries, e)
		c.idx[string(c.buf)] = ei
		c.n++
		c.bytes += len(c.buf)
	}
	e := &c.entries[ei]
	if e.kept == nil {
		return
	}
	v, ok := keptBytes(c.vbuf[:0], e.kept, c.words, msg)
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
