package signin

import (
	"context"
	"errors"
	"net/http"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/oauth"
	"worldid/record"
	"worldid/semaphore"
)

// The wallet's answer (doc.go "Wallet Bridge"): its World ID 3.0 proof is
// read at the boundary, checked against the request's signal, and
// approves the request once. The wallet never receives the authorization
// response; the browser that started the sign-in does.

// maxProofBytes bounds the wallet's proof; every encoding of
// doc/crypto.md §g fits in well under 2 KiB.
const maxProofBytes = 4096

// walletRequest is what the approval of a request needs of it.
type walletRequest struct {
	ID       []byte
	Expires  int64
	ClientID string
}

// progressError explains why a wallet action cannot proceed: the request
// was cancelled or already completed. err is AdvanceSignin's.
func (f *Flow) progressError(ctx context.Context, cur record.SigninProgress, err error) *oauth.Error {
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, record.ErrExists):
		return f.out.Internal(ctx, "sign-in progress", err)
	case cur.State == record.SigninCancelled:
		return oauth.NewError(http.StatusConflict, "cancelled", "access_denied", "request", "the sign-in was cancelled in the browser")
	}
	return oauth.NewError(http.StatusConflict, "already_completed", "invalid_request", "request", "the sign-in request was already completed")
}

// submission is the proof of a wallet's answer.
type submission struct {
	proof         string
	merkleRoot    [32]byte
	nullifierHash [32]byte
	sub           string // canonical form of the nullifier hash
	level         string
}

// parseProof checks a World ID 3.0 answer's proof fields: proof at most 4 KiB; field elements in VerifyHex
// syntax and below p (doc/crypto.md §a, §g); level orb or device.
func parseProof(proof, merkleRoot, nullifierHash, level string) (submission, *oauth.Error) {
	var s submission
	var e *oauth.Error
	if s.proof = proof; len(s.proof) > maxProofBytes {
		return s, oauth.ErrInvalid("proof", "proof is longer than 4096 bytes")
	}
	if s.merkleRoot, _, e = parseFE("merkle_root", merkleRoot); e != nil {
		return s, e
	}
	var nullifier fr.Element
	if s.nullifierHash, nullifier, e = parseFE("nullifier_hash", nullifierHash); e != nil {
		return s, e
	}
	s.sub = field.Format(&nullifier)
	if s.level = level; s.level != oauth.LevelOrb && s.level != oauth.LevelDevice {
		return s, oauth.ErrInvalid("verification_level", "verification_level must be orb or device")
	}
	return s, nil
}

// parseFE reads a proof input as the verify interface does (VerifyHex) and
// rejects values ≥ p here, at the boundary (doc/crypto.md §g "Public inputs").
func parseFE(name, s string) ([32]byte, fr.Element, *oauth.Error) {
	var x fr.Element
	b, err := field.ParseVerifyHex(s)
	if err != nil {
		return b, x, oauth.ErrInvalid(name, name+" must be a hex field element: "+err.Error())
	}
	if x.SetBytesCanonical(b[:]) != nil {
		return b, x, oauth.ErrInvalid(name, name+" is not less than the field modulus")
	}
	return b, x, nil
}

// approve checks the state, then the proof against the request's signal,
// and records the approval.
func (f *Flow) approve(ctx context.Context, req walletRequest, s submission) *oauth.Error {
	return f.approveChecked(ctx, req, s.sub, s.level, func(app record.App) error {
		return f.checker.CheckClaim(ctx, record.Claim{
			Identifier: s.level, Environment: app.Environment(), AppID: app.ID, Action: "",
			MerkleRoot: s.merkleRoot, NullifierHash: s.nullifierHash, SignalHash: signalHash(signalOf(req.ID)), Proof: s.proof,
		})
	})
}

// approveChecked approves req for the subject sub at level when check
// accepts the proof for the app the request's app proves for (proofApp;
// a 3.0 or 4.0 check).
func (f *Flow) approveChecked(ctx context.Context, req walletRequest, sub, level string, check func(record.App) error) *oauth.Error {
	id := progressID(req.ID)
	cur, err := f.store.SigninProgress(ctx, id)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		return f.out.Internal(ctx, "complete: read progress", err)
	}
	if cur.State != "" && cur.State != record.SigninScanned {
		return f.progressError(ctx, cur, record.ErrExists)
	}
	// The app may have been disabled or deleted since the request began;
	// a staging app's proofs use the staging trees.
	app, err := f.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return errAccessDenied("the client was disabled or deleted by the operator")
	}
	if err != nil {
		return f.out.Internal(ctx, "complete: load app", err)
	}
	papp, e := f.proofApp(ctx, app)
	if e != nil {
		return e
	}
	err = check(papp)
	if pe, ok := errors.AsType[*record.ProofError](err); ok {
		return errAccessDenied("the World ID proof did not verify (" + pe.Code + ")")
	}
	if err != nil {
		return f.out.Internal(ctx, "complete: check proof", err)
	}
	// The approval is the one write: the signal is unique to the request
	// and a request is approved at most once, so a proof can approve only
	// this request, once; a crash after it leaves the request approved.
	approved := record.SigninProgress{ID: id, State: record.SigninApproved, Subject: sub, VerificationLevel: level,
		AuthTime: f.now(), ExpiresAt: progressExpiry(req.Expires)}
	// A scanned state is recorded only by versions that stored the mark.
	cur, err = f.store.AdvanceSignin(ctx, approved, "", record.SigninScanned)
	return f.progressError(ctx, cur, err)
}

func errAccessDenied(detail string) *oauth.Error {
	return oauth.NewError(http.StatusForbidden, "access_denied", "access_denied", "proof", detail)
}

// signalHash is the proof's expected signal_hash: IDKit 4's hashSignal
// of the signal (doc/crypto.md §g), as World's portal computes it for sign-in;
// for the server's own signals, lowercase hex without 0x, that is
// hashToField of their UTF-8 bytes.
func signalHash(signal string) [32]byte {
	h := semaphore.HashSignal(signal)
	return h.Bytes()
}

// stagingOnly is "staging" for a staging app and "" for production, whose
// environment the wallet assumes.
func stagingOnly(app record.App) string {
	if app.Staging {
		return app.Environment()
	}
	return ""
}
