package verify

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// cryptoChecker is a test-only Checker doing the real checks of
// doc/crypto.md §g for one tree: root known, proof decoded, Groth16 with the
// external nullifier derived from the claim's app_id and action.
type cryptoChecker struct {
	vk   *semaphore.VerifyingKey
	root [32]byte
}

func (c *cryptoChecker) CheckClaim(_ context.Context, cl record.Claim) error {
	if cl.MerkleRoot != c.root {
		return &record.ProofError{Code: record.CodeInvalidMerkleRoot, Detail: "unknown root"}
	}
	p, err := semaphore.ParseProof(cl.Proof)
	if serr, ok := errors.AsType[*semaphore.Error](err); ok {
		return &record.ProofError{Code: serr.Code(), Detail: serr.Error()}
	}
	if err != nil {
		return err
	}
	ext := semaphore.ExternalNullifier(cl.AppID, cl.Action)
	in, err := semaphore.NewPublicInputs(cl.MerkleRoot, cl.NullifierHash, cl.SignalHash, ext.Bytes())
	if err != nil {
		return err
	}
	if !semaphore.Verify(c.vk, p, in) {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "pairing check failed"}
	}
	return nil
}

// TestRealProof drives the endpoint with a proof from the local prover
// (doc/design.md §6) for the app_id and action, posted through the rp_ id, and
// checks that the external nullifier is bound to the app_id and action.
func TestRealProof(t *testing.T) {
	if testing.Short() {
		t.Skip("Groth16 setup takes seconds")
	}
	const depth = 2 // the circuit is the same at 30, only longer to set up
	pk, vk, err := prover.Setup(depth)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.NewChaCha8([32]byte{6})
	tree, err := semaphore.NewTree(depth)
	if err != nil {
		t.Fatal(err)
	}
	var id semaphore.Identity
	for range 3 {
		if id, err = semaphore.NewIdentity(rng); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tree.Insert(id.Commitment()); err != nil {
			t.Fatal(err)
		}
	}
	path, err := tree.Path(2)
	if err != nil {
		t.Fatal(err)
	}
	signal := semaphore.HashToField([]byte("my vote"))
	proof, in, err := prover.Prove(pk, id, path, signal, semaphore.ExternalNullifier(testAppID, "vote"))
	if err != nil {
		t.Fatal(err)
	}
	root := in.Root.Bytes()
	e := newEnv(t)
	h, err := New(Options{Store: e.store, Checker: &cryptoChecker{vk: vk, root: root}, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	e.mux = http.NewServeMux()
	h.Register(e.mux)

	it := idkitItem{
		Identifier: "orb", Proof: proof.ABIHex(), MerkleRoot: field.Format(&in.Root),
		Nullifier: field.Format(&in.NullifierHash), SignalHash: field.Format(&signal),
	}
	resp := wantSuccess(t, e.post(rpPath, newRequest(it).json(t)))
	if resp.Nullifier != field.Format(&in.NullifierHash) {
		t.Errorf("nullifier %s, want %s", resp.Nullifier, field.Format(&in.NullifierHash))
	}
	// Through the app_ id: same app, same nullifier, a reuse.
	if resp := wantSuccess(t, e.post(appPath, newRequest(it).json(t))); resp.Message != messageReused {
		t.Errorf("message %q", resp.Message)
	}

	for _, tc := range []struct {
		name   string
		modify func(r *idkitResult)
		code   string
	}{
		{"other action", func(r *idkitResult) { r.Action = "vote2" }, record.CodeInvalidProof},
		{"other signal", func(r *idkitResult) { r.Responses[0].SignalHash = defaultSignalHash }, record.CodeInvalidProof},
		{"other root", func(r *idkitResult) { r.Responses[0].MerkleRoot = rootHex }, record.CodeInvalidMerkleRoot},
		{"bad encoding", func(r *idkitResult) { r.Responses[0].Proof = "0x1234" }, record.CodeInvalidFormat},
	} {
		r := newRequest(it)
		tc.modify(&r)
		f := wantFailure(t, e.post(rpPath, r.json(t)), http.StatusBadRequest, codeAllFailed)
		if f.Results[0].Code != tc.code {
			t.Errorf("%s: results %+v, want code %s", tc.name, f.Results, tc.code)
		}
	}
}
