package signin

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
)

// The wait page as a Wallet Bridge requester (doc.go "Wallet Bridge"): the
// page's bridge request is created when the page is first shown, its key
// travels sealed in the page's token, and the page's status polls drive
// the bridge's GET /response.

const (
	// defaultBridgeTimeout bounds each call to the relay: a slow bridge
	// makes the page say "unavailable", never hangs it.
	defaultBridgeTimeout = 5 * time.Second
	// bridgePollInterval: at most one GET /response per sign-in per second
	// in each replica, however often its pages poll.
	bridgePollInterval = time.Second
	// maxPolled bounds the poll memory (about 200 bytes an entry).
	maxPolled = 1 << 16
	// signinLevel is the verification_level sign-in asks for: "device",
	// the lowest level the wallet may prove, which an orb-verified user
	// also satisfies (the proof's own level becomes the ID token's claim).
	// Apps have no setting of their own yet.
	signinLevel = oauth.LevelDevice
	// maxCreateKeys bounds the creation limiter's table of client addresses.
	maxCreateKeys = 100_000
)

// DefaultCreateRate is the per-client-address rate of bridge requests the
// wait pages create: 20 at once, then one every 3 s (20 a minute), which a
// person opening sign-in pages never reaches and an office behind one NAT
// rarely does, while a flood of anonymous /authorize calls cannot make the
// server an amplifier against the relay.
var DefaultCreateRate = ratelimit.Rate{Burst: 20, Every: 3 * time.Second}

// Observed events (Options.Observe).
const (
	EventStarted           = "started"
	EventScanned           = "scanned"
	EventApproved          = "approved"
	EventRefused           = "refused"
	EventWalletError       = "wallet_error"
	EventFinished          = "finished"
	EventCancelled         = "cancelled"
	EventExpired           = "expired"
	EventBridgeCreateOK    = "bridge_create_ok"
	EventBridgeCreateError = "bridge_create_error"
	EventBridgePollOK      = "bridge_poll_ok"
	EventBridgePollError   = "bridge_poll_error"
)

// Page states beyond the recorded ones (the status route's "state").
const (
	stateScanned     = record.SigninScanned
	stateDone        = "done"
	stateRefused     = "refused"
	stateWalletError = "wallet_error"
	stateUnavailable = "unavailable"
	// stateGone is never sent: the relay forgot the request (expired or
	// its answer taken), so the status route answers 409 and the page's
	// reload gets a fresh bridge request.
	stateGone = "gone"
)

// bridgeRef is the page's bridge request, sealed in its token: the relay's
// id and the AES-256-GCM key, which the relay never sees.
type bridgeRef struct {
	ID  string `json:"i"`
	Key []byte `json:"k"`
	// Nonce is the signed nonce of the request's 4.0 proof_request
	// (bridge4.go); empty: a 3.0 request only.
	Nonce []byte `json:"n,omitempty"`
}

func (b *bridgeRef) valid() bool {
	id, err := bridge.NormalizeRequestID(b.ID)
	return err == nil && id == b.ID && len(b.Key) == len(bridge.Key{}) && (len(b.Nonce) == 0 || len(b.Nonce) == len([32]byte{}))
}

func (b *bridgeRef) key() bridge.Key { return bridge.Key(b.Key) }

// hashedSignal is the bridge request's signal: the signal's hash as IDKit
// sends it (0x and 64 hex digits), so the wallet proves for signalOf(id).
func hashedSignal(id []byte) string {
	h := signalHash(signalOf(id))
	return "0x" + hex.EncodeToString(h[:])
}

// bridgeRequest is the World ID 3.0 request of a sign-in: the app, the
// empty action, the sign-in's signal, and the staging environment for a
// staging app.
func bridgeRequest(req pendingRequest, app record.App) bridge.Request {
	return bridge.Request{AppID: app.ID, Action: "", Signal: hashedSignal(req.ID), VerificationLevel: signinLevel,
		Environment: stagingOnly(app)}
}

// connect is the connect URL of the page's bridge request, with returnTo
// (the same-device flow) or without (the QR code, read on another device).
func (f *Flow) connect(app record.App, ref *bridgeRef, returnTo string) string {
	base := bridge.ProductionVerify
	if app.Staging {
		base = bridge.StagingVerify
	}
	return bridge.Connect{Base: base, RequestID: ref.ID, Key: ref.key(), Bridge: f.bridgeURL, ReturnTo: returnTo}.String()
}

// signinApp is the request's app, if it may still sign in: a deleted or
// disabled app is a 403 page, never a 500.
func (f *Flow) signinApp(ctx context.Context, clientID string) (record.App, *oauth.Error) {
	app, err := f.store.App(ctx, clientID)
	if errors.Is(err, record.ErrNotFound) || err == nil && app.Disabled {
		return app, errAccessDenied("this application was disabled or removed by the operator; go back to it")
	}
	if err != nil {
		return app, f.out.Internal(ctx, "load app", err)
	}
	return app, nil
}

