package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"worldid/internal/httpapi"
	"worldid/record"
)

// Store is the storage the endpoint needs.
type Store interface {
	// AppByRP returns the app with the rp_id, or an error wrapping record.ErrNotFound.
	AppByRP(ctx context.Context, rpID string) (record.App, error)
	// App returns the app with the app_id, or an error wrapping record.ErrNotFound.
	App(ctx context.Context, appID string) (record.App, error)
	// RecordVerification atomically records one verification of the
	// nullifier for the action (rpID, action, environment), creating the
	// action on first use. If the action's MaxVerifications is positive and
	// the nullifier already has that many, it records nothing and returns
	// an error wrapping record.ErrLimitReached.
	RecordVerification(ctx context.Context, rpID, action, environment, nullifier string, now time.Time) (record.Verification, error)
}

// Checker verifies one World ID 3.0 proof: nil means verified, a
// *record.ProofError is why it did not, any other error is a failure of
// the checker itself. Items of one request are checked concurrently.
type Checker interface {
	CheckClaim(ctx context.Context, c record.Claim) error
}

// CheckerV4 verifies one World ID 4.0 proof, with the same contract as
// Checker: nil, a *record.ProofError, or a failure of the checker itself.
type CheckerV4 interface {
	CheckClaimV4(ctx context.Context, c record.ClaimV4) error
}

// Options configures the endpoint.
type Options struct {
	Store   Store   // required
	Checker Checker // required
	// CheckerV4 checks protocol 4.0 items; nil fails each of them with
	// verification_failed.
	CheckerV4 CheckerV4
	Now       func() time.Time
	Log       *slog.Logger
	// MaxResponses caps the responses array; 0 means DefaultMaxResponses.
	MaxResponses int
	// Observe, if set, is called once per request with its protocol
	// ("3.0", "4.0", or "unparsed" for a request refused before its
	// protocol was known) and its outcome: "success" or the answer's
	// top-level error code.
	Observe func(protocol, outcome string)
}

// Handler serves POST /api/v4/verify/{rp_id}.
type Handler struct {
	store        Store
	checker      Checker
	checkerV4    CheckerV4
	now          func() time.Time
	log          *slog.Logger
	maxResponses int
	observe      func(protocol, outcome string)
}

// New returns the endpoint. Now defaults to time.Now and Log to a logger
// that discards.
func New(o Options) (*Handler, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("verify: Options.Store is nil")
	case o.Checker == nil:
		return nil, errors.New("verify: Options.Checker is nil")
	case o.MaxResponses < 0:
		return nil, fmt.Errorf("verify: Options.MaxResponses %d is negative", o.MaxResponses)
	}
	h := &Handler{store: o.Store, checker: o.Checker, checkerV4: o.CheckerV4, now: o.Now, log: o.Log, maxResponses: o.MaxResponses, observe: o.Observe}
	if h.observe == nil {
		h.observe = func(string, string) {}
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.maxResponses == 0 {
		h.maxResponses = DefaultMaxResponses
	}
	return h, nil
}

// Register adds the endpoint to mux, and a JSON 404 for every other path
// under /api/v4/verify/.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle("/api/v4/verify/{rp_id}", h)
	mux.HandleFunc("/api/v4/verify/", func(w http.ResponseWriter, _ *http.Request) {
		e := notFound()
		httpapi.WriteJSON(w, e.Status, e)
	})
}

// ServeHTTP parses the request, verifies it and writes the answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := parse(w, r, h.maxResponses)
	if err != nil {
		h.observe("unparsed", err.Code)
		httpapi.WriteJSON(w, err.Status, err)
		return
	}
	resp, err := h.verify(r.Context(), req)
	if err != nil {
		h.observe(req.protocol(), err.Code)
		httpapi.WriteJSON(w, err.Status, err)
		return
	}
	h.observe(req.protocol(), "success")
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

