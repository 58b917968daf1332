package oidc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"worldid/record"
)

// Lifetimes (doc/interfaces.md §8, doc/design.md §4).
const (
	tokenLifetime  = 3600 * time.Second // access and ID tokens
	codeLifetime   = 10 * time.Minute
	signinLifetime = 10 * time.Minute // a sign-in page waiting for the wallet
	// finishGrace is how long after its expiry an approved request can
	// still be finished: a wallet that approves in the last seconds must
	// not leave the browser on the expired page.
	finishGrace     = 60 * time.Second
	defaultRotation = 30 * 24 * time.Hour
)

// defaultEmailDomain is the email claim's domain when the issuer's host is
// an IP address: reserved, never resolvable (RFC 2606 §2), and a valid
// dot-atom.
const defaultEmailDomain = "worldid.invalid"

// defaultSunset is the shutdown date of sign-in v1 (doc/interfaces.md §9).
var defaultSunset = time.Date(2026, time.January, 31, 0, 0, 0, 0, time.UTC)

// Store is the storage the provider needs. Every method that enforces
// single use does so atomically; handlers never read-then-write.
type Store interface {
	// App returns the registered app (client) or an error wrapping
	// record.ErrNotFound.
	App(ctx context.Context, id string) (record.App, error)

	// SigningKeys returns every stored signing key, in any order.
	SigningKeys(ctx context.Context) ([]record.SigningKey, error)
	// AddSigningKey stores k unless a stored key has an ActivateAt after
	// pendingAfter (a successor is already scheduled, or, with the zero
	// time, any key exists); then it returns an error wrapping
	// record.ErrExists and stores nothing.
	AddSigningKey(ctx context.Context, k record.SigningKey, pendingAfter time.Time) error
	// DeleteSigningKey removes the key with the given ID, or returns an
	// error wrapping record.ErrNotFound.
	DeleteSigningKey(ctx context.Context, id string) error
	// RevokeSigningKey deletes the key with the given ID and, if
	// replacement is not nil, stores it, atomically; an unknown ID is
	// record.ErrNotFound and changes nothing.
	RevokeSigningKey(ctx context.Context, id string, replacement *record.SigningKey) error

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

	// SaveCode stores a new authorization code; an existing c.ID is
	// record.ErrExists.
	SaveCode(ctx context.Context, c record.AuthCode) error
	// Code returns the code with the given ID without redeeming it if it
	// was never redeemed and now is before its ExpiresAt. A redeemed code
	// is returned with an error wrapping record.ErrCodeReused (nothing is
	// revoked); an unknown or expired code yields record.ErrNotFound.
	Code(ctx context.Context, id string, now time.Time) (record.AuthCode, error)
	// RedeemCode marks the code with the given ID redeemed and returns it
	// if it was never redeemed and now is before its ExpiresAt. A code
	// redeemed before yields an error wrapping record.ErrCodeReused and
	// marks its grant revoked, in the same atomic step; an unknown or
	// expired code yields record.ErrNotFound.
	RedeemCode(ctx context.Context, id string, now time.Time) (record.AuthCode, error)
	// IsGrantRevoked reports whether a replayed code revoked the grant.
	// Unknown grants are not revoked.
	IsGrantRevoked(ctx context.Context, grantID string) (bool, error)

	// PruneExpired forgets sign-in progress and scan marks whose
	// ExpiresAt is not after now, and codes (with their revocations) whose RetainUntil is not
	// after now. (Backends may prune other expired records too.)
	PruneExpired(ctx context.Context, now time.Time) error
}

// Checker verifies a World ID 3.0 proof (root known for the identifier's
// tree, then Groth16). It returns nil when the proof verifies, a
// *record.ProofError when it does not, and any other error when it could
// not decide.
type Checker interface {
	CheckClaim(ctx context.Context, c record.Claim) error
}

