package babyjub

import (
	"sync"
)

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
	var multiples [4][1 << (wnafWidthPoint - 2)]point
	splitOddMultiples([4][]point{multiples[0][:], multiples[1][:], multiples[2][:], multiples[3][:]}, p)
	for j := range t {
		for k := range t[j] {
			t[j][k].fromPoint(&multiples[j][k])
		}
	}
}

// baseOddTable is splitTable for G with a wider window, normalized to
// affine (4 × 64 entries, 24 KiB, built once on first use).
var baseOddTable = sync.OnceValue(func() *[4][1 << (wnafWidthBase - 2)]nielsPoint {
	var multiples [4][1 << (wnafWidthBase - 2)]point
	var g point
	g.fromAffine(&generator)
	splitOddMultiples([4][]point{multiples[0][:], multiples[1][:], multiples[2][:], multiples[3][:]}, &g)
	var table [4][1 << (wnafWidthBase - 2)]nielsPoint
	for j := range table {
		for k := range table[j] {
			a := multiples[j][k].affine()
			table[j][k].fromAffine(&a)
		}
	}
	return &table
})

// splitOddMultiples sets t[j][k] = (2k+1)·2^(64j)·p.
func splitOddMultiples(t [4][]point, p *point) {
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
			pp.fromCompleted(c.double(&pp))
		}
		base.fromCompleted(&c)
	}
}

// oddMultiples sets t[k] = (2k+1)·p.
func oddMultiples(t []point, p *point) {
	var c completedPoint
	var pp projPoint
	pp.fromPoint(p)
	var twoP cachedPoint
	var dbl point
	dbl.fromCompleted(c.double(&pp))
	twoP.fromPoint(&dbl)
	t[0] = *p
	for k := 1; k < len(t); k++ {
		t[k].fromCompleted(c.add(&t[k-1], &twoP))
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
				c.addNiels(&acc, &q)
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
