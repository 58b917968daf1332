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

	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
)

// Lifetimes (doc/interfaces.md §8, doc/design.md §4).
const (
	tokenLifetime = 3600 * time.Second // access and ID tokens
	codeLifetime  = 10 * time.Minute
	// The current profile's codes and ID tokens (doc/interfaces.md §2.4.1),
	// as World's provider issues them.
	codeLifetimeCurrent    = 5 * time.Minute
	idTokenLifetimeCurrent = 5 * time.Minute
	defaultRotation        = 30 * 24 * time.Hour
)

// defaultEmailDomain is the email claim's domain when the issuer's host is
// an IP address: reserved, never resolvable (RFC 2606 §2), and a valid
// dot-atom.
const defaultEmailDomain = "worldid.invalid"

// defaultSunset is the shutdown date of sign-in v1 (doc/interfaces.md §9).
var defaultSunset = time.Date(2026, time.January, 31, 0, 0, 0, 0, time.UTC)

// Store is the storage the provider needs: apps, signing keys and codes
// (the sign-in flow declares its own, signin.Store). Every method that
// enforces single use does so atomically; handlers never read-then-write.
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
	// RevokeSigningKey deletes the key r.ID, records r (kept for good,
	// without key material) and, if replacement is not nil, stores it,
	// atomically. An ID already revoked is record.ErrKeyRevoked, another
	// unknown ID record.ErrNotFound; either changes nothing.
	RevokeSigningKey(ctx context.Context, r record.RevokedKey, replacement *record.SigningKey) error
	// RevokedKeys returns the record of every revoked key, in any order.
	RevokedKeys(ctx context.Context) ([]record.RevokedKey, error)

	// SaveCode stores a new authorization code; an existing c.ID is
	// record.ErrExists.
	SaveCode(ctx context.Context, c record.AuthCode) error
	// RedeemCode marks the code with the given ID redeemed and returns it
	// if it was never redeemed, now is before its ExpiresAt and it is
	// bound to b (AuthCode.BoundTo), in one atomic step. A code bound
	// otherwise is returned with an error wrapping record.ErrCodeBinding
	// and nothing changes. A code redeemed before is returned with an
	// error wrapping record.ErrCodeReused and, if b.ClientID is its
	// client, its grant is marked revoked in the same atomic step. An
	// unknown or expired code yields record.ErrNotFound.
	RedeemCode(ctx context.Context, id string, b record.CodeBinding, now time.Time) (record.AuthCode, error)
	// IsGrantRevoked reports whether a replayed code revoked the grant.
	// Unknown grants are not revoked.
	IsGrantRevoked(ctx context.Context, grantID string) (bool, error)
	// UseProofOnce atomically remembers key until expiresAt; a key
	// remembered before is record.ErrExists. (The sign-in flow spends
	// proofs with it; the provider spends client assertions' jti.)
	UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error
	// SaveDeviceGrant stores a new device grant; an ID or UserCode
	// already stored is record.ErrExists and stores nothing.
	SaveDeviceGrant(ctx context.Context, g record.DeviceGrant) error
	// DeviceGrantByUserCode returns the grant whose UserCode is userCode,
	// in whatever state and expired or not, or an error wrapping
	// record.ErrNotFound.
	DeviceGrantByUserCode(ctx context.Context, userCode string) (record.DeviceGrant, error)
	// UpdateDeviceGrant calls update with the grant id and, when it
	// returns true, stores what it left (ID and UserCode unchanged), in
	// one atomic step; concurrent updates of a grant run one after the
	// other. It returns the grant as update left it; an unknown id is
	// record.ErrNotFound.
	UpdateDeviceGrant(ctx context.Context, id string, update func(*record.DeviceGrant) bool) (record.DeviceGrant, error)

	// RevokeGrant marks an id revoked (a grant whose access token was
	// revoked, or a login session ended by logout) until retainUntil;
	// revoking again never shortens the retention.
	RevokeGrant(ctx context.Context, grantID string, retainUntil time.Time) error

	// PruneExpired forgets sign-in progress and scan marks (the sign-in
	// flow's records, pruned with the codes by Run) whose ExpiresAt is not
	// after now, and codes (with their revocations) whose RetainUntil is not
	// after now, and device grants whose RetainUntil is not after now.
	// (Backends may prune other expired records too.)
	PruneExpired(ctx context.Context, now time.Time) error
}

