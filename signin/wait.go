package signin

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/url"

	"worldid/internal/oauth"
	"worldid/record"
)

// The browser's side of a sign-in (doc.go "Wait page"): /authorize sends
// the browser to its wait page, bound to it by a cookie; the page shows the
// QR code and polls; once the wallet has approved, the page's own URL
// finishes the sign-in with the authorization response.

// Start seals a validated authorization request into the wait-page URL,
// binds it to this browser and redirects there. It writes nothing to the
// store and keeps nothing in memory.
func (f *Flow) Start(w http.ResponseWriter, req oauth.Request) {
	id, err1 := f.random(requestIDBytes)
	secret, err2 := f.random(bindingBytes)
	if err := errors.Join(err1, err2); err != nil {
		f.out.ErrorPage(w, f.out.Internal("authorize: random", err))
		return
	}
	binding := sha256.Sum256(secret)
	token, err := f.sealPending(pendingRequest{ID: id, Binding: binding[:], Expires: f.now().Add(signinLifetime).Unix(), Request: req})
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("authorize: seal request", err))
		return
	}
	f.setBindingCookie(w, id, secret)
	oauth.Redirect(w, f.issuer+pathWait+"?"+url.Values{"r": {token}}.Encode())
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
// and checks that r comes from the browser that started the sign-in while
// the sign-in is live. An ended one (finished, cancelled, expired) passes
// without the cookie, which its browser has lost by then: the wait page and
// the status route show its true state, and Cancel changes nothing but an
// expired one (the application receives access_denied, as from its own
// browser).
func (f *Flow) boundRequest(r *http.Request, v url.Values) (pendingRequest, *oauth.Error) {
	params, e := oauth.StrictParams(v)
	if e != nil {
		return pendingRequest{}, e
	}
	if params["r"] == "" {
		return pendingRequest{}, oauth.ErrRequired("r")
	}
	req, err := f.openPending(params["r"])
	if err != nil {
		return req, oauth.NewError(http.StatusBadRequest, "invalid_request", "invalid_request", "r",
			"this sign-in link is unknown or damaged; go back to the application and sign in again")
	}
	if f.boundBrowser(r, req) {
		return req, nil
	}
	cur, err := f.progress(r.Context(), req)
	if err != nil {
		return req, f.out.Internal("read progress", err)
	}
	if ended(cur.State) {
		return req, nil
	}
	return req, oauth.NewError(http.StatusForbidden, "other_browser", "access_denied", "",
		"this sign-in was started in another browser; only that browser can finish it")
}

// progress reads the request's state; an unacted request is pending, and
// one past its expiry is expired unless it was already finished or
// cancelled, or approved less than finishGrace before now.
func (f *Flow) progress(ctx context.Context, req pendingRequest) (record.SigninProgress, error) {
	cur, err := f.store.SigninProgress(ctx, progressID(req.ID))
	switch {
	case errors.Is(err, record.ErrNotFound):
		cur, err = record.SigninProgress{State: statePending}, nil
	case err != nil:
		return cur, err
	}
	now := f.now()
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
func (f *Flow) serveWait(w http.ResponseWriter, r *http.Request) {
	q, e := oauth.ParseQuery(r.URL.RawQuery)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	req, e := f.boundRequest(r, q)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	ctx := r.Context()
	cur, err := f.progress(ctx, req)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("wait: read progress", err))
		return
	}
	switch cur.State {
	case record.SigninApproved:
		f.finish(ctx, w, req, cur)
	case stateExpired, record.SigninCancelled, record.SigninFinished:
		f.endedPage(ctx, w, req, cur.State)
	default:
		f.waitPage(w, r, req, q.Get("r"), cur.State)
	}
}

// finish sends the browser the authorization response of an approved
// request, exactly once. The code is saved before the request moves to
// finished, so a failure of either write leaves it approved and a reload
// retries; a code saved by an attempt that then failed was never shown to
// anyone and only expires.
func (f *Flow) finish(ctx context.Context, w http.ResponseWriter, req pendingRequest, approved record.SigninProgress) {
	params, err := f.provider.AuthorizationResponse(ctx, req.Request, approved)
	if err != nil {
		f.out.ErrorPage(w, errRetry(f.out.Internal("finish: issue", err)))
		return
	}
	cur, err := f.store.AdvanceSignin(ctx, record.SigninProgress{ID: progressID(req.ID), State: record.SigninFinished,
		ExpiresAt: progressExpiry(req.Expires)}, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		f.endedPage(ctx, w, req, cur.State)
		return
	}
	if err != nil {
		f.out.ErrorPage(w, errRetry(f.out.Internal("finish: advance", err)))
		return
	}
	f.clearBindingCookie(w, req.ID)
	f.provider.Respond(w, req.Request, params)
}

// errRetry tells the user of a failed finish that the approval is kept.
func errRetry(e *oauth.Error) *oauth.Error {
	e.Detail = "the sign-in could not be completed just now; reload this page to try again"
	e.Description = e.Detail
	return e
}

// serveStatus answers the wait page's polling script.
func (f *Flow) serveStatus(w http.ResponseWriter, r *http.Request) {
	q, e := oauth.ParseQuery(r.URL.RawQuery)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	req, e := f.boundRequest(r, q)
	if e != nil {
		f.out.WriteError(w, e)
		return
	}
	cur, err := f.progress(r.Context(), req)
	if err != nil {
		f.out.WriteError(w, f.out.Internal("status: read progress", err))
		return
	}
	f.out.WriteJSON(w, http.StatusOK, waitState{State: cur.State})
}

// serveCancel is the wait page's Cancel button: the application receives
// error=access_denied (RFC 6749 §4.1.2.1), and a later wallet completion
// is refused.
func (f *Flow) serveCancel(w http.ResponseWriter, r *http.Request) {
	v, e := oauth.ReadForm(w, r)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	req, e := f.boundRequest(r, v)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	cur, err := f.store.AdvanceSignin(r.Context(), record.SigninProgress{ID: progressID(req.ID), State: record.SigninCancelled,
		ExpiresAt: progressExpiry(req.Expires)}, "", record.SigninScanned, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		f.endedPage(r.Context(), w, req, cur.State)
		return
	}
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal("cancel: advance", err))
		return
	}
	f.clearBindingCookie(w, req.ID)
	f.provider.Respond(w, req.Request, f.provider.Denied(req.Request, "the user cancelled the sign-in"))
}
