package babyjub

import (
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

// Fixed-base multiplication k·G for secret k (doc/crypto.md §e: the
// multiplications by sk and r must not depend on the secret). Eight
// independent accumulators advance together, one coordinate per
// gnark-crypto vector, so that each product of the 7M mixed addition is one
// 8-lane vector multiplication (AVX-512 IFMA where the CPU has it;
// gnark-crypto's vector assembly has no data-dependent branches).

const lanes = 8

// nielsRow holds j·B for j = 1..8, B = 16^i·G in row i of nielsTable.
type nielsRow [8]nielsPoint

// nielsTable is the fixed-base table for G: 64 rows cover every signed
// radix-16 digit of a scalar < 2^252, so k·G needs 64 additions and no
// doublings. Built once on first use (48 KiB).
var nielsTable = sync.OnceValue(func() *[64]nielsRow {
	var table [64]nielsRow
	var rowBase, multiple point
	rowBase.fromAffine(&generator)
	var c completedPoint
	for i := range table {
		var step nielsPoint
		rowAffine := rowBase.affine()
		step.fromAffine(&rowAffine)
		multiple = rowBase
		for j := range table[i] {
			a := multiple.affine()
			table[i][j].fromAffine(&a)
			multiple.fromCompleted(c.addNiels(&multiple, &step))
		}
		var pp projPoint
		pp.fromPoint(&rowBase)
		for k := 0; k < 4; k++ {
			pp.fromCompleted(c.double(&pp))
		}
		rowBase.fromCompleted(&c)
	}
	return &table
})

// laneGroup is eight extended points (U:Y:Z:T) of the a = −1 curve, with
// u = U/Z, y = Y/Z and u·y = T/Z, stored by coordinate.
type laneGroup struct {
	u, y, z, t [lanes]fr.Element
}

// nielsLanes is eight Niels points stored by coordinate.
type nielsLanes struct {
	yPlusU, yMinusU, t2d [lanes]fr.Element
}

// scalarBaseMult returns k·G in constant time on the path chosen for it.
func scalarBaseMult(k *scalar) point {
	return scalarBaseMultOn(k, field.Effective(baseMultChoice().Path))
}

// baseMultChoice calibrates scalarBaseMult's path on first use.
var baseMultChoice = sync.OnceValue(func() field.Choice {
	var k scalar
	for i := range k {
		k[i] = 0x0123456789abcdef * uint64(i+1)
	}
	k[3] &= 1<<59 - 1 // k < 2^252, as signedRadix16 requires
	return field.Calibrate("babyjub-base-mult", func(p field.Path) { scalarBaseMultOn(&k, p) })
})

// Paths returns the calibrated path of the fixed-base multiplication
// (key derivation and signing), calibrating it if it was not used yet; the
// server logs it at start-up. field.ForcePath overrides it.
func Paths() []field.Choice { return []field.Choice{baseMultChoice()} }

// scalarBaseMultOn returns k·G in constant time: the digit sequence, table
// scans and vector operations are the same for every k. Lane l accumulates
// the digits i ≡ l mod 8. The products use path.
func scalarBaseMultOn(k *scalar, path field.Path) point {
	digits := k.signedRadix16()
	table := nielsTable()
	var acc laneGroup
	for l := range lanes {
		acc.y[l], acc.z[l] = one, one
	}
	var q nielsLanes
	for i := 0; i < len(digits); i += lanes {
		for l := range lanes {
			table[i+l].lookup(&q, l, digits[i+l])
		}
		acc.addNiels(&q, path)
	}
	return acc.sum(path)
}

// addNiels sets every lane p_l = p_l + q_l (completedPoint.addNiels, 7M):
//
//	A = (Y−U)·(y−u), B = (Y+U)·(y+u), C = T·2d'·t, D = 2Z,
//	E = B−A, F = D−C, G = D+C, H = B+A,
//	U' = E·F, Y' = G·H, Z' = F·G, T' = E·H.
func (p *laneGroup) addNiels(q *nielsLanes, path field.Path) {
	var a, b, c, d, e, f, g, h [lanes]fr.Element
	u, y, z, t := fr.Vector(p.u[:]), fr.Vector(p.y[:]), fr.Vector(p.z[:]), fr.Vector(p.t[:])
	va, vb, vc, vd := fr.Vector(a[:]), fr.Vector(b[:]), fr.Vector(c[:]), fr.Vector(d[:])
	ve, vf, vg, vh := fr.Vector(e[:]), fr.Vector(f[:]), fr.Vector(g[:]), fr.Vector(h[:])
	vecSub(va, y, u)
	field.MulVec(path, va, va, q.yMinusU[:])
	vecAdd(vb, y, u)
	field.MulVec(path, vb, vb, q.yPlusU[:])
	field.MulVec(path, vc, t, q.t2d[:])
	vecAdd(vd, z, z)
	vecSub(ve, vb, va)
	vecSub(vf, vd, vc)
	vecAdd(vg, vd, vc)
	vecAdd(vh, vb, va)
	field.MulVec(path, u, ve, vf)
	field.MulVec(path, y, vg, vh)
	field.MulVec(path, z, vf, vg)
	field.MulVec(path, t, ve, vh)
}

// sum returns the sum of the eight lanes as a BabyJubJub point.
func (p *laneGroup) sum(path field.Path) point {
	for h := lanes / 2; h >= 1; h /= 2 {
		p.fold(h, path)
	}
	return point{p.u[0], p.y[0], p.z[0], p.t[0]}
}

// fold sets lane l to lane l + lane l+h for every l < h, with the
// products of all h additions packed into two vector multiplications
// (completedPoint.add, 8M):
//
//	A = (Y1−U1)·(Y2−U2), B = (Y1+U1)·(Y2+U2), C = T1·2d'·T2, D = 2·Z1·Z2,
//	then E, F, G, H and the result as in addNiels.
func (p *laneGroup) fold(h int, path field.Path) {
	var lhs, rhs, prod [2 * lanes]fr.Element
	l, r, m := fr.Vector(lhs[:4*h]), fr.Vector(rhs[:4*h]), fr.Vector(prod[:4*h])
	p.packOperand(l, 0, h)
	p.packOperand(r, h, h)
	field.MulVec(path, m, l, r) // A | B | T1·T2 | Z1·Z2
	a, b, c, d := m[:h], m[h:2*h], m[2*h:3*h], m[3*h:]
	c.ScalarMul(c, &iso2D)
	vecAdd(d, d, d)
	var eb, fb, gb, hb [lanes / 2]fr.Element
	e, f, g, hh := fr.Vector(eb[:h]), fr.Vector(fb[:h]), fr.Vector(gb[:h]), fr.Vector(hb[:h])
	vecSub(e, b, a)
	vecSub(f, d, c)
	vecAdd(g, d, c)
	vecAdd(hh, b, a)
	// (U, Y, Z, T) = [E | G | F | E] ⊙ [F | H | G | H].
	for i, pair := range [4][2]fr.Vector{{e, f}, {g, hh}, {f, g}, {e, hh}} {
		copy(l[i*h:], pair[0])
		copy(r[i*h:], pair[1])
	}
	field.MulVec(path, m, l, r)
	copy(p.u[:h], m[:h])
	copy(p.y[:h], m[h:2*h])
	copy(p.z[:h], m[2*h:3*h])
	copy(p.t[:h], m[3*h:])
}

// packOperand writes [Y−U | Y+U | T | Z] of lanes from..from+h−1 into v.
func (p *laneGroup) packOperand(v fr.Vector, from, h int) {
	sel := func(c *[lanes]fr.Element) fr.Vector { return c[from : from+h] }
	ym, yp := v[:h], v[h:2*h]
	vecSub(ym, sel(&p.y), sel(&p.u))
	vecAdd(yp, sel(&p.y), sel(&p.u))
	copy(v[2*h:3*h], sel(&p.t))
	copy(v[3*h:], sel(&p.z))
}

// lookup sets lane l of dst to digit·B for digit in [−8, 8], reading every
// entry of the row with masked moves; digit 0 gives the identity
// (1, 1, 0).
func (r *nielsRow) lookup(dst *nielsLanes, l int, digit int8) {
	signMask := digit >> 7 // −1 if negative, 0 otherwise
	abs := uint8((digit ^ signMask) - signMask)
	var yp, ym, t2d fr.Element
	for j := range r {
		m := -uint64(constantTimeEq(abs, uint8(j+1)))
		e := &r[j]
		yp[0] |= e.yPlusU[0] & m
		yp[1] |= e.yPlusU[1] & m
		yp[2] |= e.yPlusU[2] & m
		yp[3] |= e.yPlusU[3] & m
		ym[0] |= e.yMinusU[0] & m
		ym[1] |= e.yMinusU[1] & m
		ym[2] |= e.yMinusU[2] & m
		ym[3] |= e.yMinusU[3] & m
		t2d[0] |= e.t2d[0] & m
		t2d[1] |= e.t2d[1] & m
		t2d[2] |= e.t2d[2] & m
		t2d[3] |= e.t2d[3] & m
	}
	zero := -uint64(constantTimeEq(abs, 0))
	for w := range yp {
		yp[w] |= one[w] & zero
		ym[w] |= one[w] & zero
	}
	// −(u, y) = (−u, y): swap y+u and y−u, negate 2d'·u·y.
	neg := uint64(int64(signMask))
	for w := range yp {
		x := (yp[w] ^ ym[w]) & neg
		yp[w] ^= x
		ym[w] ^= x
	}
	var negT fr.Element
	feNeg(&negT, &t2d)
	moveElement(&t2d, &negT, neg)
	dst.yPlusU[l], dst.yMinusU[l], dst.t2d[l] = yp, ym, t2d
}

// vecAdd and vecSub act lane by lane with this package's branch-free
// arithmetic: gnark-crypto's vector Add and Sub are branch-free only in
// their amd64 assembly.
func vecAdd(z, x, y fr.Vector) {
	for i := range z {
		feAdd(&z[i], &x[i], &y[i])
	}
}

func vecSub(z, x, y fr.Vector) {
	for i := range z {
		feSub(&z[i], &x[i], &y[i])
	}
}
