package oprfproof

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
	"worldid/semaphore"
)

// v3Case is a valid depth-30 World ID 3.0 proof of semaphore_vectors.json:
// the peer the 4.0 verification is measured against.
func v3Case(b *testing.B) (*semaphore.VerifyingKey, string, semaphore.PublicInputs) {
	var f struct {
		Vectors []struct {
			ProofABIHex       string `json:"proof_abi_hex"`
			Depth             int    `json:"depth"`
			Root              string `json:"root"`
			NullifierHash     string `json:"nullifier_hash"`
			SignalHash        string `json:"signal_hash"`
			ExternalNullifier string `json:"external_nullifier"`
			ExpectValid       *bool  `json:"expect_valid"`
		} `json:"vectors"`
	}
	vectors.Load(b, "semaphore_vectors.json", &f)
	for _, v := range f.Vectors {
		if v.Depth != 30 || v.ExpectValid == nil || !*v.ExpectValid || v.ProofABIHex == "" {
			continue
		}
		key, err := semaphore.PublishedKey(30)
		if err != nil {
			b.Fatal(err)
		}
		var w [4][32]byte
		for i, s := range []string{v.Root, v.NullifierHash, v.SignalHash, v.ExternalNullifier} {
			if w[i], err = ParseWord(s); err != nil {
				b.Fatal(err)
			}
		}
		in, err := semaphore.NewPublicInputs(w[0], w[1], w[2], w[3])
		if err != nil {
			b.Fatal(err)
		}
		return key, v.ProofABIHex, in
	}
	b.Fatal("no valid depth-30 vector")
	return nil, "", semaphore.PublicInputs{}
}

func v4Case(b *testing.B) ([5][32]byte, Statement) {
	f := vectors.LoadWorldID4(b)
	a, u := f.WorldIDVerifier.Anchors, f.WorldIDVerifier.Uniqueness
	el := func(s string) fr.Element { return vectors.Element(b, s) }
	var words [5][32]byte
	for i, s := range u.Proof {
		words[i], _ = ParseWord(s)
	}
	rp := el("0x" + a.RPID[3:])
	st := Statement{Nullifier: el(u.Nullifier), IssuerSchemaID: 1, IssuerKey: Point{el(a.IssuerPubkey[0]), el(a.IssuerPubkey[1])}, ExpiresAtMin: u.ExpiresAtMin,
		Root: el(a.Root), RPID: rp.Uint64(), Action: el(u.Action), OPRFKey: Point{el(a.OPRFPubkey[0]), el(a.OPRFPubkey[1])},
		SignalHash: el(u.SignalHash), Nonce: el(u.Nonce)}
	return words, st
}

// BenchmarkVerify3 is one World ID 3.0 verification (parsed proof), the
// peer of BenchmarkVerify4 in the same run.
func BenchmarkVerify3(b *testing.B) {
	key, abi, in := v3Case(b)
	p, err := semaphore.ParseProof(abi)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !semaphore.Verify(key, p, in) {
			b.Fatal("rejected")
		}
	}
}

// BenchmarkVerify4 is one World ID 4.0 verification (decompressed proof,
// 15 public inputs assembled per call).
func BenchmarkVerify4(b *testing.B) {
	words, st := v4Case(b)
	p, err := ParseProof(words)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Key(); err != nil {
		b.Fatal(err)
	}
	Verify(p, &st) // build the fixed-base table outside the timing
	for b.Loop() {
		if !Verify(p, &st) {
			b.Fatal("rejected")
		}
	}
}

// BenchmarkParseAndVerify3 and BenchmarkParseAndVerify4: from the wire
// encoding (ABI hex; five compressed words) to the verdict.
func BenchmarkParseAndVerify3(b *testing.B) {
	key, abi, in := v3Case(b)
	for b.Loop() {
		p, err := semaphore.ParseProof(abi)
		if err != nil || !semaphore.Verify(key, p, in) {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkParseAndVerify4(b *testing.B) {
	words, st := v4Case(b)
	p, _ := ParseProof(words)
	Verify(p, &st)
	for b.Loop() {
		p, err := ParseProof(words)
		if err != nil || !Verify(p, &st) {
			b.Fatal("rejected")
		}
	}
}
