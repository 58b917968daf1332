package poseidon

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

// v1Schedule is circomlib's Poseidon rewritten with the two equivalences of
// the Poseidon paper (eprint 2019/458, appendix B), derived here from C and
// M at table generation:
//
//  1. Constant moving: in a partial round only slot 0 passes the S-box, so
//     the constants of slots 1..t−1 can be pushed through M into the next
//     round. Each partial round then adds a single constant to slot 0 and
//     the remainder lands on the first full round after them.
//  2. Sparse matrices: a matrix A factors as A = A'·A” with
//     A' = diag(1, Â) (Â = A without row and column 0) and
//     A” = [[A00, A[0][1:]], [Â⁻¹·A[1:][0], I]]. A' leaves slot 0 alone, so
//     it commutes with a partial round's S-box and slot-0 constant and can be
//     merged into the next round's matrix (M·A'). Each partial round then
//     multiplies by a sparse A” (2t−1 products instead of t²) and the last
//     A' is applied once after the partial rounds.
//
// The tests check this schedule against the plain rounds of doc/crypto.md §c.
type v1Schedule struct {
	m        [][]fr.Element             // M, for the full rounds
	full     [v1FullRounds][]fr.Element // per full round constants
	partial  []fr.Element               // per partial round slot-0 constant
	sparse   []v1Sparse                 // per partial round A''
	lastDiag [][]fr.Element             // the final A', applied after the partial rounds
}

// v1Sparse is A” = [[a, v], [w, I]] with v, w of length t−1.
type v1Sparse struct {
	a    fr.Element
	v, w []fr.Element
}

func newV1Schedule(p *v1Params) *v1Schedule {
	t, half := p.t, v1FullRounds/2
	round := func(r int) []fr.Element { return p.c[r*t : (r+1)*t] }
	sc := &v1Schedule{m: p.m, partial: make([]fr.Element, p.rp), sparse: make([]v1Sparse, p.rp)}
	for r := range half {
		sc.full[r] = round(r)
	}
	for r := half; r < v1FullRounds; r++ {
		sc.full[r] = append([]fr.Element(nil), round(p.rp+r)...)
	}
	// Constant moving: carry holds the constants still to be added at the
	// start of partial round k.
	carry := append([]fr.Element(nil), round(half)...)
	for k := range p.rp {
		sc.partial[k] = carry[0]
		carry[0].SetZero()
		next := sc.full[half] // the constants after the last partial round
		if k+1 < p.rp {
			next = append([]fr.Element(nil), round(half+k+1)...)
		}
		pushed := mulMatVec(p.m, carry)
		for i := range next {
			next[i].Add(&next[i], &pushed[i])
		}
		carry = next
	}
	// Sparse factorisation: a holds the matrix of partial round k.
	a := p.m
	for k := range p.rp {
		var prime [][]fr.Element
		sc.sparse[k], prime = factor(a)
		a = mulMatMat(p.m, prime)
		sc.lastDiag = prime
	}
	return sc
}

// factor splits a into A' = diag(1, Â) and the sparse A” (see v1Schedule).
func factor(a [][]fr.Element) (v1Sparse, [][]fr.Element) {
	t := len(a)
	hat := make([][]fr.Element, t-1)
	col := make([]fr.Element, t-1)
	for i := range hat {
		hat[i] = append([]fr.Element(nil), a[i+1][1:]...)
		col[i] = a[i+1][0]
	}
	sp := v1Sparse{a: a[0][0], v: append([]fr.Element(nil), a[0][1:]...), w: solve(hat, col)}
	prime := make([][]fr.Element, t)
	for i := range prime {
		prime[i] = make([]fr.Element, t)
	}
	prime[0][0].SetOne()
	for i := range hat {
		copy(prime[i+1][1:], hat[i])
	}
	return sp, prime
}

// solve returns x with a·x = b by Gauss-Jordan elimination. a is a square
// submatrix of a product of Cauchy (MDS) matrices, hence invertible; a zero
// pivot column would mean corrupted constants and panics.
func solve(a [][]fr.Element, b []fr.Element) []fr.Element {
	n := len(a)
	rows := make([][]fr.Element, n)
	for i := range rows {
		rows[i] = append(append([]fr.Element(nil), a[i]...), b[i])
	}
	for c := range n {
		pivot := c
		for pivot < n && rows[pivot][c].IsZero() {
			pivot++
		}
		if pivot == n {
			panic("poseidon: singular matrix in the Poseidon v1 schedule")
		}
		rows[c], rows[pivot] = rows[pivot], rows[c]
		var inv fr.Element
		inv.Inverse(&rows[c][c])
		for j := range rows[c] {
			rows[c][j].Mul(&rows[c][j], &inv)
		}
		for i := range rows {
			if i == c || rows[i][c].IsZero() {
				continue
			}
			f := rows[i][c]
			for j := range rows[i] {
				var d fr.Element
				d.Mul(&f, &rows[c][j])
				rows[i][j].Sub(&rows[i][j], &d)
			}
		}
	}
	x := make([]fr.Element, n)
	for i := range x {
		x[i] = rows[i][n]
	}
	return x
}

func mulMatVec(m [][]fr.Element, v []fr.Element) []fr.Element {
	out := make([]fr.Element, len(m))
	for i, row := range m {
		for j := range v {
			var p fr.Element
			p.Mul(&row[j], &v[j])
			out[i].Add(&out[i], &p)
		}
	}
	return out
}

func mulMatMat(a, b [][]fr.Element) [][]fr.Element {
	out := make([][]fr.Element, len(a))
	for i := range out {
		out[i] = make([]fr.Element, len(b[0]))
		for j := range out[i] {
			for k := range b {
				var p fr.Element
				p.Mul(&a[i][k], &b[k][j])
				out[i][j].Add(&out[i][j], &p)
			}
		}
	}
	return out
}

// permute runs the schedule on s (len t); it equals doc/crypto.md §c's rounds.
func (sc *v1Schedule) permute(s []fr.Element) {
	half := v1FullRounds / 2
	for r := range half {
		sc.fullRound(s, sc.full[r])
	}
	for k := range sc.sparse {
		field.Add(&s[0], &s[0], &sc.partial[k])
		sbox(&s[0])
		sc.sparse[k].mul(s)
	}
	mulDense(s, sc.lastDiag)
	for r := half; r < v1FullRounds; r++ {
		sc.fullRound(s, sc.full[r])
	}
}

func (sc *v1Schedule) fullRound(s, c []fr.Element) {
	for i := range s {
		field.Add(&s[i], &s[i], &c[i])
		sbox(&s[i])
	}
	mulDense(s, sc.m)
}

// mul sets s ← [[a, v], [w, I]]·s.
func (sp *v1Sparse) mul(s []fr.Element) {
	var s0, p fr.Element
	s0.Mul(&sp.a, &s[0])
	for j := range sp.v {
		p.Mul(&sp.v[j], &s[j+1])
		field.Add(&s0, &s0, &p)
	}
	for i := range sp.w {
		p.Mul(&sp.w[i], &s[0])
		field.Add(&s[i+1], &s[i+1], &p)
	}
	s[0] = s0
}

// mulDense sets s ← m·s.
func mulDense(s []fr.Element, m [][]fr.Element) {
	var out [v1MaxWidth]fr.Element
	var p fr.Element
	for i, row := range m {
		for j := range s {
			p.Mul(&row[j], &s[j])
			field.Add(&out[i], &out[i], &p)
		}
	}
	copy(s, out[:len(s)])
}
