package babyjub

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/cryptotest"
)

// TestRoundTrip: random keys from an injected reader; sign→verify,
// encode→decode of keys and signatures, seed→key.
func TestRoundTrip(t *testing.T) { cryptotest.ForEachPath(t, testRoundTrip) }

func testRoundTrip(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{1})
	for i := 0; i < 20; i++ {
		k, err := GenerateKey(rng)
		if err != nil {
			t.Fatal(err)
		}
		again, err := NewPrivateKey(k.Seed())
		if err != nil || !again.Public().Equal(k.Public()) {
			t.Fatal("seed does not reproduce the key")
		}
		pub := k.Public()
		if p, err := ParsePublicKey(pub.Bytes()); err != nil || !p.Equal(pub) {
			t.Fatalf("ParsePublicKey(Bytes()): %v", err)
		}
		if p, err := ParsePublicKeyCoordinates(pub.Coordinates()); err != nil || !p.Equal(pub) {
			t.Fatalf("ParsePublicKeyCoordinates(Coordinates()): %v", err)
		}

		var msg fr.Element
		msg.SetRandom()
		sig := Sign(k, msg)
		if len(sig) != SignatureSize {
			t.Fatalf("signature is %d bytes", len(sig))
		}
		if !bytes.Equal(Sign(k, msg), sig) {
			t.Fatal("signing is not deterministic")
		}
		if !Verify(pub, msg, sig) {
			t.Fatal("signature does not verify")
		}
		parsed, err := ParseSignature(sig)
		if err != nil || !VerifySignature(pub, msg, parsed) {
			t.Fatalf("parsed signature does not verify: %v", err)
		}
		r := parsed.r.compress()
		s := parsed.s.bytes()
		if !bytes.Equal(append(r[:], s[:]...), sig) {
			t.Fatal("signature does not re-encode")
		}

		var other fr.Element
		other.Add(&msg, &one)
		if Verify(pub, other, sig) {
			t.Fatal("verifies for another message")
		}
		otherKey, _ := GenerateKey(rng)
		if Verify(otherKey.Public(), msg, sig) {
			t.Fatal("verifies under another key")
		}
		for _, pos := range []int{0, 31, 32, 63} {
			bad := bytes.Clone(sig)
			bad[pos] ^= 1
			if Verify(pub, msg, bad) {
				t.Fatalf("verifies with byte %d flipped", pos)
			}
		}
	}
}

func TestKeyConstructionErrors(t *testing.T) {
	for _, n := range []int{0, 31, 33, 64} {
		if _, err := NewPrivateKey(make([]byte, n)); err == nil {
			t.Errorf("NewPrivateKey accepted a %d-byte seed", n)
		}
	}
	short := bytes.NewReader(make([]byte, 31))
	if _, err := GenerateKey(short); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("GenerateKey on a short reader: %v", err)
	}
	k, _ := NewPrivateKey(benchSeed)
	seed := k.Seed()
	seed[0] ^= 1
	if bytes.Equal(k.Seed(), seed) {
		t.Error("Seed() exposes internal state")
	}
}

// TestVerifyRejectsZeroValuesAndNil: Verify never panics and never accepts
// values that no parser produced.
func TestVerifyRejectsZeroValuesAndNil(t *testing.T) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig := Sign(k, msg)
	parsed, _ := ParseSignature(sig)
	for name, ok := range map[string]bool{
		"nil key":             Verify(nil, msg, sig),
		"zero key":            Verify(&PublicKey{}, msg, sig),
		"nil signature":       Verify(k.Public(), msg, nil),
		"nil parsed":          VerifySignature(k.Public(), msg, nil),
		"zero parsed":         VerifySignature(k.Public(), msg, &Signature{}),
		"nil key, parsed sig": VerifySignature(nil, msg, parsed),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
	if (&PublicKey{}).Equal(k.Public()) || !(*PublicKey)(nil).Equal(nil) || k.Public().Equal(nil) {
		t.Error("Equal mishandles zero or nil keys")
	}
}

// TestUnreducedMessage covers §e step 6 for an fr.Element whose raw limbs
// are ≥ p (only constructible by hand).
func TestUnreducedMessage(t *testing.T) {
	k, _ := NewPrivateKey(benchSeed)
	valid := benchMessage()
	sig := Sign(k, valid)
	unreduced := fr.Element(modulusP)
	if Verify(k.Public(), unreduced, sig) {
		t.Error("accepted M ≥ p")
	}
	defer func() {
		if recover() == nil {
			t.Error("Sign accepted M ≥ p")
		}
	}()
	Sign(k, unreduced)
}

