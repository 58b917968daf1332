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

// vartimeMultiExp splits each public 256-bit scalar into eight 32-bit
// parts; part j multiplies 2^(32j)·P. Window widths: the NAF of each part
// uses the odd multiples up to 15·2^(32j)·P (splitTable) and, for the fixed
// base, up to 127·2^(32j)·G (baseOddTable).
const (
	splitParts     = 8
	splitBits      = 32
	partNAFLen     = splitBits + 1
	wnafWidthPoint = 5
	wnafWidthBase  = 8
)

// splitTable holds, for j = 0..7, the odd multiples 1, 3, …, 15 of
// 2^(32j)·P. With it, a·P splits into eight 32-bit scalars sharing one
// chain of 33 doublings instead of 252. Public keys keep theirs (8 KiB).
type splitTable [splitParts][1 << (wnafWidthPoint - 2)]cachedPoint

func (t *splitTable) init(p *point) {
	var multiples [splitParts][1 << (wnafWidthPoint - 2)]point
	var rows [splitParts][]point
	for j := range rows {
		rows[j] = multiples[j][:]
	}
	splitOddMultiples(rows, p)
	for j := range t {
		for k := range t[j] {
			t[j][k].fromPoint(&multiples[j][k])
		}
	}
}

// baseOddTable is splitTable for G with a wider window, normalized to
// affine (8 × 64 entries, 48 KiB, built once on first use).
var baseOddTable = sync.OnceValue(func() *[splitParts][1 << (wnafWidthBase - 2)]nielsPoint {
	var multiples [splitParts][1 << (wnafWidthBase - 2)]point
	var g point
	g.fromAffine(&generator)
	var rows [splitParts][]point
	for j := range rows {
		rows[j] = multiples[j][:]
	}
	splitOddMultiples(rows, &g)
	var table [splitParts][1 << (wnafWidthBase - 2)]nielsPoint
	for j := range table {
		for k := range table[j] {
			a := multiples[j][k].affine()
			table[j][k].fromAffine(&a)
		}
	}
	return &table
})

// splitOddMultiples sets t[j][k] = (2k+1)·2^(32j)·p.
func splitOddMultiples(t [splitParts][]point, p *point) {
	base := *p
	var c completedPoint
	var pp projPoint
	for j := range t {
		oddMultiples(t[j], &base)
		if j == len(t)-1 {
			break
		}
		pp.fromPoint(&base)
		for k := 0; k < splitBits; k++ {
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
// P's splitTable (Straus's method over the NAFs of the sixteen 32-bit
// parts). It runs in variable time: verification and subgroup checks only.
func vartimeMultiExp(a *[4]uint64, tP *splitTable, b *[4]uint64) point {
	var nafA, nafB [splitParts][partNAFLen]int8
	for j := range nafA {
		nafA[j] = partNAF(part(a, j), wnafWidthPoint)
		nafB[j] = partNAF(part(b, j), wnafWidthBase)
	}
	tG := baseOddTable()
	var acc point
	var pp projPoint
	var c completedPoint
	c.setIdentity()
	for i := partNAFLen - 1; i >= 0; i-- {
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

// part returns bits 32j..32j+31 of the little-endian limbs s.
func part(s *[4]uint64, j int) uint32 {
	return uint32(s[j/2] >> (splitBits * (j % 2)))
}

// partNAF returns the width-w NAF of v: v = Σ n_i·2^i over 33 positions,
// every nonzero n_i odd with |n_i| < 2^(w−1), and at most one nonzero digit
// in any w consecutive positions.
func partNAF(v uint32, w uint) [partNAFLen]int8 {
	var naf [partNAFLen]int8
	width := uint64(1) << w
	mask := width - 1
	var carry uint64
	for pos := uint(0); pos < partNAFLen; {
		window := carry + (uint64(v)>>pos)&mask // 0 for pos ≥ 32
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
