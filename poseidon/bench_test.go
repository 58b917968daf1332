package poseidon

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	gnarkp2 "github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"
	iden3 "github.com/iden3/go-iden3-crypto/poseidon"

	"worldid/internal/cryptotest"
)

func BenchmarkPermute8(b *testing.B) { cryptotest.ForEachPath(b, benchPermute8) }

func benchPermute8(b *testing.B) {
	var s [8]fr.Element
	copy(s[:], randomFEs(8))
	b.ReportAllocs()
	for b.Loop() {
		Permute8(&s)
	}
}

func BenchmarkPermute16(b *testing.B) { cryptotest.ForEachPath(b, benchPermute16) }

func benchPermute16(b *testing.B) {
	var s [16]fr.Element
	copy(s[:], randomFEs(16))
	b.ReportAllocs()
	for b.Loop() {
		Permute16(&s)
	}
}

func benchmarkGnark(b *testing.B, width int) {
	g := gnarkp2.NewPermutation(width, p2FullRounds, len(paramsFor(b, width).inner))
	s := randomFEs(width)
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Permutation(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGnarkPermute8 is the peer of BenchmarkPermute8 (doc/design.md §9).
func BenchmarkGnarkPermute8(b *testing.B) { benchmarkGnark(b, 8) }

// BenchmarkGnarkPermute16 is the peer of BenchmarkPermute16.
func BenchmarkGnarkPermute16(b *testing.B) { benchmarkGnark(b, 16) }

func BenchmarkHash7(b *testing.B) { cryptotest.ForEachPath(b, benchHash7) }

func benchHash7(b *testing.B) {
	in := randomFEs(7)
	b.ReportAllocs()
	for b.Loop() {
		in[0] = Hash("POSEIDON2+EDDSA-BJJ", in...)
	}
}

// BenchmarkHashBytes1KiB covers 34 chunks, i.e. 3 width-16 permutations
// plus the SHA3-256 tag.
func BenchmarkHashBytes1KiB(b *testing.B) { cryptotest.ForEachPath(b, benchHashBytes1KiB) }

func benchHashBytes1KiB(b *testing.B) {
	data := make([]byte, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := HashBytes("CLAIMS_HASH_V1", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHashV1x1(b *testing.B) {
	x := randomFEs(1)[0]
	b.ReportAllocs()
	for b.Loop() {
		x = HashV1(x)
	}
}

// BenchmarkIden3HashV1x2 is the peer of BenchmarkHashV1x2: go-iden3-crypto's
// circomlib Poseidon, which takes and returns big.Int.
func BenchmarkIden3HashV1x2(b *testing.B) {
	in := randomFEs(2)
	x := []*big.Int{in[0].BigInt(new(big.Int)), in[1].BigInt(new(big.Int))}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := iden3.Hash(x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHashV1x2(b *testing.B) {
	in := randomFEs(2)
	b.ReportAllocs()
	for b.Loop() {
		in[0] = HashV1(in[0], in[1])
	}
}

// benchmarkSpeedup times our permutation against gnark-crypto's at one
// width (cryptotest.Speedup).
func benchmarkSpeedup(b *testing.B, width int, ours func(s []fr.Element)) {
	g := gnarkp2.NewPermutation(width, p2FullRounds, len(paramsFor(b, width).inner))
	s := randomFEs(width)
	cryptotest.Speedup(b, "gnark", func() { ours(s) }, func() {
		if err := g.Permutation(s); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkSpeedup8(b *testing.B) { cryptotest.ForEachPath(b, benchSpeedup8) }

func benchSpeedup8(b *testing.B) {
	benchmarkSpeedup(b, 8, func(s []fr.Element) { Permute8((*[8]fr.Element)(s)) })
}

func BenchmarkSpeedup16(b *testing.B) { cryptotest.ForEachPath(b, benchSpeedup16) }

func benchSpeedup16(b *testing.B) {
	benchmarkSpeedup(b, 16, func(s []fr.Element) { Permute16((*[16]fr.Element)(s)) })
}
