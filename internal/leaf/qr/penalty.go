package qr

import (
	"math/bits"
	"sync"
)

// Mask choice (ISO/IEC 18004 §7.8.3) on bit lines: each row and each
// column of a candidate symbol is a line of bits, so the penalty rules are
// a few shifts, ANDs and popcounts per line instead of a pass per module.

// maxSize is the size of a version 40 symbol, 17 + 4·40 modules.
const maxSize = 17 + 4*maxVersion

// line is one row or column of a symbol: module i at bit i%64 of word
// i/64 (w0, w1, w2); 192 bits hold the largest, 177 modules. Bits past the
// symbol's size are 0 (light, like the quiet zone beyond the edge). A
// struct, not an array, so that the compiler keeps lines in registers.
type line struct{ w0, w1, w2 uint64 }

func (a line) and(b line) line    { return line{a.w0 & b.w0, a.w1 & b.w1, a.w2 & b.w2} }
func (a line) or(b line) line     { return line{a.w0 | b.w0, a.w1 | b.w1, a.w2 | b.w2} }
func (a line) xor(b line) line    { return line{a.w0 ^ b.w0, a.w1 ^ b.w1, a.w2 ^ b.w2} }
func (a line) andNot(b line) line { return line{a.w0 &^ b.w0, a.w1 &^ b.w1, a.w2 &^ b.w2} }
func (a line) not() line          { return line{^a.w0, ^a.w1, ^a.w2} }

// shr moves every bit k places towards 0 (bit i becomes bit i+k's value),
// 0 < k < 64; zeros come in at the top.
func (a line) shr(k uint) line {
	return line{a.w0>>k | a.w1<<(64-k), a.w1>>k | a.w2<<(64-k), a.w2 >> k}
}

// shl moves every bit k places up (bit i becomes bit i−k's value),
// 0 < k < 64; zeros come in at bit 0.
func (a line) shl(k uint) line {
	return line{a.w0 << k, a.w1<<k | a.w0>>(64-k), a.w2<<k | a.w1>>(64-k)}
}

func (a line) count() int {
	return bits.OnesCount64(a.w0) + bits.OnesCount64(a.w1) + bits.OnesCount64(a.w2)
}

// set sets bit i to v.
func (a *line) set(i int, v bool) {
	w := &a.w0
	switch i / 64 {
	case 1:
		w = &a.w1
	case 2:
		w = &a.w2
	}
	if v {
		*w |= 1 << (i % 64)
	} else {
		*w &^= 1 << (i % 64)
	}
}

// firstBits is the line with bits 0 to n−1 set.
func firstBits(n int) line {
	var a line
	for i := range n {
		a.set(i, true)
	}
	return a
}

// bitmap is a symbol as lines, by rows (bit x of rows[y]) and by columns
// (bit y of cols[x]), so that both directions' rules read whole lines.
type bitmap struct {
	rows, cols [maxSize]line
}

func (b *bitmap) set(x, y int, dark bool) {
	b.rows[y].set(x, dark)
	b.cols[x].set(y, dark)
}

// maskPeriod: every data mask of Table 10 repeats every 12 modules across
// and down (the conditions use x and y mod 2, 3, 6 or, for mask 4, y/2
// mod 2 and x/3 mod 2).
const maskPeriod = 12

// maskLines holds the eight masks as lines, computed once: rows[y mod 12]
// and cols[x mod 12] of mask m over the widest symbol.
var maskLines = maskTables()

type maskTable struct {
	rows, cols [maskPeriod]line
}

func maskTables() (t [8]maskTable) {
	for m := range t {
		for p := range maskPeriod {
			for i := range maxSize {
				t[m].rows[p].set(i, maskBit(m, i, p))
				t[m].cols[p].set(i, maskBit(m, p, i))
			}
		}
	}
	return t
}

// scorer evaluates the eight masks of one symbol.
type scorer struct {
	size      int
	unmasked  bitmap // the symbol as drawn
	data      bitmap // its data modules: the ones a mask flips
	candidate bitmap // the symbol under the mask being scored
	inside    line   // bits 0 to size−1: the modules of a line
	pairs     line   // bits 0 to size−2: the modules with a next one
}

