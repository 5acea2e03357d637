package miner

import (
	"hash/maphash"
	"slices"
	"strings"
)

// The header memo. In most files a few thousand distinct header tails
// follow the timestamp ("  INFO 1 --- [main] c.e.Foo : "): the timestamp
// changes on every line, the rest repeats. A Parser remembers how the items
// after the timestamp parsed, keyed by exactly the bytes their scan read
// (scanItem's far), so a line whose bytes after its timestamp start with a
// remembered key parses to the same items without scanning them: same
// level, component (cut from the line itself) and message start. Only
// scans whose reads are bounded are remembered; the rest take the full
// path every time.

const (
	memoMaxEntries = 16384   // distinct tails remembered per Parser (< 1<<16)
	memoMaxBytes   = 1 << 20 // their key bytes
	memoProbe      = 4096    // lookups between hit-rate checks

	// Keys of memoHashLen bytes or more are found by a hash of their
	// first hdrMemo.hashLen bytes, the length of the shortest of them: a
	// line's lookup hashes once and compares the chain of keys that share
	// those bytes, each first on two of its bytes. Hashing all the bytes
	// the keys have in length, not a fixed prefix, keeps chains short:
	// keys mostly differ late (the thread, the logger). Shorter keys are
	// kept in a radix tree.
	memoHashLen  = 24
	memoHashBits = 15 // table slots: twice memoMaxEntries
)

// hdrMemo holds the remembered tails. Every key is valid for any line
// that starts with it, so a lookup may stop at the first key that ends on
// its way. A lookup runs for every line, and what it reads lies in as few
// cache lines as can be: a slot of a small table, one 24-byte entry that
// holds both the chain's link and the parse, and the key's bytes, kept one
// after another in one slice.
type hdrMemo struct {
	nodes  []memoNode // the radix tree of short keys, root first
	ents   []memoEnt
	keys   []byte   // the long keys' bytes
	short  int      // the short keys' bytes (held by the tree)
	levels []string // the level words entries name (memoEnt.level)
	tab    []uint16 // hash of a long key's first hashLen bytes -> entry + 1
	// hashLen is the length of the shortest long key (>= memoHashLen)
	hashLen int
	seed    maphash.Seed
	looks   int
	hits    int
	off     bool // too few hits to pay for itself: not used
}

type memoNode struct {
	run  string // bytes to match after the byte that chose this node
	ent  int32  // entry whose key ends after run; -1 none
	word bool   // that entry's word
	kids []memoKid
	// wide indexes kids by byte (kid index + 1) once a node has many
	wide *[256]uint16
}

type memoKid struct {
	b byte
	n int32
}

// memoEnt is how the items after the timestamp parsed, relative to the
// timestamp's end, and for a long key its place in its chain: the next
// key of the chain (+ 1), where the key's bytes are, and two of its bytes
// with their offsets (near the middle of the rest and at the end: keys
// of a chain share their first memoHashLen bytes and differ later, mostly
// there), which a lookup tests before it compares the key.
type memoEnt struct {
	next     int32
	keyOff   uint32
	n        uint16 // the key's length; 0 for a short key (in the tree)
	mid      uint16
	last     uint16
	bmid     byte
	blast    byte
	level    uint8 // index in hdrMemo.levels
	word     bool  // see memoParse
	compOff  uint16
	compLen  uint16 // 0: no component
	msgStart uint16
}

// memoParse is a parse to remember, as the header parser states it.
type memoParse struct {
	level            string
	compOff, compLen int // the component's bytes; compLen 0: none
	msg              int // where the message starts
	// word: the key ends where the message starts, and the parse read
	// only that the byte there is not a space (so any word may follow)
	word bool
}

// lookup returns the entry for the line whose bytes after its timestamp
// are s, or -1.
func (m *hdrMemo) lookup(s string) int32 {
	if m.off {
		return -1
	}
	m.looks++
	if m.looks%memoProbe == 0 && m.hits*4 < m.looks {
		m.off = true // fewer than a quarter hit: stop paying for lookups
		return -1
	}
	if m.tab != nil && len(s) >= m.hashLen {
		h := maphash.String(m.seed, s[:m.hashLen])
		for k := int32(m.tab[h>>(64-memoHashBits)]); k > 0; {
			e := &m.ents[k-1]
			if n := int(e.n); n <= len(s) && s[e.mid] == e.bmid && s[e.last] == e.blast {
				if s[:n] == string(m.keys[e.keyOff:int(e.keyOff)+n]) && (!e.word || n < len(s) && !isSpace(s[n])) {
					m.hits++
					return k - 1
				}
			}
			k = e.next
		}
	}
	if len(m.nodes) == 0 {
		return -1
	}
	e := m.walk(0, s, 0)
	if e >= 0 {
		m.hits++
	}
	return e
}

// fill sets h's level, component and message start from entry k, for a
// line whose timestamp ends at tEnd.
func (m *hdrMemo) fill(k int32, line string, tEnd int, h *Header) {
	e := &m.ents[k]
	h.Level = m.levels[e.level]
	if e.compLen > 0 {
		c := tEnd + int(e.compOff)
		h.Component = line[c : c+int(e.compLen)]
	}
	h.MsgStart = tEnd + int(e.msgStart)
}

