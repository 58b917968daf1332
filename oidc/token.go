package oidc

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"worldid/internal/oauth"
	"worldid/record"
)

// tokenResponse is doc/interfaces.md §2.2.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
	IDToken     string `json:"id_token"`
}

// tokenRequest is a parsed authorization_code grant (RFC 6749 §4.1.3).
type tokenRequest struct {
	code, redirectURI, verifier string
}

// clientCredentials are the presented client id and secret.
type clientCredentials struct {
	id, secret string
	method     string // record.AuthClientSecretBasic or record.AuthClientSecretPost
}

// serveToken redeems an authorization code. Check order follows the
// doc/interfaces.md §7.1 table: content type, client authentication,
// grant_type, required attributes, then the code itself.
func (p *Provider) serveToken(w http.ResponseWriter, r *http.Request) {
	app, params, e := p.enabledClientForm(w, r)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	if params["grant_type"] == grantDeviceCode {
		p.serveDeviceToken(w, r, app, params) // devicetoken.go
		return
	}
	req, e := parseTokenRequest(params)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	g, e := p.redeem(r.Context(), app.ID, req)
	if e != nil {
		p.out.WriteError(w, e)
		return
	}
	g.profile = app.Profile
	resp, err := p.issueTokens(g)
	if err != nil {
		p.out.WriteError(w, p.out.Internal(r.Context(), "token: sign", err))
		return
	}
	p.out.WriteJSON(w, http.StatusOK, resp)
}

// parseTokenRequest checks the grant parameters (RFC 6749 §4.1.3,
// RFC 7636 §4.5).
func parseTokenRequest(params map[string]string) (tokenRequest, *oauth.Error) {
	var req tokenRequest
	switch gt := params["grant_type"]; gt {
	case "":
		return req, oauth.ErrRequired("grant_type")
	case grantAuthorizationCode:
	default:
		return req, oauth.NewError(http.StatusBadRequest, "invalid_grant_type", "unsupported_grant_type", "grant_type",
			"grant_type must be authorization_code or "+grantDeviceCode)
	}
	if req.code = params["code"]; req.code == "" {
		return req, oauth.ErrRequired("code")
	}
	if req.redirectURI = params["redirect_uri"]; req.redirectURI == "" {
		return req, oauth.ErrRequired("redirect_uri")
	}
	if req.verifier = params["code_verifier"]; req.verifier != "" && !validVerifier(req.verifier) {
		return req, oauth.ErrInvalid("code_verifier", "code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]")
	}
	return req, nil
}

// validVerifier: 43*128 unreserved characters (RFC 7636 §4.1).
func validVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	return true
}

// redeem checks everything the code is bound to and spends it, in one
// store call. A call that fails a check consumes nothing, so a relying
// party's mistake (or an attacker without the verifier) cannot burn a
// user's sign-in; only a replay of a redeemed code by its own client
// revokes the tokens issued from it (RFC 6749 §4.1.2).
func (p *Provider) redeem(ctx context.Context, clientID string, req tokenRequest) (grant, *oauth.Error) {
	b := record.CodeBinding{ClientID: clientID, RedirectURI: req.redirectURI, CodeChallenge: s256Challenge(req.verifier)}
	c, err := p.store.RedeemCode(ctx, oauth.HashHex(req.code), b, p.now())
	switch {
	case errors.Is(err, record.ErrCodeReused) && c.ClientID == clientID: // also a concurrent redemption that lost
		return grant{}, errReplayed()
	case errors.Is(err, record.ErrNotFound), errors.Is(err, record.ErrCodeReused):
		return grant{}, errInvalidGrant("the authorization code is invalid or expired")
	case errors.Is(err, record.ErrCodeBinding):
		return grant{}, unbound(c, clientID, req)
	case err != nil:
		return grant{}, p.out.Internal(ctx, "token: redeem code", err)
	}
	return grant{
		id: c.GrantID, clientID: c.ClientID, scope: c.Scope, nonce: c.Nonce,
		sub: c.Subject, level: c.VerificationLevel, authTime: c.AuthTime,
	}, nil
}

// unbound says which binding of a refused code the request broke, in the
// order of the doc/interfaces.md §7.1 table.
func unbound(c record.AuthCode, clientID string, req tokenRequest) *oauth.Error {
	switch {
	case c.ClientID != clientID:
		return errInvalidGrant("the authorization code was issued to another client")
	case c.RedirectURI != req.redirectURI:
		return errInvalidGrant("redirect_uri differs from the authorization request")
	}
	if e := checkPKCE(c.CodeChallenge, req.verifier); e != nil {
		return e
	}
	return errInvalidGrant("the authorization code is invalid or expired")
}

