package oidc

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"worldid/internal/oauth"
	"worldid/record"
)

// logoutRequest is a parsed RP-initiated logout request (OpenID Connect
// RP-Initiated Logout 1.0 §2).
type logoutRequest struct {
	idTokenHint, clientID, redirectURI, state string
}

// parseLogout reads the parameters (query or form body); state is
// bounded like the authorization request's.
func parseLogout(v url.Values) (logoutRequest, *oauth.Error) {
	params, e := oauth.StrictParams(v)
	if e != nil {
		return logoutRequest{}, e
	}
	req := logoutRequest{idTokenHint: params["id_token_hint"], clientID: params["client_id"],
		redirectURI: params["post_logout_redirect_uri"], state: params["state"]}
	if req.state != "" && !validEcho(req.state) {
		return req, oauth.ErrInvalid("state", "state must be 1 to 512 visible ASCII characters")
	}
	return req, nil
}

// serveEndSession ends the browser's login session: its id is revoked in
// the store (every replica refuses a copy of the cookie from then on) and
// the cookie cleared. The user agent then goes to post_logout_redirect_uri
// with state when the URI is registered for the app that id_token_hint
// (an ID token issued here, expired or not) or client_id names (§3);
// otherwise a page says the user is signed out. Errors are pages: there is
// no validated URI to send them to.
func (p *Provider) serveEndSession(w http.ResponseWriter, r *http.Request) {
	v, e := authorizeParams(w, r)
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	req, e := parseLogout(v)
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	target, e := p.logoutTarget(r, req)
	if e != nil {
		p.out.ErrorPage(w, e)
		return
	}
	if sess, err := p.session(r.Context(), r); err == nil {
		if err := p.store.RevokeGrant(r.Context(), sessionRevocationID(sess.ID), time.Unix(sess.Expires, 0)); err != nil {
			p.out.ErrorPage(w, p.out.Internal("logout: revoke session", err))
			return
		}
	} else if !errors.Is(err, errNoSession) {
		p.out.ErrorPage(w, p.out.Internal("logout: read session", err))
		return
	}
	p.clearSessionCookie(w)
	if target == nil {
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		w.Write([]byte("You are signed out of Sign in with World ID.\n"))
		return
	}
	if req.state != "" { // after the registered URI's own query, kept as registered
		if target.RawQuery != "" {
			target.RawQuery += "&"
		}
		target.RawQuery += url.Values{"state": {req.state}}.Encode()
	}
	oauth.Redirect(w, target.String())
}

// logoutTarget is the registered post_logout_redirect_uri to return to,
// or nil when none was asked for.
func (p *Provider) logoutTarget(r *http.Request, req logoutRequest) (*url.URL, *oauth.Error) {
	clientID := req.clientID
	if req.idTokenHint != "" {
		aud, ok := p.idTokenHintAudience(req.idTokenHint)
		if !ok || (clientID != "" && clientID != aud) {
			return nil, oauth.ErrInvalid("id_token_hint", "id_token_hint is not an ID token issued here to this client")
		}
		clientID = aud
	}
	if req.redirectURI == "" {
		return nil, nil
	}
	if clientID == "" {
		return nil, oauth.ErrRequired("client_id")
	}
	app, err := p.store.App(r.Context(), clientID)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		return nil, p.out.Internal("logout: load app", err)
	}
	target, perr := url.Parse(req.redirectURI)
	if err != nil || perr != nil || !slices.Contains(app.PostLogoutRedirectURIs, req.redirectURI) || !target.IsAbs() {
		return nil, oauth.ErrInvalid("post_logout_redirect_uri", "post_logout_redirect_uri is not registered for this client")
	}
	return target, nil
}
