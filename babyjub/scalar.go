package babyjub

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// scalar is an integer modulo L, the order of the prime subgroup
// (doc/crypto.md §a), as four little-endian 64-bit limbs. Every scalar value is
// canonical (< L). Arithmetic is constant time: the secret key, nonce secret
// and nonce pass through it (doc/crypto.md §e; design rule: no math/big on
// secret-dependent paths).
type scalar [4]uint64

// orderL is L = 2736030358979909402780800718157159386076813972158567259200215660948447373041
// (doc/crypto.md §a), a 251-bit prime.
var orderL = scalar{0x677297dc392126f1, 0xab3eedb83920ee0a, 0x370a08b6d0302b0b, 0x060c89ce5c263405}

// Montgomery constants for R = 2^256, derived from orderL (checked by
// TestScalarConstants): lNegInv = −L⁻¹ mod 2^64, r2 = R² mod L, r3 = R³ mod L.
const lNegInv = 0x532ce5aebc48f5ef

var (
	r2 = scalar{0x35e44abee7ecb21e, 0x74646cacf5f84ec4, 0xe472df203faa158f, 0x0445b524f1ba50a8}
	r3 = scalar{0x30886e7b42917c21, 0x98dae87b55d7cd2a, 0xeefe3d08cc608b7b, 0x02b4dbffb2bc97aa}
)

var errScalarNotCanonical = errors.New("scalar is not canonical: s ≥ L") // doc/crypto.md §e step 5

// montMul returns a·b·2^-256 mod L. It requires a < 2^256 and b < L, which
// bounds the CIOS result below 2L before the final conditional subtraction.
func montMul(a, b *[4]uint64) scalar {
	var t [6]uint64
	for i := 0; i < 4; i++ {
		// t += a[i]·b
		var carry uint64
		for j := 0; j < 4; j++ {
			t[j], carry = mulAddCarry(a[i], b[j], t[j], carry)
		}
		var c uint64
		t[4], c = bits.Add64(t[4], carry, 0)
		t[5] = c
		// t = (t + m·L) / 2^64, with m chosen so the low word vanishes.
		m := t[0] * lNegInv
		_, carry = mulAddCarry(m, orderL[0], t[0], 0)
		for j := 1; j < 4; j++ {
			t[j-1], carry = mulAddCarry(m, orderL[j], t[j], carry)
		}
		t[3], c = bits.Add64(t[4], carry, 0)
		t[4] = t[5] + c
	}
	return subLIfNotLess(&[5]uint64{t[0], t[1], t[2], t[3], t[4]})
}

// mulAddCarry returns the low and high words of x·y + z + carry.
func mulAddCarry(x, y, z, carry uint64) (lo, hi uint64) {
	hi, lo = bits.Mul64(x, y)
	var c uint64
	lo, c = bits.Add64(lo, z, 0)
	hi += c
	lo, c = bits.Add64(lo, carry, 0)
	hi += c
	return lo, hi
}

// subLIfNotLess reduces t < 2L to [0, L) in constant time.
func subLIfNotLess(t *[5]uint64) scalar {
	var d scalar
	var b uint64
	d[0], b = bits.Sub64(t[0], orderL[0], 0)
	d[1], b = bits.Sub64(t[1], orderL[1], b)
	d[2], b = bits.Sub64(t[2], orderL[2], b)
	d[3], b = bits.Sub64(t[3], orderL[3], b)
	_, b = bits.Sub64(t[4], 0, b)
	keep := -b // all ones when t < L
	for i := range d {
		d[i] = d[i]&^keep | t[i]&keep
	}
	return d
}

// reduceWide returns (lo + hi·2^256) mod L for any 512-bit value, in
// constant time: lo·R and hi·R² are both Montgomery forms, their sum is the
// Montgomery form of the value, and a final multiplication by 1 leaves it.
func reduceWide(lo, hi *[4]uint64) scalar {
	x := montMul(lo, (*[4]uint64)(&r2))
	y := montMul(hi, (*[4]uint64)(&r3))
	sum := scalarAdd(&x, &y)
	return montMul((*[4]uint64)(&sum), &[4]uint64{1})
}

// scalarFromWideBytes reads b as a little-endian integer of up to 512 bits
// and reduces it mod L (doc/crypto.md §e: sk, ns and r are "LE(...) mod L").
func scalarFromWideBytes(b []byte) scalar {
	var buf [64]byte
	copy(buf[:], b)
	var lo, hi [4]uint64
	for i := 0; i < 4; i++ {
		lo[i] = binary.LittleEndian.Uint64(buf[8*i:])
		hi[i] = binary.LittleEndian.Uint64(buf[32+8*i:])
	}
	return reduceWide(&lo, &hi)
}

// scalarAdd returns a + b mod L.
func scalarAdd(a, b *scalar) scalar {
	var t [5]uint64
	var c uint64
	t[0], c = bits.Add64(a[0], b[0], 0)
	t[1], c = bits.Add64(a[1], b[1], c)
	t[2], c = bits.Add64(a[2], b[2], c)
	t[3], c = bits.Add64(a[3], b[3], c)
	t[4] = c
	return subLIfNotLess(&t)
}

// scalarNeg returns −a mod L.
func scalarNeg(a *scalar) scalar {
	var t [5]uint64
	var b uint64
	t[0], b = bits.Sub64(orderL[0], a[0], 0)
	t[1], b = bits.Sub64(orderL[1], a[1], b)
	t[2], b = bits.Sub64(orderL[2], a[2], b)
	t[3], _ = bits.Sub64(orderL[3], a[3], b)
	return subLIfNotLess(&t) // maps L − 0 = L to 0
}

// scalarMulAdd returns a + b·c mod L (doc/crypto.md §e signing step 3).
func scalarMulAdd(a, b, c *scalar) scalar {
	bc := montMul((*[4]uint64)(b), (*[4]uint64)(c))
	bc = montMul((*[4]uint64)(&bc), (*[4]uint64)(&r2))
	return scalarAdd(a, &bc)
}

// setCanonicalBytes reads 32 little-endian bytes and rejects values ≥ L
// (doc/crypto.md §e step 5: never reduce). Only public values are parsed here.
func (s *scalar) setCanonicalBytes(b []byte) error {
	var v scalar
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	if !v.lessThanL() {
		return errScalarNotCanonical
	}
	*s = v
	return nil
}

func (s *scalar) lessThanL() bool {
	var b uint64
	_, b = bits.Sub64(s[0], orderL[0], 0)
	_, b = bits.Sub64(s[1], orderL[1], b)
	_, b = bits.Sub64(s[2], orderL[2], b)
	_, b = bits.Sub64(s[3], orderL[3], b)
	return b == 1
}

// bytes returns LE32(s).
func (s *scalar) bytes() [32]byte {
	var b [32]byte
	for i, w := range s {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}
