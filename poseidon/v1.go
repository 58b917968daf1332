package poseidon

import (
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

const (
	v1FullRounds = 8
	v1MinWidth   = 2
	v1MaxWidth   = 17
)

// v1PartialRoundsByWidth is circomlib's R_P for t = 2..17 (doc/crypto.md §c;
// circomlib circuits/poseidon.circom N_ROUNDS_P).
var v1PartialRoundsByWidth = [v1MaxWidth - v1MinWidth + 1]int{
	56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64, 68,
}

// v1Params is one circomlib Poseidon instance: the round constants C in
// round order and the t×t MDS matrix M, both from the Grain LFSR, and the
// equivalent faster schedule that HashV1 runs.
type v1Params struct {
	t, rp int
	c     []fr.Element
	m     [][]fr.Element
	fast  *v1Schedule
}

// v1Tables generates each width's constants on first use.
var v1Tables = func() (f [v1MaxWidth + 1]func() *v1Params) {
	for t := v1MinWidth; t <= v1MaxWidth; t++ {
		f[t] = sync.OnceValue(func() *v1Params { return newV1Params(t) })
	}
	return f
}()

// newV1Params derives the constants of width t with the Grain LFSR
// (doc/crypto.md §c steps 1-7): (R_F+R_P)·t round constants by rejection
// sampling, then 2t reduced candidates x, y with M[i][j] = 1/(x_i + y_j).
func newV1Params(t int) *v1Params {
	rp := V1PartialRounds(t)
	g := newGrain(t, v1FullRounds, rp)
	p := &v1Params{t: t, rp: rp, c: make([]fr.Element, (v1FullRounds+rp)*t)}
	for i := range p.c {
		p.c[i] = g.roundConstant()
	}
	xs, ys := make([]fr.Element, t), make([]fr.Element, t)
	for i := range xs {
		xs[i] = g.reduced()
	}
	for i := range ys {
		ys[i] = g.reduced()
	}
	p.m = make([][]fr.Element, t)
	for i := range p.m {
		p.m[i] = make([]fr.Element, t)
		for j := range p.m[i] {
			p.m[i][j].Add(&xs[i], &ys[j]).Inverse(&p.m[i][j])
		}
	}
	p.fast = newV1Schedule(p)
	return p
}

func v1ParamsFor(t int) *v1Params {
	checkV1Width(t)
	return v1Tables[t]()
}

// checkV1Width panics on a width circomlib does not define: a programming
// error, not bad input.
func checkV1Width(t int) {
	if t < v1MinWidth || t > v1MaxWidth {
		panic(fmt.Sprintf("poseidon: Poseidon v1 width %d outside %d..%d", t, v1MinWidth, v1MaxWidth))
	}
}

// V1PartialRounds returns circomlib's number of partial rounds R_P for width
// t in 2..17. It panics for any other t.
func V1PartialRounds(t int) int {
	checkV1Width(t)
	return v1PartialRoundsByWidth[t-v1MinWidth]
}

// V1Constants returns fresh copies of circomlib's round constants C (length
// (8+R_P)·t, in round order) and MDS matrix M (t×t) for width t in 2..17.
// It panics for any other t.
func V1Constants(t int) (c []fr.Element, m [][]fr.Element) {
	p := v1ParamsFor(t)
	c = append([]fr.Element(nil), p.c...)
	m = make([][]fr.Element, t)
	for i := range m {
		m[i] = append([]fr.Element(nil), p.m[i]...)
	}
	return c, m
}

// HashV1 is circomlib's Poseidon P(x1..xn) for n in 1..16 (doc/crypto.md §c):
// the state [0, x1, ..., xn] is permuted and slot 0 returned. It panics for
// any other n.
func HashV1(inputs ...fr.Element) fr.Element {
	p := v1ParamsFor(len(inputs) + 1)
	var buf [v1MaxWidth]fr.Element
	s := buf[:p.t]
	copy(s[1:], inputs)
	p.fast.permute(s)
	return s[0]
}
