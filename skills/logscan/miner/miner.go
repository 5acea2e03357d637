// Package miner detects where a log line's header ends (timestamp, level,
// pid, component) and mines message templates with no per-file
// configuration. Template ids are stable hashes of the template text, so
// the same template has the same id in every file.
//
// THE EXPORTED API BELOW IS A CONTRACT used by package logscan: its owner
// may add to it, but must not rename or remove.
//
// # Mining
//
// Add first builds the message's skeleton in one pass (its bytes with the
// digits, and letters next to digits, reduced to their classes; see
// skeleton.go) and looks it up in a bounded cache of skeletons seen before:
// most lines of a log repeat a few shapes and cost that pass and one hash
// lookup, with no masking at all. The cache only serves a message that
// would mask to the same key (FuzzSkeleton checks this against the
// masker), so results are exactly those of masking every line.
//
// Otherwise Add masks the message in one pass (numbers, hex, IPs, IP:port,
// UUIDs, paths, URLs, block ids, durations, sizes, booleans, dates inside
// the message), splits key=value so keys survive, and looks the masked
// shape up in a map. A new shape (a "leaf") is clustered Drain-style among
// clusters of the same token count and first token, with a similarity
// threshold that depends on the number of constant tokens; differing
// positions become "<*>". A position that takes many identifier-like values
// is a variable even where that clustering cannot see it (first token,
// short messages), and once a position is known to vary a fresh value costs
// no new leaf (variability.go). Finish splits a generalised position that
// took only a few words, one of them frequent (event-type words), merges
// clusters whose constant tokens are the same in the same order (optional
// trailing fields), and clusters whose final template text is equal share
// it and its id.
//
// # Limits
//
// At most MaxClusters clusters and MaxLeaves leaves are kept; past them new
// shapes join the most similar existing cluster of their length or, failing
// that, a catch-all cluster whose template is "<*>". Memory is bounded by
// those caps, by maxMsgBytes per leaf, and by maxSkeletons and
// maxSkeletonBytes for the skeleton cache (which starts again empty when
// full).
package miner

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Normalised levels.
const (
	LevelFatal = "fatal"
	LevelError = "error"
	LevelWarn  = "warn"
	LevelInfo  = "info"
	LevelDebug = "debug"
	LevelTrace = "trace"
)

// Caps that bound memory on adversarial input.
const (
	MaxClusters = 50000  // clusters kept; then new shapes go to the catch-all
	MaxLeaves   = 200000 // distinct masked shapes kept
	maxAliases  = 200000 // masked keys kept for shapes stored in reduced form
	maxScan     = 512    // clusters compared per new shape (most recent first)

	// matureLeaves: once a cluster has absorbed this many distinct shapes,
	// its remaining constants are trusted and a shape differing in one of
	// them starts its own cluster.
	matureLeaves = 8
)

// Header is what the detector found at the start of one line.
type Header struct {
	// Time is the timestamp text as written; "" when none.
	Time string
	// UnixMS is the timestamp in Unix milliseconds; 0 when unknown. Relative
	// clocks (uptime, ESP-IDF "(1234)") give milliseconds since start.
	// Timestamps without a year get the current year.
	UnixMS int64
	// Level is a normalised level ("" when none).
	Level     string
	Component string
	// MsgStart is the byte offset where the message starts.
	MsgStart int
	// MsgEnd, when > MsgStart, is where the message ends (JSON lines, whose
	// message is a string value inside the line); 0 means the end of the
	// line. Use Msg to get the message.
	MsgEnd int
}

// Msg returns the message part of line (the line Parse was given).
func (h Header) Msg(line string) string {
	s := min(max(h.MsgStart, 0), len(line))
	if h.MsgEnd > s && h.MsgEnd <= len(line) {
		return line[s:h.MsgEnd]
	}
	return line[s:]
}

// Template is a mined template.
type Template struct {
	ID   string // stable: TemplateID(Text)
	Text string // variables shown as <*>
}

// TemplateID returns the stable id of a template text.
func TemplateID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:6])
}

type leaf struct {
	cluster int32
	count   int64
	toks    []string // masked pieces; nil for overflow leaves
}

