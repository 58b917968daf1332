package semaphore

import (
	"encoding/binary"
	"io"
	"math/big"
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
// 2001). So ρ·A = a·A + b·φ(A) costs 64 doublings shared by both halves
// instead of the 128 a 129-bit scalar needs.
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

// scale returns ρᵢ·pᵢ for each point, as a·p + b·φ(p) with the joint
// double-and-add (Shamir's trick) over the table p, φ(p), p + φ(p).
// The randomizers are public once drawn (the proofs are already fixed), so
// the loop need not be constant time.
func scale(ps []bn254.G1Affine, ks []randomizer) []bn254.G1Affine {
	e := g1Endomorphism()
	phis := make([]bn254.G1Affine, len(ps))
	sums := make([]bn254.G1Jac, len(ps))
	for i := range ps {
		phis[i] = e.phi(&ps[i])
		sums[i].FromAffine(&ps[i])
		sums[i].AddMixed(&phis[i])
	}
	both := bn254.BatchJacobianToAffineG1(sums) // p + φ(p) = −λ²·p ≠ O
	out := make([]bn254.G1Jac, len(ps))
	for i := range ps {
		acc := &out[i]
		acc.FromAffine(&ps[i]) // the 2^64 bit of a
		u, b := ks[i].u, ks[i].b
		for bit := 63; bit >= 0; bit-- {
			acc.DoubleAssign()
			switch u>>bit&1 | b>>bit&1<<1 {
			case 1:
				acc.AddMixed(&ps[i])
			case 2:
				acc.AddMixed(&phis[i])
			case 3:
				acc.AddMixed(&both[i])
			}
		}
	}
	return bn254.BatchJacobianToAffineG1(out)
}