func errReplayed() *oauth.Error {
	return errInvalidGrant("the authorization code was already used; the tokens issued from it are revoked")
}

// s256Challenge is BASE64URL(SHA256(verifier)) (RFC 7636 §4.2), "" for
// no verifier.
func s256Challenge(verifier string) string {
	if verifier == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// checkPKCE: BASE64URL(SHA256(verifier)) == challenge (RFC 7636 §4.6). A
// verifier for a code issued without a challenge is refused too, so that a
// PKCE downgrade is noticed.
func checkPKCE(challenge, verifier string) *oauth.Error {
	switch {
	case challenge == "" && verifier == "":
		return nil
	case challenge == "":
		return errInvalidGrant("code_verifier given but the authorization request had no code_challenge")
	case verifier == "":
		return errInvalidGrant("code_verifier is required for this code")
	}
	if subtle.ConstantTimeCompare([]byte(s256Challenge(verifier)), []byte(challenge)) != 1 {
		return errInvalidGrant("code_verifier does not match code_challenge")
	}
	return nil
}

// issueTokens signs the access token and the ID token of a redeemed code.
// The ID token carries no at_hash: OIDC Core §3.1.3.6 makes it optional
// for the token endpoint.
func (p *Provider) issueTokens(g grant) (tokenResponse, error) {
	now := p.now()
	set := p.keySet()
	at, err := p.signAccessToken(set, g, now)
	if err != nil {
		return tokenResponse{}, err
	}
	id, err := p.signIDToken(set, g, now, "", "")
	if err != nil {
		return tokenResponse{}, err
	}
	return tokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(tokenLifetime.Seconds()), Scope: g.scope, IDToken: id}, nil
}

// AuthorizationResponse is the authorization response of a request the
// user approved: the code and tokens, or access_denied when the operator
// disabled or deleted the app since the approval or when the proof is
// weaker than every acr the request's acr_values accept. An error (store or
// randomness) leaves nothing usable issued: a code saved before it was
// shown to nobody and expires unused.
func (p *Provider) AuthorizationResponse(ctx context.Context, req oauth.Request, approved record.SigninProgress) (oauth.Response, error) {
	app, err := p.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return oauth.Response{Params: oauth.ErrorParams(errAccessDenied("the client was disabled or deleted by the operator"), req.State)}, nil
	}
	if err != nil {
		return oauth.Response{}, err
	}
	if !satisfies(approved.VerificationLevel, req.ACR) {
		return oauth.Response{Params: oauth.ErrorParams(errACRUnmet(approved.VerificationLevel, req.ACR), req.State)}, nil
	}
	if req.Device != "" {
		return p.approveDevice(ctx, req, approved) // deviceverify.go
	}
	rawGrant, err := p.random(16)
	if err != nil {
		return oauth.Response{}, err
	}
	g := grant{id: hex.EncodeToString(rawGrant), clientID: req.ClientID, scope: req.Scope, nonce: req.Nonce,
		sub: approved.Subject, level: approved.VerificationLevel, authTime: approved.AuthTime, profile: app.Profile}
	v, err := p.authorizationResponse(ctx, req, g)
	if err != nil {
		return oauth.Response{}, err
	}
	sealed, err := p.newSession(g, p.now())
	if err != nil {
		return oauth.Response{}, err
	}
	return oauth.Response{Params: v, Session: sealed}, nil
}

