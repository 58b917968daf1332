package semaphore

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// TestRandomizerLattice checks the soundness argument of randomizer: the
// lattice {(x, y) : x + λ·y ≡ 0 mod r} has no nonzero vector shorter than
// 2^126, so no two randomizers collide mod r and none is 0. Lagrange's
// reduction of the basis (r, 0), (−λ, 1) yields a shortest vector.
func TestRandomizerLattice(t *testing.T) {
	r := fr.Modulus()
	e := g1Endomorphism()
	lambda := e.lambda.BigInt(new(big.Int))
	v1 := [2]*big.Int{new(big.Int).Set(r), big.NewInt(0)}
	v2 := [2]*big.Int{new(big.Int).Neg(lambda), big.NewInt(1)}
	norm := func(v [2]*big.Int) *big.Int {
		x := new(big.Int).Mul(v[0], v[0])
		return x.Add(x, new(big.Int).Mul(v[1], v[1]))
	}
	dot := func(v, w [2]*big.Int) *big.Int {
		x := new(big.Int).Mul(v[0], w[0])
		return x.Add(x, new(big.Int).Mul(v[1], w[1]))
	}
	for {
		if norm(v1).Cmp(norm(v2)) < 0 {
			v1, v2 = v2, v1
		}
		// v1 −= round(⟨v1, v2⟩ / |v2|²)·v2
		num, den := dot(v1, v2), norm(v2)
		q := new(big.Int).Lsh(num, 1)
		q.Add(q, den).Div(q, new(big.Int).Lsh(den, 1)) // floor((2·num + den) / 2·den)
		if q.Sign() == 0 {
			break
		}
		for k := range v1 {
			v1[k] = new(big.Int).Sub(v1[k], new(big.Int).Mul(q, v2[k]))
		}
	}
	shortest := norm(v2)
	if norm(v1).Cmp(shortest) < 0 {
		shortest = norm(v1)
	}
	for _, v := range [][2]*big.Int{v1, v2} { // both are in the lattice
		x := new(big.Int).Mul(v[1], lambda)
		if x.Add(x, v[0]).Mod(x, r).Sign() != 0 {
			t.Fatalf("reduction left the lattice: %v", v)
		}
	}
	if bound := new(big.Int).Lsh(big.NewInt(1), 2*126); shortest.Cmp(bound) <= 0 {
		t.Fatalf("shortest lattice vector has squared length %v ≤ 2^252", shortest)
	}
}

// TestEndomorphism: φ(P) = λ·P on G1, λ³ = 1 ≠ λ.
func TestEndomorphism(t *testing.T) {
	e := g1Endomorphism()
	var l3, one fr.Element
	one.SetOne()
	l3.Square(&e.lambda).Mul(&l3, &e.lambda)
	if !l3.Equal(&one) || e.lambda.Equal(&one) {
		t.Fatal("λ is not a primitive cube root of unity")
	}
	_, _, g, _ := bn254.Generators()
	var p, want bn254.G1Affine
	p.ScalarMultiplication(&g, big.NewInt(123456789))
	want.ScalarMultiplication(&p, e.lambda.BigInt(new(big.Int)))
	if got := e.phi(&p); !got.Equal(&want) {
		t.Fatal("φ(P) ≠ λ·P")
	}
}

// TestScaleMatchesScalarMultiplication: scale gives ρ·P for random and
// extreme halves u and b, and sumScaled their sum; a sum of randomizers
// (halves beyond 2^64) scales like its value.
func TestScaleMatchesScalarMultiplication(t *testing.T) {
	_, _, g, _ := bn254.Generators()
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 0, 8*randomizerBytes)
	for _, v := range [][2]uint64{{0, 0}, {^uint64(0), ^uint64(0)}, {0, ^uint64(0)}, {^uint64(0), 0}, {1, 1}} {
		buf = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(buf, v[0]), v[1])
	}
	for len(buf) < cap(buf) {
		buf = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(buf, rng.Uint64()), rng.Uint64())
	}
	ks, err := randomizers(bytes.NewReader(buf), len(buf)/randomizerBytes)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]bn254.G1Affine, len(ks))
	splits := make([]split, len(ks))
	var sum split
	var sumWant bn254.G1Jac
	for i := range ps {
		ps[i].ScalarMultiplication(&g, big.NewInt(rng.Int64()))
		splits[i] = ks[i].split()
		sum.add(splits[i])
	}
	got := scale(ps, splits)
	for i := range ks {
		var want bn254.G1Affine
		want.ScalarMultiplication(&ps[i], ks[i].rho.BigInt(new(big.Int)))
		if !got[i].Equal(&want) {
			t.Fatalf("randomizer %d (u=%#x b=%#x): scale ≠ ρ·P", i, ks[i].u, ks[i].b)
		}
		var w bn254.G1Jac
		w.FromAffine(&want)
		sumWant.AddAssign(&w)
	}
	gotSum := sumScaled(ps, splits)
	if !gotSum.Equal(&sumWant) {
		t.Fatal("sumScaled ≠ Σ ρᵢ·Pᵢ")
	}
	// A sum of randomizers (halves above 2^64) scales like its value mod r.
	var rhoSum fr.Element
	for i := range ks {
		rhoSum.Add(&rhoSum, &ks[i].rho)
	}
	var want bn254.G1Affine
	want.ScalarMultiplication(&g, rhoSum.BigInt(new(big.Int)))
	if got := scale([]bn254.G1Affine{g}, []split{sum}); !got[0].Equal(&want) {
		t.Fatal("scale by a sum of randomizers ≠ (Σρ)·G")
	}
}

// TestNAF: the digits sum back to the value, are odd and below 2^(w−1) in
// magnitude, and every nonzero digit is followed by w−1 zeros.
func TestNAF(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		hi, lo := uint64(i&1), rng.Uint64()
		if i < 4 {
			lo = []uint64{0, 1, ^uint64(0), 1 << 63}[i]
		}
		want := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
		want.Add(want, new(big.Int).SetUint64(lo))
		digits := naf(hi, lo)
		got := new(big.Int)
		last := -nafWidth
		for j := len(digits) - 1; j >= 0; j-- {
			got.Lsh(got, 1).Add(got, big.NewInt(int64(digits[j])))
		}
		for j, d := range digits {
			if d == 0 {
				continue
			}
			if d%2 == 0 || d >= 1<<(nafWidth-1) || d <= -1<<(nafWidth-1) || j-last < nafWidth {
				t.Fatalf("%d·2^64 + %#x: digit %d at %d (previous nonzero at %d)", hi, lo, d, j, last)
			}
			last = j
		}
		if got.Cmp(want) != 0 {
			t.Fatalf("%d·2^64 + %#x: digits sum to %v", hi, lo, got)
		}
	}
}
