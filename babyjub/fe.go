package babyjub

import (
	"math/bits"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Branch-free addition, subtraction and negation in F_p for the point
// formulas, which also run on secret-dependent values (k·G for sk and r).
// gnark-crypto's Add, Sub, Double and Neg branch on the carry or on zero;
// its Mul and Square are branch-free (amd64 assembly using CMOV). The
// operations act on the Montgomery representation, where they are the same
// as on the values.

// p as little-endian limbs (doc/crypto.md §a).
const (
	p0 = 0x43e1f593f0000001
	p1 = 0x2833e84879b97091
	p2 = 0xb85045b68181585d
	p3 = 0x30644e72e131a029
)

var modulusP = [4]uint64{p0, p1, p2, p3}

// feAdd sets z = x + y mod p. x + y < 2p < 2^255 never overflows four limbs.
func feAdd(z, x, y *fr.Element) {
	var c, b uint64
	t0, c := bits.Add64(x[0], y[0], 0)
	t1, c := bits.Add64(x[1], y[1], c)
	t2, c := bits.Add64(x[2], y[2], c)
	t3, _ := bits.Add64(x[3], y[3], c)
	d0, b := bits.Sub64(t0, p0, 0)
	d1, b := bits.Sub64(t1, p1, b)
	d2, b := bits.Sub64(t2, p2, b)
	d3, b := bits.Sub64(t3, p3, b)
	keep := -b // all ones when t < p
	z[0] = d0&^keep | t0&keep
	z[1] = d1&^keep | t1&keep
	z[2] = d2&^keep | t2&keep
	z[3] = d3&^keep | t3&keep
}

// feSub sets z = x − y mod p.
func feSub(z, x, y *fr.Element) {
	var b, c uint64
	t0, b := bits.Sub64(x[0], y[0], 0)
	t1, b := bits.Sub64(x[1], y[1], b)
	t2, b := bits.Sub64(x[2], y[2], b)
	t3, b := bits.Sub64(x[3], y[3], b)
	mask := -b // all ones when x < y: add p back
	z[0], c = bits.Add64(t0, p0&mask, 0)
	z[1], c = bits.Add64(t1, p1&mask, c)
	z[2], c = bits.Add64(t2, p2&mask, c)
	z[3], _ = bits.Add64(t3, p3&mask, c)
}

// feNeg sets z = −x mod p.
func feNeg(z, x *fr.Element) {
	var zero fr.Element
	feSub(z, &zero, x)
}
