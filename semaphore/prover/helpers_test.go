package prover

import (
	"encoding/json"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"worldid/field"
	"worldid/internal/vectors"
	"worldid/semaphore"
)

func marshalKey(t testing.TB, vk *semaphore.VerifyingKey) []byte {
	t.Helper()
	b, err := json.Marshal(vk)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gnarkProof converts a proof through its packed words
// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y], for gnark's verifier.
func gnarkProof(p *semaphore.Proof) *groth16bn254.Proof {
	w := p.Packed()
	var g groth16bn254.Proof
	for i, dst := range []*fp.Element{&g.Ar.X, &g.Ar.Y, &g.Bs.X.A1, &g.Bs.X.A0, &g.Bs.Y.A1, &g.Bs.Y.A0, &g.Krs.X, &g.Krs.Y} {
		dst.SetBytes(w[i][:])
	}
	return &g
}

func gnarkWitness(in *semaphore.PublicInputs) fr.Vector {
	return fr.Vector{in.Root, in.NullifierHash, in.SignalHash, in.ExternalNullifier}
}

// worldIDProof is the real World ID staging orb proof at depth 30 from
// semaphore_vectors.json, under the published key.
func worldIDProof(t testing.TB) (semaphore.BatchItem, bool) {
	t.Helper()
	var f struct {
		Vectors []struct {
			Depth             int
			ExpectValid       bool    `json:"expect_valid"`
			ProofABIHex       *string `json:"proof_abi_hex"`
			Root              string
			NullifierHash     string `json:"nullifier_hash"`
			SignalHash        string `json:"signal_hash"`
			ExternalNullifier string `json:"external_nullifier"`
		}
	}
	vectors.Load(t, "semaphore_vectors.json", &f)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	for _, v := range f.Vectors {
		if v.Depth != 30 || !v.ExpectValid || v.ProofABIHex == nil {
			continue
		}
		p, err := semaphore.ParseProof(*v.ProofABIHex)
		if err != nil {
			t.Fatal(err)
		}
		var raw [4][32]byte
		for i, s := range []string{v.Root, v.NullifierHash, v.SignalHash, v.ExternalNullifier} {
			if raw[i], err = field.ParseVerifyHex(s); err != nil {
				t.Fatal(err)
			}
		}
		in, err := semaphore.NewPublicInputs(raw[0], raw[1], raw[2], raw[3])
		if err != nil {
			t.Fatal(err)
		}
		vk, err := semaphore.PublishedKey(30)
		if err != nil {
			t.Fatal(err)
		}
		c.Inc()
		return semaphore.BatchItem{Key: vk, Proof: p, Inputs: in}, true
	}
	return semaphore.BatchItem{}, false
}
