package logscan

import (
	"strings"
	"unicode/utf8"
)

// What a block's bytes hold, found in one pass (scanFlags) before its lines
// are split: most blocks have no byte outside ASCII, no '\r' and no ESC, so
// no line of theirs needs its UTF-8 checked, its CR dropped or its ANSI
// escapes stripped.
const (
	flagHigh = 1 << iota // a byte outside ASCII
	flagCR               // a '\r'
	flagESC              // an ESC (0x1b)
)

// scanFlagsGeneric is scanFlags without a vector unit.
func scanFlagsGeneric(s string) uint8 {
	var f uint8
	if !asciiOnly(s) {
		f |= flagHigh
	}
	if strings.IndexByte(s, '\r') >= 0 {
		f |= flagCR
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		f |= flagESC
	}
	return f
}

// asciiOnly reports whether every byte of s is below utf8.RuneSelf.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