// authorizationResponse issues what the response type asks for: a code
// (stored), an access token and an ID token with c_hash / at_hash of the
// values issued alongside (OIDC Core §3.3.2.11).
func (p *Provider) authorizationResponse(ctx context.Context, req oauth.Request, g grant) (url.Values, error) {
	rt, _ := parseResponseType(req.ResponseType)
	now := p.now()
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
		lifetime := codeLifetime
		if currentProfile(g.profile) {
			lifetime = codeLifetimeCurrent
		}
		err = p.store.SaveCode(ctx, record.AuthCode{
			ID: oauth.HashHex(code), GrantID: g.id, ClientID: g.clientID, RedirectURI: req.RedirectURI,
			Scope: g.scope, Nonce: g.nonce, CodeChallenge: req.CodeChallenge,
			Subject: g.sub, VerificationLevel: g.level, AuthTime: g.authTime,
			ExpiresAt: now.Add(lifetime), RetainUntil: now.Add(lifetime + tokenLifetime),
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

// signAccessToken and signIDToken issue the two JWTs (doc/design.md §4).
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

// enabledClientForm is authenticatedForm for the grants (token, device
// authorization), which a disabled app cannot get.
func (p *Provider) enabledClientForm(w http.ResponseWriter, r *http.Request) (record.App, map[string]string, *oauth.Error) {
	app, params, e := p.authenticatedForm(w, r)
	if e == nil && app.Disabled {
		e = errClientDisabled()
	}
	return app, params, e
}

// authenticatedForm reads a back-channel form request (token, introspect)
// and authenticates its client.
func (p *Provider) authenticatedForm(w http.ResponseWriter, r *http.Request) (record.App, map[string]string, *oauth.Error) {
	v, e := oauth.ReadForm(w, r)
	if e != nil {
		return record.App{}, nil, e
	}
	params, e := oauth.StrictParams(v)
	if e != nil {
		return record.App{}, nil, e
	}
	app, e := p.authenticate(r, params)
	return app, params, e
}

// authenticate identifies the client by client_secret_basic or
// client_secret_post (doc/design.md §4), checking the secret in constant
// time, or by private_key_jwt (clientauth.go); the method must be the one
// the app registered (record.App.TokenEndpointAuthMethod: "" allows
// either secret method).
func (p *Provider) authenticate(r *http.Request, params map[string]string) (record.App, *oauth.Error) {
	if _, ok := params["client_assertion_type"]; ok {
		return p.authenticateAssertion(r, params)
	}
	if _, ok := params["client_assertion"]; ok {
		return p.authenticateAssertion(r, params)
	}
	creds, e := parseClientCredentials(r.Header.Get("Authorization"), params)
	if e != nil {
		return record.App{}, e
	}
	app, err := p.store.App(r.Context(), creds.id)
	if errors.Is(err, record.ErrNotFound) {
		return app, errUnauthenticated("invalid client credentials")
	}
	if err != nil {
		return app, p.out.Internal(r.Context(), "authenticate client", err)
	}
	want, err := hex.DecodeString(app.SecretHash)
	got := sha256.Sum256([]byte(creds.secret))
	if err != nil || subtle.ConstantTimeCompare(got[:], want) != 1 {
		return app, errUnauthenticated("invalid client credentials")
	}
	if m := app.TokenEndpointAuthMethod; m != "" && m != creds.method {
		return app, errUnauthenticated("this client must authenticate with " + m)
	}
	return app, nil
}

// parseClientCredentials reads HTTP Basic credentials (RFC 6749 §2.3.1:
// form-encoded id and secret, base64 with padding) or client_id and
// client_secret in the body; using both is an error (RFC 6749 §2.3).
func parseClientCredentials(authorization string, params map[string]string) (clientCredentials, *oauth.Error) {
	if authorization == "" {
		creds := clientCredentials{params["client_id"], params["client_secret"], record.AuthClientSecretPost}
		if creds.id == "" || creds.secret == "" {
			return creds, errUnauthenticated("client authentication is required (HTTP Basic or client_secret_post)")
		}
		return creds, nil
	}
	if _, ok := params["client_secret"]; ok {
		return clientCredentials{}, oauth.ErrInvalid("client_secret", "use one client authentication method only")
	}
	scheme, payload, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return clientCredentials{}, errUnauthenticated("the Authorization scheme must be Basic")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(payload)
	if err != nil || strings.ContainsAny(payload, "\r\n") {
		return clientCredentials{}, errUnauthenticated("malformed Basic credentials")
	}
	rawID, rawSecret, ok := strings.Cut(string(raw), ":")
	id, err1 := url.QueryUnescape(rawID)
	secret, err2 := url.QueryUnescape(rawSecret)
	if !ok || err1 != nil || err2 != nil || id == "" {
		return clientCredentials{}, errUnauthenticated("malformed Basic credentials")
	}
	if bodyID, ok := params["client_id"]; ok && bodyID != id {
		return clientCredentials{}, oauth.ErrInvalid("client_id", "client_id differs from the Basic credentials")
	}
	return clientCredentials{id, secret, record.AuthClientSecretBasic}, nil
}
