package registry

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
)

// DefaultMinExpiration is how far in the past a 4.0 proof's
// expires_at_min may lie (WorldIDVerifier's minExpirationThreshold as
// deployed: world-id-protocol contracts/script/core/config/production.json,
// 18000 s).
const DefaultMinExpiration = 5 * time.Hour

// CheckClaimV4 verifies one World ID 4.0 proof the way World's
// WorldIDVerifierV2 contract does (doc.go), in its order: the action's
// prefix, root, issuer key, OPRF key, expiry, then the proof points and the
// range of the other public inputs. nil when it verifies, a
// *record.ProofError with the portal's code otherwise, any other error
// when the root or key source could not answer.
func (r *Registry) CheckClaimV4(ctx context.Context, c record.ClaimV4) error {
	st := oprfproof.Statement{IssuerSchemaID: c.IssuerSchemaID, ExpiresAtMin: c.ExpiresAtMin, RPID: c.RPID}
	// WorldIDVerifierV2's verify and verifySession check the action's
	// prefix byte first; a session claim is one with a session input.
	if !oprfproof.ValidAction(c.Action, c.SessionID != [32]byte{}) {
		return errInvalidAction
	}
	// No registry root is ≥ r (roots are hashes in the field), so
	// isValidRoot answers false: InvalidMerkleRoot, not a range error.
	if st.Root.SetBytesCanonical(c.Proof[4][:]) != nil {
		return errInvalidRootV4
	}
	if err := r.checkRootV4(ctx, c.Environment, st.Root); err != nil {
		return err
	}
	issuerKey, ok, err := r.trustAnchor(ctx, record.AnchorIssuerKey, c.Environment, c.IssuerSchemaID)
	if err != nil {
		return err
	}
	if !ok {
		return &record.ProofError{Code: record.CodeInvalidCredentialIssuer, Detail: "no credential issuer key is registered for this issuer_schema_id"}
	}
	oprfKey, ok, err := r.trustAnchor(ctx, record.AnchorOPRFKey, c.Environment, c.RPID)
	if err != nil {
		return err
	}
	if !ok {
		return &record.ProofError{Code: record.CodeVerificationFailed, Detail: "no OPRF public key is registered for this rp_id"}
	}
	st.IssuerKey, st.OPRFKey = issuerKey, oprfKey
	if pe := checkExpiry(c.ExpiresAtMin, r.minExpiration, r.now()); pe != nil {
		return pe
	}
	// Verifier.verifyCompressedProof decompresses the points before its
	// public-input MSM checks each input < r.
	p, err := oprfproof.ParseProof(c.Proof)
	if err != nil {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "the proof points are invalid"}
	}
	if err := publicInputs(c, &st); err != nil {
		return err
	}
	if !r.verifyV4(p, &st) {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "the proof does not verify for these public inputs"}
	}
	return nil
}

var (
	errInvalidRootV4 = &record.ProofError{Code: record.CodeInvalidRoot, Detail: "the World ID registry root is not valid"}
	errUnknownRootV4 = &record.ProofError{Code: record.CodeInvalidRoot, Detail: "the World ID registry root is not a known root of this environment or the other"}
	errEnvMismatch   = &record.ProofError{Code: record.CodeEnvironmentMismatch, Detail: "the World ID registry root belongs to the other environment (production vs staging)"}
	// errInvalidAction is WorldIDVerifierV2's InvalidAction revert, which
	// the portal, naming no code for it, would answer verification_failed.
	errInvalidAction = &record.ProofError{Code: record.CodeVerificationFailed,
		Detail: "the action's first byte is not 0x00 (uniqueness proof) or 0x02 (session proof) as the proof type requires (InvalidAction)"}
)

// publicInputs reads the claim's other field elements into st, refusing
// values ≥ r as Verifier.sol does (PublicInputNotInField).
func publicInputs(c record.ClaimV4, st *oprfproof.Statement) error {
	for _, v := range []struct {
		dst *fr.Element
		src [32]byte
	}{{&st.Nullifier, c.Nullifier}, {&st.Action, c.Action}, {&st.Nonce, c.Nonce}, {&st.SignalHash, c.SignalHash},
		{&st.GenesisIssuedAtMin, c.GenesisMin}, {&st.SessionID, c.SessionID}} {
		if v.dst.SetBytesCanonical(v.src[:]) != nil {
			return &record.ProofError{Code: record.CodeInvalidPublicInput, Detail: "a public input is not below the BN254 scalar field modulus"}
		}
	}
	return nil
}

