//go:build !purego

package miner

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveClassify: classify64 runs here (AVX2, and the OS saves its registers).
var haveClassify = cpu.X86.HasAVX2

// classify64 writes the masks of the 64 bytes at p.
//
//go:noescape
func classify64(p *byte, m *byteMasks)

// classify sets m to the masks of msg's bytes (len(msg) <= 64; bits at and
// past len(msg) are garbage). It reads 64 bytes from msg's start where
// they lie in one page, so no read can fault; otherwise a copy.
func classify(msg string, m *byteMasks) {
	p := unsafe.StringData(msg)
	if uintptr(unsafe.Pointer(p))&4095 > 4096-64 {
		var buf [64]byte
		copy(buf[:], msg)
		classify64(&buf[0], m)
		return
	}
	classify64(p, m)
}
