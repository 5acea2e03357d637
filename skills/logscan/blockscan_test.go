package logscan

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestScanFlags compares scanFlags with the generic scan on regions of
// every length up to 300 bytes, with one byte of each kind at every place.
func TestScanFlags(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := make([]byte, 300)
	for i := range base {
		base[i] = byte(' ' + r.IntN(95))
	}
	for n := 0; n <= len(base); n++ {
		s := string(base[:n])
		if got := scanFlags(s); got != 0 {
			t.Fatalf("len %d ASCII: flags %b, want 0", n, got)
		}
		for i := 0; i < n; i += 1 + i/40 {
			for _, c := range []struct {
				b    byte
				want uint8
			}{{0x80, flagHigh}, {0xff, flagHigh}, {'\r', flagCR}, {0x1b, flagESC}} {
				b := []byte(s)
				b[i] = c.b
				if got := scanFlags(string(b)); got != c.want || scanFlagsGeneric(string(b)) != c.want {
					t.Fatalf("len %d, %#x at %d: flags %b, generic %b, want %b", n, c.b, i, got, scanFlagsGeneric(string(b)), c.want)
				}
			}
		}
	}
	all := strings.Repeat("x", 130) + "\r\x1bé"
	if got := scanFlags(all); got != flagHigh|flagCR|flagESC {
		t.Fatalf("all three: flags %b", got)
	}
}
