package signin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/oauth"
	"worldid/record"
	"worldid/semaphore"
)

// The wallet's side of a sign-in (doc.go "Wallet protocol"): it reads the
// request's details, proves, and posts the proof. It never receives the
// authorization response; the browser that started the sign-in does.

const (
	// maxProofBytes bounds the posted proof; every encoding of
	// doc/crypto.md §g fits in well under 2 KiB.
	maxProofBytes = 4096
	// maxWalletToken bounds the wallet token (about 150 characters).
	maxWalletToken = 1024
	// walletScheme is the deep link the wait page and its QR code carry.
	walletScheme = "worldid://signin?"
)

// walletLink is the deep link of a pending request: the wallet token and
// the server to ask for its details.
func (f *Flow) walletLink(token string) string {
	return walletScheme + url.Values{"request": {token}, "server": {f.issuer}}.Encode()
}

// walletDetails answers GET /authorize/request: what the wallet shows and
// needs to prove.
type walletDetails struct {
	Request    string `json:"request"`
	AppID      string `json:"app_id"`
	AppName    string `json:"app_name"`
	ReturnHost string `json:"return_host"`
	MatchCode  string `json:"match_code"`
	Action     string `json:"action"`
	Signal     string `json:"signal"`
	ExpiresAt  string `json:"expires_at"` // RFC 3339, UTC
	Submit     string `json:"submit"`
	// Environment is "staging" for a staging app, whose proofs come from
	// the staging trees; absent for production.
	Environment string `json:"environment,omitempty"`
}

// serveWalletRequest returns the details of a pending request and marks it
// scanned, so that the wait page asks the user to confirm in the wallet.
func (f *Flow) serveWalletRequest(w http.ResponseWriter, r *http.Request) {
	q, e := oauth.ParseQuery(r.URL.RawQuery)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	params, e := oauth.StrictParams(q)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	req, e := f.walletRequestOf(params["request"])
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	ctx := r.Context()
	app, err := f.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) {
		f.out.WriteError(w, errAccessDenied("the client was deleted by the operator"))
		return
	}
	if err != nil {
		f.out.WriteError(w, f.out.Internal("wallet request: load app", err))
		return
	}
	if e := f.markScanned(ctx, req); e != nil {
		f.out.WriteError(w, e)
		return
	}
	f.out.WriteJSON(w, http.StatusOK, walletDetails{
		Request: params["request"], AppID: app.ID, AppName: app.Name, ReturnHost: req.ReturnHost,
		MatchCode: matchCode(req.ID), Action: "", Signal: signalOf(req.ID),
		ExpiresAt: time.Unix(req.Expires, 0).UTC().Format(time.RFC3339), Submit: f.issuer + pathComplete,
		Environment: stagingOnly(app),
	})
}

// stagingOnly is "staging" for a staging app and "" for production, whose
// environment the wallet assumes.
func stagingOnly(app record.App) string {
	if app.Staging {
		return app.Environment()
	}
	return ""
}

// markScanned marks the first scan, which writes nothing durable (a
// lost mark only keeps the page from saying "confirm in your wallet");
// later reads of a scanned request do nothing, and a cancelled or
// completed one is refused.
func (f *Flow) markScanned(ctx context.Context, req walletRequest) *oauth.Error {
	id := progressID(req.ID)
	cur, err := f.store.SigninProgress(ctx, id)
	switch {
	case errors.Is(err, record.ErrNotFound):
		if err := f.store.MarkScanned(ctx, id, progressExpiry(req.Expires)); err != nil {
			f.log.Warn("signin: wallet request: mark scanned", "err", err)
		}
		return nil
	case err != nil:
		return f.out.Internal("wallet request: read progress", err)
	case cur.State == record.SigninScanned:
		return nil
	}
	return f.progressError(cur, record.ErrExists)
}

// walletRequestOf opens a wallet token that has not expired.
func (f *Flow) walletRequestOf(token string) (walletRequest, *oauth.Error) {
	if token == "" {
		return walletRequest{}, oauth.ErrRequired("request")
	}
	req, err := f.openWallet(token)
	if err != nil {
		return req, oauth.ErrInvalid("request", "the sign-in request is unknown or damaged")
	}
	if !f.now().Before(time.Unix(req.Expires, 0)) {
		return req, errExpired()
	}
	return req, nil
}

// progressError explains why a wallet action cannot proceed: the request
// was cancelled or already completed. err is AdvanceSignin's.
func (f *Flow) progressError(cur record.SigninProgress, err error) *oauth.Error {
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, record.ErrExists):
		return f.out.Internal("sign-in progress", err)
	case cur.State == record.SigninCancelled:
		return oauth.NewError(http.StatusConflict, "cancelled", "access_denied", "request", "the sign-in was cancelled in the browser")
	}
	return oauth.NewError(http.StatusConflict, "already_completed", "invalid_request", "request", "the sign-in request was already completed")
}

