//go:build rsaz

#include "textflag.h"

// func amm52x20x2(out, a, b, m *pair, k0 *[2]uint64)
//
// Two almost-Montgomery multiplications at once, one per 1024-bit CRT half:
// out[h] = a[h]*b[h]/2^1040 mod m[h] (not fully reduced: < 2*m[h] when the
// inputs are), each operand 20 limbs of 52 bits padded to 24 words (three
// ZMM registers). The products go through VPMADD52LUQ/VPMADD52HUQ; the only
// branch is the fixed 20-iteration loop, so the timing does not depend on
// the operands. The lanes of the accumulator stay unnormalised (each below
// 2^61) until the end, where a scalar pass propagates the carries.
TEXT ·amm52x20x2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ m+24(FP), CX
	MOVQ k0+32(FP), R15

	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 256(SI), Z4
	VMOVDQU64 320(SI), Z5
	VMOVDQU64 0(CX), Z6
	VMOVDQU64 64(CX), Z7
	VMOVDQU64 128(CX), Z8
	VMOVDQU64 192(CX), Z9
	VMOVDQU64 256(CX), Z10
	VMOVDQU64 320(CX), Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z22, Z22, Z22

	MOVQ 0(SI), R8
	MOVQ 192(SI), R9
	MOVQ 0(R15), R10
	MOVQ 8(R15), R11
	MOVQ 0(CX), R15
	MOVQ 192(CX), DI
	MOVQ $0xfffffffffffff, R12
	MOVQ $20, R13
	XORQ SI, SI
	XORQ CX, CX

	// The low limb of each accumulator lives in a scalar register (SI,
	// CX), as in OpenSSL's amm52x20_x2: y comes from it without waiting
	// for a vector lane, and lane 0 of Z12/Z15 is scratch, dropped by
	// every shift.
loop:
	VPBROADCASTQ 0(BX), Z18
	VPBROADCASTQ 192(BX), Z20

	// Half 0: acc0 += a0*b[i]; y = acc0*k0 mod 2^52;
	// acc0 = (acc0 + m0*y) >> 52 over the full 128-bit sum.
	MOVQ 0(BX), AX
	MULQ R8
	ADDQ AX, SI
	ADCQ $0, DX
	MOVQ DX, R14
	MOVQ SI, AX
	IMULQ R10, AX
	ANDQ R12, AX
	VPBROADCASTQ AX, Z19
	MULQ R15
	ADDQ AX, SI
	ADCQ DX, R14
	SHRQ $52, SI
	SHLQ $12, R14
	ORQ R14, SI

	// Half 1, the same with CX.
	MOVQ 192(BX), AX
	MULQ R9
	ADDQ AX, CX
	ADCQ $0, DX
	MOVQ DX, R14
	MOVQ CX, AX
	IMULQ R11, AX
	ANDQ R12, AX
	VPBROADCASTQ AX, Z21
	MULQ DI
	ADDQ AX, CX
	ADCQ DX, R14
	SHRQ $52, CX
	SHLQ $12, R14
	ORQ R14, CX

	// acc += lo(a*b[i]) + lo(m*y)
	VPMADD52LUQ Z0, Z18, Z12
	VPMADD52LUQ Z1, Z18, Z13
	VPMADD52LUQ Z2, Z18, Z14
	VPMADD52LUQ Z3, Z20, Z15
	VPMADD52LUQ Z4, Z20, Z16
	VPMADD52LUQ Z5, Z20, Z17
	VPMADD52LUQ Z6, Z19, Z12
	VPMADD52LUQ Z7, Z19, Z13
	VPMADD52LUQ Z8, Z19, Z14
	VPMADD52LUQ Z9, Z21, Z15
	VPMADD52LUQ Z10, Z21, Z16
	VPMADD52LUQ Z11, Z21, Z17

	// Shift one limb down; the new low limb joins the scalar one.
	VALIGNQ $1, Z12, Z13, Z12
	VALIGNQ $1, Z13, Z14, Z13
	VALIGNQ $1, Z14, Z22, Z14
	VALIGNQ $1, Z15, Z16, Z15
	VALIGNQ $1, Z16, Z17, Z16
	VALIGNQ $1, Z17, Z22, Z17
	VMOVQ X12, AX
	ADDQ AX, SI
	VMOVQ X15, AX
	ADDQ AX, CX

	// acc += hi(a*b[i]) + hi(m*y), already one limb down (lane 0's
	// share is in the scalar).
	VPMADD52HUQ Z0, Z18, Z12
	VPMADD52HUQ Z1, Z18, Z13
	VPMADD52HUQ Z2, Z18, Z14
	VPMADD52HUQ Z3, Z20, Z15
	VPMADD52HUQ Z4, Z20, Z16
	VPMADD52HUQ Z5, Z20, Z17
	VPMADD52HUQ Z6, Z19, Z12
	VPMADD52HUQ Z7, Z19, Z13
	VPMADD52HUQ Z8, Z19, Z14
	VPMADD52HUQ Z9, Z21, Z15
	VPMADD52HUQ Z10, Z21, Z16
	VPMADD52HUQ Z11, Z21, Z17

	ADDQ $8, BX
	DECQ R13
	JNZ loop

	MOVQ out+0(FP), DI
	VMOVDQU64 Z12, 0(DI)
	VMOVDQU64 Z13, 64(DI)
	VMOVDQU64 Z14, 128(DI)
	VMOVDQU64 Z15, 192(DI)
	VMOVDQU64 Z16, 256(DI)
	VMOVDQU64 Z17, 320(DI)
	VZEROUPPER
	MOVQ SI, 0(DI)
	MOVQ CX, 192(DI)

	// Normalise both halves to 52-bit limbs: two fixed-length carry
	// chains, interleaved so they run in parallel.
	XORQ AX, AX
	XORQ BX, BX
	MOVQ $20, R13
	MOVQ DI, R14
norm:
	MOVQ 0(R14), DX
	MOVQ 192(R14), CX
	ADDQ AX, DX
	ADDQ BX, CX
	MOVQ DX, AX
	MOVQ CX, BX
	SHRQ $52, AX
	SHRQ $52, BX
	ANDQ R12, DX
	ANDQ R12, CX
	MOVQ DX, 0(R14)
	MOVQ CX, 192(R14)
	ADDQ $8, R14
	DECQ R13
	JNZ norm
	RET

// func selectEntry(out *[24]uint64, table *[32][24]uint64, idx uint64)
//
// Constant-time table lookup: every entry is read and masked, the mask
// all ones only for entry idx, so the memory access pattern is the same
// for every idx.
TEXT ·selectEntry(SB), NOSPLIT, $0-24
	MOVQ out+0(FP), DI
	MOVQ table+8(FP), SI
	MOVQ idx+16(FP), AX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	XORQ CX, CX

sel:
	MOVQ CX, DX
	XORQ AX, DX
	SUBQ $1, DX
	SBBQ R8, R8
	VPBROADCASTQ R8, Z3
	VPANDQ 0(SI), Z3, Z4
	VPORQ Z4, Z0, Z0
	VPANDQ 64(SI), Z3, Z5
	VPORQ Z5, Z1, Z1
	VPANDQ 128(SI), Z3, Z6
	VPORQ Z6, Z2, Z2
	ADDQ $192, SI
	INCQ CX
	CMPQ CX, $32
	JNE sel

	VMOVDQU64 Z0, 0(DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VZEROUPPER
	RET

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET
