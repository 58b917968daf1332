package babyjub

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	iden3 "github.com/iden3/go-iden3-crypto/babyjub"

	"worldid/internal/cryptotest"
)

// Benchmarks against the peer named in doc/design.md §9: go-iden3-crypto's
// EdDSA over BabyJubJub (Poseidon v1 challenge, BLAKE-512 nonce). Compare
// within one run: go test -run '^$' -bench . -benchmem -count 5 ./babyjub

var benchSeed = []byte("a4a7d3b1e2f60b9c8d5e1f2a3b4c5d6e")

func benchMessage() fr.Element {
	var m fr.Element
	m.SetString("11402413954866905186435396811587452922431987224444219565589628185750911976901")
	return m
}

func BenchmarkSign(b *testing.B) { cryptotest.ForEachPath(b, benchSign) }

func benchSign(b *testing.B) {
	k, err := NewPrivateKey(benchSeed)
	if err != nil {
		b.Fatal(err)
	}
	msg := benchMessage()
	b.ReportAllocs()
	for b.Loop() {
		Sign(k, msg)
	}
}

func BenchmarkVerify(b *testing.B) { cryptotest.ForEachPath(b, benchVerify) }

func benchVerify(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig := Sign(k, msg)
	pub := k.Public()
	Verify(pub, msg, sig) // builds the static tables outside the measurement
	b.ReportAllocs()
	for b.Loop() {
		if !Verify(pub, msg, sig) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkVerifySignature(b *testing.B) { cryptotest.ForEachPath(b, benchVerifySignature) }

func benchVerifySignature(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig, err := ParseSignature(Sign(k, msg))
	if err != nil {
		b.Fatal(err)
	}
	pub := k.Public()
	VerifySignature(pub, msg, sig) // builds the static tables outside the measurement
	b.ReportAllocs()
	for b.Loop() {
		if !VerifySignature(pub, msg, sig) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkParsePublicKey(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	enc := k.Public().Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParsePublicKey(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSignature(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	sig := Sign(k, benchMessage())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSignature(sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewPrivateKey(b *testing.B) { cryptotest.ForEachPath(b, benchNewPrivateKey) }

func benchNewPrivateKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPrivateKey(benchSeed); err != nil {
			b.Fatal(err)
		}
	}
}

func iden3Key() (*iden3.PrivateKey, *big.Int) {
	var k iden3.PrivateKey
	copy(k[:], benchSeed)
	m := benchMessage()
	return &k, m.BigInt(new(big.Int))
}

func BenchmarkIden3SignPoseidon(b *testing.B) {
	k, m := iden3Key()
	b.ReportAllocs()
	for b.Loop() {
		k.SignPoseidon(m)
	}
}

func BenchmarkIden3VerifyPoseidon(b *testing.B) {
	k, m := iden3Key()
	sig := k.SignPoseidon(m)
	pub := k.Public()
	b.ReportAllocs()
	for b.Loop() {
		if !pub.VerifyPoseidon(m, sig) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkSignSpeedup(b *testing.B) { cryptotest.ForEachPath(b, benchSignSpeedup) }

func benchSignSpeedup(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	ik, im := iden3Key()
	cryptotest.Speedup(b, "iden3", func() { Sign(k, msg) }, func() { ik.SignPoseidon(im) })
}

func BenchmarkVerifySpeedup(b *testing.B) { cryptotest.ForEachPath(b, benchVerifySpeedup) }

func benchVerifySpeedup(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig, pub := Sign(k, msg), k.Public()
	ik, im := iden3Key()
	isig, ipub := ik.SignPoseidon(im), ik.Public()
	cryptotest.Speedup(b, "iden3", func() {
		if !Verify(pub, msg, sig) {
			b.Fatal("invalid")
		}
	}, func() {
		if !ipub.VerifyPoseidon(im, isig) {
			b.Fatal("invalid")
		}
	})
}

func BenchmarkBlake3Nonce(b *testing.B) {
	var in [64]byte
	var out [64 + blindSize]byte
	for b.Loop() {
		blake3XOF(out[:], in[:])
	}
}

func BenchmarkScalarBaseMult(b *testing.B) { cryptotest.ForEachPath(b, benchScalarBaseMult) }

func benchScalarBaseMult(b *testing.B) {
	k, _ := NewPrivateKey(benchSeed)
	s := k.sk
	for b.Loop() {
		scalarBaseMult(&s)
	}
}
