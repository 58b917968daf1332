package field

import (
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// modulus is p in little-endian 64-bit limbs; a test checks it against
// fr.Modulus().
var modulus = [4]uint64{0x43e1f593f0000001, 0x2833e84879b97091, 0xb85045b68181585d, 0x30644e72e131a029}

// Add sets z = x + y mod p. It equals fr.Element.Add (addition is the same
// in Montgomery form) but selects the reduced value with a mask instead of
// a branch: on random field elements that branch is unpredictable (it
// dominated the cost of the Poseidon2 linear layers), and a mask does not
// depend on the values.
func Add(z, x, y *fr.Element) {
	var c, b uint64
	s0, c := bits.Add64(x[0], y[0], 0)
	s1, c := bits.Add64(x[1], y[1], c)
	s2, c := bits.Add64(x[2], y[2], c)
	s3, _ := bits.Add64(x[3], y[3], c) // p < 2^254: no carry out
	r0, b := bits.Sub64(s0, modulus[0], 0)
	r1, b := bits.Sub64(s1, modulus[1], b)
	r2, b := bits.Sub64(s2, modulus[2], b)
	r3, b := bits.Sub64(s3, modulus[3], b)
	keep := -b // all ones when s < p
	z[0] = r0 ^ (keep & (r0 ^ s0))
	z[1] = r1 ^ (keep & (r1 ^ s1))
	z[2] = r2 ^ (keep & (r2 ^ s2))
	z[3] = r3 ^ (keep & (r3 ^ s3))
}