func errExpired() *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, "expired", "invalid_request", "request", "the sign-in request expired; start again in the browser")
}

// submission is the wallet's POST to /authorize/complete.
type submission struct {
	request       string // the wallet token
	proof         string
	merkleRoot    [32]byte
	nullifierHash [32]byte
	sub           string // canonical form of the nullifier hash
	level         string
}

var submissionFields = []string{"request", "proof", "merkle_root", "nullifier_hash", "verification_level"}

// parseSubmission checks the wallet's form: exactly the five fields, each
// once; request at most 1 KiB; field elements in VerifyHex syntax
// and below p (doc/crypto.md §a, §g); verification_level orb or device.
func parseSubmission(v url.Values) (submission, *oauth.Error) {
	var s submission
	params, e := oauth.StrictParams(v)
	if e != nil {
		return s, e
	}
	for name := range params {
		if !slices.Contains(submissionFields, name) {
			return s, oauth.ErrInvalid(name, "unknown parameter "+strconv.Quote(name))
		}
	}
	for _, name := range submissionFields {
		if params[name] == "" {
			return s, oauth.ErrRequired(name)
		}
	}
	if len(params["request"]) > maxWalletToken {
		return s, oauth.ErrInvalid("request", "request is longer than 1024 bytes")
	}
	s, e = parseProof(params["proof"], params["merkle_root"], params["nullifier_hash"], params["verification_level"])
	s.request = params["request"]
	return s, e
}

// parseProof checks a World ID 3.0 proof's fields, from the wallet's form
// or a bridge answer: proof at most 4 KiB; field elements in VerifyHex
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

// approval is the wallet's answer to a completed proof.
type approval struct {
	Status   string `json:"status"`    // "approved"
	ReturnTo string `json:"return_to"` // the host the browser returns to
}

// serveComplete takes the wallet's proof for a pending request. Nothing is
// consumed until the proof verifies: a malformed form, an unknown, expired,
// cancelled or completed request, or a proof that does not verify leaves
// the request pending (the wallet may retry). A verified proof approves
// the request, once; the browser then finishes it.
func (f *Flow) serveComplete(w http.ResponseWriter, r *http.Request) {
	v, e := oauth.ReadForm(w, r)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	s, e := parseSubmission(v)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	req, e := f.walletRequestOf(s.request)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	if e := f.approve(r.Context(), req, s); e != nil {
		f.out.WriteError(w, e)
		return
	}
	f.out.WriteJSON(w, http.StatusOK, approval{Status: record.SigninApproved, ReturnTo: req.ReturnHost})
}

// approve checks the state, then the proof against the request's signal,
// and records the approval.
func (f *Flow) approve(ctx context.Context, req walletRequest, s submission) *oauth.Error {
	return f.approveChecked(ctx, req, s.sub, s.level, func(app record.App) error {
		return f.checker.CheckClaim(ctx, record.Claim{
			Identifier: s.level, Environment: app.Environment(), AppID: req.ClientID, Action: "",
			MerkleRoot: s.merkleRoot, NullifierHash: s.nullifierHash, SignalHash: signalHash(signalOf(req.ID)), Proof: s.proof,
		})
	})
}

// approveChecked approves req for the subject sub at level when check
// accepts the proof for the request's app (a 3.0 or 4.0 check).
func (f *Flow) approveChecked(ctx context.Context, req walletRequest, sub, level string, check func(record.App) error) *oauth.Error {
	id := progressID(req.ID)
	cur, err := f.store.SigninProgress(ctx, id)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		return f.out.Internal("complete: read progress", err)
	}
	if cur.State != "" && cur.State != record.SigninScanned {
		return f.progressError(cur, record.ErrExists)
	}
	// The app may have been disabled or deleted since the request began;
	// a staging app's proofs use the staging trees.
	app, err := f.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return errAccessDenied("the client was disabled or deleted by the operator")
	}
	if err != nil {
		return f.out.Internal("complete: load app", err)
	}
	err = check(app)
	if pe, ok := errors.AsType[*record.ProofError](err); ok {
		return errAccessDenied("the World ID proof did not verify (" + pe.Code + ")")
	}
	if err != nil {
		return f.out.Internal("complete: check proof", err)
	}
	// The approval is the one write: the signal is unique to the request
	// and a request is approved at most once, so a proof can approve only
	// this request, once; a crash after it leaves the request approved.
	approved := record.SigninProgress{ID: id, State: record.SigninApproved, Subject: sub, VerificationLevel: level,
		AuthTime: f.now(), ExpiresAt: progressExpiry(req.Expires)}
	// A scanned state is recorded only by versions that stored the mark.
	cur, err = f.store.AdvanceSignin(ctx, approved, "", record.SigninScanned)
	return f.progressError(cur, err)
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
