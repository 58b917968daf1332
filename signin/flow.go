package signin

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"worldid/bridge/client"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
)

// Lifetimes (doc/interfaces.md §8, doc/design.md §4).
const (
	signinLifetime = 10 * time.Minute // a sign-in page waiting for the wallet
	// finishGrace is how long after its expiry an approved request can
	// still be finished: a wallet that approves in the last seconds must
	// not leave the browser on the expired page.
	finishGrace = 60 * time.Second
)

// Store is the storage the sign-in flow needs: the app and what happened
// to each pending request. Every transition is atomic; handlers never
// read-then-write.
type Store interface {
	// App returns the registered app (client) or an error wrapping
	// record.ErrNotFound.
	App(ctx context.Context, id string) (record.App, error)
	// SigninProgress returns what happened to a pending sign-in request:
	// the recorded progress; else, if MarkScanned marked it, a progress
	// with State record.SigninScanned, the ID and the mark's ExpiresAt;
	// else an error wrapping record.ErrNotFound.
	SigninProgress(ctx context.Context, id string) (record.SigninProgress, error)
	// MarkScanned notes that the wallet read the request, without a
	// durable write: anyone can mint requests, so a read must cost none.
	// Best effort (a backend may forget marks, e.g. on restart), but
	// visible to every replica sharing the backend. AdvanceSignin ignores
	// marks: for it, a marked request has no recorded state.
	MarkScanned(ctx context.Context, id string, expiresAt time.Time) error
	// AdvanceSignin stores p if the request's current state ("" when
	// nothing is recorded) is one of from, and returns the previous
	// progress; otherwise it stores nothing and returns the current
	// progress with an error wrapping record.ErrExists. Of concurrent
	// calls from the same state at most one succeeds.
	AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (record.SigninProgress, error)
}

// Checker verifies a World ID 3.0 proof (root known for the identifier's
// tree, then Groth16). It returns nil when the proof verifies, a
// *record.ProofError when it does not, and any other error when it could
// not decide.
type Checker interface {
	CheckClaim(ctx context.Context, c record.Claim) error
}

// Provider is what the sign-in flow needs of the OpenID Connect provider
// (package oidc): its sealing, the answer to an approved or refused
// request, and its route wrapper. It is the whole interface between the
// two: the provider hands a valid request to Flow.Start.
type Provider interface {
	// Seal and Open protect the pending request in the URLs handed out,
	// bound to a purpose, under a key every replica derives.
	Seal(purpose string, plaintext []byte) (string, error)
	Open(purpose, token string) ([]byte, error)
	// AuthorizationResponse issues the response to an approved request
	// (the code is stored); Denied is an access_denied response; Respond
	// delivers either to the request's redirect URI in its mode.
	AuthorizationResponse(ctx context.Context, req oauth.Request, approved record.SigninProgress) (oauth.Response, error)
	Denied(req oauth.Request, detail string) oauth.Response
	Respond(ctx context.Context, w http.ResponseWriter, req oauth.Request, resp oauth.Response)
	// RestartURL is the same authorization request again.
	RestartURL(req oauth.Request) string
	// Route registers a route with the headers and checks every route of
	// the interface carries.
	Route(mux *http.ServeMux, path string, flags oauth.RouteFlags, m oauth.Methods)
}

