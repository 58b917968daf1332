package credential

import (
	"math/rand/v2"
	"testing"

	"worldid/babyjub"
)

// BenchmarkHashSign is the issuer's per-credential cost: credential hash
// (P2_16 + P2_8) and EdDSA signing. Target < 100 µs.
func BenchmarkHashSign(b *testing.B) {
	c := randomCredential(rand.New(rand.NewPCG(1, 1)))
	priv := testKey(b, 3)
	for b.Loop() {
		if err := c.Sign(priv); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEdDSASign is the peer of BenchmarkHashSign in the same run:
// the signature alone, over a fixed hash.
func BenchmarkEdDSASign(b *testing.B) {
	c := randomCredential(rand.New(rand.NewPCG(1, 1)))
	priv := testKey(b, 3)
	h := c.Hash()
	for b.Loop() {
		babyjub.Sign(priv, h)
	}
}

// BenchmarkHash is the Poseidon2 part of BenchmarkHashSign alone.
func BenchmarkHash(b *testing.B) {
	c := randomCredential(rand.New(rand.NewPCG(1, 1)))
	for b.Loop() {
		c.Hash()
	}
}

// BenchmarkSelfVerify is the issuer's self-check: marshal, parse, verify.
func BenchmarkSelfVerify(b *testing.B) {
	c := randomCredential(rand.New(rand.NewPCG(1, 1)))
	priv := testKey(b, 3)
	if err := c.Sign(priv); err != nil {
		b.Fatal(err)
	}
	pub := priv.Public()
	for b.Loop() {
		data, err := c.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		back, err := Parse(data)
		if err != nil || !back.Verify(pub) {
			b.Fatal("self-verification failed")
		}
	}
}
