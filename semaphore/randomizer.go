package semaphore

import (
	"encoding/binary"
	"io"
	"math/big"
	"math/bits"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// A batch randomizer is ρ = a + λ·b mod r with a = 2^64 + u, and u and b
// uniform below 2^64 (randomizerBytes of entropy). λ is the eigenvalue of
// BN254's G1 endomorphism φ(x, y) = (ω·x, y), ω a cube root of unity in Fp:
// φ(P) = λ·P for every P in G1 (Gallant, Lambert, Vanstone, "Faster point
// multiplication on elliptic curves with efficient endomorphisms", CRYPTO
// 2001). So ρ·A = a·A + b·φ(A) costs about 65 doublings shared by both
// halves (scale) instead of the 128 a 129-bit scalar needs, and sums of
// randomizers keep the split form (split), so that the batch's fixed side,
// (Σρ)·α, (Σρ)·IC[0] and Σρᵢ·Cᵢ (sumScaled), needs no 254-bit scalar.
//
// Soundness: the randomized equation is linear in each ρᵢ, so an invalid
// proof passes with probability at most 1/|S|, S the set of values ρ takes
// mod r, as long as ρ is uniform on S. Distinct (u, b) give distinct ρ, and
// ρ is never 0: either would be a nonzero (x, y) with x + λ·y ≡ 0 (mod r),
// |x| < 2^65 and |y| < 2^64, a vector of the lattice
// L = {(x, y) : x + λ·y ≡ 0 mod r} of length below 2^66, while L's
// shortest nonzero vector is longer than 2^126 (TestRandomizerLattice
// computes L's reduced basis). So |S| = 2^128 and the bound is 2^-128,
// as with uniform 128-bit randomizers.
type randomizer struct {
	u, b uint64
	rho  fr.Element // a + λ·b mod r
}

// randomizerBytes is the entropy of each randomizer: u and b, 64 bits each.
const randomizerBytes = 16

// endomorphism holds ω and the matching λ.
type endomorphism struct {
	omega  fp.Element
	lambda fr.Element
}

// g1Endomorphism derives ω = (−1 + √−3)/2 in Fp and picks, of the two
// primitive cube roots of unity mod r, the λ with φ(G) = λ·G for the
// generator G (G1 has prime order r, so that holds for every point).
var g1Endomorphism = sync.OnceValue(func() endomorphism {
	var e endomorphism
	var w fp.Element
	w.SetInt64(-3)
	if w.Sqrt(&w) == nil {
		panic("semaphore: −3 is not a square mod q")
	}
	e.omega.SetOne()
	e.omega.Sub(&w, &e.omega).Halve()
	var l fr.Element
	l.SetInt64(-3)
	if l.Sqrt(&l) == nil {
		panic("semaphore: −3 is not a square mod r")
	}
	e.lambda.SetOne()
	e.lambda.Sub(&l, &e.lambda).Halve()

	_, _, g, _ := bn254.Generators()
	var want bn254.G1Affine
	want.ScalarMultiplication(&g, e.lambda.BigInt(new(big.Int)))
	if got := e.phi(&g); !got.Equal(&want) {
		e.lambda.Square(&e.lambda) // the other primitive cube root
		want.ScalarMultiplication(&g, e.lambda.BigInt(new(big.Int)))
		if !got.Equal(&want) {
			panic("semaphore: no cube root of unity mod r matches φ")
		}
	}
	return e
})

// phi is φ(p) = (ω·x, y).
func (e *endomorphism) phi(p *bn254.G1Affine) bn254.G1Affine {
	q := *p
	q.X.Mul(&q.X, &e.omega)
	return q
}

// randomizers draws n randomizers from rand.
func randomizers(rand io.Reader, n int) ([]randomizer, error) {
	buf := make([]byte, n*randomizerBytes)
	if _, err := io.ReadFull(rand, buf); err != nil {
		return nil, err
	}
	e := g1Endomorphism()
	var two64 fr.Element
	two64.SetUint64(1 << 63).Double(&two64)
	r := make([]randomizer, n)
	for i := range r {
		k := &r[i]
		k.u = binary.LittleEndian.Uint64(buf[i*randomizerBytes:])
		k.b = binary.LittleEndian.Uint64(buf[i*randomizerBytes+8:])
		var a fr.Element
		a.SetUint64(k.u).Add(&a, &two64)
		k.rho.SetUint64(k.b).Mul(&k.rho, &e.lambda).Add(&k.rho, &a)
	}
	return r, nil
}

// split is the scalar a + λ·b mod r, with a = aHi·2^64 + aLo and
// b = bHi·2^64 + bLo below 2^127: a randomizer (a < 2^65, b < 2^64) or a
// sum of randomizers, whose multiple of P is a·P + b·φ(P).
type split struct{ aHi, aLo, bHi, bLo uint64 }

func (k *randomizer) split() split { return split{1, k.u, 0, k.b} }

// add sets s to s + t, adding a and b separately (no reduction mod r:
// fewer than 2^62 randomizers keep both below 2^127).
func (s *split) add(t split) {
	var carry uint64
	s.aLo, carry = bits.Add64(s.aLo, t.aLo, 0)
	s.aHi += t.aHi + carry
	s.bLo, carry = bits.Add64(s.bLo, t.bLo, 0)
	s.bHi += t.bHi + carry
}

// nafWidth is the window of the width-w NAF digits of the halves: odd
// digits up to ±7, a table of P, 3P, 5P, 7P (and their images under φ),
// and on average one nonzero digit in w+1 = 5.
const (
	nafWidth = 4
	nafOdd   = 1 << (nafWidth - 2) // table entries P, 3P, 5P, 7P
)

// nafPoint is a point's multiple in the making: its tables and the NAF
// digits of its scalar's two halves, least significant first.
type nafPoint struct {
	table, phiTable [nafOdd]bn254.G1Affine
	da, db          []int8
}

// nafPoints prepares ps and ks, computing the odd multiples of every point
// with one shared inversion; φ maps a point's table to its image's for one
// product per entry. It also returns the longest digit string.
func nafPoints(ps []bn254.G1Affine, ks []split) ([]nafPoint, int) {
	e := g1Endomorphism()
	multiples := make([]bn254.G1Jac, 0, len(ps)*(nafOdd-1))
	for i := range ps {
		var twice, m bn254.G1Jac
		twice.FromAffine(&ps[i]).DoubleAssign()
		m.FromAffine(&ps[i])
		for range nafOdd - 1 {
			m.AddAssign(&twice)
			multiples = append(multiples, m)
		}
	}
	affine := bn254.BatchJacobianToAffineG1(multiples) // kP ≠ O: k < r
	out := make([]nafPoint, len(ps))
	longest := 0
	for i := range ps {
		n := &out[i]
		n.table[0] = ps[i]
		copy(n.table[1:], affine[i*(nafOdd-1):])
		for j := range n.table {
			n.phiTable[j] = e.phi(&n.table[j])
		}
		n.da, n.db = naf(ks[i].aHi, ks[i].aLo), naf(ks[i].bHi, ks[i].bLo)
		longest = max(longest, len(n.da), len(n.db))
	}
	return out, longest
}

// addAt adds to acc the point's digits at position bit.
func (n *nafPoint) addAt(acc *bn254.G1Jac, bit int) {
	if bit < len(n.da) {
		addDigit(acc, &n.table, n.da[bit])
	}
	if bit < len(n.db) {
		addDigit(acc, &n.phiTable, n.db[bit])
	}
}

// scale returns kᵢ·pᵢ for each point, as a·p + b·φ(p): both halves'
// digits share one run of doublings (Straus), about 65 for a randomizer.
// The scalars are public once drawn (the proofs are already fixed), so
// the loops need not be constant time.
func scale(ps []bn254.G1Affine, ks []split) []bn254.G1Affine {
	points, _ := nafPoints(ps, ks)
	out := make([]bn254.G1Jac, len(ps))
	for i := range points {
		acc := &out[i]
		acc.Z.SetZero() // the point at infinity until the first digit
		for bit := max(len(points[i].da), len(points[i].db)) - 1; bit >= 0; bit-- {
			acc.DoubleAssign()
			points[i].addAt(acc, bit)
		}
	}
	return bn254.BatchJacobianToAffineG1(out)
}

// sumScaled returns Σ kᵢ·pᵢ, every point's digits sharing one run of
// doublings: for n randomizers about 65 doublings and 26·n additions,
// where a Pippenger multi-exponentiation over full-size scalars pays
// for 254 bits.
func sumScaled(ps []bn254.G1Affine, ks []split) bn254.G1Jac {
	points, longest := nafPoints(ps, ks)
	var acc bn254.G1Jac
	acc.Z.SetZero()
	for bit := longest - 1; bit >= 0; bit-- {
		acc.DoubleAssign()
		for i := range points {
			points[i].addAt(&acc, bit)
		}
	}
	return acc
}

// addDigit adds d·P to acc, for an odd |d| ≤ 7 from table = P, 3P, 5P, 7P.
func addDigit(acc *bn254.G1Jac, table *[nafOdd]bn254.G1Affine, d int8) {
	switch {
	case d > 0:
		acc.AddMixed(&table[d>>1])
	case d < 0:
		var neg bn254.G1Affine
		neg.Neg(&table[(-d)>>1])
		acc.AddMixed(&neg)
	}
}

// naf returns the width-4 NAF digits of hi·2^64 + lo (below 2^127), least
// significant first: each nonzero digit is odd, |d| < 2^(w−1), and is
// followed by at least w−1 zeros.
func naf(hi, lo uint64) []int8 {
	digits := make([]int8, 0, 64+nafWidth)
	for hi != 0 || lo != 0 {
		var d int8
		if lo&1 == 1 {
			d = int8(lo & (1<<nafWidth - 1))
			if d >= 1<<(nafWidth-1) {
				d -= 1 << nafWidth
			}
			var borrow, carry uint64
			if d > 0 {
				lo, borrow = bits.Sub64(lo, uint64(d), 0)
				hi -= borrow
			} else {
				lo, carry = bits.Add64(lo, uint64(-d), 0)
				hi += carry
			}
		}
		digits = append(digits, d)
		lo = lo>>1 | hi<<63
		hi >>= 1
	}
	return digits
}
