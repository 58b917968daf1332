package babyjub

import (
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// baseRow holds j·B for j = 1..8, B = 16^i·G in row i of baseTable, as
// affine cached points stored by coordinate so that a constant-time scan
// keeps one coordinate in registers.
type baseRow struct {
	x, y, dt [8]fr.Element
}

// baseTable is the fixed-base table for G: 64 rows cover every signed
// radix-16 digit of a scalar < 2^252, so k·G needs 64 additions and no
// doublings. Built once on first use (48 KiB).
var baseTable = sync.OnceValue(func() *[64]baseRow {
	var table [64]baseRow
	var rowBase, multiple point
	rowBase.fromAffine(&generator)
	var c completedPoint
	for i := range table {
		var step affineCached
		rowAffine := rowBase.affine()
		step.fromAffine(&rowAffine)
		multiple = rowBase
		for j := range table[i].x {
			a := multiple.affine()
			var e affineCached
			e.fromAffine(&a)
			table[i].x[j], table[i].y[j], table[i].dt[j] = e.x, e.y, e.dt
			c.addAffine(&multiple, &step)
			multiple.fromCompleted(&c)
		}
		var pp projPoint
		pp.fromPoint(&rowBase)
		for k := 0; k < 4; k++ {
			c.double(&pp)
			pp.fromCompleted(&c)
		}
		rowBase.fromCompleted(&c)
	}
	return &table
})

// scalarBaseMult returns k·G in constant time (crypto.md §e: the
// multiplications by sk and r must not depend on the secret): the digit
// sequence, table scan and additions are the same for every k.
func scalarBaseMult(k *scalar) point {
	digits := k.signedRadix16()
	table := baseTable()
	var acc point
	acc.setIdentity()
	var q affineCached
	var c completedPoint
	for i := range digits {
		table[i].lookup(&q, digits[i])
		c.addAffine(&acc, &q)
		acc.fromCompleted(&c)
	}
	return acc
}

// lookup sets dst = digit·B for digit in [−8, 8], reading every entry of
// the row with masked moves.
func (r *baseRow) lookup(dst *affineCached, digit int8) {
	signMask := digit >> 7 // −1 if negative, 0 otherwise
	abs := uint8((digit ^ signMask) - signMask)
	var masks [8]uint64
	for j := range masks {
		masks[j] = -uint64(constantTimeEq(abs, uint8(j+1)))
	}
	// Digit 0 selects nothing and leaves the identity (0, 1, 0).
	dst.x = pick(&r.x, &masks, fr.Element{})
	dst.y = pick(&r.y, &masks, one)
	dst.dt = pick(&r.dt, &masks, fr.Element{})
	dst.condNegate(uint64(int64(signMask)))
}

// pick returns the entry of col whose mask is all ones, or fallback if
// none is, reading every entry. The masked entries are ORed as a tree so
// that the limbs do not form one long dependency chain.
func pick(col *[8]fr.Element, m *[8]uint64, fallback fr.Element) fr.Element {
	none := ^(m[0] | m[1] | m[2] | m[3] | m[4] | m[5] | m[6] | m[7])
	var z fr.Element
	for w := range z {
		z[w] = (col[0][w]&m[0] | col[1][w]&m[1]) | (col[2][w]&m[2] | col[3][w]&m[3]) |
			(col[4][w]&m[4] | col[5][w]&m[5]) | (col[6][w]&m[6] | col[7][w]&m[7]) |
			fallback[w]&none
	}
	return z
}

// constantTimeEq returns 1 if a == b and 0 otherwise, without branching.
func constantTimeEq(a, b uint8) int {
	return int((uint32(a^b) - 1) >> 31)
}

// signedRadix16 writes k < 2^252 as 64 digits e_i in [−8, 8) (the last in
// [0, 1]) with k = Σ e_i·16^i, in constant time.
func (k *scalar) signedRadix16() [64]int8 {
	var d [64]int8
	for i := 0; i < 32; i++ {
		b := byte(k[i/8] >> (8 * (i % 8)))
		d[2*i] = int8(b & 15)
		d[2*i+1] = int8(b >> 4)
	}
	for i := 0; i < 63; i++ {
		carry := (d[i] + 8) >> 4
		d[i] -= carry << 4
		d[i+1] += carry
	}
	return d
}

// Window widths of vartimeMultiExp: the NAF of each 64-bit limb of a public
// scalar uses the odd multiples up to 15·2^(64j)·P (splitTable) and, for the
// fixed base, up to 127·2^(64j)·G (baseOddTable).
const (
	wnafWidthPoint = 5
	wnafWidthBase  = 8
	limbNAFLen     = 65
)

// splitTable holds, for j = 0..3, the odd multiples 1, 3, …, 15 of
// 2^(64j)·P. With it, a·P splits into four 64-bit scalars sharing one chain
// of 65 doublings instead of 252. Public keys keep theirs (4 KiB).
type splitTable [4][1 << (wnafWidthPoint - 2)]cachedPoint

func (t *splitTable) init(p *point) {
	splitOddMultiples([4][]cachedPoint{t[0][:], t[1][:], t[2][:], t[3][:]}, p)
}

// baseOddTable is splitTable for G with a wider window, normalized to
// affine (4 × 64 entries, 24 KiB, built once on first use).
var baseOddTable = sync.OnceValue(func() *[4][1 << (wnafWidthBase - 2)]affineCached {
	var multiples [4][1 << (wnafWidthBase - 2)]cachedPoint
	var g point
	g.fromAffine(&generator)
	splitOddMultiples([4][]cachedPoint{multiples[0][:], multiples[1][:], multiples[2][:], multiples[3][:]}, &g)
	var table [4][1 << (wnafWidthBase - 2)]affineCached
	for j := range table {
		for k := range table[j] {
			m := &multiples[j][k]
			p := point{x: m.x, y: m.y, z: m.z}
			a := p.affine()
			table[j][k].fromAffine(&a)
		}
	}
	return &table
})

// splitOddMultiples sets t[j][k] = (2k+1)·2^(64j)·p.
func splitOddMultiples(t [4][]cachedPoint, p *point) {
	base := *p
	var c completedPoint
	var pp projPoint
	for j := range t {
		oddMultiples(t[j], &base)
		if j == len(t)-1 {
			break
		}
		pp.fromPoint(&base)
		for k := 0; k < 64; k++ {
			c.double(&pp)
			pp.fromCompleted(&c)
		}
		base.fromCompleted(&c)
	}
}

// oddMultiples sets t[k] = (2k+1)·p.
func oddMultiples(t []cachedPoint, p *point) {
	var c completedPoint
	var pp projPoint
	pp.fromPoint(p)
	c.double(&pp)
	var twoP, multiple point
	twoP.fromCompleted(&c)
	t[0].fromPoint(p)
	for k := 1; k < len(t); k++ {
		c.add(&twoP, &t[k-1])
		multiple.fromCompleted(&c)
		t[k].fromPoint(&multiple)
	}
}

// vartimeMultiExp returns a·P + b·G for public a, b < 2^256, where tP is
// P's splitTable (Straus's method over the NAFs of the eight 64-bit limbs).
// It runs in variable time: verification and subgroup checks only.
func vartimeMultiExp(a *[4]uint64, tP *splitTable, b *[4]uint64) point {
	var nafA, nafB [4][limbNAFLen]int8
	for j := range nafA {
		nafA[j] = limbNAF(a[j], wnafWidthPoint)
		nafB[j] = limbNAF(b[j], wnafWidthBase)
	}
	tG := baseOddTable()
	var acc point
	var pp projPoint
	var c completedPoint
	c.setIdentity()
	for i := limbNAFLen - 1; i >= 0; i-- {
		pp.fromCompleted(&c)
		c.double(&pp)
		for j := range nafA {
			if d := nafA[j][i]; d != 0 {
				q := tP[j][abs8(d)/2]
				if d < 0 {
					q.negate()
				}
				acc.fromCompleted(&c)
				c.add(&acc, &q)
			}
			if d := nafB[j][i]; d != 0 {
				q := tG[j][abs8(d)/2]
				if d < 0 {
					q.negate()
				}
				acc.fromCompleted(&c)
				c.addAffine(&acc, &q)
			}
		}
	}
	acc.fromCompleted(&c)
	return acc
}

func abs8(d int8) int {
	if d < 0 {
		return -int(d)
	}
	return int(d)
}

// limbNAF returns the width-w NAF of v: v = Σ n_i·2^i over 65 positions,
// every nonzero n_i odd with |n_i| < 2^(w−1), and at most one nonzero digit
// in any w consecutive positions.
func limbNAF(v uint64, w uint) [limbNAFLen]int8 {
	var naf [limbNAFLen]int8
	width := uint64(1) << w
	mask := width - 1
	var carry uint64
	for pos := uint(0); pos < limbNAFLen; {
		window := carry + (v>>pos)&mask // v>>pos is 0 for pos ≥ 64
		if window&1 == 0 {
			pos++
			continue
		}
		if window < width/2 {
			carry = 0
			naf[pos] = int8(window)
		} else {
			carry = 1
			naf[pos] = int8(int64(window) - int64(width))
		}
		pos += w
	}
	return naf
}
