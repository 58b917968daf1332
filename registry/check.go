package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/record"
	"worldid/semaphore"
)

// CheckClaim verifies one World ID 3.0 proof: nil when it verifies, a
// *record.ProofError saying why not otherwise.
func (r *Registry) CheckClaim(ctx context.Context, c record.Claim) error {
	ext := semaphore.ExternalNullifier(c.AppID, c.Action)
	return r.check(ctx, c, ext.Bytes())
}

// check is CheckClaim with the external nullifier given.
func (r *Registry) check(ctx context.Context, c record.Claim, ext [32]byte) error {
	t, err := r.tree(c.Identifier, c.Environment)
	if err != nil {
		return &record.ProofError{Code: record.CodeInvalidMerkleRoot, Detail: "no tree for this credential type and environment"}
	}
	proof, err := semaphore.ParseProof(c.Proof)
	if err != nil {
		return proofError(err)
	}
	var root fr.Element
	root.SetBytes(c.MerkleRoot[:]) // the parser rejected values ≥ p
	key, err := r.keyFor(t, root, maxAgeOrDefault(c))
	if legacy := r.legacyTree(c.Identifier, c.Environment); legacy != nil && isUnknownRoot(err) {
		key, err = r.keyFor(legacy, root, maxAgeOrDefault(c))
	}
	if isUnknownRoot(err) && r.testRoots != nil && r.testRoots(record.CredentialType(c.Identifier), c.Environment, root) {
		key, err = r.localKey, nil
	}
	if isUnknownRoot(err) && r.roots != nil && r.roots.Has(t.name) {
		key, err = r.askRootSource(ctx, t.name, root)
	}
	if err != nil {
		return err
	}
	in, err := semaphore.NewPublicInputs(c.MerkleRoot, c.NullifierHash, c.SignalHash, ext)
	if err != nil {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "public input out of range"}
	}
	if !r.verify(key, proof, in) {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "the proof does not verify for these public inputs"}
	}
	return nil
}

func maxAgeOrDefault(c record.Claim) (d time.Duration) {
	if c.MaxAge > 0 {
		return c.MaxAge
	}
	return defaultMaxAge
}

// keyFor applies root validity (doc/crypto.md §g) and picks the verifying key
// that the root's tree proves with.
func (r *Registry) keyFor(t *tree, root fr.Element, maxAge time.Duration) (*semaphore.VerifyingKey, error) {
	now := r.now()
	history, key := t.local, r.localKey
	if k, ok := t.extKeys.Load(root); ok {
		history, key = t.external, k.(*semaphore.VerifyingKey)
	}
	switch err := history.Check(root, now, maxAge); {
	case errors.Is(err, semaphore.ErrUnknownRoot):
		return nil, &record.ProofError{Code: record.CodeInvalidMerkleRoot, Detail: "the merkle root is not known for this credential type"}
	case errors.Is(err, semaphore.ErrRootTooOld):
		return nil, &record.ProofError{Code: record.CodeRootTooOld, Detail: "the merkle root is older than max_age"}
	case err != nil:
		return nil, err
	}
	return key, nil
}

// askRootSource asks the root source about a root no history here knows:
// valid means the published key of the source's depth checks the proof;
// a source that cannot answer fails the check (never "valid").
func (r *Registry) askRootSource(ctx context.Context, tree string, root fr.Element) (*semaphore.VerifyingKey, error) {
	valid, err := r.roots.ValidRoot(ctx, tree, root)
	switch {
	case err != nil:
		return nil, fmt.Errorf("registry: root source for %s: %w", tree, err)
	case !valid:
		return nil, &record.ProofError{Code: record.CodeInvalidMerkleRoot, Detail: "the merkle root is not valid on the identity manager contract"}
	}
	return r.rootSourceKey, nil
}

func isUnknownRoot(err error) bool {
	pe, ok := errors.AsType[*record.ProofError](err)
	return ok && pe.Code == record.CodeInvalidMerkleRoot
}

func (r *Registry) verify(key *semaphore.VerifyingKey, p *semaphore.Proof, in semaphore.PublicInputs) bool {
	if r.batcher == nil {
		return semaphore.Verify(key, p, in)
	}
	return r.batcher.Verify(key, p, in)
}

// proofError maps a semaphore decoding error to its result code.
func proofError(err error) error {
	var se *semaphore.Error
	if errors.As(err, &se) {
		return &record.ProofError{Code: se.Code(), Detail: se.Rule()}
	}
	return &record.ProofError{Code: record.CodeInvalidFormat, Detail: "the proof cannot be decoded"}
}