// checkExpiry is WorldIDVerifier's uint256(expiresAtMin +
// minExpirationThreshold) < block.timestamp, with now for the block time.
// The sum is uint64 arithmetic, which Solidity 0.8 checks: on overflow the
// call reverts (Panic), and the portal answers any revert it does not name
// verification_failed, as it answers ExpirationTooOld.
func checkExpiry(expiresAtMin uint64, threshold time.Duration, now time.Time) *record.ProofError {
	limit, carry := bits.Add64(expiresAtMin, uint64(threshold/time.Second), 0)
	switch {
	case carry != 0:
		return &record.ProofError{Code: record.CodeVerificationFailed, Detail: "expires_at_min plus the minimum expiration threshold overflows uint64 (the contract reverts)"}
	case now.Unix() >= 0 && limit < uint64(now.Unix()):
		return &record.ProofError{Code: record.CodeVerificationFailed, Detail: "expires_at_min lies further in the past than the minimum expiration threshold (ExpirationTooOld)"}
	}
	return nil
}

// checkRootV4 accepts the roots the operator added for the environment
// (valid as external roots are, doc/crypto.md §g "Root validity", with the
// default max age), then asks the root source, if one is configured for
// the environment's registry. A root that is not valid there but is valid
// in the other environment is environment_mismatch; any other is
// invalid_root (a malformed root, checked before, says "not valid"; an
// unknown one says so).
func (r *Registry) checkRootV4(ctx context.Context, environment string, root fr.Element) error {
	if _, ok := r.v4Roots[environment]; !ok {
		return &record.ProofError{Code: record.CodeInvalidRoot, Detail: "no World ID 4.0 registry for this environment"}
	}
	valid, err := r.validRootV4(ctx, environment, root)
	if err != nil || valid {
		return err
	}
	other := otherEnvironment(environment)
	if _, ok := r.v4Roots[other]; !ok {
		return errUnknownRootV4
	}
	if valid, err = r.validRootV4(ctx, other, root); err != nil {
		return err
	}
	if valid {
		return errEnvMismatch
	}
	return errUnknownRootV4
}

// validRootV4 reports whether root is valid in the environment's 4.0
// registry: added by the operator, else confirmed by the root source.
func (r *Registry) validRootV4(ctx context.Context, environment string, root fr.Element) (bool, error) {
	err := r.v4Roots[environment].Check(root, r.now(), defaultMaxAge)
	if err == nil {
		return true, nil
	}
	tree := record.V4RootTree(environment)
	if !errors.Is(err, semaphore.ErrUnknownRoot) || r.roots == nil || !r.roots.Has(tree) {
		return false, nil
	}
	valid, err := r.roots.ValidRoot(ctx, tree, root)
	if err != nil {
		return false, fmt.Errorf("registry: root source for %s: %w", tree, err)
	}
	return valid, nil
}

// otherEnvironment is staging for production and production for staging.
func otherEnvironment(environment string) string {
	if environment == "production" {
		return "staging"
	}
	return "production"
}

func (r *Registry) verifyV4(p *oprfproof.Proof, st *oprfproof.Statement) bool {
	if r.batcher == nil {
		return oprfproof.Verify(p, st)
	}
	return oprfproof.VerifyBatched(r.batcher, p, st)
}

// RPIDString is the route id form of a numeric rp_id: "rp_" + 16 lowercase
// hex digits (World's portal reads the digits as the contract's uint64).
func RPIDString(id uint64) string { return fmt.Sprintf("rp_%016x", id) }

// trustAnchor returns the key of kind (issuer_schema_id or rp_id id) for
// the environment: the operator's stored anchor, which wins; else, if the
// key source has a registry for the environment, what it holds there
// (its failure is an error: verification_error, never a key); else the
// default the server was started with.
func (r *Registry) trustAnchor(ctx context.Context, kind, environment string, id uint64) (oprfproof.Point, bool, error) {
	name := strconv.FormatUint(id, 10)
	if kind == record.AnchorOPRFKey {
		name = RPIDString(id)
	}
	if p, ok := r.anchors.Load(kind + "/" + name); ok {
		return p.(oprfproof.Point), true, nil
	}
	if set := record.V4AnchorSet(kind, environment); r.keys != nil && r.keys.Has(set) {
		x, y, found, err := r.keys.PublicKey(ctx, set, id)
		if err != nil {
			return oprfproof.Point{}, false, fmt.Errorf("registry: key source for %s: %w", set, err)
		}
		return oprfproof.Point{X: x, Y: y}, found, nil
	}
	p, ok := r.defaultAnchors[kind+"/"+name]
	return p, ok, nil
}

