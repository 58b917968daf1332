package signin

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/bridge"
	"worldid/bridge/rpsig"
	"worldid/field"
	"worldid/internal/oauth"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
)

// World ID 4.0 sign-in (doc.go "World ID 4.0"): for an app with an RP
// signing key the bridge request also carries a signed 4.0 proof_request,
// built as IDKit 4 builds it (worldcoin/idkit rust/core/src/bridge.rs
// IDKitRequest::create, protocol_types ProofRequest), with
// allow_legacy_proofs so that a World App without 4.0 still answers the
// 3.0 request beside it.

const (
	// proofRequestVersion is ProofRequest.version (RequestVersion::V1).
	proofRequestVersion = 1
	// proofTypeUniqueness: the sign-in proves one person for the app's
	// empty action, as its 3.0 request does.
	proofTypeUniqueness = "uniqueness"
	// credentialV4 and its issuer_schema_id are the credential asked for:
	// IDKit 4's proof_of_human, schema 1 (idkit-core 4.3.0
	// ResponseItemV4), World ID 4.0's orb credential.
	credentialV4       = "proof_of_human"
	credentialSchemaV4 = 1
	// levelV4 is the verification_level a proof_of_human answer signs
	// in with (the ID token's claim).
	levelV4 = oauth.LevelOrb
	// proofRequestIDBytes: the request's id is "req_" and 16 random
	// bytes in hex; the answer's id is not checked (the signed nonce
	// binds the proof to the request).
	proofRequestIDBytes = 16
)

// CheckerV4 verifies a World ID 4.0 proof as /api/v4/verify does
// (package registry: the contract's checks, then the proof). It returns
// nil when the proof verifies, a *record.ProofError when it does not,
// and any other error when it could not decide.
type CheckerV4 interface {
	CheckClaimV4(ctx context.Context, c record.ClaimV4) error
}

// signinActionV4 is the sign-in's action, "" as in its 3.0 request, as
// the field element IDKit 4 puts in the proof request: hashToField of
// its UTF-8 bytes (FieldElement::from_arbitrary_raw_bytes).
func signinActionV4() [32]byte {
	e := semaphore.HashToField([]byte(""))
	return e.Bytes()
}

// withProofRequest adds the app's signed 4.0 proof_request to r when the
// app has an RP signing key and this server checks 4.0 proofs, and
// returns the request's nonce (nil: 3.0 only).
func (f *Flow) withProofRequest(r bridge.Request, req pendingRequest, app record.App) (bridge.Request, []byte, error) {
	if app.RPSigningKey == "" || f.checkerV4 == nil {
		return r, nil, nil
	}
	pr, nonce, err := proofRequest(f.rand, f.now(), app, signalOf(req.ID))
	if err != nil {
		return r, nil, err
	}
	allowLegacy := true
	r.ProofRequest, r.AllowLegacyProofs = pr, &allowLegacy
	return r, nonce[:], nil
}

// proofRequest is the app's 4.0 proof request for a sign-in's signal:
// an RP context signed with the app's key (bridge/rpsig, IDKit's
// default 300 s lifetime) for the empty action, asking for
// proof_of_human bound to the signal. The RP's OPRF key id is its rp_id,
// as in the current protocol.
func proofRequest(rand io.Reader, now time.Time, app record.App, signal string) (*bridge.ProofRequest, [32]byte, error) {
	key, err := rpsig.ParsePrivateKey(app.RPSigningKey)
	if err != nil {
		return nil, [32]byte{}, fmt.Errorf("app %s: rp signing key: %w", app.ID, err)
	}
	action := ""
	rc, err := key.SignRequest(rand, now, 0, &action)
	if err != nil {
		return nil, [32]byte{}, err
	}
	id := make([]byte, proofRequestIDBytes)
	if _, err := io.ReadFull(rand, id); err != nil {
		return nil, [32]byte{}, err
	}
	actionField := signinActionV4()
	actionHex := "0x" + hex.EncodeToString(actionField[:])
	return &bridge.ProofRequest{
		ID: "req_" + hex.EncodeToString(id), Version: proofRequestVersion, ProofType: proofTypeUniqueness,
		CreatedAt: rc.CreatedAt, ExpiresAt: rc.ExpiresAt, RPID: app.RPID, OPRFKeyID: app.RPID,
		Action: &actionHex, Signature: rc.SignatureHex(), Nonce: rc.NonceHex(),
		ProofRequests: []bridge.CredentialRequest{{Identifier: credentialV4, IssuerSchemaID: credentialSchemaV4, Signal: signal}},
	}, rc.Nonce, nil
}

// approveV4 checks a 4.0 answer against the sign-in's own request (its
// rp_id, the empty action, the nonce it signed, its signal) with the
// same checker /api/v4/verify uses, and approves the sign-in as a 3.0
// proof does.
func (f *Flow) approveV4(ctx context.Context, req pendingRequest, resp bridge.ProofResponse) *oauth.Error {
	if len(req.Bridge.Nonce) == 0 {
		return errAccessDenied("this sign-in did not ask for a World ID 4.0 proof")
	}
	item, sub, e := answerV4(resp)
	if e != nil {
		return e
	}
	claim := record.ClaimV4{Identifier: item.Identifier, IssuerSchemaID: item.IssuerSchemaID, Action: signinActionV4(),
		Nonce: [32]byte(req.Bridge.Nonce), SignalHash: signalHash(signalOf(req.ID)), ExpiresAtMin: item.ExpiresAtMin}
	claim.Nullifier, _ = oprfproof.ParseWord(item.Nullifier)
	for i, w := range item.Proof {
		claim.Proof[i], _ = oprfproof.ParseWord(w)
	}
	return f.approveChecked(ctx, walletRequest{ID: req.ID, Expires: req.Expires, ClientID: req.ClientID}, sub, levelV4,
		func(app record.App) error {
			rpID, err := record.RPIDNumber(app.RPID)
			if err != nil {
				return err
			}
			claim.RPID, claim.Environment = rpID, app.Environment()
			return f.checkerV4.CheckClaimV4(ctx, claim)
		})
}

// answerV4 reads a 4.0 answer: one uniqueness proof of proof_of_human
// with five proof words and a nullifier in the field, whose canonical
// form is the subject.
func answerV4(resp bridge.ProofResponse) (bridge.ResponseItem, string, *oauth.Error) {
	if resp.SessionID != nil || resp.Error != "" || len(resp.Responses) != 1 {
		return bridge.ResponseItem{}, "", errAccessDenied("the World ID 4.0 answer is not one uniqueness proof")
	}
	item := resp.Responses[0]
	if item.Identifier != credentialV4 || item.IssuerSchemaID != credentialSchemaV4 {
		return item, "", errAccessDenied("the World ID 4.0 answer is not a proof_of_human proof")
	}
	if len(item.Proof) != len(record.ClaimV4{}.Proof) {
		return item, "", errAccessDenied("a World ID 4.0 proof has 5 values")
	}
	for _, w := range item.Proof {
		if _, err := oprfproof.ParseWord(w); err != nil {
			return item, "", errAccessDenied("a World ID 4.0 proof value is not a uint256")
		}
	}
	n, err := oprfproof.ParseWord(item.Nullifier)
	var x fr.Element
	if err != nil || x.SetBytesCanonical(n[:]) != nil {
		return item, "", errAccessDenied("the World ID 4.0 nullifier is not a field element")
	}
	return item, field.Format(&x), nil
}
