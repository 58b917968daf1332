package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"

	"worldid/record"
)

// The browser's side of a sign-in (doc.go "Wait page"): /authorize sends
// the browser to its wait page, bound to it by a cookie; the page shows the
// QR code and polls; once the wallet has approved, the page's own URL
// finishes the sign-in with the authorization response.

// startSignin seals a validated authorization request into the wait-page
// URL, binds it to this browser and redirects there. It writes nothing to
// the store and keeps nothing in memory.
func (p *Provider) startSignin(w http.ResponseWriter, req authzRequest) {
	id, err1 := p.random(requestIDBytes)
	secret, err2 := p.random(bindingBytes)
	if err := errors.Join(err1, err2); err != nil {
		p.errorPage(w, p.errInternal("authorize: random", err))
		return
	}
	binding := sha256.Sum256(secret)
	token, err := p.sealPending(pendingRequest{
		ID: id, Binding: binding[:], Expires: p.now().Add(signinLifetime).Unix(),
		ClientID: req.clientID, RedirectURI: req.redirectURI, ResponseType: req.responseType.String(),
		Mode: req.mode, Scope: req.scope, State: req.state, Nonce: req.nonce, CodeChallenge: req.codeChallenge,
	})
	if err != nil {
		p.errorPage(w, p.errInternal("authorize: seal request", err))
		return
	}
	p.setBindingCookie(w, id, secret)
	redirect(w, p.issuer+pathWait+"?"+url.Values{"r": {token}}.Encode())
}

// waitState is the status route's answer and the page's state.
type waitState struct {
	State string `json:"state"` // pending, scanned, approved, cancelled, finished or expired
}

const (
	statePending = "pending"
	stateExpired = "expired"
)

// boundRequest opens the wait-page token of r (query or form field "r")
// and checks that r comes from the browser that started the sign-in.
func (p *Provider) boundRequest(r *http.Request, v url.Values) (pendingRequest, *apiError) {
	params, e := strictParams(v)
	if e != nil {
		return pendingRequest{}, e
	}
	if params["r"] == "" {
		return pendingRequest{}, errRequired("r")
	}
	req, err := p.openPending(params["r"])
	if err != nil {
		return req, newError(http.StatusBadRequest, "invalid_request", "invalid_request", "r",
			"this sign-in link is unknown or damaged; go back to the application and sign in again")
	}
	if !p.boundBrowser(r, req) {
		return req, newError(http.StatusForbidden, "other_browser", "access_denied", "",
			"this sign-in was started in another browser; only that browser can finish it")
	}
	return req, nil
}

// progress reads the request's state; an unacted request is pending, and
// one past its expiry is expired unless it was already finished or
// cancelled, or approved less than finishGrace before now.
func (p *Provider) progress(ctx context.Context, req pendingRequest) (record.SigninProgress, error) {
	cur, err := p.store.SigninProgress(ctx, progressID(req.ID))
	switch {
	case errors.Is(err, record.ErrNotFound):
		cur, err = record.SigninProgress{State: statePending}, nil
	case err != nil:
		return cur, err
	}
	now := p.now()
	switch {
	case cur.State == record.SigninFinished, cur.State == record.SigninCancelled:
	case cur.State == record.SigninApproved && now.Before(progressExpiry(req.Expires)):
	case !now.Before(req.expiresAt()):
		cur.State = stateExpired
	}
	return cur, nil
}

// serveWait is the wait page. Loading it once the wallet has approved
// finishes the sign-in: the browser gets the authorization response.
func (p *Provider) serveWait(w http.ResponseWriter, r *http.Request) {
	q, e := parseQuery(r.URL.RawQuery)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	req, e := p.boundRequest(r, q)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	ctx := r.Context()
	cur, err := p.progress(ctx, req)
	if err != nil {
		p.errorPage(w, p.errInternal("wait: read progress", err))
		return
	}
	switch cur.State {
	case record.SigninApproved:
		p.finish(ctx, w, req, cur)
	case stateExpired:
		p.expiredPage(ctx, w, req)
	case record.SigninCancelled, record.SigninFinished:
		p.overPage(w, req)
	default:
		p.waitPage(w, r, req, q.Get("r"), cur.State == record.SigninScanned)
	}
}