// walk follows s[p:] down the tree at node n and returns the first entry
// whose key ends on the way and holds for s, or -1.
func (m *hdrMemo) walk(n int32, s string, p int) int32 {
	nd := &m.nodes[n]
	for {
		if r := nd.run; len(r) > 0 {
			if len(s)-p < len(r) {
				return -1
			}
			if len(r) <= 8 {
				// short runs (most of them) compare without a call
				t := s[p : p+len(r)]
				for k := 0; k < len(r); k++ {
					if t[k] != r[k] {
						return -1
					}
				}
			} else if s[p:p+len(r)] != r {
				return -1
			}
			p += len(r)
		}
		if nd.ent >= 0 && (!nd.word || p < len(s) && !isSpace(s[p])) {
			return nd.ent
		}
		if p >= len(s) {
			return -1
		}
		next := nd.kid(s[p])
		if next < 0 {
			return -1
		}
		nd, p = &m.nodes[next], p+1
	}
}

// kid returns the child chosen by b, or -1.
func (n *memoNode) kid(b byte) int32 {
	if n.wide != nil {
		return int32(n.wide[b]) - 1
	}
	for _, k := range n.kids {
		if k.b == b {
			return k.n
		}
	}
	return -1
}

// memoWide is how many children a node has before it indexes them by byte.
const memoWide = 4

func (n *memoNode) addKid(b byte, ci int32) {
	n.kids = append(n.kids, memoKid{b, ci})
	if n.wide == nil && len(n.kids) >= memoWide {
		n.wide = new([256]uint16)
		for _, k := range n.kids {
			n.wide[k.b] = uint16(k.n + 1)
		}
	} else if n.wide != nil {
		n.wide[b] = uint16(ci + 1)
	}
}

// insert remembers key (the bytes the scan read after the timestamp),
// unless the memo is full or the parse's offsets do not fit an entry.
func (m *hdrMemo) insert(key string, p memoParse) {
	if m.off || len(m.ents) >= memoMaxEntries || len(m.keys)+m.short+len(key) > memoMaxBytes || key == "" ||
		len(key) > 0xffff || p.compOff > 0xffff || p.compLen > 0xffff || p.msg > 0xffff {
		return
	}
	lv := slices.Index(m.levels, p.level)
	if lv < 0 {
		if len(m.levels) > 0xff {
			return
		}
		lv = len(m.levels)
		m.levels = append(m.levels, p.level)
	}
	ent := int32(len(m.ents))
	e := memoEnt{level: uint8(lv), word: p.word, compOff: uint16(p.compOff), compLen: uint16(p.compLen), msgStart: uint16(p.msg)}
	if len(key) < memoHashLen {
		if len(m.nodes) == 0 {
			m.nodes = append(m.nodes, memoNode{ent: -1})
		}
		m.ents = append(m.ents, e)
		m.short += len(key)
		m.insertAt(0, strings.Clone(key), 0, ent, p.word) // the line's buffer is reused
		return
	}
	if m.tab == nil {
		m.tab = make([]uint16, 1<<memoHashBits)
		m.seed = maphash.MakeSeed()
		m.hashLen = len(key)
	}
	mid, last := (memoHashLen+len(key)-1)/2, max(0, len(key)-4)
	e.keyOff, e.n = uint32(len(m.keys)), uint16(len(key))
	e.mid, e.last, e.bmid, e.blast = uint16(mid), uint16(last), key[mid], key[last]
	m.keys = append(m.keys, key...)
	m.ents = append(m.ents, e)
	if len(key) < m.hashLen {
		// A shorter key: every long key is hashed again on fewer bytes
		// (rare: the length only falls, and most keys of a file are alike).
		m.hashLen = len(key)
		clear(m.tab)
		for i := range m.ents {
			m.link(int32(i))
		}
		return
	}
	m.link(ent)
}

// link puts long entry i at the head of its hash chain.
func (m *hdrMemo) link(i int32) {
	e := &m.ents[i]
	if e.n == 0 {
		return // a short key: in the tree
	}
	h := maphash.Bytes(m.seed, m.keys[e.keyOff:e.keyOff+uint32(m.hashLen)])
	slot := h >> (64 - memoHashBits)
	e.next = int32(m.tab[slot])
	m.tab[slot] = uint16(i + 1)
}

// insertAt adds key[p:] to the tree at node n for entry ent.
func (m *hdrMemo) insertAt(n int32, key string, p int, ent int32, word bool) {
	for {
		nd := &m.nodes[n]
		l := 0
		for l < len(nd.run) && p+l < len(key) && nd.run[l] == key[p+l] {
			l++
		}
		if l < len(nd.run) {
			// Split: the node keeps run[:l]; a child takes the rest.
			child := memoNode{run: nd.run[l+1:], ent: nd.ent, word: nd.word, kids: nd.kids, wide: nd.wide}
			b := nd.run[l]
			ci := int32(len(m.nodes))
			m.nodes = append(m.nodes, child)
			nd = &m.nodes[n]
			nd.run, nd.ent, nd.word, nd.kids, nd.wide = nd.run[:l], -1, false, nil, nil
			nd.addKid(b, ci)
		}
		p += l
		if p == len(key) {
			if nd.ent < 0 {
				nd.ent, nd.word = ent, word
			}
			return
		}
		next := nd.kid(key[p])
		if next < 0 {
			ci := int32(len(m.nodes))
			m.nodes = append(m.nodes, memoNode{run: key[p+1:], ent: ent, word: word})
			m.nodes[n].addKid(key[p], ci)
			return
		}
		n, p = next, p+1
	}
}