// Signin is where a valid authorization request goes: the browser
// sign-in (package signin), which answers the browser and later hands the
// request back through AuthorizationResponse and Respond.
type Signin interface {
	Start(ctx context.Context, w http.ResponseWriter, req oauth.Request)
}

// Options configures a Provider. Issuer, Store, Rand and Now are
// required.
type Options struct {
	// Issuer is the base URL ({base_url}): an absolute http or https URL
	// without query, fragment, user info or trailing slash. The routes are
	// registered at the root of the mux; a path in Issuer is for a proxy
	// that strips it.
	Issuer string
	Store  Store
	Rand   io.Reader // crypto/rand.Reader in production
	Now    func() time.Time
	Log    *slog.Logger // nil discards

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

	// SessionLifetime bounds the login session a completed sign-in leaves
	// in the browser (session.go): 0 means DefaultSessionLifetime, a
	// negative value turns sessions off (prompt=none is then always
	// login_required).
	SessionLifetime time.Duration

	// DeviceEntryRate limits the user codes entered at the device page
	// per client address (deviceverify.go); the zero Rate is
	// DefaultDeviceEntryRate, a negative Burst disables it and the
	// per-replica bound.
	DeviceEntryRate ratelimit.Rate
	// ObserveDevice, if set, is told each event of a device grant
	// (Device* event constants, device.go), e.g. to count them; it must
	// not block.
	ObserveDevice func(event string)

	// JWKSClient fetches apps' jwks_uri (nil: the SSRF-guarded client of
	// jwksuri.go; tests pass one that reaches their loopback server).
	JWKSClient *http.Client
}

// Provider is the OpenID Connect provider. Its methods are safe for
// concurrent use.
type Provider struct {
	issuer          string
	store           Store
	rand            io.Reader
	now             func() time.Time
	log             *slog.Logger
	out             oauth.Responder
	routes          oauth.Router
	sunset          time.Time
	enforce         bool
	rotation        time.Duration
	emailDomain     string        // host of the issuer, for the email claim
	sessionLifetime time.Duration // ≤ 0: no login sessions
	jwksClient      *http.Client
	betaClaim       string // "{base_url}/beta"
	v1Claim         string // "{base_url}/v1"
	discovery       []byte // pre-encoded discovery document
	keys            keyRing
	deviceEntries   *ratelimit.Limiter // per client address
	deviceGuesses   *ratelimit.Limiter // per replica
	observeDevice   func(string)
}

