//go:build !purego

package logscan

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveBlockFlags: blockFlags64 runs here (AVX2).
var haveBlockFlags = cpu.X86.HasAVX2

//go:noescape
func blockFlags64(p *byte, n int) uint8

// scanFlags returns s's blockFlags in one pass.
func scanFlags(s string) uint8 {
	if !haveBlockFlags {
		return scanFlagsGeneric(s)
	}
	n := len(s) &^ 63
	var f uint8
	if n > 0 {
		f = blockFlags64(unsafe.StringData(s), n)
	}
	return f | scanFlagsGeneric(s[n:])
}