type cluster struct {
	toks   []string // template pieces; wild where generalised
	glued  []bool   // glued[i]: piece i is glued to piece i-1
	nconst int
	count  int64
	leaves int   // distinct shapes absorbed
	over   int32 // overflow leaf id, -1 until needed
	tmpl   *Template
	// fwd, when not 0, is 1 + the cluster this one was merged into by the
	// sibling rule (variability.go); its leaves follow it.
	fwd int32
	// card tracks the distinct values seen at generalised positions until
	// one is known to be high-cardinality (variability.go).
	card *cardinality
}

type bucketKey struct {
	n     int
	first string
}

// Miner clusters messages into templates. Not safe for concurrent use.
type Miner struct {
	mk       masker
	leafIdx  map[string]int32
	leaves   []leaf
	clusters []*cluster
	buckets  map[bucketKey][]int32
	catchAll int32 // cluster id of the catch-all, -1 until needed
	skel     skelCache
	finished bool
	final    []int32     // cluster -> final template index after Finish
	finals   []*Template // distinct final templates
	tokBuf   []string
	glueBuf  []bool
	sibs     siblings
	keyBuf   []byte
	aliases  int // masked keys stored for a reduced leaf (variability.go)
}

// New returns an empty miner.
func New() *Miner {
	return &Miner{
		leafIdx:  map[string]int32{},
		buckets:  map[bucketKey][]int32{},
		catchAll: -1,
	}
}

// Add mines one message (the part after the header) and returns its
// cluster number. Cluster numbers are dense, from 0; several numbers may
// share one template (they are the distinct masked shapes). Add after
// Finish is allowed; call Finish again to refresh the merges.
func (m *Miner) Add(msg string) int {
	c := &m.skel
	if c.off > 0 {
		return m.addBypass(msg)
	}
	var cacheable bool
	c.buf, c.words, cacheable = skeleton(c.buf[:0], c.words[:0], msg)
	return m.addSkeleton(msg, c.buf, c.words, cacheable)
}

// AddSketched is Add(msg) for the message that s.Add returned i for: the
// skeleton was computed where s was filled, often on another goroutine.
func (m *Miner) AddSketched(msg string, s *Sketch, i int) int {
	c := &m.skel
	if c.off > 0 {
		return m.addBypass(msg)
	}
	sp := s.spans[i]
	return m.addSkeleton(msg, s.buf[sp.b0:sp.b1:sp.b1], s.words[sp.w0:sp.w1:sp.w1], sp.ok)
}

// addBypass is Add while the skeleton cache is paused.
func (m *Miner) addBypass(msg string) int {
	m.skel.off--
	m.mk.noKept = true
	id, _ := m.addMasked(msg)
	m.mk.noKept = false
	return int(id)
}

// addSkeleton is Add once msg's skeleton key and rewritten words are
// known.
func (m *Miner) addSkeleton(msg string, key []byte, words []wordPos, cacheable bool) int {
	c := &m.skel
	if cacheable {
		id, ok := c.lookup(key, words, msg)
		c.count(ok)
		if ok {
			m.leaves[id].count++
			return int(id)
		}
	}
	id, real := m.addMasked(msg)
	if cacheable && real {
		c.store(key, words, msg, m.mk.kept, id)
	}
	return int(id)
}

// addMasked masks msg and finds or creates its leaf; real is false for an
// overflow leaf (past MaxLeaves), which the skeleton cache must not keep.
func (m *Miner) addMasked(msg string) (id int32, real bool) {
	key := m.mk.mask(msg)
	id, ok := m.leafIdx[string(key)]
	if ok {
		m.leaves[id].count++
		return id, true
	}
	toks, glued := splitKey(string(key), m.tokBuf[:0], m.glueBuf[:0])
	m.tokBuf, m.glueBuf = toks[:0], glued[:0]
	c := m.place(toks, glued)
	m.clusters[c].count++
	rk, reduced := m.reduce(c, toks, glued)
	if !reduced {
		return m.newLeaf(c, toks, key)
	}
	// Positions the cluster knows to be high-cardinality leave the key: a
	// fresh id is not a new shape. The masked key becomes an alias of that
	// leaf (while there is room), so the message costs one lookup when it
	// comes again.
	id, ok = m.leafIdx[string(rk)]
	if ok {
		m.leaves[id].count++
	} else if id, real = m.newLeaf(c, toks, rk); !real {
		return id, false
	}
	if m.aliases < maxAliases {
		m.leafIdx[string(key)] = id
		m.aliases++
	}
	return id, true
}

