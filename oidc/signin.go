package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
)

const (
	// maxProofBytes bounds the posted proof; every encoding of
	// crypto.md §g fits in well under 2 KiB.
	maxProofBytes = 4096
	// walletScheme is the deep link the sign-in page hands to the wallet.
	walletScheme = "worldid://signin?"
)

// startSignin stores a pending sign-in request for a validated
// authorization request and renders the sign-in page with the wallet link.
func (p *Provider) startSignin(ctx context.Context, w http.ResponseWriter, app record.App, req authzRequest) {
	id, err1 := p.randomHex(32)
	signal, err2 := p.randomHex(32)
	if err := errors.Join(err1, err2); err != nil {
		p.errorPage(w, p.errInternal("authorize: random", err))
		return
	}
	rec := record.SigninRequest{
		ID: hashHex(id), ClientID: app.ID, RedirectURI: req.redirectURI,
		ResponseType: req.responseType.String(), ResponseMode: req.mode, Scope: req.scope,
		State: req.state, Nonce: req.nonce, CodeChallenge: req.codeChallenge,
		Signal: signal, ExpiresAt: p.now().Add(signinLifetime),
	}
	if err := p.store.CreateSigninRequest(ctx, rec); err != nil {
		p.errorPage(w, p.errInternal("authorize: store sign-in request", err))
		return
	}
	p.signinPage(w, app.Name, app.ID, req.scope, walletLink(id, app, signal, p.issuer+pathComplete), rec.ExpiresAt)
}

// walletLink is the deep link of the sign-in page (doc.go "Wallet
// protocol"); the action is always empty, and environment=staging tells
// the wallet to prove from the staging trees for a staging app.
func walletLink(requestID string, app record.App, signal, submit string) string {
	v := url.Values{"request_id": {requestID}, "app_id": {app.ID}, "action": {""}, "signal": {signal}, "submit": {submit}}
	if app.Staging {
		v.Set("environment", "staging")
	}
	return walletScheme + v.Encode()
}

// submission is the wallet's POST to /authorize/complete.
type submission struct {
	requestID     string
	proof         string
	merkleRoot    [32]byte
	nullifierHash [32]byte
	sub           string // canonical form of the nullifier hash
	level         string
}

var submissionFields = []string{"request_id", "proof", "merkle_root", "nullifier_hash", "verification_level"}

// parseSubmission checks the wallet's form: exactly the five fields, each
// once; request_id 64 lowercase hex; field elements in VerifyHex syntax
// and below p (crypto.md §a, §g); verification_level orb or device.
func parseSubmission(v url.Values) (submission, *apiError) {
	var s submission
	params, e := strictParams(v)
	if e != nil {
		return s, e
	}
	for name := range params {
		if !slices.Contains(submissionFields, name) {
			return s, errInvalid(name, "unknown parameter "+strconv.Quote(name))
		}
	}
	for _, name := range submissionFields {
		if params[name] == "" {
			return s, errRequired(name)
		}
	}
	if s.requestID = params["request_id"]; !isLowerHex(s.requestID, 64) {
		return s, errInvalid("request_id", "request_id must be 64 lowercase hex digits")
	}
	if s.proof = params["proof"]; len(s.proof) > maxProofBytes {
		return s, errInvalid("proof", "proof is longer than 4096 bytes")
	}
	if s.merkleRoot, _, e = parseFE("merkle_root", params["merkle_root"]); e != nil {
		return s, e
	}
	var nullifier fr.Element
	if s.nullifierHash, nullifier, e = parseFE("nullifier_hash", params["nullifier_hash"]); e != nil {
		return s, e
	}
	s.sub = field.Format(&nullifier)
	if s.level = params["verification_level"]; s.level != levelOrb && s.level != levelDevice {
		return s, errInvalid("verification_level", "verification_level must be orb or device")
	}
	return s, nil
}

// parseFE reads a proof input as the verify interface does (VerifyHex) and
// rejects values ≥ p here, at the boundary (crypto.md §g "Public inputs").
func parseFE(name, s string) ([32]byte, fr.Element, *apiError) {
	var x fr.Element
	b, err := field.ParseVerifyHex(s)
	if err != nil {
		return b, x, errInvalid(name, name+" must be a hex field element: "+err.Error())
	}
	if x.SetBytesCanonical(b[:]) != nil {
		return b, x, errInvalid(name, name+" is not less than the field modulus")
	}
	return b, x, nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// serveComplete takes the wallet's proof for a pending sign-in request.
// Before the request is consumed, errors are local pages (the wallet may
// retry); after it, every outcome goes to the validated redirect URI:
// a proof that does not verify is the user failing to authenticate,
// error=access_denied (RFC 6749 §4.1.2.1).
func (p *Provider) serveComplete(w http.ResponseWriter, r *http.Request) {
	v, e := readForm(w, r)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	s, e := parseSubmission(v)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	ctx := r.Context()
	req, err := p.store.ConsumeSigninRequest(ctx, hashHex(s.requestID), p.now())
	if errors.Is(err, record.ErrNotFound) {
		p.errorPage(w, errInvalid("request_id", "the sign-in request is unknown, expired or already used"))
		return
	}
	if err != nil {
		p.errorPage(w, p.errInternal("complete: consume sign-in request", err))
		return
	}
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		p.errorPage(w, p.errInternal("complete: stored redirect_uri", err))
		return
	}
	params, e := p.completeSignin(ctx, req, s)
	if e != nil {
		params = errorParams(e, req.State)
	}
	p.respond(w, target, req.ResponseMode, params)
}