// Result is the outcome for one request item. A failed item has Code and
// Detail; Nullifier is the item's nullifier in canonical form either way.
type Result struct {
	Identifier string `json:"identifier"`
	Success    bool   `json:"success"`
	Nullifier  string `json:"nullifier"`
	Code       string `json:"code,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// SybilScore is a 4.0 Selfie Check item's sybil_score (idkit-core
	// 4.3), echoed as sent: it is not a public input, so the proof does
	// not cover it.
	SybilScore *int64 `json:"sybil_score,omitempty"`
}

// Response is the 200 body: at least one item verified (doc/design.md §5).
type Response struct {
	Success     bool      `json:"success"` // always true
	Action      string    `json:"action"`
	Nullifier   string    `json:"nullifier"`  // of the first successful item, canonical
	CreatedAt   time.Time `json:"created_at"` // when the nullifier was first recorded for the action, UTC
	Environment string    `json:"environment"`
	Results     []Result  `json:"results"`
	Message     string    `json:"message"`
}

// Success messages (doc/design.md §5).
const (
	messageVerified = "Proof verified successfully"
	messageReused   = "Proof verified successfully (nullifier reuse)"
)

// verify answers a parsed request: resolve the app, check every item,
// record the verification.
func (h *Handler) verify(ctx context.Context, req *request) (any, *Error) {
	app, err := h.app(ctx, req.routeID)
	if err != nil {
		return nil, err
	}
	if app.Disabled {
		return nil, &Error{Status: http.StatusForbidden, Code: codeAppDisabled, Detail: "This app is disabled by the operator."}
	}
	if err := stagingEnvironment(app, req); err != nil {
		return nil, err
	}
	if req.v4 != nil {
		return h.verifyV4(ctx, app, req)
	}
	for i := range req.claims {
		// The external nullifier always derives from the app_id (doc/crypto.md §g).
		req.claims[i].AppID, req.claims[i].Environment = app.ID, req.verifierEnv
	}
	return h.record(ctx, app, req, h.checkAll(ctx, req.claims, req.refused))
}

// stagingEnvironment checks a staging app's proofs, of either protocol, in
// the staging environment (its trees, 4.0 roots and root source
// contracts), as the developer portal does: an absent environment means
// staging, and production is refused.
func stagingEnvironment(app record.App, req *request) *Error {
	if !app.Staging {
		return nil
	}
	if req.envDefault {
		req.environment = "staging"
	}
	if req.environment == "production" {
		return invalid("environment", "must be staging (or sandbox): this is a staging app")
	}
	req.verifierEnv = "staging"
	return nil
}

// app resolves a route id: rp_ ids directly, app_ ids through their app.
func (h *Handler) app(ctx context.Context, id string) (record.App, *Error) {
	var app record.App
	var err error
	if record.ValidRPID(id) {
		app, err = h.store.AppByRP(ctx, id)
	} else {
		app, err = h.store.App(ctx, id)
	}
	if errors.Is(err, record.ErrNotFound) {
		return app, notFound()
	}
	return app, h.storeError(ctx, err)
}

// checkAll checks the claims concurrently (the registry batches
// concurrent checks) and returns one result per claim, in order.
func (h *Handler) checkAll(ctx context.Context, claims []record.Claim, refused []*record.ProofError) []Result {
	results := make([]Result, len(claims))
	var wg sync.WaitGroup
	for i, c := range claims {
		if r := refused[i]; r != nil {
			results[i] = Result{Identifier: c.Identifier}
			results[i].fail(r.Code, r.Detail)
			continue
		}
		wg.Go(func() { results[i] = h.check(ctx, c) })
	}
	wg.Wait()
	return results
}

func (h *Handler) check(ctx context.Context, c record.Claim) (res Result) {
	res = Result{Identifier: c.Identifier, Nullifier: canonicalHex(c.NullifierHash)}
	h.classify(&res, "3.0", c.Identifier, c.Environment, func() error { return h.checker.CheckClaim(ctx, c) })
	return res
}

// classify runs one checker call of either protocol and records its
// outcome in res: nil verified, a *record.ProofError its code, anything
// else, or a panic, verification_error (logged, the outcome is unknown).
// A panic in a checker goroutine would kill the server, not just this
// request (net/http recovers only the handler's own goroutine).
func (h *Handler) classify(res *Result, protocol, identifier, environment string, check func() error) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("verify: proof checker panicked", "protocol", protocol, "panic", p, "stack", string(debug.Stack()))
			res.fail(codeVerificationErr, detailVerificationErr)
		}
	}()
	err := check()
	pe, refused := errors.AsType[*record.ProofError](err)
	switch {
	case err == nil:
		res.Success = true
	case refused:
		res.fail(pe.Code, pe.Detail)
	default:
		h.log.Error("verify: proof check failed", "protocol", protocol, "err", err, "identifier", identifier, "environment", environment)
		res.fail(codeVerificationErr, detailVerificationErr)
	}
}

const (
	detailVerificationErr = "The proof could not be checked; try again later."
	detailLimitReached    = "This nullifier has reached the action's maximum number of verifications."
)

func (r *Result) fail(code, detail string) {
	r.Success, r.Code, r.Detail = false, code, detail
}

// record stores the verification of the first successful item's
// nullifier: one request counts once. A nullifier over the action's limit
// fails every item carrying it, and the next successful item is tried.
func (h *Handler) record(ctx context.Context, app record.App, req *request, results []Result) (*Response, *Error) {
	for i := range results {
		if !results[i].Success {
			continue
		}
		nullifier := results[i].Nullifier
		v, err := h.store.RecordVerification(ctx, app.RPID, req.action, req.verifierEnv, nullifier, h.now())
		if errors.Is(err, record.ErrLimitReached) {
			failNullifier(results, nullifier)
			continue
		}
		if err != nil {
			return nil, h.storeError(ctx, err)
		}
		resp := &Response{
			Success:     true,
			Action:      req.action,
			Nullifier:   nullifier,
			CreatedAt:   v.CreatedAt.UTC(),
			Environment: req.environment,
			Results:     results,
			Message:     messageVerified,
		}
		if v.Reused {
			resp.Message = messageReused
		}
		return resp, nil
	}
	return nil, failure(results)
}

func failNullifier(results []Result, nullifier string) {
	for i := range results {
		if results[i].Success && results[i].Nullifier == nullifier {
			results[i].fail(codeLimitReached, detailLimitReached)
		}
	}
}

// failure is the answer when no item was accepted. A checker failure makes
// the outcome unknown, so it is a server error rather than a verdict.
func failure(results []Result) *Error {
	e := &Error{Status: http.StatusBadRequest, Code: codeAllFailed, Detail: "All proof verifications failed.", Results: results}
	for _, r := range results {
		switch r.Code {
		case codeVerificationErr:
			return &Error{Status: http.StatusInternalServerError, Code: codeInternal, Detail: detailVerificationErr, Results: results}
		case codeLimitReached:
			e.Code, e.Detail = codeLimitReached, detailLimitReached
		}
	}
	return e
}

// storeError answers a storage failure in this endpoint's body
// (httpapi.FailureStatus triages and logs it).
func (h *Handler) storeError(ctx context.Context, err error) *Error {
	if err == nil {
		return nil
	}
	switch status := httpapi.FailureStatus(ctx, h.log, "verify", err); status {
	case httpapi.StatusClientClosed:
		return &Error{Status: status, Code: codeInternal, Detail: "The client closed the request."}
	case http.StatusServiceUnavailable:
		return &Error{Status: status, Code: codeUnavailable, Detail: "Storage cannot accept writes; try again later."}
	default:
		return &Error{Status: status, Code: codeInternal, Detail: "Internal server error."}
	}
}