// newLeaf stores a new shape of cluster c under key; past MaxLeaves it
// counts the message in the cluster's overflow leaf and real is false.
func (m *Miner) newLeaf(c int32, toks []string, key []byte) (id int32, real bool) {
	if len(m.leaves) >= MaxLeaves {
		cl := m.clusters[c]
		if cl.over < 0 {
			cl.over = int32(len(m.leaves))
			m.leaves = append(m.leaves, leaf{cluster: c})
		}
		m.leaves[cl.over].count++
		return cl.over, false
	}
	id = int32(len(m.leaves))
	m.leaves = append(m.leaves, leaf{cluster: c, count: 1, toks: append([]string(nil), toks...)})
	m.leafIdx[string(key)] = id
	return id, true
}

// splitKey splits a masked key into pieces and glue flags.
func splitKey(k string, toks []string, glued []bool) ([]string, []bool) {
	start, g := 0, false
	for i := 0; i <= len(k); i++ {
		if i == len(k) || k[i] == ' ' || k[i] == glue {
			if i > start {
				toks = append(toks, k[start:i])
				glued = append(glued, g)
			}
			if i < len(k) {
				g = k[i] == glue
			}
			start = i + 1
		}
	}
	return toks, glued
}

// threshold returns how many differing constant positions a template of n
// informative positions tolerates (PIPLUP's length-dependent table: 1,1/2,
// 2/3, 3/4, 3/5, 4/6, 4/7, 5/8, 6/9, then a share).
func allowedDiff(n int) int {
	switch {
	case n <= 3:
		return 0
	case n <= 4:
		return 1
	case n <= 6:
		return 2
	case n <= 8:
		return 3
	case n <= 9:
		return 3
	}
	return n * 4 / 10
}

// place finds or creates the cluster for a new shape.
func (m *Miner) place(toks []string, glued []bool) int32 {
	if len(toks) == 0 {
		return m.bucketCluster(bucketKey{}, toks, glued)
	}
	bk := bucketKey{n: len(toks), first: firstKey(toks[0])}
	best, bestScore := int32(-1), -1.0
	list := m.buckets[bk]
	for k, scanned := len(list)-1, 0; k >= 0 && scanned < maxScan; k, scanned = k-1, scanned+1 {
		ci := list[k]
		c := m.clusters[ci]
		if c.fwd != 0 {
			continue
		}
		diff, inf, ok := compare(c.toks, toks)
		if !ok || diff > allowedDiff(inf) {
			continue
		}
		if diff > 0 && c.leaves >= matureLeaves {
			// A constant that held across many distinct shapes is a real
			// constant: "Failed password" does not absorb "Failed none".
			continue
		}
		score := 1 - float64(diff)/float64(max(inf, 1))
		if score > bestScore || (score == bestScore && c.count > m.clusters[best].count) {
			best, bestScore = ci, score
		}
	}
	if best >= 0 {
		m.generalise(best, toks)
		return best
	}
	if ci := m.sibling(bk, toks, glued); ci >= 0 {
		return ci
	}
	return m.bucketCluster(bk, toks, glued)
}

func firstKey(t string) string {
	if strings.Contains(t, wild) {
		return wild
	}
	return t
}