// finish sends the browser the authorization response of an approved
// request, exactly once. The code is saved before the request moves to
// finished, so a failure of either write leaves it approved and a reload
// retries; a code saved by an attempt that then failed was never shown to
// anyone and only expires.
func (p *Provider) finish(ctx context.Context, w http.ResponseWriter, req pendingRequest, approved record.SigninProgress) {
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		p.errorPage(w, p.errInternal("finish: redirect_uri", err))
		return
	}
	params, e := p.finalResponse(ctx, req, approved)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	_, err = p.store.AdvanceSignin(ctx, record.SigninProgress{ID: progressID(req.ID), State: record.SigninFinished,
		ExpiresAt: progressExpiry(req.Expires)}, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		p.overPage(w, req)
		return
	}
	if err != nil {
		p.errorPage(w, errRetry(p.errInternal("finish: advance", err)))
		return
	}
	p.clearBindingCookie(w, req.ID)
	p.respond(w, target, req.Mode, params)
}

// finalResponse is the authorization response of an approved request:
// the code and tokens, or access_denied when the operator disabled or
// deleted the app since the approval.
func (p *Provider) finalResponse(ctx context.Context, req pendingRequest, approved record.SigninProgress) (url.Values, *apiError) {
	app, err := p.store.App(ctx, req.ClientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return errorParams(errAccessDenied("the client was disabled or deleted by the operator"), req.State), nil
	}
	if err != nil {
		return nil, errRetry(p.errInternal("finish: load app", err))
	}
	rawGrant, err := p.random(16)
	if err != nil {
		return nil, errRetry(p.errInternal("finish: random", err))
	}
	g := grant{id: hex.EncodeToString(rawGrant), clientID: req.ClientID, scope: req.Scope, nonce: req.Nonce,
		sub: approved.Subject, level: approved.VerificationLevel, authTime: approved.AuthTime}
	params, err := p.authorizationResponse(ctx, req, g)
	if err != nil {
		return nil, errRetry(p.errInternal("finish: issue", err))
	}
	return params, nil
}

// errRetry tells the user of a failed finish that the approval is kept.
func errRetry(e *apiError) *apiError {
	e.Detail = "the sign-in could not be completed just now; reload this page to try again"
	e.Description = e.Detail
	return e
}

// serveStatus answers the wait page's polling script.
func (p *Provider) serveStatus(w http.ResponseWriter, r *http.Request) {
	q, e := parseQuery(r.URL.RawQuery)
	if e != nil {
		p.writeError(w, e)
		return
	}
	req, e := p.boundRequest(r, q)
	if e != nil {
		p.writeError(w, e)
		return
	}
	cur, err := p.progress(r.Context(), req)
	if err != nil {
		p.writeError(w, p.errInternal("status: read progress", err))
		return
	}
	p.writeJSON(w, http.StatusOK, waitState{State: cur.State})
}

// serveCancel is the wait page's Cancel button: the application receives
// error=access_denied (RFC 6749 §4.1.2.1), and a later wallet completion
// is refused.
func (p *Provider) serveCancel(w http.ResponseWriter, r *http.Request) {
	v, e := readForm(w, r)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	req, e := p.boundRequest(r, v)
	if e != nil {
		p.errorPage(w, e)
		return
	}
	_, err := p.store.AdvanceSignin(r.Context(), record.SigninProgress{ID: progressID(req.ID), State: record.SigninCancelled,
		ExpiresAt: progressExpiry(req.Expires)}, "", record.SigninScanned, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		p.overPage(w, req)
		return
	}
	if err != nil {
		p.errorPage(w, p.errInternal("cancel: advance", err))
		return
	}
	p.clearBindingCookie(w, req.ID)
	target, err := url.Parse(req.RedirectURI)
	if err != nil {
		p.errorPage(w, p.errInternal("cancel: redirect_uri", err))
		return
	}
	p.respond(w, target, req.Mode, errorParams(newError(http.StatusForbidden, "access_denied", "access_denied", "",
		"the user cancelled the sign-in"), req.State))
}

// overPage tells the browser its sign-in is already over (finished or
// cancelled) and expires its cookie.
func (p *Provider) overPage(w http.ResponseWriter, req pendingRequest) {
	p.clearBindingCookie(w, req.ID)
	p.errorPage(w, newError(http.StatusBadRequest, "already_completed", "invalid_request", "r",
		"this sign-in is already over; go back to the application to sign in again"))
}

// redirect answers 303 to loc without caching.
func redirect(w http.ResponseWriter, loc string) {
	h := w.Header()
	h.Set("Location", loc)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusSeeOther)
}