// proofApp is the app whose app_id (and for World ID 4.0 rp_id and RP
// signing key) the wallet proves for when app signs in, so the app its
// subjects come from: app itself, or the app of its sector whose subjects
// the sector's apps share (record.App.ProofAppID).
func (f *Flow) proofApp(ctx context.Context, app record.App) (record.App, *oauth.Error) {
	if app.ProofAppID() == app.ID {
		return app, nil
	}
	sector, err := f.store.App(ctx, app.ProofAppID())
	if errors.Is(err, record.ErrNotFound) {
		return sector, errAccessDenied("the app of this application's sector was removed by the operator")
	}
	if err != nil {
		return sector, f.out.Internal(ctx, "load the sector's app", err)
	}
	return sector, nil
}

// createBridge makes a fresh bridge request for req at the relay, within
// the client address's creation rate, and returns req carrying it.
func (f *Flow) createBridge(ctx context.Context, r *http.Request, req pendingRequest, app record.App) (pendingRequest, *oauth.Error) {
	if wait, ok := f.createLimit.Allow(ratelimit.ClientKey(r.RemoteAddr), f.now()); !ok {
		return req, errTooMany(wait)
	}
	app, e := f.proofApp(ctx, app)
	if e != nil {
		return req, e
	}
	ctx, cancel := context.WithTimeout(ctx, f.bridgeWait)
	defer cancel()
	breq, nonce, err := f.withProofRequest(bridgeRequest(req, app), req, app)
	if err != nil {
		return req, f.out.Internal(ctx, "bridge: 4.0 proof request", err)
	}
	c, err := f.bridge.Create(ctx, f.bridgeURL, f.rand, breq)
	if err != nil {
		f.observe(EventBridgeCreateError)
		f.log.Warn("signin: bridge: create", "err", err)
		return req, errBridgeDown()
	}
	f.observe(EventBridgeCreateOK)
	req.Bridge = &bridgeRef{ID: c.RequestID, Key: c.Key[:], Nonce: nonce}
	return req, nil
}

func errTooMany(wait time.Duration) *oauth.Error {
	return oauth.NewError(http.StatusTooManyRequests, "too_many_requests", "temporarily_unavailable", "",
		"too many sign-in pages were opened from your network just now; wait "+strconv.Itoa(ratelimit.RetryAfter(wait))+
			" seconds and reload this page")
}

func errBridgeDown() *oauth.Error {
	return oauth.NewError(http.StatusServiceUnavailable, "unavailable", "temporarily_unavailable", "",
		"World App cannot be reached just now; try again in a moment")
}

// showBridge gives a pending sign-in page a fresh bridge request and sends
// the browser to the wait page that carries it (so reloads, the no-script
// refresh and return_to reuse it). If the relay cannot be reached, the page
// shows itself without one and says so.
func (f *Flow) showBridge(w http.ResponseWriter, r *http.Request, req pendingRequest, token string) {
	ctx := r.Context()
	app, e := f.signinApp(ctx, req.ClientID)
	if e != nil {
		f.out.ErrorPage(w, e)
		return
	}
	next, e := f.createBridge(ctx, r, req, app)
	if e != nil && e.Status == http.StatusTooManyRequests {
		f.out.ErrorPage(w, e)
		return
	}
	if e != nil {
		req.Bridge = nil
		f.renderWait(w, r, req, app, token, waitState{State: stateUnavailable, Message: e.Detail})
		return
	}
	sealed, err := f.sealPending(next)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal(ctx, "wait: seal request", err))
		return
	}
	// The request was just made: the page this redirects to need not ask
	// the relay about it within the poll interval.
	f.polls.begin(next.Bridge.ID, f.now())
	oauth.Redirect(w, f.waitURL(sealed))
}

func (f *Flow) waitURL(token string) string {
	return f.issuer + pathWait + "?" + url.Values{"r": {token}}.Encode()
}

// serveRetry is the page's "Try again": a fresh bridge request for the
// same authorization request.
func (f *Flow) serveRetry(w http.ResponseWriter, r *http.Request) {
	v, req, ok := f.boundForm(w, r)
	if !ok {
		return
	}
	cur, err := f.progress(r.Context(), req)
	if err != nil {
		f.out.ErrorPage(w, f.out.Internal(r.Context(), "retry: read progress", err))
		return
	}
	if cur.State != statePending && cur.State != record.SigninScanned {
		// Over, expired or approved: the wait page shows which.
		oauth.Redirect(w, f.waitURL(v.Get("r")))
		return
	}
	f.showBridge(w, r, req, v.Get("r"))
}

// pollBridge is the page's state from its bridge request: at most one
// relay call per bridgePollInterval, the last answer otherwise.
func (f *Flow) pollBridge(ctx context.Context, req pendingRequest, current string) waitState {
	last, due := f.polls.begin(req.Bridge.ID, f.now())
	switch {
	case !due && (last.st.State == "" || last.st.State == statePending):
		return waitState{State: current}
	case !due:
		return last.st
	}
	var st waitState
	var keep *client.Polled
	if last.answer != nil {
		st, keep = f.answered(ctx, req, *last.answer)
	} else {
		st, keep = f.pollOnce(ctx, req, current)
	}
	f.polls.end(req.Bridge.ID, st, keep)
	return st
}

