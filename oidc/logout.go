package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"worldid/internal/leaf/page"
	"worldid/internal/oauth"
	"worldid/record"
)

// logoutRequest is a parsed RP-initiated logout request (OpenID Connect
// RP-Initiated Logout 1.0 §2); confirm is the answer of the sign-out
// question (signOutPage).
type logoutRequest struct {
	idTokenHint, clientID, redirectURI, state, confirm string
}

// logoutPurpose seals the session id into the sign-out question's answer.
const logoutPurpose = "oidc logout confirmation"

// parseLogout reads the parameters (query or form body); state is
// bounded like the authorization request's.
func parseLogout(v url.Values) (logoutRequest, *oauth.Error) {
	params, e := oauth.StrictParams(v)
	if e != nil {
		return logoutRequest{}, e
	}
	req := logoutRequest{idTokenHint: params["id_token_hint"], clientID: params["client_id"],
		redirectURI: params["post_logout_redirect_uri"], state: params["state"], confirm: params["confirm"]}
	if req.state != "" && !validEcho(req.state) {
		return req, oauth.ErrInvalid("state", "state must be 1 to 512 visible ASCII characters")
	}
	return req, nil
}

// serveEndSession ends the browser's login session: its id is revoked in
// the store (every replica refuses a copy of the cookie from then on) and
// the cookie cleared. The user is asked first (signOutPage) unless
// id_token_hint names the session (§2: the OP must ask when no hint was
// given or the hint is not for the current session). The user agent then
// goes to post_logout_redirect_uri with state when the URI is registered
// for the app that id_token_hint (an ID token issued here, expired or not)
// or client_id names (§3); otherwise a page says what happened. Errors are
// pages: there is no validated URI to send them to. A request without the
// cookie (none, or a cross-site POST, which a SameSite=Lax cookie does not
// follow) changes nothing in the browser.
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
	sess, err := p.session(r.Context(), r)
	ended := err == nil
	switch {
	case errors.Is(err, errNoSession):
	case err != nil:
		p.out.ErrorPage(w, p.out.Internal(r.Context(), "logout: read session", err))
		return
	case !p.logoutConfirmed(r, req, sess):
		p.signOutPage(r.Context(), w, req, sess)
		return
	default:
		if err := p.store.RevokeGrant(r.Context(), sessionRevocationID(sess.ID), time.Unix(sess.Expires, 0)); err != nil {
			p.out.ErrorPage(w, p.out.Internal(r.Context(), "logout: revoke session", err))
			return
		}
	}
	if _, err := r.Cookie(p.sessionCookieName()); err == nil {
		p.clearSessionCookie(w)
	}
	if target == nil {
		writeSignedOut(w, ended)
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

// writeSignedOut is the answer of a logout that returns nowhere.
func writeSignedOut(w http.ResponseWriter, ended bool) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if ended {
		w.Write([]byte("You are signed out of Sign in with World ID.\n"))
	} else {
		w.Write([]byte("No sign-in with World ID was found to end.\n"))
	}
}

// logoutConfirmed reports whether the session may end without a
// question: id_token_hint names it (an ID token issued here to its app for
// its subject), or the request is the question's answer for it (a POST
// of its sealed id).
func (p *Provider) logoutConfirmed(r *http.Request, req logoutRequest, s loginSession) bool {
	if req.idTokenHint != "" && p.hintNames(req.idTokenHint, s.ClientID, s.Sub) {
		return true
	}
	if r.Method != http.MethodPost || req.confirm == "" {
		return false
	}
	id, err := p.Open(logoutPurpose, req.confirm)
	return err == nil && subtle.ConstantTimeCompare(id, []byte(s.ID)) == 1
}

type signOutData struct {
	page.Head
	Action string
	Params []formParam
}

// signOutPage asks the user whether to sign out; its form posts the
// request back with the session's sealed id as confirm, which no other
// site can read (the page is no-store and cannot be framed).
func (p *Provider) signOutPage(ctx context.Context, w http.ResponseWriter, req logoutRequest, s loginSession) {
	confirm, err := p.Seal(logoutPurpose, []byte(s.ID))
	if err != nil {
		p.out.ErrorPage(w, p.out.Internal(ctx, "logout: seal", err))
		return
	}
	var fields []formParam
	for _, f := range []formParam{{"id_token_hint", req.idTokenHint}, {"client_id", req.clientID},
		{"post_logout_redirect_uri", req.redirectURI}, {"state", req.state}, {"confirm", confirm}} {
		if f.Value != "" {
			fields = append(fields, f)
		}
	}
	p.out.RenderPage(w, http.StatusOK, page.SignOut, func(base page.Head) any {
		return signOutData{Head: base, Action: p.issuer + pathEndSession, Params: fields}
	})
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
		return nil, p.out.Internal(r.Context(), "logout: load app", err)
	}
	target, perr := url.Parse(req.redirectURI)
	if err != nil || perr != nil || !slices.Contains(app.PostLogoutRedirectURIs, req.redirectURI) || !target.IsAbs() {
		return nil, oauth.ErrInvalid("post_logout_redirect_uri", "post_logout_redirect_uri is not registered for this client")
	}
	return target, nil
}
