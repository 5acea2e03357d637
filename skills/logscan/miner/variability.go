package miner

import "hash/maphash"

// Random identifiers (session and request ids, pod names, short SHAs,
// tokens) often have few or no digits, so the masker keeps them as words.
// Two cluster-level rules, which look at how many distinct values a
// position takes rather than at what a value looks like, make them
// variables:
//
//   - The sibling rule. Drain-style clustering cannot merge shapes that
//     differ in their first token (clusters are bucketed by it) or in any
//     constant of a message with three or fewer informative positions (no
//     difference is tolerated there, so "cupsd startup succeeded" and
//     "cupsd shutdown succeeded" stay apart). When a new cluster is created,
//     it is indexed under its shape with one position blanked, for the
//     first position and for every position of a short message. Once
//     sibKValues clusters share such a key (so that position took that many
//     distinct values, everything else equal), they merge into one cluster
//     with "<*>" at the position, and later siblings join it. A handful of
//     event words ("state changed to RUNNING", "... STOPPED") stays below
//     the threshold and keeps its own templates.
//
//   - High-cardinality positions leave the leaf key. A cluster counts the
//     distinct values each generalised position took, up to hiCardValues;
//     past that the position can never be split again by the low-cardinality
//     rule (which splits at most maxSplitValues values), so a new shape is
//     stored with "<*>" there: a message with a fresh id costs no new leaf,
//     and the leaf table does not grow with the number of ids.
const (
	sibKValues    = 4  // distinct identifier-like values at one position that make it a variable
	maxSibMembers = 16 // clusters a sibling group remembers for the merge
	sibMaxTokens  = 6  // messages up to this many pieces index every position; longer ones only the first
	maxSibs       = 1 << 16
	hiCardValues  = 8 // distinct values that make a generalised position high-cardinality
	maxCardTokens = 64
)

// siblings indexes clusters by their creating shape with one position
// blanked. Bounded by maxSibs keys; it starts again empty when full (later
// siblings then take a little longer to merge).
type siblings struct {
	idx   map[uint64]int32 // key -> stats index
	stats []sibStat
	seed  maphash.Seed
	hs    []sibKey // keys of the current shape
}

type sibKey struct {
	h uint64
	p int
}

type sibStat struct {
	members [maxSibMembers]int32 // clusters holding one value each
	n       int32                // members recorded
	ids     int32                // of them, values that look like identifiers
	masked  bool                 // a member has a value the masker made "<*>"
	gen     int32                // 1 + the merged cluster; 0 until made
}

// sibKeys fills s.hs with the keys of toks: one per eligible position (a
// message of at least two pieces of which, that position aside, two are
// constants).
func (s *siblings) sibKeys(toks []string, glued []bool) []sibKey {
	if s.idx == nil {
		s.idx = map[uint64]int32{}
		s.seed = maphash.MakeSeed()
	}
	s.hs = s.hs[:0]
	n := len(toks)
	consts := 0
	for _, t := range toks {
		if !hasWild(t) {
			consts++
		}
	}
	last := 0
	if n <= sibMaxTokens {
		last = n - 1
	}
	var h maphash.Hash
	h.SetSeed(s.seed)
	for p := 0; p <= last; p++ {
		rest := consts
		if !hasWild(toks[p]) {
			rest--
		}
		if rest < 2 {
			continue
		}
		h.Reset()
		var hdr [2]byte
		hdr[0], hdr[1] = byte(n), byte(p)
		h.Write(hdr[:])
		for i, t := range toks {
			b := byte(0)
			if glued[i] {
				b = 1
			}
			h.WriteByte(b)
			if i != p {
				h.WriteString(t)
			}
			h.WriteByte(0)
		}
		s.hs = append(s.hs, sibKey{h.Sum64(), p})
	}
	return s.hs
}

// resolve follows merges to the live cluster.
func (m *Miner) resolve(ci int32) int32 {
	for m.clusters[ci].fwd != 0 {
		ci = m.clusters[ci].fwd - 1
	}
	return ci
}

// sibling places a shape no cluster accepted: in the merged cluster of a
// sibling group it belongs to, or in a new cluster that it indexes and
// that may complete a group. It returns the cluster.
func (m *Miner) sibling(bk bucketKey, toks []string, glued []bool) int32 {
	s := &m.sibs
	keys := s.sibKeys(toks, glued)
	for _, k := range keys {
		si, ok := s.idx[k.h]
		if !ok || s.stats[si].gen == 0 {
			continue
		}
		g := m.resolve(s.stats[si].gen - 1)
		if m.accepts(g, toks, k.p) {
			m.generalise(g, toks)
			return g
		}
	}
	ci := m.bucketCluster(bk, toks, glued)
	if ci == m.catchAll {
		return ci
	}
	for _, k := range keys {
		if len(s.idx) >= maxSibs {
			clear(s.idx)
			s.stats = s.stats[:0]
		}
		si, ok := s.idx[k.h]
		if !ok {
			si = int32(len(s.stats))
			s.stats = append(s.stats, sibStat{})
			s.idx[k.h] = si
		}
		st := &s.stats[si]
		if st.gen != 0 {
			continue
		}
		if int(st.n) < len(st.members) {
			st.members[st.n] = ci
			st.n++
		}
		switch v := toks[k.p]; {
		case hasWild(v):
			st.masked = true
		case idLike(v):
			st.ids++
		}
		if st.ids >= sibKValues || st.masked && st.ids > 0 {
			g := m.mergeSiblings(ci, st.members[:st.n], k.p)
			st.gen = g + 1
			return g
		}
	}
	return ci
}

