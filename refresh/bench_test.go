package refresh

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// replayBlindStore accepts every proof again, so one proof can drive the
// benchmark; every other operation is the JSON store's.
type replayBlindStore struct{ *testStore }

func (replayBlindStore) UseProofOnce(context.Context, string, time.Time) error { return nil }

// BenchmarkHandlerCredentialOnly is a full credential-only refresh through
// ServeHTTP (multipart parse, proof decode and Groth16 verification,
// one-leaf root, store calls, credential build, sign and self-verify),
// from parallel clients.
func BenchmarkHandlerCredentialOnly(b *testing.B) {
	store := newTestStore(b)
	e := newEnv(b, func(o *Options) { o.Store = replayBlindStore{store} })
	e.store = store
	id := identity(b, 1)
	e.signup(id, "signup")
	header := encodeProof(b, proofJSON(b, id, sub1, t0, nil))
	body, ct := multipartBody(b, []part{{name: "sub", value: sub1}})
	target := Path + "?idComm=" + idCommOf(id)
	refresh := func() {
		r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		r.Header.Set("Content-Type", ct)
		r.Header.Set("x-zkp-proof", header)
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	// The first refresh records the credential; the parallel ones return
	// it (a repeat refresh), as the clients of a deployed issuer mostly do.
	refresh()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			refresh()
		}
	})
}

// BenchmarkGroth16Verify is the proof check's pairing alone.
func BenchmarkGroth16Verify(b *testing.B) {
	pk := provingKey(b)
	id := identity(b, 1)
	tree, _ := semaphore.BuildTree(treeDepth, []fr.Element{id.Commitment()})
	path, _ := tree.Path(0)
	var sig fr.Element
	proof, in, err := prover.Prove(pk, id, path, sig, sig)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !semaphore.Verify(pk.VerifyingKey(), proof, in) {
			b.Fatal("proof does not verify")
		}
	}
}

// BenchmarkOneLeafRoot is the 30 Poseidon hashes of the one-leaf root.
func BenchmarkOneLeafRoot(b *testing.B) {
	var c fr.Element
	c.SetUint64(42)
	for b.Loop() {
		if _, err := oneLeafRoot(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildCredential is build, sign and self-verify.
func BenchmarkBuildCredential(b *testing.B) {
	e := newEnv(b, nil)
	var sub fr.Element
	sub.SetUint64(7)
	for b.Loop() {
		if _, _, err := e.h.buildCredential(sub, sub, time.Unix(t0, 0), time.Unix(t0, 0)); err != nil {
			b.Fatal(err)
		}
	}
}
