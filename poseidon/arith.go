package poseidon

import (
	"encoding/binary"
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// sumOf returns Σ s mod p for 2 ≤ len(s) ≤ 16. The limbs are added
// without reduction into a fifth word (16·p < 2^258), then reduced once by
// conditional subtraction of 2^k·p, …, 2p, p: the latency is one carry
// chain instead of one modular addition per term, and nothing branches on
// the values.
func sumOf(s []fr.Element) fr.Element {
	var w0, w1, w2, w3, w4 uint64
	for i := range s {
		var c uint64
		w0, c = bits.Add64(w0, s[i][0], 0)
		w1, c = bits.Add64(w1, s[i][1], c)
		w2, c = bits.Add64(w2, s[i][2], c)
		w3, c = bits.Add64(w3, s[i][3], c)
		w4 += c
	}
	for k := bits.Len(uint(len(s)-1)) - 1; k >= 0; k-- { // Σ < 2^(k+1)·p
		w0, w1, w2, w3, w4 = condSubtract(w0, w1, w2, w3, w4, &modulusMultiples[k])
	}
	return fr.Element{w0, w1, w2, w3}
}

// modulusMultiples holds p, 2p, 4p and 8p in five little-endian limbs.
var modulusMultiples = func() (m [4][5]uint64) {
	var b [32]byte
	fr.Modulus().FillBytes(b[:])
	var modulus [4]uint64 // little-endian limbs
	for i := range modulus {
		modulus[i] = binary.BigEndian.Uint64(b[24-8*i:])
	}
	for k := range m {
		for i := range 5 {
			var lo, hi uint64
			if i < 4 {
				lo = modulus[i] << k
			}
			if i > 0 && k > 0 {
				hi = modulus[i-1] >> (64 - k)
			}
			m[k][i] = lo | hi
		}
	}
	return m
}()

// condSubtract returns w − m if w ≥ m and w otherwise, without branching.
func condSubtract(w0, w1, w2, w3, w4 uint64, m *[5]uint64) (uint64, uint64, uint64, uint64, uint64) {
	d0, b := bits.Sub64(w0, m[0], 0)
	d1, b := bits.Sub64(w1, m[1], b)
	d2, b := bits.Sub64(w2, m[2], b)
	d3, b := bits.Sub64(w3, m[3], b)
	d4, b := bits.Sub64(w4, m[4], b)
	keep := -b // all ones when w < m
	return d0 ^ (keep & (d0 ^ w0)), d1 ^ (keep & (d1 ^ w1)), d2 ^ (keep & (d2 ^ w2)),
		d3 ^ (keep & (d3 ^ w3)), d4 ^ (keep & (d4 ^ w4))
}

// sbox sets x ← x^5.
func sbox(x *fr.Element) {
	var x4 fr.Element
	x4.Square(x)
	x4.Square(&x4)
	x.Mul(x, &x4)
}
