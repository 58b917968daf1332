package oidc

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"worldid/internal/leaf/strictjson"
	"worldid/internal/oauth"
	"worldid/record"
)

// Login sessions (doc/interfaces.md §4.1.1). A completed sign-in leaves in
// the browser one sealed cookie naming the app it signed in to, the
// pairwise subject the wallet proved for that app, the level and the
// auth_time: nothing else, and nothing the browser can read. prompt=none
// re-authenticates to that app only; the session never links apps. Any
// replica opens it (Seal); logout revokes its id in the store's revocation
// list (RevokeGrant), so a copied cookie dies too.
const (
	sessionCookie  = "worldid-session"
	sessionPurpose = "oidc login session"
	// DefaultSessionLifetime bounds a login session (Options.SessionLifetime).
	DefaultSessionLifetime = 8 * time.Hour
)

// loginSession is the sealed content of the session cookie.
type loginSession struct {
	ID       string `json:"id"` // revocation id, 32 hex digits
	ClientID string `json:"c"`
	Sub      string `json:"s"`
	Level    string `json:"l"`
	AuthTime int64  `json:"t"`
	Expires  int64  `json:"e"`
}

// sessionCookieName: __Host- when the issuer is https (RFC 6265bis
// §4.1.3.2), so the cookie is Secure, host-only and Path=/.
func (p *Provider) sessionCookieName() string {
	if p.secure() {
		return "__Host-" + sessionCookie
	}
	return sessionCookie
}

func (p *Provider) secure() bool { return strings.HasPrefix(p.issuer, "https://") }

// newSession seals the session of an approved sign-in, for the Session of
// its oauth.Response ("" when sessions are off).
func (p *Provider) newSession(g grant, now time.Time) (string, error) {
	if p.sessionLifetime <= 0 {
		return "", nil
	}
	id, err := p.random(16)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(loginSession{ID: hex.EncodeToString(id), ClientID: g.clientID, Sub: g.sub, Level: g.level,
		AuthTime: g.authTime.Unix(), Expires: now.Add(p.sessionLifetime).Unix()})
	if err != nil {
		return "", err
	}
	return p.Seal(sessionPurpose, b)
}

// setSessionCookie writes a sealed session (HttpOnly, SameSite=Lax, Secure
// over https) for the rest of its lifetime.
func (p *Provider) setSessionCookie(w http.ResponseWriter, sealed string) {
	http.SetCookie(w, &http.Cookie{Name: p.sessionCookieName(), Value: sealed, Path: "/", MaxAge: int(p.sessionLifetime.Seconds()),
		HttpOnly: true, Secure: p.secure(), SameSite: http.SameSiteLaxMode})
}

func (p *Provider) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: p.sessionCookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: p.secure(), SameSite: http.SameSiteLaxMode})
}

var errNoSession = errors.New("oidc: no usable login session")

// session opens the request's session cookie: sealed here, unexpired and
// not revoked; anything else is errNoSession (a store failure is returned
// as itself).
func (p *Provider) session(ctx context.Context, r *http.Request) (loginSession, error) {
	var s loginSession
	c, err := r.Cookie(p.sessionCookieName())
	if err != nil || p.sessionLifetime <= 0 {
		return s, errNoSession
	}
	plain, err := p.Open(sessionPurpose, c.Value)
	if err != nil || strictjson.Decode(plain, &s) != nil || p.now().Unix() >= s.Expires {
		return s, errNoSession
	}
	revoked, err := p.store.IsGrantRevoked(ctx, sessionRevocationID(s.ID))
	switch {
	case err != nil:
		return s, err
	case revoked:
		return s, errNoSession
	}
	return s, nil
}

// sessionRevocationID keeps session ids apart from grant ids in the one
// revocation list.
func sessionRevocationID(id string) string { return "session-" + id }

// silentRequest is what a request asks of the session.
type silentRequest struct {
	maxAge int64  // -1: absent
	hint   string // id_token_hint, "" when absent
	ask    bool   // prompt login, consent or select_account: a fresh sign-in, whatever the session
}