// ParseAnchor checks a trust anchor's kind, id and coordinates (decimal or
// 0x-hex, below r, not zero).
func ParseAnchor(a record.TrustAnchor) (oprfproof.Point, error) {
	var p oprfproof.Point
	switch a.Kind {
	case record.AnchorIssuerKey:
		if n, err := strconv.ParseUint(a.ID, 10, 64); err != nil || strconv.FormatUint(n, 10) != a.ID {
			return p, fmt.Errorf("registry: issuer key id %q is not an issuer_schema_id (a canonical decimal uint64)", a.ID)
		}
	case record.AnchorOPRFKey:
		if _, err := ParseRPID(a.ID); err != nil {
			return p, err
		}
	default:
		return p, fmt.Errorf("registry: trust anchor kind %q is neither %s nor %s", a.Kind, record.AnchorIssuerKey, record.AnchorOPRFKey)
	}
	for _, c := range []struct {
		dst  *fr.Element
		src  string
		name string
	}{{&p.X, a.X, "x"}, {&p.Y, a.Y, "y"}} {
		var err error
		if *c.dst, err = oprfproof.ParseFieldElement(c.src); err != nil {
			return p, fmt.Errorf("registry: trust anchor %s must be a field element in decimal or 0x-hex", c.name)
		}
	}
	if p.X.IsZero() || p.Y.IsZero() {
		// WorldIDVerifier treats a zero coordinate as "unregistered".
		return p, errors.New("registry: a trust anchor coordinate is zero")
	}
	return p, nil
}

// ParseRPID reads "rp_" + 16 lowercase hex digits as the contract's uint64.
func ParseRPID(s string) (uint64, error) {
	digits, ok := strings.CutPrefix(s, "rp_")
	n, err := strconv.ParseUint(digits, 16, 64)
	if !ok || len(digits) != 16 || err != nil || fmt.Sprintf("%016x", n) != digits {
		return 0, fmt.Errorf("registry: %q is not an rp_id (rp_ and 16 lowercase hex digits)", s)
	}
	return n, nil
}

// AddTrustAnchor stores a trust anchor (replacing one of the same kind and
// id) and uses it at once.
func (r *Registry) AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error {
	p, err := ParseAnchor(a)
	if err != nil {
		return err
	}
	x, y := p.X, p.Y
	a.X, a.Y, a.At = field.Format(&x), field.Format(&y), a.At.UTC()
	if err := r.store.AddTrustAnchor(ctx, a); err != nil {
		return err
	}
	r.anchors.Store(a.Kind+"/"+a.ID, p)
	return nil
}

// TrustAnchors returns the stored anchors.
func (r *Registry) TrustAnchors(ctx context.Context) ([]record.TrustAnchor, error) {
	return r.store.TrustAnchors(ctx)
}

// AddRootV4 records a World ID 4.0 registry root of the environment.
func (r *Registry) AddRootV4(ctx context.Context, environment string, root fr.Element, at time.Time) error {
	if !record.ValidEnvironment(environment) {
		return fmt.Errorf("%w: %q", ErrUnknownTree, environment)
	}
	er := record.ExternalRoot{Tree: record.V4RootTree(environment), Root: field.Format(&root), Depth: oprfproof.TreeDepth, At: at.UTC()}
	if err := r.store.AddExternalRoot(ctx, er); err != nil {
		return err
	}
	return r.loadExternalRoot(er)
}

// loadAnchors makes the stored anchors current (Refresh).
func (r *Registry) loadAnchors(ctx context.Context) error {
	anchors, err := r.store.TrustAnchors(ctx)
	if err != nil {
		return err
	}
	for _, a := range anchors {
		p, err := ParseAnchor(a)
		if err != nil {
			return err
		}
		r.anchors.Store(a.Kind+"/"+a.ID, p)
	}
	return nil
}