// Options configures a Provider. Issuer, Store, Checker, Rand and Now are
// required.
type Options struct {
	// Issuer is the base URL ({base_url}): an absolute http or https URL
	// without query, fragment, user info or trailing slash. The routes are
	// registered at the root of the mux; a path in Issuer is for a proxy
	// that strips it.
	Issuer  string
	Store   Store
	Checker Checker
	Rand    io.Reader // crypto/rand.Reader in production
	Now     func() time.Time
	Log     *slog.Logger // nil discards

	// SunsetDate is when sign-in v1 shuts down (default 2026-01-31 UTC).
	// With SunsetEnforce every route answers 410 Gone from then on.
	SunsetDate    time.Time
	SunsetEnforce bool

	// KeyRotationPeriod is how long a signing key signs (default 30 days,
	// at least keyPrepublish).
	KeyRotationPeriod time.Duration

	// EmailDomain is the domain of the email claim: a DNS name. Default:
	// the issuer's host, or, when that is an IP address (which would
	// make "<sub>@127.0.0.1", not an address: RFC 5322 §3.4.1 wants a
	// bracketed literal that most validators refuse), defaultEmailDomain.
	EmailDomain string

	// SimulatorPath, when set, is the developer simulator's page
	// (internal/simulator): the wait page links to it, with the wallet
	// link, for requests SimulatorAllowed accepts.
	SimulatorPath    string
	SimulatorAllowed func(*http.Request) bool
}

// Provider is the OpenID Connect provider. Its methods are safe for
// concurrent use.
type Provider struct {
	issuer      string
	store       Store
	checker     Checker
	rand        io.Reader
	now         func() time.Time
	log         *slog.Logger
	sunset      time.Time
	enforce     bool
	rotation    time.Duration
	emailDomain string // host of the issuer, for the email claim
	simPath     string
	simAllowed  func(*http.Request) bool
	betaClaim   string // "{base_url}/beta"
	v1Claim     string // "{base_url}/v1"
	deprecation string // Deprecation header value
	sunsetValue string // Sunset header value
	discovery   []byte // pre-encoded discovery document
	keys        keyRing
}