// sessionResponse answers an authorization request from the login
// session instead of the wallet: the response a fresh sign-in would
// give, with the session's subject, level and original auth_time. It does
// so for prompt=none (with login_required when the session cannot
// answer: OIDC Core §3.1.2.6), and for a request that says with max_age
// how old a sign-in it accepts (§3.1.2.1) and has no other prompt; ok
// is false when the request goes to the wallet: any other request, or one
// with max_age the session cannot answer.
func (p *Provider) sessionResponse(r *http.Request, req authzRequest, app record.App) (params url.Values, ok bool) {
	if !req.promptNone && (req.silent.maxAge < 0 || req.silent.ask) {
		return nil, false
	}
	ctx := r.Context()
	sess, err := p.session(ctx, r)
	if err != nil && !errors.Is(err, errNoSession) {
		return oauth.ErrorParams(p.out.Internal(ctx, "authorize: read session", err), req.state), true
	}
	g, e := grant{}, errLoginRequired("there is no login session: the user must sign in with the wallet")
	if err == nil {
		g, e = p.silentGrant(sess, req)
	}
	if e != nil {
		return oauth.ErrorParams(e, req.state), req.promptNone
	}
	rawGrant, err := p.random(16)
	if err != nil {
		return oauth.ErrorParams(p.out.Internal(ctx, "authorize: random", err), req.state), true
	}
	g.id, g.profile = hex.EncodeToString(rawGrant), app.Profile
	params, err = p.authorizationResponse(ctx, req.oauthRequest(), g)
	if err != nil {
		return oauth.ErrorParams(p.out.Internal(ctx, "authorize: session response", err), req.state), true
	}
	return params, true
}

// silentGrant is the grant a session gives a request (OIDC Core
// §3.1.2.6): the session's own app only, within max_age (max_age=0 never),
// for the id_token_hint's subject, at the level acr_values asks;
// otherwise login_required.
func (p *Provider) silentGrant(s loginSession, req authzRequest) (grant, *oauth.Error) {
	authTime := time.Unix(s.AuthTime, 0).UTC()
	switch {
	case s.ClientID != req.clientID:
		return grant{}, errLoginRequired("the login session is for another app: each app needs its own sign-in")
	case req.silent.maxAge == 0 || req.silent.maxAge > 0 && p.now().Sub(authTime) > time.Duration(req.silent.maxAge)*time.Second:
		return grant{}, errLoginRequired("the sign-in is older than max_age")
	case req.silent.hint != "" && !p.hintNames(req.silent.hint, req.clientID, s.Sub):
		return grant{}, errLoginRequired("id_token_hint is not an ID token issued here to this app for the login session's user")
	case !satisfies(s.Level, req.acr):
		return grant{}, errLoginRequired("the login session's level does not satisfy acr_values")
	}
	return grant{clientID: req.clientID, scope: req.scope, nonce: req.nonce, sub: s.Sub, level: s.Level, authTime: authTime}, nil
}

func errLoginRequired(detail string) *oauth.Error {
	return oauth.NewError(http.StatusBadRequest, "login_required", "login_required", "prompt", detail)
}

// idTokenHint reads an ID token this provider issued (its signature
// checked against the published keys; an expired hint is still a hint,
// OIDC Core §3.1.2.1): its audience and subject. ok is false for anything
// else.
func (p *Provider) idTokenHint(hint string) (aud, sub string, ok bool) {
	payload, err := verifyJWT(hint, typIDToken, p.keySet().byHeader)
	if err != nil {
		return "", "", false
	}
	var c struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
		Aud string `json:"aud"`
	}
	if json.Unmarshal(payload, &c) != nil || c.Iss != p.issuer || c.Aud == "" || c.Sub == "" {
		return "", "", false
	}
	return c.Aud, c.Sub, true
}

// hintNames reports whether hint is an ID token issued here to clientID
// for sub.
func (p *Provider) hintNames(hint, clientID, sub string) bool {
	aud, hintSub, ok := p.idTokenHint(hint)
	return ok && aud == clientID && hintSub == sub
}

// idTokenHintAudience is the client an ID token hint was issued to.
func (p *Provider) idTokenHintAudience(hint string) (string, bool) {
	aud, _, ok := p.idTokenHint(hint)
	return aud, ok
}