// scorers keeps scorers (26 KiB each) for reuse.
var scorers = sync.Pool{New: func() any { return new(scorer) }}

// reset loads the symbol q, data modules drawn but not masked.
func (s *scorer) reset(q *Code) {
	s.size, s.inside, s.pairs = q.size, firstBits(q.size), firstBits(q.size-1)
	s.unmasked, s.data = bitmap{}, bitmap{}
	for y := range q.size {
		for x, fn := range q.fn[y] {
			if q.modules[y][x] {
				s.unmasked.set(x, y, true)
			}
			if !fn {
				s.data.set(x, y, true)
			}
		}
	}
}

// bestMask is the mask with the lowest penalty score (§7.8.3), the lowest
// numbered one on a tie.
func (q *Code) bestMask() int {
	s := scorers.Get().(*scorer)
	defer scorers.Put(s)
	s.reset(q)
	best, bestScore := 0, -1
	for m := range 8 {
		if score := s.penalty(m); bestScore < 0 || score < bestScore {
			best, bestScore = m, score
		}
	}
	return best
}

// penalty is the score of mask m (§7.8.3): N1 = 3 for runs of five or
// more, N2 = 3 for 2×2 blocks, N3 = 40 for finder-like patterns and N4 =
// 10 for each 5 % of dark/light imbalance, on the symbol with mask m's
// format information.
func (s *scorer) penalty(m int) int {
	c, n := &s.candidate, s.size
	for i := range n {
		c.rows[i] = s.unmasked.rows[i].xor(maskLines[m].rows[i%maskPeriod].and(s.data.rows[i]))
		c.cols[i] = s.unmasked.cols[i].xor(maskLines[m].cols[i%maskPeriod].and(s.data.cols[i]))
	}
	formatModules(n, m, c.set)
	score, dark := 0, 0
	for i := range n {
		score += s.linePenalty(c.rows[i]) + s.linePenalty(c.cols[i])
		dark += c.rows[i].count()
	}
	for y := range n - 1 {
		score += 3 * s.blocks(c.rows[y], c.rows[y+1])
	}
	// N4: k is the number of whole 5 % steps the dark share lies away
	// from 50 %: 10·k points.
	total := n * n
	k := (abs(dark*20-total*10)+total-1)/total - 1
	return score + max(k, 0)*10
}

// linePenalty scores one row or column: N1 (3 + i for a run of 5 + i
// modules of one colour) and N3 (40 for each dark-light-dark-dark-dark-
// light-dark, 1:1:3:1:1, with four light modules before or after it,
// modules beyond the edge counting as light).
func (s *scorer) linePenalty(a line) int {
	// same: bit i when modules i and i+1 have one colour; run5: bit i
	// when modules i to i+4 do. A run of 5 + i modules sets i+1 bits of
	// run5 in a row; the first of them adds the remaining 2 points.
	same := s.pairs.andNot(a.xor(a.shr(1)))
	run5 := same.and(same.shr(1)).and(same.shr(2)).and(same.shr(3))
	score := run5.count() + 2*run5.andNot(run5.shl(1)).count()

	// finder: bit i when modules i to i+6 are 1011101 (module i first).
	light := a.not()
	finder := a.and(light.shr(1)).and(a.shr(2)).and(a.shr(3)).and(a.shr(4)).and(light.shr(5)).and(a.shr(6))
	darkBefore := a.shl(1).or(a.shl(2)).or(a.shl(3)).or(a.shl(4)) // modules i−4 to i−1
	darkAfter := a.shr(7).or(a.shr(8)).or(a.shr(9)).or(a.shr(10)) // modules i+7 to i+10
	return score + 40*finder.andNot(darkBefore.and(darkAfter)).count()
}

// blocks counts the 2×2 blocks of one colour whose top row is upper.
func (s *scorer) blocks(upper, lower line) int {
	vertical := s.inside.andNot(upper.xor(lower))     // bit x: (x, y) and (x, y+1) alike
	across := s.pairs.andNot(upper.xor(upper.shr(1))) // bit x: (x, y) and (x+1, y) alike
	return vertical.and(vertical.shr(1)).and(across).count()
}
