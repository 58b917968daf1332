package qr

import (
	"math/rand/v2"
	"testing"
)

// TestPenaltyMatchesReference compares the bit-line penalty of every mask
// with a module-by-module reading of §7.8.3 on random data of every
// length up to version 14, on all-0 and all-1 data, and for a few longer
// inputs up to version 40.
func TestPenaltyMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for n := range 400 {
		inputs = append(inputs, randomBytes(rng, n))
	}
	for _, n := range []int{0, 100, 250, 1000, 2331} {
		zeros, ones := make([]byte, n), make([]byte, n)
		for i := range ones {
			ones[i] = 0xff
		}
		inputs = append(inputs, zeros, ones, randomBytes(rng, n))
	}
	for _, data := range inputs {
		q := must(Encode(data))
		q.applyMask(q.mask) // unmasked again
		var s scorer
		s.reset(q)
		for m := range 8 {
			q.applyMask(m)
			want := referencePenalty(q.modules)
			q.applyMask(m)
			if got := s.penalty(m); got != want {
				t.Fatalf("%d bytes, version %d, mask %d: penalty %d, want %d", len(data), q.version, m, got, want)
			}
		}
	}
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// referencePenalty is §7.8.3 read module by module: runs of five or more
// (N1), 2×2 blocks (N2), finder-like patterns (N3) in rows and columns,
// and dark/light imbalance (N4).
func referencePenalty(modules [][]bool) int {
	size := len(modules)
	score := 0
	column := make([]bool, size)
	for a := range size {
		score += referenceLinePenalty(modules[a])
		for b := range size {
			column[b] = modules[b][a]
		}
		score += referenceLinePenalty(column)
	}
	dark := 0
	for y := range size {
		row := modules[y]
		for x := range size {
			if row[x] {
				dark++
			}
			if x+1 < size && y+1 < size {
				c, next := row[x], modules[y+1]
				if row[x+1] == c && next[x] == c && next[x+1] == c {
					score += 3
				}
			}
		}
	}
	total := size * size
	k := (abs(dark*20-total*10)+total-1)/total - 1
	return score + max(k, 0)*10
}

// referenceLinePenalty scores runs (N1) and 1:1:3:1:1 finder-like
// patterns with four light modules on either side (N3) in one line.
func referenceLinePenalty(line []bool) int {
	score, run := 0, 1
	for i := 1; i <= len(line); i++ {
		if i < len(line) && line[i] == line[i-1] {
			run++
			continue
		}
		if run >= 5 {
			score += run - 2
		}
		run = 1
	}
	for i := 0; i+7 <= len(line); i++ {
		w := line[i : i+7 : i+7]
		if w[0] && !w[1] && w[2] && w[3] && w[4] && !w[5] && w[6] && (isLight(line, i-4, i) || isLight(line, i+7, i+11)) {
			score += 40
		}
	}
	return score
}

// isLight reports whether line[from:to] is light, counting modules
// outside the symbol (the quiet zone) as light.
func isLight(line []bool, from, to int) bool {
	for i := from; i < to; i++ {
		if i >= 0 && i < len(line) && line[i] {
			return false
		}
	}
	return true
}
