//go:build !purego

#include "textflag.h"

// The bytes classify64 compares with, each repeated over 32 bytes: '0', 9
// (the last digit's offset and '\t'), 0x20 (the case bit and ' '), 'a', 25,
// 5, glue, 4, '=', '"', '/', '\\', '+', ':', '_'.
DATA skconst<>+0(SB)/8, $0x3030303030303030
DATA skconst<>+8(SB)/8, $0x3030303030303030
DATA skconst<>+16(SB)/8, $0x3030303030303030
DATA skconst<>+24(SB)/8, $0x3030303030303030
DATA skconst<>+32(SB)/8, $0x0909090909090909
DATA skconst<>+40(SB)/8, $0x0909090909090909
DATA skconst<>+48(SB)/8, $0x0909090909090909
DATA skconst<>+56(SB)/8, $0x0909090909090909
DATA skconst<>+64(SB)/8, $0x2020202020202020
DATA skconst<>+72(SB)/8, $0x2020202020202020
DATA skconst<>+80(SB)/8, $0x2020202020202020
DATA skconst<>+88(SB)/8, $0x2020202020202020
DATA skconst<>+96(SB)/8, $0x6161616161616161
DATA skconst<>+104(SB)/8, $0x6161616161616161
DATA skconst<>+112(SB)/8, $0x6161616161616161
DATA skconst<>+120(SB)/8, $0x6161616161616161
DATA skconst<>+128(SB)/8, $0x1919191919191919
DATA skconst<>+136(SB)/8, $0x1919191919191919
DATA skconst<>+144(SB)/8, $0x1919191919191919
DATA skconst<>+152(SB)/8, $0x1919191919191919
DATA skconst<>+160(SB)/8, $0x0505050505050505
DATA skconst<>+168(SB)/8, $0x0505050505050505
DATA skconst<>+176(SB)/8, $0x0505050505050505
DATA skconst<>+184(SB)/8, $0x0505050505050505
DATA skconst<>+192(SB)/8, $0x0101010101010101
DATA skconst<>+200(SB)/8, $0x0101010101010101
DATA skconst<>+208(SB)/8, $0x0101010101010101
DATA skconst<>+216(SB)/8, $0x0101010101010101
DATA skconst<>+224(SB)/8, $0x0404040404040404
DATA skconst<>+232(SB)/8, $0x0404040404040404
DATA skconst<>+240(SB)/8, $0x0404040404040404
DATA skconst<>+248(SB)/8, $0x0404040404040404
DATA skconst<>+256(SB)/8, $0x3d3d3d3d3d3d3d3d
DATA skconst<>+264(SB)/8, $0x3d3d3d3d3d3d3d3d
DATA skconst<>+272(SB)/8, $0x3d3d3d3d3d3d3d3d
DATA skconst<>+280(SB)/8, $0x3d3d3d3d3d3d3d3d
DATA skconst<>+288(SB)/8, $0x2222222222222222
DATA skconst<>+296(SB)/8, $0x2222222222222222
DATA skconst<>+304(SB)/8, $0x2222222222222222
DATA skconst<>+312(SB)/8, $0x2222222222222222
DATA skconst<>+320(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA skconst<>+328(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA skconst<>+336(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA skconst<>+344(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA skconst<>+352(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA skconst<>+360(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA skconst<>+368(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA skconst<>+376(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA skconst<>+384(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA skconst<>+392(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA skconst<>+400(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA skconst<>+408(SB)/8, $0x2b2b2b2b2b2b2b2b
DATA skconst<>+416(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA skconst<>+424(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA skconst<>+432(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA skconst<>+440(SB)/8, $0x3a3a3a3a3a3a3a3a
DATA skconst<>+448(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA skconst<>+456(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA skconst<>+464(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA skconst<>+472(SB)/8, $0x5f5f5f5f5f5f5f5f
GLOBL skconst<>(SB), RODATA|NOPTR, $480

// CLASSIFY compares the 32 bytes in Y0 and leaves one mask byte (0xff or
// 0) per byte and class: Y5 separators (' ', glue, '\t'..'\r'), Y6 digits,
// Y7 letters, Y8 hex letters, Y9 '=', Y10 '"', Y11 '/' and '\\', Y12
// joiners ('+' ',' '-' '.' '/', ':', '_'); bytes outside ASCII are Y0's own
// high bits. A byte is in a range [lo, lo+r] when min(b-lo, r) == b-lo
// (unsigned, wrapping): digits b-'0' <= 9, letters (b|0x20)-'a' <= 25, hex
// letters <= 5, '\t'..'\r' b-9 <= 4, '+'..'/' b-'+' <= 4.
#define CLASSIFY \
	VPSUBB   skconst<>+0(SB), Y0, Y1; \
	VPMINUB  skconst<>+32(SB), Y1, Y2; \
	VPCMPEQB Y1, Y2, Y6; \
	VPOR     skconst<>+64(SB), Y0, Y3; \
	VPSUBB   skconst<>+96(SB), Y3, Y4; \
	VPMINUB  skconst<>+128(SB), Y4, Y2; \
	VPCMPEQB Y4, Y2, Y7; \
	VPMINUB  skconst<>+160(SB), Y4, Y2; \
	VPCMPEQB Y4, Y2, Y8; \
	VPCMPEQB skconst<>+64(SB), Y0, Y5; \
	VPCMPEQB skconst<>+192(SB), Y0, Y2; \
	VPOR     Y2, Y5, Y5; \
	VPSUBB   skconst<>+32(SB), Y0, Y2; \
	VPMINUB  skconst<>+224(SB), Y2, Y3; \
	VPCMPEQB Y2, Y3, Y3; \
	VPOR     Y3, Y5, Y5; \
	VPCMPEQB skconst<>+256(SB), Y0, Y9; \
	VPCMPEQB skconst<>+288(SB), Y0, Y10; \
	VPCMPEQB skconst<>+320(SB), Y0, Y2; \
	VPCMPEQB skconst<>+352(SB), Y0, Y3; \
	VPOR     Y3, Y2, Y11; \
	VPSUBB   skconst<>+384(SB), Y0, Y2; \
	VPMINUB  skconst<>+224(SB), Y2, Y3; \
	VPCMPEQB Y2, Y3, Y12; \
	VPCMPEQB skconst<>+416(SB), Y0, Y2; \
	VPOR     Y2, Y12, Y12; \
	VPCMPEQB skconst<>+448(SB), Y0, Y2; \
	VPOR     Y2, Y12, Y12

// HIGH moves a class's mask bytes for bytes 32-63 into the top half of the
// register holding bytes 0-31's, and writes the mask whole at off(DI).
#define HIGH(y, r, off) \
	VPMOVMSKB y, CX; \
	SHLQ      $32, CX; \
	ORQ       CX, r; \
	MOVQ      r, off(DI)

// func classify64(p *byte, m *byteMasks)
//
// The 64 bytes in two halves of 32, each also copied to m.buf: the first
// half's masks stay in registers until the second's are shifted in, so each
// mask is written once, whole (a load of a mask written in two halves would
// stall).
TEXT ·classify64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ m+8(FP), DI

	VMOVDQU (SI), Y0
	VMOVDQU Y0, 72(DI)
	CLASSIFY
	VPMOVMSKB Y5, R9
	VPMOVMSKB Y6, BX
	VPMOVMSKB Y7, DX
	VPMOVMSKB Y8, R8
	VPMOVMSKB Y9, R10
	VPMOVMSKB Y10, R11
	VPMOVMSKB Y11, R12
	VPMOVMSKB Y12, R13
	VPMOVMSKB Y0, AX

	VMOVDQU 32(SI), Y0
	VMOVDQU Y0, 104(DI)
	CLASSIFY
	HIGH(Y5, R9, 0)
	HIGH(Y6, BX, 8)
	HIGH(Y7, DX, 16)
	HIGH(Y8, R8, 24)
	HIGH(Y9, R10, 32)
	HIGH(Y10, R11, 40)
	HIGH(Y11, R12, 48)
	HIGH(Y12, R13, 56)
	HIGH(Y0, AX, 64)
	VZEROUPPER
	RET
