package babyjub

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

// fuzzSeeds returns the wire forms found in the EdDSA vector file.
func fuzzSeeds(f *testing.F) (pks, sigs [][]byte, coords [][2]string) {
	var v eddsaVectors
	vectors.Load(f, eddsaFile, &v)
	for _, sv := range append(v.RepoKATs, v.ComputedSignatures...) {
		pks = append(pks, vectors.Hex(f, sv.PKCompressedHex))
		sigs = append(sigs, vectors.Hex(f, sv.SignatureHex))
		if len(sv.PK) == 2 {
			coords = append(coords, [2]string{sv.PK[0], sv.PK[1]})
		}
	}
	for _, nc := range v.Negative {
		if b, err := hex.DecodeString(nc.PKCompressedHex); err == nil {
			pks = append(pks, b)
		}
		if b, err := hex.DecodeString(nc.SignatureHex); err == nil {
			sigs = append(sigs, b)
		}
	}
	if len(pks) == 0 || len(sigs) == 0 || len(coords) == 0 {
		f.Fatal("no fuzz seeds in the vectors")
	}
	return pks, sigs, coords
}

func FuzzParsePublicKey(f *testing.F) {
	pks, _, _ := fuzzSeeds(f)
	for _, pk := range pks {
		f.Add(pk)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pub, err := ParsePublicKey(b)
		if err != nil {
			return
		}
		// Strict decoding is injective: the only accepted encoding of a key
		// is its own.
		if !bytes.Equal(pub.Bytes(), b) {
			t.Fatalf("accepted %x, re-encodes as %x", b, pub.Bytes())
		}
		if !pub.a.isOnCurve() || pub.a.isIdentity() {
			t.Fatal("accepted an invalid point")
		}
	})
}

func FuzzParsePublicKeyCoordinates(f *testing.F) {
	_, _, coords := fuzzSeeds(f)
	for _, c := range coords {
		f.Add(c[0], c[1])
	}
	f.Add("0", "1")
	f.Fuzz(func(t *testing.T, x, y string) {
		pub, err := ParsePublicKeyCoordinates(x, y)
		if err != nil {
			return
		}
		if gx, gy := pub.Coordinates(); gx != x || gy != y {
			t.Fatalf("accepted (%q, %q), formats as (%q, %q)", x, y, gx, gy)
		}
		if byBytes, err := ParsePublicKey(pub.Bytes()); err != nil || !byBytes.Equal(pub) {
			t.Fatalf("compressed form does not parse back: %v", err)
		}
	})
}

func FuzzParseSignature(f *testing.F) {
	_, sigs, _ := fuzzSeeds(f)
	for _, s := range sigs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sig, err := ParseSignature(b)
		if err != nil {
			return
		}
		r := sig.r.compress()
		s := sig.s.bytes()
		if !bytes.Equal(append(r[:], s[:]...), b) {
			t.Fatalf("accepted %x, re-encodes differently", b)
		}
	})
}

// FuzzVerify checks that Verify never panics and that it agrees with
// ParseSignature + VerifySignature, i.e. that the exact equation enforces
// R's subgroup membership as the package documentation claims.
func FuzzVerify(f *testing.F) {
	pks, sigs, _ := fuzzSeeds(f)
	for i, s := range sigs {
		f.Add(pks[i%len(pks)], s, []byte{byte(i)})
	}
	f.Fuzz(func(t *testing.T, pk, sig, msgBytes []byte) {
		pub, err := ParsePublicKey(pk)
		if err != nil {
			pub = &PublicKey{} // the zero value must be rejected, not crash
		}
		var msg fr.Element
		msg.SetBytes(msgBytes)
		got := Verify(pub, msg, sig)
		parsed, err := ParseSignature(sig)
		want := err == nil && VerifySignature(pub, msg, parsed)
		if got != want {
			t.Fatalf("Verify = %v, ParseSignature+VerifySignature = %v", got, want)
		}
	})
}

// FuzzSignVerify signs with arbitrary seeds and messages.
func FuzzSignVerify(f *testing.F) {
	f.Add(benchSeed, []byte{1})
	f.Fuzz(func(t *testing.T, seed, msgBytes []byte) {
		k, err := NewPrivateKey(seed)
		if err != nil {
			if len(seed) == SeedSize {
				t.Fatal(err)
			}
			return
		}
		var msg fr.Element
		msg.SetBytes(msgBytes)
		sig := Sign(k, msg)
		if !Verify(k.Public(), msg, sig) {
			t.Fatal("own signature does not verify")
		}
	})
}