// New validates o, loads the signing keys from the store (creating the
// first one on first start) and returns a Provider.
func New(o Options) (*Provider, error) {
	issuer, err := checkIssuer(o.Issuer)
	if err != nil {
		return nil, err
	}
	if o.Store == nil || o.Rand == nil || o.Now == nil {
		return nil, errors.New("oidc: Options.Store, Rand and Now are required")
	}
	p := &Provider{
		issuer:          issuer.String(),
		store:           o.Store,
		rand:            o.Rand,
		now:             o.Now,
		log:             o.Log,
		sunset:          o.SunsetDate,
		enforce:         o.SunsetEnforce,
		rotation:        o.KeyRotationPeriod,
		emailDomain:     o.EmailDomain,
		sessionLifetime: o.SessionLifetime,
		jwksClient:      o.JWKSClient,
		observeDevice:   o.ObserveDevice,
	}
	entryRate := o.DeviceEntryRate
	if entryRate == (ratelimit.Rate{}) {
		entryRate = DefaultDeviceEntryRate
	}
	p.deviceEntries, p.deviceGuesses = ratelimit.New(entryRate, maxGuessKeys), ratelimit.New(deviceEntryGlobal, 1)
	if entryRate.Burst < 0 {
		p.deviceGuesses = ratelimit.New(entryRate, 1)
	}
	if p.jwksClient == nil {
		p.jwksClient = newJWKSClient()
	}
	if p.sessionLifetime == 0 {
		p.sessionLifetime = DefaultSessionLifetime
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
	p.out = oauth.Responder{Log: p.log, Prefix: "oidc: ", Rand: p.rand}
	// doc/design.md §4: both headers carry the configured date.
	p.routes = oauth.Router{Out: p.out, Deprecation: fmt.Sprintf("@%d", p.sunset.Unix()), Sunset: p.sunset.UTC().Format(http.TimeFormat),
		Gone: func() bool { return p.enforce && !p.now().Before(p.sunset) }}
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

// Register adds the OpenID Connect routes to mux (Go 1.22 patterns, one
// path per route; methods are dispatched by Route so that errors keep the
// JSON shape); valid authorization requests go to s.
func (p *Provider) Register(mux *http.ServeMux, s Signin) {
	authorize := func(w http.ResponseWriter, r *http.Request) { p.serveAuthorize(w, r, s) }
	p.Route(mux, pathDiscovery, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodGet: p.serveDiscovery})
	p.Route(mux, pathJWKS, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodGet: p.serveJWKS})
	p.Route(mux, pathJWKSAlias, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodGet: p.serveJWKS})
	p.Route(mux, pathAuthorize, oauth.PageRoute, oauth.Methods{http.MethodGet: authorize, http.MethodPost: authorize})
	p.Route(mux, pathToken, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodPost: p.serveToken})
	p.Route(mux, pathIntrospect, oauth.APIRoute, oauth.Methods{http.MethodPost: p.serveIntrospect})
	p.Route(mux, pathUserinfo, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodGet: p.serveUserinfo, http.MethodPost: p.serveUserinfo})
	p.Route(mux, pathRevoke, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodPost: p.serveRevoke})
	p.Route(mux, pathEndSession, oauth.PageRoute, oauth.Methods{http.MethodGet: p.serveEndSession, http.MethodPost: p.serveEndSession})
	p.Route(mux, pathDeviceAuthorization, oauth.APIRoute|oauth.CORSRoute, oauth.Methods{http.MethodPost: p.serveDeviceAuthorization})
	p.Route(mux, pathDevice, oauth.PageRoute, oauth.Methods{http.MethodGet: p.serveDevicePage,
		http.MethodPost: func(w http.ResponseWriter, r *http.Request) { p.serveDeviceEntry(w, r, s) }})
}

// Route registers a route of Sign in with World ID on mux with the
// deprecation headers, the sunset switch, CORS and method dispatch that
// every one of them carries (internal/oauth.Router); the sign-in flow's
// routes are registered through it too.
func (p *Provider) Route(mux *http.ServeMux, path string, flags oauth.RouteFlags, m oauth.Methods) {
	p.routes.Handle(mux, path, flags, m)
}

// Route paths.
const (
	pathDiscovery  = "/.well-known/openid-configuration"
	pathJWKS       = "/jwks"
	pathJWKSAlias  = "/jwks.json"
	pathAuthorize  = "/authorize"
	pathToken      = "/token"
	pathIntrospect = "/introspect"
	pathUserinfo   = "/userinfo"
	pathRevoke     = "/revoke"
	pathEndSession = "/end_session"
	// pathDeviceAuthorization is RFC 8628 §3.1's endpoint (pathDevice,
	// the verification page, is in deviceverify.go).
	pathDeviceAuthorization = "/device_authorization"
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
