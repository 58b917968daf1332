package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

// Permute2 applies the Poseidon2 permutation P2_2 to s in place.
func Permute2(s *[2]fr.Element) { p2Instances[2]().permute(s[:]) }

// Permute3 applies the Poseidon2 permutation P2_3 to s in place.
func Permute3(s *[3]fr.Element) { p2Instances[3]().permute(s[:]) }

// Permute4 applies the Poseidon2 permutation P2_4 to s in place.
func Permute4(s *[4]fr.Element) { p2Instances[4]().permute(s[:]) }

// Permute8 applies the Poseidon2 permutation P2_8 to s in place.
func Permute8(s *[8]fr.Element) { p2Instances[8]().permute(s[:]) }

// Permute12 applies the Poseidon2 permutation P2_12 to s in place.
func Permute12(s *[12]fr.Element) { p2Instances[12]().permute(s[:]) }

// Permute16 applies the Poseidon2 permutation P2_16 to s in place.
func Permute16(s *[16]fr.Element) { p2Instances[16]().permute(s[:]) }

// permute runs P2_t on s (len t) on the path chosen for this width.
func (p *p2Params) permute(s fr.Vector) {
	p.permuteOn(s, field.Effective(p.choice.Path))
}

// permuteOn runs P2_t on s (len t) as in doc/crypto.md §b: M_E, 4 full
// rounds, R_P partial rounds, 4 full rounds; no feed-forward. The
// element-wise products use path.
func (p *p2Params) permuteOn(s fr.Vector, path field.Path) {
	external(s)
	for r := range p2HalfFull {
		fullRound(s, p.ext[r], path)
	}
	if len(s) <= 3 {
		for i := range p.inner {
			partialRoundSmall(s, &p.inner[i])
		}
	} else {
		for i := range p.inner {
			partialRound(s, p.diag, &p.inner[i], path)
		}
	}
	for r := p2HalfFull; r < p2FullRounds; r++ {
		fullRound(s, p.ext[r], path)
	}
}

// fullRound adds the round constants, applies x^5 to every slot, then M_E.
// The S-boxes are element-wise vector products (8 lanes at a time on the
// Vector path).
func fullRound(s, rc fr.Vector, path field.Path) {
	s.Add(s, rc)
	var buf [p2MaxWidth]fr.Element
	x4 := fr.Vector(buf[:len(s)])
	field.MulVec(path, x4, s, s)
	field.MulVec(path, x4, x4, x4)
	field.MulVec(path, s, s, x4)
	external(s)
}

// partialRound is one partial round for t ≥ 4: s[0] += c, s[0] ← s[0]^5,
// then M_I: out[i] = s[i]·diag[i] + Σ s in one call (field.MulAddVec).
func partialRound(s, diag fr.Vector, c *fr.Element, path field.Path) {
	field.Add(&s[0], &s[0], c)
	sbox(&s[0])
	sum := sumOf(s)
	field.MulAddVec(path, s, s, diag, &sum)
}

// partialRoundSmall is the partial round for t = 2, 3, where
// diag = [1, …, 1, 2] needs no multiplication.
func partialRoundSmall(s fr.Vector, c *fr.Element) {
	field.Add(&s[0], &s[0], c)
	sbox(&s[0])
	sum := sumOf(s)
	last := &s[len(s)-1]
	field.Add(last, last, last)
	addToAll(s, &sum)
}

// external sets s ← M_E·s (doc/crypto.md §b "Matrices").
func external(s fr.Vector) {
	switch len(s) {
	case 2, 3: // out[i] = s[i] + Σ s
		sum := sumOf(s)
		addToAll(s, &sum)
	case 4:
		m4((*[4]fr.Element)(s))
	default: // blocks of M4, then out[i] = y[i] + Σ_k y[4k + i mod 4]
		for k := 0; k < len(s); k += 4 {
			m4((*[4]fr.Element)(s[k : k+4]))
		}
		col := *(*[4]fr.Element)(s[:4])
		for k := 4; k < len(s); k += 4 {
			for j := range col {
				field.Add(&col[j], &col[j], &s[k+j])
			}
		}
		for k := 0; k < len(s); k += 4 {
			for j := range col {
				field.Add(&s[k+j], &s[k+j], &col[j])
			}
		}
	}
}

// m4 multiplies x by M4 = [[5,7,1,3],[4,6,1,1],[1,3,5,7],[1,1,4,6]] with
// additions only (Poseidon2 paper, eprint 2023/323, §5.1).
func m4(x *[4]fr.Element) {
	var t0, t1, t2, t3, t4, t5 fr.Element
	field.Add(&t0, &x[0], &x[1])
	field.Add(&t1, &x[2], &x[3])
	field.Add(&t2, &x[1], &x[1])
	field.Add(&t2, &t2, &t1) // 2x1 + x2 + x3
	field.Add(&t3, &x[3], &x[3])
	field.Add(&t3, &t3, &t0) // x0 + x1 + 2x3
	field.Add(&t4, &t1, &t1)
	field.Add(&t4, &t4, &t4)
	field.Add(&t4, &t4, &t3) // x0 + x1 + 4x2 + 6x3
	field.Add(&t5, &t0, &t0)
	field.Add(&t5, &t5, &t5)
	field.Add(&t5, &t5, &t2) // 4x0 + 6x1 + x2 + x3
	field.Add(&x[0], &t3, &t5)
	x[1] = t5
	field.Add(&x[2], &t2, &t4)
	x[3] = t4
}

func addToAll(s []fr.Element, x *fr.Element) {
	for i := range s {
		field.Add(&s[i], &s[i], x)
	}
}