// compare counts differing constant positions of template t against the
// shape s, and the informative positions (not wild in both).
func compare(t, s []string) (diff, inf int, ok bool) {
	if len(t) != len(s) {
		return 0, 0, false
	}
	for i := range t {
		tw, sw := t[i] == wild, s[i] == wild
		switch {
		case tw && sw:
		case tw:
			inf++ // a generalised position accepts anything
		case t[i] == s[i]:
			if !hasWild(t[i]) {
				inf++
			}
		case hasWild(t[i]) && generalised(t[i], s[i]) == t[i]:
			// "<*>)" accepts "host)"; a variable carries no information
		default:
			if failureWord(t[i]) || failureWord(s[i]) || opposites(t[i], s[i]) {
				// "Ping failed" and "Ping succeeded" are two events,
				// whatever else they share; so are "alarm set" and
				// "alarm cleared"
				return 0, 0, false
			}
			inf++
			diff++
		}
	}
	return diff, inf, true
}

// failureWords say that something went wrong: a shape whose word differs
// from a template's where one of them is such a word is not that template.
var failureWords = map[string]bool{
	"fail": true, "failed": true, "fails": true, "failure": true, "failing": true,
	"error": true, "errors": true, "fatal": true, "panic": true, "exception": true,
	"refused": true, "denied": true, "rejected": true, "invalid": true, "unable": true, "cannot": true,
	"timeout": true, "timed": true, "aborted": true, "crashed": true, "killed": true,
	"unreachable": true, "unavailable": true, "lost": true, "down": true,
}

// failureWord reports whether token t, less the punctuation around it and
// in any case, is one of failureWords.
func failureWord(t string) bool {
	t = strings.TrimFunc(t, func(r rune) bool { return r < 'A' || r > 'z' || r > 'Z' && r < 'a' })
	if len(t) < 4 || len(t) > 11 {
		return false
	}
	return failureWords[strings.ToLower(t)]
}

// stateWords pairs the words that name a state and its reverse; each
// side of a pair shares its number. A template that took one of them where
// the other stands would hide that a state changed ("memory resource limit
// alarm set" and "… cleared", "session opened" and "… closed").
var stateWords = func() map[string]int {
	pairs := [][2][]string{
		{{"set", "raised"}, {"clear", "cleared"}},
		{{"up"}, {"down"}},
		{{"on"}, {"off"}},
		{{"start", "started", "starting"}, {"stop", "stopped", "stopping"}},
		{{"open", "opened", "opening"}, {"close", "closed", "closing"}},
		{{"enable", "enabled"}, {"disable", "disabled"}},
		{{"connect", "connected", "connecting"}, {"disconnect", "disconnected", "disconnecting"}},
		{{"acquire", "acquired"}, {"release", "released"}},
		{{"add", "added"}, {"remove", "removed", "delete", "deleted"}},
		{{"attach", "attached"}, {"detach", "detached"}},
		{{"mount", "mounted"}, {"unmount", "unmounted"}},
		{{"lock", "locked"}, {"unlock", "unlocked"}},
		{{"join", "joined"}, {"leave", "left"}},
		{{"grant", "granted"}, {"revoke", "revoked"}},
		{{"pause", "paused"}, {"resume", "resumed"}},
		{{"online"}, {"offline"}},
		{{"healthy"}, {"unhealthy"}},
	}
	m := map[string]int{}
	for i, p := range pairs {
		for side, words := range p {
			for _, w := range words {
				m[w] = 2*i + side + 1
			}
		}
	}
	return m
}()

// opposites reports whether tokens a and b, less the punctuation around
// them and in any case, are the two sides of a state pair (stateWords).
func opposites(a, b string) bool {
	trim := func(t string) string {
		t = strings.TrimFunc(t, func(r rune) bool { return r < 'A' || r > 'z' || r > 'Z' && r < 'a' })
		if len(t) > 13 {
			return ""
		}
		return strings.ToLower(t)
	}
	x, y := stateWords[trim(a)], stateWords[trim(b)]
	return x != 0 && y != 0 && x != y && (x-1)/2 == (y-1)/2
}

func hasWild(s string) bool { return strings.Contains(s, wild) }

func stripWild(s string) string { return strings.ReplaceAll(s, wild, "") }

func (m *Miner) generalise(ci int32, toks []string) {
	c := m.clusters[ci]
	changed := false
	for i := range c.toks {
		if c.toks[i] != toks[i] && c.toks[i] != wild {
			g := generalised(c.toks[i], toks[i])
			if g != c.toks[i] {
				if !hasWild(c.toks[i]) {
					c.nconst--
				}
				c.toks[i] = g
				changed = true
			}
		}
	}
	c.leaves++
	if changed {
		c.tmpl = nil
	}
}

func (m *Miner) bucketCluster(bk bucketKey, toks []string, glued []bool) int32 {
	if len(m.clusters) >= MaxClusters {
		if m.catchAll < 0 {
			m.catchAll = int32(len(m.clusters))
			m.clusters = append(m.clusters, &cluster{toks: []string{wild}, glued: []bool{false}, over: -1})
		}
		return m.catchAll
	}
	c := &cluster{
		toks:  append([]string(nil), toks...),
		glued: append([]bool(nil), glued...),
		over:  -1,
	}
	for _, t := range toks {
		if t != wild {
			c.nconst++
		}
	}
	id := int32(len(m.clusters))
	m.clusters = append(m.clusters, c)
	m.buckets[bk] = append(m.buckets[bk], id)
	return id
}

// render joins template pieces into text and normalises it: a piece
// holding a wildcard among letters or digits becomes "<*>", wildcards
// joined by . : / @ or nothing merge, and runs of wildcards collapse.
func render(toks []string, glued []bool) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && !glued[i] {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return normalise(b.String())
}

func normalise(s string) string {
	if !strings.Contains(s, wild) {
		return s
	}
	// collapse "<*><*>", "<*>.<*>", "<*>:<*>", "<*> <*>"
	for {
		r := s
		for _, j := range [...]string{"", ".", ":", "/", "@", " ", "#", "##", "-"} {
			r = strings.ReplaceAll(r, wild+j+wild, wild)
		}
		if r == s {
			break
		}
		s = r
	}
	return s
}

// Template returns the current template of a cluster. After Finish it
// returns the final template (clusters merged by the post-pass share it).
// It returns the zero Template for a number Add never returned.
func (m *Miner) Template(cluster int) Template {
	if cluster < 0 || cluster >= len(m.leaves) {
		return Template{}
	}
	ci := m.resolve(m.leaves[cluster].cluster)
	if m.finished && int(ci) < len(m.final) {
		return *m.finals[m.final[ci]]
	}
	c := m.clusters[ci]
	if c.tmpl == nil {
		t := render(c.toks, c.glued)
		c.tmpl = &Template{ID: TemplateID(t), Text: t}
	}
	return *c.tmpl
}

// Finish runs the post-pass (merges) after the last Add: clusters whose
// constant pieces are the same in the same order are merged (the largest
// cluster's template wins), then clusters with equal template text share
// one template.
func (m *Miner) Finish() {
	for i := range m.leaves {
		m.leaves[i].cluster = m.resolve(m.leaves[i].cluster)
	}
	m.splitLowCardinality()
	m.final = make([]int32, len(m.clusters))
	m.finals = m.finals[:0]
	texts := make([]string, len(m.clusters))
	for i, c := range m.clusters {
		texts[i] = render(c.toks, c.glued)
	}
	// group by constant sequence
	groups := map[string][]int32{}
	for i, c := range m.clusters {
		if c.fwd != 0 {
			continue
		}
		k := constKey(c.toks)
		groups[k] = append(groups[k], int32(i))
	}
	rep := make([]int32, len(m.clusters))
	for _, g := range groups {
		best := g[0]
		for _, ci := range g {
			if m.clusters[ci].count > m.clusters[best].count {
				best = ci
			}
		}
		for _, ci := range g {
			rep[ci] = best
		}
	}
	byText := map[string]int32{}
	for i := range m.clusters {
		if m.clusters[i].fwd != 0 {
			continue
		}
		t := texts[rep[i]]
		fi, ok := byText[t]
		if !ok {
			fi = int32(len(m.finals))
			byText[t] = fi
			m.finals = append(m.finals, &Template{ID: TemplateID(t), Text: t})
		}
		m.final[i] = fi
	}
	for i, c := range m.clusters {
		if c.fwd != 0 {
			m.final[i] = m.final[m.resolve(int32(i))]
		}
	}
	m.finished = true
}