// accepts reports whether cluster g takes toks, whose position p may
// differ (a hash collision must not merge unrelated shapes).
func (m *Miner) accepts(g int32, toks []string, p int) bool {
	c := m.clusters[g]
	if len(c.toks) != len(toks) {
		return false
	}
	for i, t := range c.toks {
		if i == p || t == wild || t == toks[i] {
			continue
		}
		if !hasWild(t) || generalised(t, toks[i]) != t {
			return false
		}
	}
	return true
}

// mergeSiblings makes one cluster of ci and the live members (clusters not
// merged elsewhere meanwhile), generalised at p, and forwards them to it.
func (m *Miner) mergeSiblings(ci int32, members []int32, p int) int32 {
	base := m.clusters[ci]
	g := &cluster{
		toks:  append([]string(nil), base.toks...),
		glued: append([]bool(nil), base.glued...),
		over:  -1,
	}
	gid := int32(len(m.clusters))
	m.clusters = append(m.clusters, g)
	for _, mi := range append(members[:len(members):len(members)], ci) {
		c := m.clusters[mi]
		if c.fwd != 0 || len(c.toks) != len(g.toks) {
			continue
		}
		for i := range g.toks {
			if g.toks[i] != c.toks[i] && g.toks[i] != wild {
				g.toks[i] = generalised(g.toks[i], c.toks[i])
			}
		}
		g.count += c.count
		g.leaves += c.leaves
		c.fwd = gid + 1
		c.count, c.leaves = 0, 0
	}
	for _, t := range g.toks {
		if !hasWild(t) {
			g.nconst++
		}
	}
	bk := bucketKey{n: len(g.toks), first: firstKey(g.toks[0])}
	m.buckets[bk] = append(m.buckets[bk], gid)
	return gid
}

// cardinality is a cluster's count of distinct values per generalised
// position, kept until the position is high-cardinality.
type cardinality struct {
	seen [][]uint32 // per position: hashes of distinct values, up to hiCardValues
	hi   []bool
	nhi  int
}

// reduce notes the values toks brings to cluster ci's generalised
// positions and, when some of them are high-cardinality, returns the key
// of toks with "<*>" there.
func (m *Miner) reduce(ci int32, toks []string, glued []bool) ([]byte, bool) {
	c := m.clusters[ci]
	n := len(toks)
	if len(c.toks) != n || n > maxCardTokens {
		return nil, false
	}
	cd := c.card
	reduced := false
	for p, t := range c.toks {
		if !hasWild(t) || hasWild(toks[p]) {
			continue
		}
		if cd == nil {
			cd = &cardinality{seen: make([][]uint32, n), hi: make([]bool, n)}
			c.card = cd
		}
		if cd.hi[p] {
			reduced = true
			continue
		}
		h := uint32(maphash.String(m.cardSeed(), toks[p]))
		known := false
		for _, v := range cd.seen[p] {
			if v == h {
				known = true
				break
			}
		}
		if known {
			continue
		}
		cd.seen[p] = append(cd.seen[p], h)
		if len(cd.seen[p]) >= hiCardValues {
			cd.hi[p], cd.seen[p] = true, nil
			cd.nhi++
		}
	}
	if !reduced {
		return nil, false
	}
	k := m.keyBuf[:0]
	for i, t := range toks {
		if i > 0 {
			if glued[i] {
				k = append(k, glue)
			} else {
				k = append(k, ' ')
			}
		}
		if cd.hi[i] && !hasWild(t) {
			t = generalised(c.toks[i], t)
			toks[i] = t
		}
		k = append(k, t...)
	}
	m.keyBuf = k
	return k, true
}

func (m *Miner) cardSeed() maphash.Seed {
	if m.sibs.idx == nil {
		m.sibs.idx = map[uint64]int32{}
		m.sibs.seed = maphash.MakeSeed()
	}
	return m.sibs.seed
}

// idLike reports whether a piece holds a run of letters and digits that
// looks generated rather than written: letters and digits interleaved
// ("k3jqxz"; five characters only without vowels, "x2kqp" but not "log4j"), or six or more letters with few vowels ("kqzjxw") or
// with a third or more upper case among lower case ("OKItjnPnm"). It only
// counts towards the sibling rule, never masks on its own.
func idLike(s string) bool {
	for i := 0; i < len(s); {
		if !isAlpha(s[i]) && !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		digits, flips, vowels, upper := 0, 0, 0, 0
		prev := isDigit(s[i])
		for ; j < len(s) && (isAlpha(s[j]) || isDigit(s[j])); j++ {
			c := s[j]
			d := isDigit(c)
			if d {
				digits++
			} else {
				switch c | 0x20 {
				case 'a', 'e', 'i', 'o', 'u', 'y':
					vowels++
				}
				if c < 'a' {
					upper++
				}
			}
			if d != prev {
				flips++
			}
			prev = d
		}
		n, letters := j-i, j-i-digits
		switch {
		case digits > 0 && letters > 0 && flips >= 2 && (n >= 6 || n == 5 && vowels == 0):
			return true
		case digits == 0 && n >= 6 && (vowels*4 < letters || upper*10 >= 3*letters && upper < letters):
			return true
		}
		i = j
	}
	return false
}
