//go:build !purego

#include "textflag.h"

// func blockFlags64(p *byte, n int) uint8
//
// Reads n bytes at p (n a multiple of 64) 64 at a time and returns flags:
// 1 a byte outside ASCII, 2 a '\r', 4 an ESC.
TEXT ·blockFlags64(SB), NOSPLIT, $0-17
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x0d0d0d0d, AX
	MOVQ AX, X1
	VPBROADCASTD X1, Y1 // '\r'
	MOVL $0x1b1b1b1b, AX
	MOVQ AX, X2
	VPBROADCASTD X2, Y2 // ESC
	VPXOR Y4, Y4, Y4 // high bits
	VPXOR Y5, Y5, Y5 // '\r' seen
	VPXOR Y6, Y6, Y6 // ESC seen
	ADDQ SI, CX
loop:
	CMPQ SI, CX
	JAE  done
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y3
	VPOR     Y0, Y4, Y4
	VPOR     Y3, Y4, Y4
	VPCMPEQB Y0, Y1, Y7
	VPCMPEQB Y3, Y1, Y8
	VPOR     Y7, Y5, Y5
	VPOR     Y8, Y5, Y5
	VPCMPEQB Y0, Y2, Y7
	VPCMPEQB Y3, Y2, Y8
	VPOR     Y7, Y6, Y6
	VPOR     Y8, Y6, Y6
	ADDQ $64, SI
	JMP  loop
done:
	XORL AX, AX
	VPMOVMSKB Y4, BX
	TESTL BX, BX
	JZ   nohigh
	ORL  $1, AX
nohigh:
	VPMOVMSKB Y5, BX
	TESTL BX, BX
	JZ   nocr
	ORL  $2, AX
nocr:
	VPMOVMSKB Y6, BX
	TESTL BX, BX
	JZ   noesc
	ORL  $4, AX
noesc:
	VZEROUPPER
	MOVB AX, ret+16(FP)
	RET