// completeSignin checks the proof against the request's signal, spends it
// and issues the authorization response parameters.
func (p *Provider) completeSignin(ctx context.Context, req record.SigninRequest, s submission) (url.Values, *apiError) {
	// The app may have been disabled or deleted since the request began;
	// a staging app's proofs use the staging trees.
	app, err := p.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return nil, errAccessDenied("the client was disabled or deleted by the operator")
	}
	if err != nil {
		return nil, p.errInternal("complete: load app", err)
	}
	signalHash := signalHash(req.Signal)
	err = p.checker.CheckClaim(ctx, record.Claim{
		Identifier: s.level, Environment: app.Environment(), AppID: req.ClientID, Action: "",
		MerkleRoot: s.merkleRoot, NullifierHash: s.nullifierHash, SignalHash: signalHash, Proof: s.proof,
	})
	if pe, ok := errors.AsType[*record.ProofError](err); ok {
		return nil, errAccessDenied("the World ID proof did not verify (" + pe.Code + ")")
	}
	if err != nil {
		return nil, p.errInternal("complete: check proof", err)
	}
	err = p.store.UseProofOnce(ctx, proofKey(s.nullifierHash, signalHash), req.ExpiresAt)
	if errors.Is(err, record.ErrExists) {
		return nil, errAccessDenied("the World ID proof was already used")
	}
	if err != nil {
		return nil, p.errInternal("complete: spend proof", err)
	}
	grantID, err := p.randomHex(16)
	if err != nil {
		return nil, p.errInternal("complete: random", err)
	}
	g := grant{
		id: grantID, clientID: req.ClientID, scope: req.Scope, nonce: req.Nonce,
		sub: s.sub, level: s.level, authTime: p.now(),
	}
	params, err := p.authorizationResponse(ctx, req, g)
	if err != nil {
		return nil, p.errInternal("complete: issue", err)
	}
	return params, nil
}

func errAccessDenied(detail string) *apiError {
	return newError(http.StatusForbidden, "access_denied", "access_denied", "proof", detail)
}

// authorizationResponse issues what the response type asks for: a code
// (stored), an access token and an ID token with c_hash / at_hash of the
// values issued alongside (OIDC Core §3.3.2.11).
func (p *Provider) authorizationResponse(ctx context.Context, req record.SigninRequest, g grant) (url.Values, error) {
	rt, _ := parseResponseType(req.ResponseType)
	now := g.authTime
	v := url.Values{}
	if req.State != "" {
		v.Set("state", req.State)
	}
	var code, accessToken string
	if rt&rtCode != 0 {
		raw, err := p.random(32)
		if err != nil {
			return nil, err
		}
		code = base64.RawURLEncoding.EncodeToString(raw)
		err = p.store.SaveCode(ctx, record.AuthCode{
			ID: hashHex(code), GrantID: g.id, ClientID: g.clientID, RedirectURI: req.RedirectURI,
			Scope: g.scope, Nonce: g.nonce, CodeChallenge: req.CodeChallenge,
			Subject: g.sub, VerificationLevel: g.level, AuthTime: g.authTime,
			ExpiresAt: now.Add(codeLifetime), RetainUntil: now.Add(codeLifetime + tokenLifetime),
		})
		if err != nil {
			return nil, err
		}
		v.Set("code", code)
	}
	set := p.keySet()
	if rt&rtToken != 0 {
		var err error
		if accessToken, err = p.signAccessToken(set, g, now); err != nil {
			return nil, err
		}
		v.Set("access_token", accessToken)
		v.Set("token_type", "Bearer")
		v.Set("expires_in", strconv.Itoa(int(tokenLifetime.Seconds())))
		v.Set("scope", g.scope)
	}
	if rt&rtIDToken != 0 {
		idToken, err := p.signIDToken(set, g, now, code, accessToken)
		if err != nil {
			return nil, err
		}
		v.Set("id_token", idToken)
	}
	return v, nil
}

// signalHash is the proof's expected signal_hash: IDKit 4's hashSignal
// of the signal (crypto.md §g), as World's portal computes it for sign-in;
// for the server's own signals, lowercase hex without 0x, that is
// hashToField of their UTF-8 bytes.
func signalHash(signal string) [32]byte {
	h := semaphore.HashSignal(signal)
	return h.Bytes()
}

// proofKey identifies a proof for single use: the nullifier hash (one
// identity and app) and the signal hash (one sign-in request).
func proofKey(nullifierHash, signalHash [32]byte) string {
	return hashHex(string(nullifierHash[:]) + string(signalHash[:]))
}

// hashHex is the lowercase hex SHA-256 under which the store keeps a
// bearer value (codes, request ids).
func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (p *Provider) random(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(p.rand, b)
	return b, err
}

func (p *Provider) randomHex(n int) (string, error) {
	b, err := p.random(n)
	return hex.EncodeToString(b), err
}

// signAccessToken and signIDToken issue the two JWTs (design.md §4).
func (p *Provider) signAccessToken(set *keySet, g grant, now time.Time) (string, error) {
	jti, err := p.random(16)
	if err != nil {
		return "", err
	}
	return signJWT(set.signer, typAccessToken, newAccessClaims(p.issuer, g, now, base64.RawURLEncoding.EncodeToString(jti)))
}

func (p *Provider) signIDToken(set *keySet, g grant, now time.Time, code, accessToken string) (string, error) {
	jti, err := p.random(16)
	if err != nil {
		return "", err
	}
	return signJWT(set.signer, typIDToken, p.idTokenClaims(g, now, base64.RawURLEncoding.EncodeToString(jti), code, accessToken))
}