// New validates o, loads the signing keys from the store (creating the
// first one on first start) and returns a Provider.
func New(o Options) (*Provider, error) {
	issuer, err := checkIssuer(o.Issuer)
	if err != nil {
		return nil, err
	}
	if o.Store == nil || o.Checker == nil || o.Rand == nil || o.Now == nil {
		return nil, errors.New("oidc: Options.Store, Checker, Rand and Now are required")
	}
	p := &Provider{
		issuer:      issuer.String(),
		store:       o.Store,
		checker:     o.Checker,
		rand:        o.Rand,
		now:         o.Now,
		log:         o.Log,
		sunset:      o.SunsetDate,
		enforce:     o.SunsetEnforce,
		rotation:    o.KeyRotationPeriod,
		emailDomain: o.EmailDomain,
		simPath:     o.SimulatorPath,
		simAllowed:  o.SimulatorAllowed,
	}
	if (p.simPath == "") != (p.simAllowed == nil) {
		return nil, errors.New("oidc: Options.SimulatorPath and SimulatorAllowed go together")
	}
	if p.emailDomain == "" {
		p.emailDomain = issuer.Hostname()
		if net.ParseIP(p.emailDomain) != nil {
			p.emailDomain = defaultEmailDomain
		}
	}
	if err := CheckEmailDomain(p.emailDomain); err != nil {
		return nil, err
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.sunset.IsZero() {
		p.sunset = defaultSunset
	}
	if p.rotation == 0 {
		p.rotation = defaultRotation
	}
	if p.rotation < keyPrepublish {
		return nil, fmt.Errorf("oidc: KeyRotationPeriod %v is shorter than the pre-publication time %v", p.rotation, keyPrepublish)
	}
	p.betaClaim = p.issuer + "/beta"
	p.v1Claim = p.issuer + "/v1"
	// doc/design.md §4: both headers carry the configured date.
	p.deprecation = fmt.Sprintf("@%d", p.sunset.Unix())
	p.sunsetValue = p.sunset.UTC().Format(http.TimeFormat)
	if p.discovery, err = p.discoveryDocument(); err != nil {
		return nil, err
	}
	if err := p.maintainKeys(context.Background()); err != nil {
		return nil, err
	}
	return p, nil
}

// checkIssuer parses the issuer URL (OIDC Discovery §3: https scheme, no
// query or fragment; http is allowed for loopback development).
func checkIssuer(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("oidc: Issuer: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("oidc: Issuer %q must be an http or https URL", s)
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("oidc: Issuer %q must be scheme://host[:port][/path] only", s)
	case strings.HasSuffix(u.Path, "/"):
		return nil, fmt.Errorf("oidc: Issuer %q must not end with a slash", s)
	case u.String() != s || strings.ContainsAny(s, `"\ `):
		return nil, fmt.Errorf("oidc: Issuer %q is not in canonical form", s)
	}
	return u, nil
}

// Register adds every sign-in route to mux (Go 1.22 patterns, one path per
// route; methods are dispatched here so that errors keep the JSON shape).
func (p *Provider) Register(mux *http.ServeMux) {
	p.route(mux, pathDiscovery, apiRoute|corsRoute, methods{http.MethodGet: p.serveDiscovery})
	p.route(mux, pathJWKS, apiRoute|corsRoute, methods{http.MethodGet: p.serveJWKS})
	p.route(mux, pathJWKSAlias, apiRoute|corsRoute, methods{http.MethodGet: p.serveJWKS})
	p.route(mux, pathAuthorize, pageRoute, methods{http.MethodGet: p.serveAuthorize, http.MethodPost: p.serveAuthorize})
	p.route(mux, pathWait, pageRoute, methods{http.MethodGet: p.serveWait})
	p.route(mux, pathStatus, apiRoute, methods{http.MethodGet: p.serveStatus})
	p.route(mux, pathCancel, pageRoute, methods{http.MethodPost: p.serveCancel})
	p.route(mux, pathWalletRequest, apiRoute, methods{http.MethodGet: p.serveWalletRequest})
	p.route(mux, pathComplete, apiRoute, methods{http.MethodPost: p.serveComplete})
	p.route(mux, pathToken, apiRoute|corsRoute, methods{http.MethodPost: p.serveToken})
	p.route(mux, pathIntrospect, apiRoute, methods{http.MethodPost: p.serveIntrospect})
	p.route(mux, pathUserinfo, apiRoute|corsRoute, methods{http.MethodGet: p.serveUserinfo, http.MethodPost: p.serveUserinfo})
}

// Route paths.
const (
	pathDiscovery     = "/.well-known/openid-configuration"
	pathJWKS          = "/jwks"
	pathJWKSAlias     = "/jwks.json"
	pathAuthorize     = "/authorize"
	pathWait          = "/authorize/wait"
	pathStatus        = "/authorize/status"
	pathCancel        = "/authorize/cancel"
	pathWalletRequest = "/authorize/request"
	pathComplete      = "/authorize/complete"
	pathToken         = "/token"
	pathIntrospect    = "/introspect"
	pathUserinfo      = "/userinfo"
)

// CheckEmailDomain requires a DNS name (labels of letters, digits and
// inner hyphens), so that "<sub>@<domain>" is a valid
// address (RFC 5321 §4.1.2).
func CheckEmailDomain(d string) error {
	if net.ParseIP(d) != nil || strings.HasPrefix(d, "[") {
		return fmt.Errorf("oidc: email domain %q is an IP address, which makes no valid email address", d)
	}
	labels := strings.Split(d, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(strings.ToLower(l), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return fmt.Errorf("oidc: email domain %q is not a DNS name", d)
		}
	}
	return nil
}
