package miner

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// masksRef is byteMasks computed byte by byte from the masker's own
// predicates.
func masksRef(b []byte) byteMasks {
	var m byteMasks
	for i, c := range b {
		bit := uint64(1) << i
		set := func(f *uint64, ok bool) {
			if ok {
				*f |= bit
			}
		}
		set(&m.sep, isWordSep(c))
		set(&m.digit, isDigit(c))
		set(&m.letter, isAlpha(c))
		set(&m.hexLetter, (c|0x20) >= 'a' && (c|0x20) <= 'f')
		set(&m.eq, c == '=')
		set(&m.quote, c == '"')
		set(&m.slash, c == '/' || c == '\\')
		set(&m.joiner, strings.IndexByte(".:-/+,_", c) >= 0)
		set(&m.high, c >= 0x80)
	}
	return m
}

// TestClassify checks the vector classifier against masksRef on every
// byte value in every position, and on random messages, including ones
// that end near a page boundary (the copy) and ones that do not.
func TestClassify(t *testing.T) {
	if !haveClassify {
		t.Skip("no vector classifier on this machine: skeletons take the byte-by-byte path, which FuzzSkeleton checks")
	}
	check := func(b []byte) {
		t.Helper()
		var got byteMasks
		classify(string(b), &got)
		if string(got.buf[:len(b)]) != string(b) {
			t.Fatalf("%q: buf holds %q", b, got.buf[:len(b)])
		}
		want := masksRef(b)
		valid := lowBits(len(b))
		g := []uint64{got.sep, got.digit, got.letter, got.hexLetter, got.eq, got.quote, got.slash, got.joiner, got.high}
		w := []uint64{want.sep, want.digit, want.letter, want.hexLetter, want.eq, want.quote, want.slash, want.joiner, want.high}
		for f := range g {
			if g[f]&valid != w[f] {
				t.Fatalf("%q: mask %d is %064b, want %064b", b, f, g[f]&valid, w[f])
			}
		}
	}
	for c := 0; c < 256; c++ {
		for _, pos := range []int{0, 15, 16, 31, 32, 47, 63} {
			b := []byte(strings.Repeat("x", 64))
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	page := make([]byte, 3*4096)
	for range 20000 {
		n := 1 + r.IntN(64)
		off := r.IntN(len(page) - n)
		if r.IntN(4) == 0 {
			off = 2*4096 - n + r.IntN(n) // across or just before a page end
			off = min(off, len(page)-n)
		}
		b := page[off : off+n]
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				b[i] = " 0a=\"/\\.:_-+,\tZ9"[r.IntN(16)]
			}
		}
		check(b)
	}
}