// Options configures a Flow. Issuer, Store, Checker, Provider, Rand, Now,
// BridgeURL and Bridge are required.
type Options struct {
	// Issuer is the provider's base URL ({base_url}, as oidc.Options).
	Issuer  string
	Store   Store
	Checker Checker
	// CheckerV4, if set, verifies World ID 4.0 answers (bridge4.go):
	// the bridge requests of apps with an RP signing key then carry a
	// 4.0 proof_request. nil: every sign-in is World ID 3.0.
	CheckerV4 CheckerV4
	Provider  Provider
	Rand      io.Reader // crypto/rand.Reader in production
	Now       func() time.Time
	Log       *slog.Logger // nil discards

	// SimulatorPath, when set, is the developer simulator's page
	// (internal/simulator): the wait page links to it, with the wallet
	// link, for requests SimulatorAllowed accepts.
	SimulatorPath    string
	SimulatorAllowed func(*http.Request) bool

	// BridgeURL is the Wallet Bridge relay the wait pages create their
	// requests at (doc.go "Wallet Bridge").
	BridgeURL string
	// Bridge is the relay client; its calls are bounded by BridgeTimeout.
	Bridge *client.Client
	// BridgeTimeout bounds each call to the relay; 0: 5 s. A slower relay
	// is "unavailable" to the page.
	BridgeTimeout time.Duration
	// CreateRate limits the bridge requests created per client address;
	// the zero Rate is DefaultCreateRate, a negative Burst disables it.
	CreateRate ratelimit.Rate
	// Observe, if set, is told of each event of a sign-in (Event*
	// constants), e.g. to count them; it must not block.
	Observe func(event string)
}

// Flow is the browser sign-in. Its methods are safe for concurrent use.
type Flow struct {
	issuer     string
	store      Store
	checker    Checker
	checkerV4  CheckerV4
	provider   Provider
	rand       io.Reader
	now        func() time.Time
	log        *slog.Logger
	out        oauth.Responder
	simPath    string
	simAllowed func(*http.Request) bool

	bridgeURL   string
	bridge      *client.Client
	bridgeWait  time.Duration
	createLimit *ratelimit.Limiter
	polls       *polls
	observer    func(string)
}

// New validates o and returns a Flow.
func New(o Options) (*Flow, error) {
	if o.Issuer == "" || o.Store == nil || o.Checker == nil || o.Provider == nil || o.Rand == nil || o.Now == nil ||
		o.BridgeURL == "" || o.Bridge == nil {
		return nil, errors.New("signin: Options.Issuer, Store, Checker, Provider, Rand, Now, BridgeURL and Bridge are required")
	}
	if (o.SimulatorPath == "") != (o.SimulatorAllowed == nil) {
		return nil, errors.New("signin: Options.SimulatorPath and SimulatorAllowed go together")
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rate := o.CreateRate
	if rate == (ratelimit.Rate{}) {
		rate = DefaultCreateRate
	}
	return &Flow{issuer: o.Issuer, store: o.Store, checker: o.Checker, checkerV4: o.CheckerV4, provider: o.Provider, rand: o.Rand, now: o.Now, log: log,
		out: oauth.Responder{Log: log, Prefix: "signin: ", Rand: o.Rand}, simPath: o.SimulatorPath, simAllowed: o.SimulatorAllowed,
		bridgeURL: strings.TrimSuffix(o.BridgeURL, "/"), bridge: o.Bridge, bridgeWait: cmp.Or(o.BridgeTimeout, defaultBridgeTimeout), createLimit: ratelimit.New(rate, maxCreateKeys),
		polls: newPolls(maxPolled), observer: o.Observe}, nil
}

// Route paths.
const (
	pathWait   = "/authorize/wait"
	pathStatus = "/authorize/status"
	pathCancel = "/authorize/cancel"
	pathRetry  = "/authorize/retry"
)

// Register adds the sign-in routes to mux, through the provider's route
// wrapper.
func (f *Flow) Register(mux *http.ServeMux) {
	f.provider.Route(mux, pathWait, oauth.PageRoute, oauth.Methods{http.MethodGet: f.serveWait})
	f.provider.Route(mux, pathStatus, oauth.APIRoute, oauth.Methods{http.MethodGet: f.serveStatus})
	f.provider.Route(mux, pathCancel, oauth.PageRoute, oauth.Methods{http.MethodPost: f.serveCancel})
	f.provider.Route(mux, pathRetry, oauth.PageRoute, oauth.Methods{http.MethodPost: f.serveRetry})
}

func (f *Flow) random(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(f.rand, b)
	return b, err
}
