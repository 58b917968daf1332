//go:build !purego

#include "textflag.h"

// Element-wise products in the Montgomery domain of the BN254 scalar field
// with BMI2 MULX and the two ADX carry chains (ADCX on CF, ADOX on OF), one
// call per vector instead of one per product. Each product is the
// coarsely-integrated operand scanning (CIOS) Montgomery multiplication
// with the "no carry" simplification, valid because the top limb of p is
// below 2^62: the running value fits four limbs plus one carry word D.
// Conditional subtractions are CMOVs, so nothing branches on the values.
// Outputs may alias inputs: an element is written after it is read.

// p in little-endian limbs (doc/crypto.md §a).
DATA p<>+0(SB)/8, $0x43e1f593f0000001
DATA p<>+8(SB)/8, $0x2833e84879b97091
DATA p<>+16(SB)/8, $0xb85045b68181585d
DATA p<>+24(SB)/8, $0x30644e72e131a029
GLOBL p<>(SB), RODATA|NOPTR, $32

// Registers: SI = x[k], R8 = y[k], DI = z[k], R9 = elements left;
// R10..R13 = t0..t3, CX = D; DX = the MULX multiplier, AX/BX = its product.

// MULROW adds x·y[i] to t (y[i] at byte offset off of R8); leaves D in CX.
#define MULROW(off) \
	XORQ  AX, AX          \
	MOVQ  off(R8), DX     \
	MULXQ 0(SI), AX, BX   \
	ADOXQ AX, R10         \
	ADCXQ BX, R11         \
	MULXQ 8(SI), AX, BX   \
	ADOXQ AX, R11         \
	ADCXQ BX, R12         \
	MULXQ 16(SI), AX, BX  \
	ADOXQ AX, R12         \
	ADCXQ BX, R13         \
	MULXQ 24(SI), AX, BX  \
	ADOXQ AX, R13         \
	MOVQ  $0, AX          \
	ADCXQ AX, BX          \
	ADOXQ AX, BX          \
	MOVQ  BX, CX

// REDUCE sets t = (t + D·2^256 + m·p) / 2^64 with m = −t0·p⁻¹ mod 2^64.
#define REDUCE \
	MOVQ  $0xc2e1f593efffffff, DX \
	IMULQ R10, DX                 \
	XORQ  AX, AX                  \
	MULXQ p<>+0(SB), AX, BX       \
	ADCXQ R10, AX                 \
	MOVQ  BX, R10                 \
	MULXQ p<>+8(SB), AX, BX       \
	ADCXQ R11, R10                \
	ADOXQ AX, R10                 \
	MOVQ  BX, R11                 \
	MULXQ p<>+16(SB), AX, BX      \
	ADCXQ R12, R11                \
	ADOXQ AX, R11                 \
	MOVQ  BX, R12                 \
	MULXQ p<>+24(SB), AX, BX      \
	ADCXQ R13, R12                \
	ADOXQ AX, R12                 \
	MOVQ  $0, AX                  \
	ADCXQ AX, BX                  \
	ADOXQ CX, BX                  \
	MOVQ  BX, R13

// CONDSUB reduces t < 2p to t mod p; clobbers AX, BX, CX, DX.
#define CONDSUB \
	MOVQ    R10, AX           \
	SUBQ    p<>+0(SB), AX     \
	MOVQ    R11, BX           \
	SBBQ    p<>+8(SB), BX     \
	MOVQ    R12, CX           \
	SBBQ    p<>+16(SB), CX    \
	MOVQ    R13, DX           \
	SBBQ    p<>+24(SB), DX    \
	CMOVQCC AX, R10           \
	CMOVQCC BX, R11           \
	CMOVQCC CX, R12           \
	CMOVQCC DX, R13

// MULMOD sets t = x·y mod p for x at SI and y at R8.
#define MULMOD \
	XORQ R10, R10 \
	XORQ R11, R11 \
	XORQ R12, R12 \
	XORQ R13, R13 \
	MULROW(0)     \
	REDUCE        \
	MULROW(8)     \
	REDUCE        \
	MULROW(16)    \
	REDUCE        \
	MULROW(24)    \
	REDUCE        \
	CONDSUB

// STORE writes t to the element at reg.
#define STORE(reg) \
	MOVQ R10, 0(reg)  \
	MOVQ R11, 8(reg)  \
	MOVQ R12, 16(reg) \
	MOVQ R13, 24(reg)

// func mulVecADX(z, x, y *fr.Element, n uint64): z[k] = x[k]·y[k], k < n.
TEXT ·mulVecADX(SB), NOSPLIT, $0-32
	MOVQ  z+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  y+16(FP), R8
	MOVQ  n+24(FP), R9
	TESTQ R9, R9
	JEQ   mulDone

mulLoop:
	MULMOD
	STORE(DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ R9
	JNE  mulLoop

mulDone:
	RET

// func mulAddVecADX(z, x, y, c *fr.Element, n uint64): z[k] = x[k]·y[k] + c.
TEXT ·mulAddVecADX(SB), NOSPLIT, $0-40
	MOVQ  z+0(FP), DI
	MOVQ  x+8(FP), SI
	MOVQ  y+16(FP), R8
	MOVQ  n+32(FP), R9
	TESTQ R9, R9
	JEQ   mulAddDone

mulAddLoop:
	MULMOD
	MOVQ c+24(FP), AX
	ADDQ 0(AX), R10
	ADCQ 8(AX), R11
	ADCQ 16(AX), R12
	ADCQ 24(AX), R13 // x·y + c < 2p < 2^255: no carry out
	CONDSUB
	STORE(DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ R9
	JNE  mulAddLoop

mulAddDone:
	RET