// constKey is the ordered constant pieces of a template, with the
// punctuation around variables kept ("uid=<*>" stays "uid=").
func constKey(toks []string) string {
	var b strings.Builder
	n := 0
	for _, t := range toks {
		if t == wild {
			continue
		}
		b.WriteString(stripWild(t))
		b.WriteByte(0)
		n++
	}
	if n == 0 {
		return "\x00wild"
	}
	return b.String()
}

// Clusters returns the number of cluster numbers Add has handed out (every
// value Add returned is below it). Several may share a template; see
// Templates for the distinct ones.
func (m *Miner) Clusters() int { return len(m.leaves) }

// Templates returns the distinct templates with the number of messages in
// each, in order of first appearance. Call after Finish for merged results.
func (m *Miner) Templates() []TemplateCount {
	seen := map[string]int{}
	var out []TemplateCount
	for i := range m.leaves {
		t := m.Template(i)
		k, ok := seen[t.ID]
		if !ok {
			k = len(out)
			seen[t.ID] = k
			out = append(out, TemplateCount{Template: t})
		}
		out[k].Count += m.leaves[i].count
	}
	return out
}

// TemplateCount is a template and how many messages it covers.
type TemplateCount struct {
	Template
	Count int64
}

// maxSplitValues: a generalised position with at most this many distinct
// words, one of which held across matureLeaves shapes or lines, is an
// event-type word ("user=root" vs "user=guest", "state changed to
// RUNNING" vs "... FAILED"), not a variable. Lines count as well as shapes
// (measured: mean GA on Loghub-2k 0.9606 with shapes only, 0.9797 with
// lines; 2 or 4 values do worse).
const maxSplitValues = 3

// splitLowCardinality splits a mature cluster (matureLeaves shapes or
// lines) on a generalised position that took only a few distinct words,
// one of them seen with many shapes or on many lines:
// such a word is a constant of its own template (Brain's low-cardinality
// rule). Each value gets its own cluster.
func (m *Miner) splitLowCardinality() {
	members := make([][]int32, len(m.clusters))
	for li := range m.leaves {
		l := &m.leaves[li]
		if l.toks == nil {
			continue
		}
		members[l.cluster] = append(members[l.cluster], int32(li))
	}
	n := len(m.clusters)
	for ci := 0; ci < n; ci++ {
		c := m.clusters[ci]
		if int32(ci) == m.catchAll {
			continue
		}
		var total int64
		for _, li := range members[ci] {
			total += m.leaves[li].count
		}
		if c.leaves < matureLeaves && total < matureLeaves {
			continue
		}
		for p, t := range c.toks {
			if !hasWild(t) {
				continue
			}
			vals := map[string]int{}
			lines := map[string]int64{}
			ok := true
			for _, li := range members[ci] {
				v := m.leaves[li].toks[p]
				if hasWild(v) {
					ok = false
					break
				}
				vals[v]++
				lines[v] += m.leaves[li].count
				if len(vals) > maxSplitValues {
					ok = false
					break
				}
			}
			if !ok || len(vals) < 2 {
				continue
			}
			most := 0
			for _, k := range vals {
				most = max(most, k)
			}
			mostLines := int64(0)
			for _, k := range lines {
				mostLines = max(mostLines, k)
			}
			if most < matureLeaves && mostLines < matureLeaves {
				continue
			}
			// split: the first value keeps this cluster
			sub := map[string]int32{}
			for _, li := range members[ci] {
				v := m.leaves[li].toks[p]
				id, seen := sub[v]
				if !seen {
					if len(sub) == 0 {
						id = int32(ci)
					} else {
						nc := &cluster{toks: append([]string(nil), c.toks...), glued: c.glued, over: -1}
						id = int32(len(m.clusters))
						m.clusters = append(m.clusters, nc)
					}
					m.clusters[id].toks[p] = v
					m.clusters[id].tmpl = nil
					sub[v] = id
				}
				if id != int32(ci) {
					m.clusters[id].count += m.leaves[li].count
					m.clusters[id].leaves++
					c.count -= m.leaves[li].count
					c.leaves--
				}
				m.leaves[li].cluster = id
			}
			break
		}
	}
}