// pollOnce asks the relay and acts on its answer. Only a verified proof
// writes (the approval); a read marks the request scanned (no durable
// write).
func (f *Flow) pollOnce(ctx context.Context, req pendingRequest, current string) (waitState, *client.Polled) {
	cctx, cancel := context.WithTimeout(ctx, f.bridgeWait)
	defer cancel()
	p, err := f.bridge.Poll(cctx, f.bridgeURL, req.Bridge.ID, req.Bridge.key())
	switch {
	case errors.Is(err, client.ErrGone):
		f.observe(EventBridgePollOK)
		return waitState{State: stateGone}, nil
	case errors.Is(err, bridge.ErrOpen), errors.Is(err, bridge.ErrPayload):
		f.observe(EventBridgePollOK)
		f.observe(EventRefused)
		return waitState{State: stateRefused, Message: "The answer from the wallet could not be read. Try again."}, nil
	case err != nil:
		f.observe(EventBridgePollError)
		f.log.Warn("signin: bridge: poll", "err", err)
		return waitState{State: stateUnavailable, Message: "World App cannot be reached just now; still trying."}, nil
	}
	f.observe(EventBridgePollOK)
	switch p.Status {
	case bridge.StatusInitialized:
		return waitState{State: current}, nil
	case bridge.StatusRetrieved:
		if current != stateScanned {
			f.observe(EventScanned)
			if err := f.store.MarkScanned(ctx, progressID(req.ID), progressExpiry(req.Expires)); err != nil {
				f.log.Warn("signin: mark scanned", "err", err)
			}
		}
		return waitState{State: stateScanned}, nil
	}
	return f.answered(ctx, req, p)
}

// answered acts on the wallet's answer, handed out once by the relay; an
// answer whose check failed for want of the store or the checker is
// returned to be checked again.
func (f *Flow) answered(ctx context.Context, req pendingRequest, p client.Polled) (waitState, *client.Polled) {
	switch p.Kind {
	case bridge.KindError:
		f.observe(EventWalletError)
		return waitState{State: stateWalletError, Message: walletErrorMessage(p.Response.ErrorCode)}, nil
	}
	e := f.approveAnswer(ctx, req, p)
	switch {
	case e == nil:
		f.observe(EventApproved)
		return waitState{State: stateDone}, nil
	case e.Status == http.StatusConflict:
		cur, err := f.progress(ctx, req)
		if err != nil {
			return waitState{State: stateUnavailable}, &p
		}
		return waitState{State: pageState(cur.State)}, nil
	case e.Status >= http.StatusInternalServerError:
		return waitState{State: stateUnavailable, Message: "The proof could not be checked just now; still trying."}, &p
	}
	f.observe(EventRefused)
	return waitState{State: stateRefused, Message: "World ID did not accept the wallet's proof for this sign-in. Try again."}, nil
}

// approveAnswer checks a 4.0 answer (bridge4.go) or a 3.0 one and
// approves the sign-in.
func (f *Flow) approveAnswer(ctx context.Context, req pendingRequest, p client.Polled) *oauth.Error {
	if p.Kind == bridge.KindV4 {
		return f.approveV4(ctx, req, *p.Response.ProofResponse)
	}
	s, e := proofOf(p.Response)
	if e != nil {
		return e
	}
	return f.approve(ctx, walletRequest{ID: req.ID, Expires: req.Expires, ClientID: req.ClientID}, s)
}

// proofOf reads a World ID 3.0 answer's proof fields as the wallet form's
// (parseProof).
func proofOf(r bridge.Response) (submission, *oauth.Error) {
	level := r.VerificationLevel
	if level == "" {
		level = r.CredentialType
	}
	return parseProof(r.Proof, r.MerkleRoot, r.NullifierHash, level)
}

// walletErrorMessage says in plain words what a wallet's error code means.
func walletErrorMessage(code string) string {
	switch code {
	case bridge.ErrCodeVerificationRejected:
		return "The sign-in was declined in World App."
	case bridge.ErrCodeMaxVerifications:
		return "This World ID has already been used as often as this app allows."
	case bridge.ErrCodeCredentialUnavailable:
		return "World App does not hold the credential this app asks for."
	case bridge.ErrCodeInclusionProofPending:
		return "Your World ID is not ready yet; try again in a few minutes."
	case bridge.ErrCodeConnectionFailed:
		return "World App could not connect; check its network and try again."
	}
	return "World App could not complete the sign-in."
}

// pageState is the page's name of a request's state.
func pageState(s string) string {
	if s == record.SigninApproved {
		return stateDone
	}
	return s
}

func (f *Flow) observe(event string) {
	if f.observer != nil {
		f.observer(event)
	}
}