// torsionPoints returns points of order 2, 4 and 8: L·P for a curve point
// P whose torsion component has order 8, then its multiples.
func torsionPoints(t *testing.T) []affinePoint {
	t.Helper()
	for y := int64(2); y < 1000; y++ {
		p, err := decompress(le32(big.NewInt(y)))
		if err != nil {
			continue
		}
		lp := vartimeMultiExp((*[4]uint64)(&orderL), tableOf(&p), &[4]uint64{})
		t8 := lp.affine()
		if orderOf(&t8) != 8 {
			continue
		}
		t4 := affineAdd(&t8, &t8)
		t2 := affineAdd(&t4, &t4)
		return []affinePoint{t2, t4, t8}
	}
	t.Fatal("no point of order 8 found")
	return nil
}

func orderOf(p *affinePoint) int {
	q := *p
	for n := 1; n <= 8; n++ {
		if q.isIdentity() {
			return n
		}
		q = affineAdd(&q, p)
	}
	return 0
}

// TestTorsionRRejected: the key holder signs with R' = r·G + T, T a torsion
// point, and c computed over R'. The cofactored equation holds, so only the
// subgroup check on R (step 4) can reject it (vector R_plus_order2_point,
// here for orders 2, 4 and 8).
func TestTorsionRRejected(t *testing.T) { cryptotest.ForEachPath(t, testTorsionRRejected) }

func testTorsionRRejected(t *testing.T) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	r := scalarFromWideBytes([]byte("any nonce will do for this test"))
	rG := scalarMultAffine(limbsToBig((*[4]uint64)(&r)))
	for _, tp := range torsionPoints(t) {
		R := affineAdd(&rG, &tp)
		c := challenge(&R, &k.pub.a, &msg)
		s := scalarMulAdd(&r, &c, &k.sk)
		rb, sb := R.compress(), s.bytes()
		sig := append(rb[:], sb[:]...)

		// The cofactored equation 8·(s·G − R − c·A) = O holds.
		sG := scalarMultAffine(limbsToBig((*[4]uint64)(&s)))
		cA := naiveMult(limbsToBig((*[4]uint64)(&c)), &k.pub.a)
		diff := affineAdd(&sG, &affinePoint{x: *new(fr.Element).Neg(&R.x), y: R.y})
		diff = affineAdd(&diff, &affinePoint{x: *new(fr.Element).Neg(&cA.x), y: cA.y})
		if d8 := naiveMult(big.NewInt(8), &diff); !d8.isIdentity() {
			t.Fatalf("order %d: cofactored equation does not hold", orderOf(&tp))
		}
		if Verify(k.Public(), msg, sig) {
			t.Errorf("order %d: Verify accepted R outside the subgroup", orderOf(&tp))
		}
		if _, err := ParseSignature(sig); !errors.Is(err, errPointNotInGroup) {
			t.Errorf("order %d: ParseSignature error %v", orderOf(&tp), err)
		}
	}
}

func TestVerifyDoesNotAllocate(t *testing.T) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig := Sign(k, msg)
	parsed, _ := ParseSignature(sig)
	pub := k.Public()
	if n := testing.AllocsPerRun(10, func() { VerifySignature(pub, msg, parsed) }); n != 0 {
		t.Errorf("VerifySignature allocates %v times", n)
	}
	if n := testing.AllocsPerRun(10, func() { Verify(pub, msg, sig) }); n != 0 {
		t.Errorf("Verify allocates %v times", n)
	}
}

// TestVerifyRejectsWithoutAllocating: malformed signatures are rejected on
// the same allocation-free path.
func TestVerifyRejectsWithoutAllocating(t *testing.T) {
	k, _ := NewPrivateKey(benchSeed)
	msg := benchMessage()
	sig := Sign(k, msg)
	pub := k.Public()
	badR := bytes.Clone(sig)
	copy(badR, le32(big.NewInt(2)))
	badS := bytes.Clone(sig)
	copy(badS[32:], le32(bigL))
	for name, b := range map[string][]byte{"short": sig[:63], "R off curve": badR, "s = L": badS} {
		if n := testing.AllocsPerRun(10, func() {
			if Verify(pub, msg, b) {
				t.Errorf("%s: accepted", name)
			}
		}); n != 0 {
			t.Errorf("%s: Verify allocates %v times", name, n)
		}
	}
}
