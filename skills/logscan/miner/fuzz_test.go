package miner

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// Seeds: representative lines of many formats in testdata/lines.txt.
func seedLines(f *testing.F) []string {
	b, err := os.ReadFile("testdata/lines.txt")
	if err != nil {
		f.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// FuzzParse: Parse never panics, MsgStart/MsgEnd stay within the line, and
// learning from the line itself gives the same guarantees.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./skills/logscan/miner/
func FuzzParse(f *testing.F) {
	lines := seedLines(f)
	for _, l := range lines {
		f.Add(l)
	}
	f.Add("####<Jun 3, 2024, 2:11:27,263 AM UTC> <Warning> <JDBC> <h> <s> <t> <<WLS Kernel>> <> <c> <1717380687263> <[rid: 0] > <BEA-001129> <Received")
	fixed := Learn(lines)
	f.Fuzz(func(t *testing.T, line string) {
		for _, fm := range []*Format{fixed, Learn([]string{line, line})} {
			h := fm.Parse(line)
			if h.MsgStart < 0 || h.MsgStart > len(line) {
				t.Fatalf("MsgStart %d out of [0,%d]", h.MsgStart, len(line))
			}
			if h.MsgEnd != 0 && (h.MsgEnd < h.MsgStart || h.MsgEnd > len(line)) {
				t.Fatalf("MsgEnd %d out of [%d,%d]", h.MsgEnd, h.MsgStart, len(line))
			}
			_ = h.Msg(line)
			// A Parser's date cache never changes a result: parse the
			// line, a copy with one byte changed, then the line again.
			p := fm.NewParser()
			variants := []string{line, line, line}
			if len(line) > 0 {
				b := []byte(line)
				k := len(b) / 2
				b[k] = "0123456789 :-"[int(b[k])%13]
				variants[1] = string(b)
			}
			for _, v := range variants {
				if got, want := p.Parse(v), fm.Parse(v); got != want {
					t.Fatalf("%q: Parser %+v, Format %+v", v, got, want)
				}
			}
		}
	})
}

// FuzzAdd: Add never panics, returns a valid cluster number, and equal
// template text always has the same id.
//
//	go test -run '^$' -fuzz FuzzAdd -fuzztime 60s ./skills/logscan/miner/
func FuzzAdd(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add(l, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		m := New()
		ia, ib, ia2 := m.Add(a), m.Add(b), m.Add(a)
		for _, id := range []int{ia, ib, ia2} {
			if id < 0 || id >= m.Clusters() {
				t.Fatalf("cluster %d out of [0,%d)", id, m.Clusters())
			}
		}
		if ia != ia2 {
			t.Fatalf("same message, clusters %d and %d", ia, ia2)
		}
		m.Finish()
		ta, tb := m.Template(ia), m.Template(ib)
		if ta.ID != TemplateID(ta.Text) || tb.ID != TemplateID(tb.Text) {
			t.Fatal("id is not the hash of the text")
		}
		if (ta.Text == tb.Text) != (ta.ID == tb.ID) {
			t.Fatal("equal text, different ids (or the reverse)")
		}
		// the template of a message is reproducible in a fresh miner
		m2 := New()
		m2.Add(a)
		m2.Finish()
		if m2.Template(0).Text == "" && strings.TrimFunc(a, func(r rune) bool { return r <= ' ' }) != "" {
			t.Fatalf("empty template for %q", a)
		}
	})
}

// FuzzSkeleton: two messages with the same skeleton, and the same bytes
// in the pieces the masker kept as written, mask to the same key, so the
// skeleton cache never changes a result. The second message is the first
// with its digits and the letters next to them rewritten at random (digit
// run lengths too, sometimes).
//
//	go test -run '^$' -fuzz FuzzSkeleton -fuzztime 60s ./skills/logscan/miner/
func FuzzSkeleton(f *testing.F) {
	for i, l := range seedLines(f) {
		f.Add(l, uint64(i))
	}
	f.Add(`k="a 1" 0x1f 5x user1 12#34 123://=4 1/2 Dec=5 ab12cd`, uint64(3))
	f.Add(`user d8c42b2dfcfb864 logged in from session 2e28fa0kqalgm y2jybbqfbwfx 1lyn8fn9dm61d 0x1fz`, uint64(5))
	f.Add("Größe 42 ✓ über 0x1f é1 10.0.0.7:80 ok", uint64(7)) // bytes outside ASCII, under 64 bytes
	f.Fuzz(func(t *testing.T, a string, seed uint64) {
		b := mutateRuns(a, seed)
		checkSkeleton(t, a, b)
		checkSkeleton(t, a, mutateWholeWords(a, seed))
		for _, m := range []string{a, b} {
			k, w, ok := skeleton(nil, nil, m)
			rk, rw, rok := skeletonRef(m)
			if string(k) != string(rk) || ok != rok || fmt.Sprint(w) != fmt.Sprint(rw) {
				t.Fatalf("%q: skeleton %q %v, reference %q %v", m, k, w, rk, rw)
			}
			if haveClassify {
				// the byte-by-byte path must agree too
				useClassify = false
				sk, sw, sok := skeleton(nil, nil, m)
				useClassify = true
				if string(sk) != string(k) || sok != ok || fmt.Sprint(sw) != fmt.Sprint(w) {
					t.Fatalf("%q: with masks %q %v, byte by byte %q %v", m, k, w, sk, sw)
				}
			}
		}
	})
}

// skeletonRef is the skeleton rules stated word by word; skeleton must
// agree with it.
func skeletonRef(msg string) ([]byte, []wordPos, bool) {
	if len(msg) > maxMsgBytes {
		return nil, nil, false
	}
	if strings.IndexByte(msg, skelVar) >= 0 || strings.IndexByte(msg, skelPVar) >= 0 {
		return nil, nil, false
	}
	exact := strings.Contains(msg, `="`)
	dst := []byte{'C'}
	if exact {
		dst[0] = 'E'
	}
	var words []wordPos
	alnum := func(c byte) bool { return isDigit(c) || isAlpha(c) }
	for i := 0; i < len(msg); {
		for i < len(msg) && isWordSep(msg[i]) {
			dst = append(dst, msg[i])
			i++
		}
		s := i
		for i < len(msg) && !isWordSep(msg[i]) {
			i++
		}
		w := msg[s:i]
		switch {
		case !strings.ContainsAny(w, "0123456789"):
			dst = append(dst, w...)
		case !exact && wholeWord(w):
			dst = append(dst, skelVar)
		case !exact && strings.IndexFunc(w, func(r rune) bool { return !alnum(byte(r)) || r >= 128 }) < 0 && variable(w):
			dst = append(dst, skelPVar)
		case exact || strings.IndexFunc(w, func(r rune) bool { return r < 128 && isAlpha(byte(r)) }) >= 0 || strings.Contains(w, "://"):
			words = append(words, wordPos{int32(len(dst)), int32(s), int32(len(w))})
			for j := 0; j < len(w); {
				if !alnum(w[j]) {
					dst = append(dst, w[j])
					j++
					continue
				}
				r := j
				for j < len(w) && alnum(w[j]) {
					j++
				}
				run := w[r:j]
				if !strings.ContainsAny(run, "0123456789") {
					dst = append(dst, run...)
					continue
				}
				for m := 0; m < len(run); m++ {
					c := run[m]
					if isDigit(c) && m+1 < len(run) && run[m+1]|0x20 == 'x' {
						dst = append(dst, c)
						continue
					}
					dst = append(dst, skelMap[c])
				}
			}
		default:
			for j := 0; j < len(w); j++ {
				if isDigit(w[j]) {
					dst = append(dst, '1')
					for j+1 < len(w) && isDigit(w[j+1]) {
						j++
					}
					continue
				}
				dst = append(dst, w[j])
			}
		}
	}
	return dst, words, true
}

// checkSkeleton fails when a and b would share a cache entry but mask
// differently. It reports whether they would share one.
func checkSkeleton(t *testing.T, a, b string) bool {
	t.Helper()
	ka, wa, okA := skeleton(nil, nil, a)
	kb, wb, okB := skeleton(nil, nil, b)
	if !okA || !okB || string(ka) != string(kb) {
		return false
	}
	var ma, mb masker
	x, y := string(ma.mask(a)), string(mb.mask(b))
	var c skelCache
	c.store(ka, wa, a, ma.kept, 7) // the first sighting may only be noted
	c.store(ka, wa, a, ma.kept, 7)
	id, hit := c.lookup(kb, wb, b)
	if hit && (id != 7 || x != y) {
		t.Fatalf("cache hit for different keys (skeleton %q):\n%q -> %q\n%q -> %q", ka, a, x, b, y)
	}
	if !hit && x == y && len(ma.kept) == 0 {
		t.Fatalf("same skeleton %q and key %q, nothing kept, but no hit:\n%q\n%q", ka, x, a, b)
	}
	return hit
}

// mutateWholeWords replaces about half of the words the masker replaces
// whole with other such words of other shapes: hex ids of other lengths
// and letters, IP:port, paths and URLs with digits.
func mutateWholeWords(s string, seed uint64) string {
	x := seed | 1
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	hex := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789abcdef"[next()%16]
		}
		b[next()%uint64(n)] = byte('0' + next()%10)
		return string(b)
	}
	shapes := []func() string{
		func() string { return hex(8 + int(next()%33)) },
		func() string {
			return fmt.Sprintf("%d.%d.%d.%d:%d", next()%256, next()%256, next()%256, next()%256, next()%65536)
		},
		func() string { return fmt.Sprintf("/var/lib/x%d/%s", next()%1000, hex(6)) },
		func() string { return fmt.Sprintf("https://h%d.example.com/a/%d", next()%100, next()%100000) },
		func() string { return fmt.Sprintf("%d", next()) },
		func() string { // base 36, a third or more digits: one variable piece
			b := make([]byte, 6+next()%12)
			for i := range b {
				b[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[next()%36]
			}
			for i := 0; i*10 < 3*len(b)+9; i++ {
				b[next()%uint64(len(b))] = byte('0' + next()%10)
			}
			return string(b)
		},
	}
	var out []byte
	for i := 0; i < len(s); {
		if isWordSep(s[i]) {
			out = append(out, s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && !isWordSep(s[j]) {
			j++
		}
		w := s[i:j]
		alnumWord := strings.IndexFunc(w, func(r rune) bool { return r >= 128 || !isDigit(byte(r)) && !isAlpha(byte(r)) }) < 0
		if strings.ContainsAny(w, "0123456789") && (wholeWord(w) || alnumWord && variable(w)) && next()%2 == 0 {
			w = shapes[next()%uint64(len(shapes))]()
		}
		out = append(out, w...)
		i = j
	}
	return string(out)
}

// mutateRuns rewrites each run of letters and digits that holds a digit:
// digits get new values, letters new letters of the same case; the length
// of a run of digits changes too on some runs.
func mutateRuns(s string, seed uint64) string {
	x := seed | 1
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	alnum := func(c byte) bool { return isDigit(c) || isAlpha(c) }
	var out []byte
	for i := 0; i < len(s); {
		if !alnum(s[i]) {
			out = append(out, s[i])
			i++
			continue
		}
		j, digit := i, false
		for j < len(s) && alnum(s[j]) {
			digit = digit || isDigit(s[j])
			j++
		}
		if !digit {
			out = append(out, s[i:j]...)
			i = j
			continue
		}
		for i < j {
			c := s[i]
			switch {
			case isDigit(c):
				k := i
				for k < j && isDigit(s[k]) {
					k++
				}
				n := k - i
				if next()%4 == 0 {
					n = 1 + int(next()%uint64(n+3))
				}
				for ; n > 0; n-- {
					out = append(out, byte('0'+next()%10))
				}
				i = k
				continue
			case c >= 'a' && c <= 'z':
				c = byte('a' + next()%26)
			case c >= 'A' && c <= 'Z':
				c = byte('A' + next()%26)
			}
			out = append(out, c)
			i++
		}
	}
	return string(out)
}

// Known shapes from the sample lines: each line and rewritten copies
// either miss the cache or mask the same.
func TestSkeletonSamples(t *testing.T) {
	b, err := os.ReadFile("testdata/lines.txt")
	if err != nil {
		t.Fatal(err)
	}
	hits, wholeHits := 0, 0
	for i, l := range strings.Split(string(b), "\n") {
		for s := uint64(0); s < 200; s++ {
			m := mutateRuns(l, s*7919+uint64(i))
			if checkSkeleton(t, l, m) {
				hits++
			}
			if checkSkeleton(t, l, mutateWholeWords(l, s*7919+uint64(i))) {
				wholeHits++
			}
			k, w, _ := skeleton(nil, nil, m)
			rk, rw, _ := skeletonRef(m)
			if string(k) != string(rk) || fmt.Sprint(w) != fmt.Sprint(rw) {
				t.Fatalf("%q: skeleton %q %v, reference %q %v", m, k, w, rk, rw)
			}
		}
	}
	if hits == 0 || wholeHits == 0 {
		t.Fatalf("%d rewritten lines and %d with other whole variables hit the cache; the test checks nothing without both", hits, wholeHits)
	}
	t.Logf("%d cache hits checked, %d with other whole variables", hits, wholeHits)
}

// FuzzAddIDs: a message and variants of it with random identifiers in
// place of some words (so the sibling rule and the high-cardinality
// positions come into play) always get a usable cluster number, the same
// one when a message comes again, and a template after Finish. Each run
// mines 48 messages, so minimising a new input takes long: cap it.
//
//	go test -run '^$' -fuzz FuzzAddIDs -fuzztime 60s -fuzzminimizetime 3s ./skills/logscan/miner/
func FuzzAddIDs(f *testing.F) {
	for i, l := range seedLines(f) {
		f.Add(l, uint64(i))
	}
	f.Add("session k3jqxz closed", uint64(1))
	f.Fuzz(func(t *testing.T, a string, seed uint64) {
		g := idGen{rand.New(rand.NewPCG(seed, 1))}
		words := strings.Fields(a)
		if len(words) == 0 || len(words) > 64 {
			return
		}
		m := New()
		var msgs []string
		var ids []int
		for v := 0; v < 24; v++ {
			w := append([]string(nil), words...)
			p := int(seed % uint64(len(w)))
			if v%3 != 0 {
				p = g.r.IntN(len(w))
			}
			w[p] = []func() string{g.b36, g.mixed, g.word, g.pod, g.sha7}[v%5]()
			msg := strings.Join(w, " ")
			msgs, ids = append(msgs, msg), append(ids, m.Add(msg))
		}
		for i, msg := range msgs {
			if id := m.Add(msg); id != ids[i] {
				t.Fatalf("%q: cluster %d, then %d", msg, ids[i], id)
			}
		}
		m.Finish()
		for _, id := range ids {
			if id < 0 || id >= m.Clusters() {
				t.Fatalf("cluster %d out of [0,%d)", id, m.Clusters())
			}
			tp := m.Template(id)
			if tp.Text == "" || tp.ID != TemplateID(tp.Text) {
				t.Fatalf("template %+v", tp)
			}
		}
	})
}

// FuzzWholeWordFlags: the shortcut the skeleton takes agrees with
// wholeWord on every word holding a digit.
func FuzzWholeWordFlags(f *testing.F) {
	for _, w := range []string{"10.0.0.7:8080", "d8c42b2dfcfb864", "3f9a01", "/var/log/1", "1.", "a1,", "http://h/1", "0x1f", "12:30", "1-2_3+4,5"} {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w string) {
		if w == "" || strings.IndexFunc(w, func(r rune) bool { return r < 128 && isWordSep(byte(r)) }) >= 0 || !strings.ContainsAny(w, "0123456789") {
			return
		}
		var acc uint8
		nd, nl := 0, 0
		for i := 0; i < len(w); i++ {
			acc |= skelClass[w[i]]
			if isDigit(w[i]) {
				nd++
			} else if isAlpha(w[i]) {
				nl++
			}
		}
		if got, want := wholeWordFlags(w, acc, nd, nl), wholeWord(w); got != want {
			t.Fatalf("%q: wholeWordFlags %v, wholeWord %v", w, got, want)
		}
	})
}
