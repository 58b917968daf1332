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
func (f *Flow) Start(ctx context.Context, w http.ResponseWriter, req oauth.Request) {
	id, err1 := f.random(requestIDBytes)
	secret, err2 := f.random(bindingBytes)
	if err := errors.Join(err1, err2); err != nil {
		f.out.ErrorPage(w, f.out.Internal(ctx, "authorize: random", err))
		return
	}
	binding := sha256.Sum256(secret)
	token, err := f.sealPending(pendingRequest{ID: id, Binding: binding[:], Expires: f.now().Add(signinLifetime).Unix(), Request: req})
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal(ctx, "authorize: seal request", err))
		return
	}
	f.setBindingCookie(w, id, secret)
	f.observe(EventStarted)
	oauth.Redirect(w, f.waitURL(token))
}

// waitState is the status route's answer and the page's state: pending,
// scanned, done, refused, wallet_error, unavailable, cancelled, finished or
// expired, and a message in plain words for some.
type waitState struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
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
		return req, f.out.Internal(r.Context(), "read progress", err)
	}
	if ended(cur.State) {
		return req, nil
	}
	return req, oauth.NewError(http.StatusForbidden, "other_browser", "access_denied", "",
		"this sign-in was started in another browser; only that browser can finish it")
}

// boundForm reads a wait page's form (field "r") from the browser that
// started the sign-in; otherwise it answers the error page.
func (f *Flow) boundForm(w http.ResponseWriter, r *http.Request) (url.Values, pendingRequest, bool) {
	v, e := oauth.ReadForm(w, r)
	if e == nil {
		var req pendingRequest
		if req, e = f.boundRequest(r, v); e == nil {
			return v, req, true
		}
	}
	f.out.ErrorPage(w, e)
	return nil, pendingRequest{}, false
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
		f.out.ErrorPage(w, f.out.Internal(ctx, "wait: read progress", err))
		return
	}
	switch {
	case cur.State == record.SigninApproved:
		f.finish(ctx, w, req, cur)
	case cur.State == stateExpired:
		f.observe(EventExpired)
		f.endedPage(ctx, w, req, cur.State)
	case cur.State == record.SigninCancelled, cur.State == record.SigninFinished:
		f.endedPage(ctx, w, req, cur.State)
	case req.Bridge == nil:
		// Shown for the first time: the page gets its bridge request.
		f.showBridge(w, r, req, q.Get("r"))
	default:
		f.pendingPage(w, r, req, q.Get("r"), cur.State)
	}
}

// pendingPage shows a pending request's page. Its load asks the bridge as
// a status poll does (so that a page without JavaScript, which only
// reloads, also finishes): an approval finishes the sign-in, a bridge
// request the relay forgot is replaced.
func (f *Flow) pendingPage(w http.ResponseWriter, r *http.Request, req pendingRequest, token, state string) {
	ctx := r.Context()
	st := f.statusOf(ctx, req, state)
	switch st.State {
	case stateGone:
		f.showBridge(w, r, req, token)
		return
	case stateDone:
		cur, err := f.progress(ctx, req)
		if err != nil {
			f.out.ErrorPage(w, f.out.Internal(ctx, "wait: read progress", err))
			return
		}
		if cur.State == record.SigninApproved {
			f.finish(ctx, w, req, cur)
		} else {
			f.endedPage(ctx, w, req, cur.State)
		}
		return
	}
	f.waitPage(w, r, req, token, st)
}

// finish sends the browser the authorization response of an approved
// request, exactly once. The code is saved before the request moves to
// finished, so a failure of either write leaves it approved and a reload
// retries; a code saved by an attempt that then failed was never shown to
// anyone and only expires.
func (f *Flow) finish(ctx context.Context, w http.ResponseWriter, req pendingRequest, approved record.SigninProgress) {
	resp, err := f.provider.AuthorizationResponse(ctx, req.Request, approved)
	if err != nil {
		f.out.ErrorPage(w, errRetry(f.out.Internal(ctx, "finish: issue", err)))
		return
	}
	cur, err := f.store.AdvanceSignin(ctx, record.SigninProgress{ID: progressID(req.ID), State: record.SigninFinished,
		ExpiresAt: progressExpiry(req.Expires)}, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		f.endedPage(ctx, w, req, cur.State)
		return
	}
	if err != nil {
		f.out.ErrorPage(w, errRetry(f.out.Internal(ctx, "finish: advance", err)))
		return
	}
	f.observe(EventFinished)
	f.clearBindingCookie(w, req.ID)
	f.provider.Respond(ctx, w, req.Request, resp)
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
	ctx := r.Context()
	cur, err := f.progress(ctx, req)
	if err != nil {
		f.out.WriteError(w, f.out.Internal(ctx, "status: read progress", err))
		return
	}
	st := f.statusOf(ctx, req, cur.State)
	if st.State == stateGone {
		f.out.WriteError(w, oauth.NewError(http.StatusConflict, "bridge_gone", "invalid_request", "r",
			"the request to World App expired; reload the page for a new one"))
		return
	}
	f.out.WriteJSON(w, http.StatusOK, st)
}

// statusOf is the page's state: a pending page with a bridge request asks
// the relay (pollBridge); one whose creation failed is unavailable.
func (f *Flow) statusOf(ctx context.Context, req pendingRequest, state string) waitState {
	switch {
	case state != statePending && state != record.SigninScanned:
		return waitState{State: pageState(state)}
	case req.Bridge == nil:
		return waitState{State: stateUnavailable, Message: errBridgeDown().Detail}
	}
	return f.pollBridge(ctx, req, state)
}

// serveCancel is the wait page's Cancel button: the application receives
// error=access_denied (RFC 6749 §4.1.2.1), and a later wallet completion
// is refused.
func (f *Flow) serveCancel(w http.ResponseWriter, r *http.Request) {
	_, req, ok := f.boundForm(w, r)
	if !ok {
		return
	}
	cur, err := f.store.AdvanceSignin(r.Context(), record.SigninProgress{ID: progressID(req.ID), State: record.SigninCancelled,
		ExpiresAt: progressExpiry(req.Expires)}, "", record.SigninScanned, record.SigninApproved)
	if errors.Is(err, record.ErrExists) {
		f.endedPage(r.Context(), w, req, cur.State)
		return
	}
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal(r.Context(), "cancel: advance", err))
		return
	}
	f.observe(EventCancelled)
	f.clearBindingCookie(w, req.ID)
	f.provider.Respond(r.Context(), w, req.Request, f.provider.Denied(req.Request, "the user cancelled the sign-in"))
}
