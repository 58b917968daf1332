package server

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"worldid/bridge"
	"worldid/field"
	"worldid/internal/leaf/forwarded"
	"worldid/internal/leaf/ratelimit"
	"worldid/oidc"
	"worldid/refresh"
	"worldid/registry"
	"worldid/rootsource"
)

// Config is everything `worldid serve` needs; every field comes from a flag
// with an environment fallback (WORLDID_<FLAG>, dashes as underscores).
type Config struct {
	DataDir   string // -data
	Store     string // -store: "" (the JSON store in the data dir) or a postgres:// URL
	Addr      string // -addr: public listener
	AdminAddr string // -admin-addr: admin listener
	BaseURL   string // -base-url: OIDC issuer; default http://<addr>
	IssuerURL string // -issuer-url: credential issuer; default BaseURL
	VerifyURL string // -verify-url: proof verification; default BaseURL
	LogLevel  string // -log-level: debug, info, warn, error
	// Sign-in v1 deprecation (doc/interfaces.md §9, doc/design.md §4).
	Sunset        string        // -signin-sunset: YYYY-MM-DD
	SunsetEnforce bool          // -signin-sunset-enforce: 410 Gone after the date
	KeyRotation   time.Duration // -key-rotation: signing key lifetime
	// -signin-session: lifetime of the login session a sign-in leaves in
	// the browser; 0 turns sessions off.
	SigninSession time.Duration
	// SigninPageRate is -signin-page-rate: the Wallet Bridge requests
	// that sign-in pages may create per client address, "BURST/EVERY"
	// ("20/3s") or "off".
	SigninPageRate string
	EmailDomain    string // -email-domain: domain of the email claim
	// BridgeURL is -bridge-url: "self" serves the built-in Wallet Bridge
	// relay on the public listener; a URL names another relay; "" picks
	// self for a loopback base URL and World's bridge otherwise.
	BridgeURL     string
	Simulator     bool   // -simulator: the developer simulator (test identities; loopback only)
	RefreshLimits bool   // -refresh-rate-limits: per-IP and per-idComm limits on /api/v1/refresh
	Reissue       bool   // -refresh-reissue: a repeat refresh issues a new credential
	ProofChecks   int    // -refresh-proof-checks: x-zkp-proof checks at once (0: GOMAXPROCS−1)
	NoBatching    bool   // -no-batching: verify Groth16 proofs one by one (for comparison)
	CryptoPath    string // -crypto-path: auto (or empty), scalar or vector (field.Path)
	// AcceptDataLoss opens a JSON store whose files hold less than it had
	// acknowledged (store.ErrDataLoss) with what they hold.
	AcceptDataLoss bool // -accept-data-loss

	// World ID roots and 4.0 proofs.
	RootsRPC      string        // -roots-rpc: chain=URL,…: JSON-RPC endpoints of the root source
	RootsContract string        // -roots-contract: tree=chain:kind:0xaddress,…: contracts beyond or instead of the defaults
	MinExpiration time.Duration // -min-expiration: WorldIDVerifier's minimum expiration threshold for 4.0 proofs

	// Deployment: TLS and reverse proxies (doc/design.md §1).
	TLSCert, TLSKey string // -tls-cert, -tls-key: PEM files; HTTPS on the public listener
	TrustedProxies  string // -trusted-proxies: CIDRs whose X-Forwarded-For is believed
	MaxConns        int    // -max-conns: open connections on the public listener
	MaxConnsPerIP   int    // -max-conns-per-client: open connections from one address
	// Metrics is where GET /metrics is served: "public", "admin", or
	// "auto" (the admin listener when -addr is not a loopback address).
	Metrics string // -metrics
	// ShutdownTimeout bounds the drain of in-flight requests on SIGTERM.
	ShutdownTimeout time.Duration // -shutdown-timeout
	// DemoApp creates the demo app on the first start: "on", "off", or
	// "auto" (on only for a loopback base URL).
	DemoApp string // -demo-app

	sunset         time.Time // parsed Sunset
	cryptoPath     field.Path
	rootsRPC       map[string]string
	rootsContracts []rootsource.Contract
	tls            *tls.Config    // loaded TLSCert/TLSKey, or nil
	trustedProxies []netip.Prefix // parsed TrustedProxies
	signinPageRate ratelimit.Rate // parsed SigninPageRate
}

// RegisterFlags registers the serve flags on fs, bound to c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.DataDir, "data", "./worldid-data", "data directory (created on first start)")
	fs.StringVar(&c.Store, "store", "", "storage: empty for the JSON store in the data dir, or postgres://user:pass@host:port/db for PostgreSQL (many replicas)")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "public listener address")
	fs.StringVar(&c.AdminAddr, "admin-addr", "127.0.0.1:8081", "admin listener address")
	fs.StringVar(&c.BaseURL, "base-url", "", "public URL of the sign-in interface (default: http://<addr>)")
	fs.StringVar(&c.IssuerURL, "issuer-url", "", "public URL of the credential issuer (default: base URL)")
	fs.StringVar(&c.VerifyURL, "verify-url", "", "public URL of proof verification (default: base URL)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.Sunset, "signin-sunset", "2026-01-31", "sign-in v1 sunset date (Deprecation/Sunset headers)")
	fs.BoolVar(&c.SunsetEnforce, "signin-sunset-enforce", false, "answer 410 Gone on sign-in routes after the sunset date")
	fs.BoolVar(&c.RefreshLimits, "refresh-rate-limits", true, "rate-limit /api/v1/refresh per IP and per idComm (off only for load tests)")
	fs.BoolVar(&c.Reissue, "refresh-reissue", false, "issue a new credential on every refresh (default: an identity that holds a valid credential gets the same one back)")
	fs.IntVar(&c.ProofChecks, "refresh-proof-checks", 0, "x-zkp-proof checks running at once on /api/v1/refresh; 0: one per core but one, so a flood of false proofs leaves a core to the other endpoints")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate chain: serve the public listener over HTTPS (with -tls-key)")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key for -tls-cert")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the client (default: none)")
	fs.StringVar(&c.CryptoPath, "crypto-path", "auto", "field products of Poseidon2 and BabyJubJub signing: auto (per operation, the faster of scalar and vector in a start-up calibration, logged), scalar, or vector (AVX-512 IFMA; refused on CPUs without it)")
	fs.BoolVar(&c.NoBatching, "no-batching", false, "verify concurrent Groth16 proofs one by one instead of in batches")
	fs.BoolVar(&c.AcceptDataLoss, "accept-data-loss", false, "start even though the JSON store's files hold less than it had acknowledged (a missing or older state.json or journal.jsonl); use once, after deciding that no backup is better")
	fs.DurationVar(&c.KeyRotation, "key-rotation", 30*24*time.Hour, "OIDC signing key rotation period (at least 24h)")
	fs.StringVar(&c.SigninPageRate, "signin-page-rate", "20/3s", "Wallet Bridge requests the sign-in pages may create per client address: BURST/EVERY (20 at once, then one every 3s) or off")
	fs.DurationVar(&c.SigninSession, "signin-session", 8*time.Hour, "lifetime of a sign-in's login session (prompt=none); 0 turns sessions off")
	fs.StringVar(&c.RootsRPC, "roots-rpc", "", "root source: comma-separated chain=URL JSON-RPC endpoints (chains of the default contracts: ethereum, sepolia, worldchain); default none")
	fs.StringVar(&c.RootsContract, "roots-contract", "", "root source: comma-separated tree=chain:kind:0xaddress, kind identity-manager (3.0 roots), registry (4.0 roots), issuer-registry or oprf-key-registry (4.0 trust anchors, tree issuer_key/ENV or oprf_key/ENV); added to, or replacing per tree, World's defaults")
	fs.DurationVar(&c.MinExpiration, "min-expiration", registry.DefaultMinExpiration, "World ID 4.0: how far in the past a proof's expires_at_min may lie (0: the default)")
	fs.BoolVar(&c.Simulator, "simulator", false, "DEVELOPMENT ONLY: the sign-in simulator; test identities that can sign in to every app are accepted while this process runs with it (kept in memory, never stored), and the simulator page answers loopback clients only")
	fs.IntVar(&c.MaxConns, "max-conns", 10000, "open connections on the public listener, in all; more are refused at once (keep it below the process's file limit)")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-client", 256, "open connections on the public listener from one client address (trusted proxies count only toward -max-conns)")
	fs.StringVar(&c.Metrics, "metrics", "auto", "where GET /metrics is served: public, admin, or auto (admin unless -addr is a loopback address)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long in-flight requests may finish before their connections are cut")
	fs.StringVar(&c.DemoApp, "demo-app", "auto", "create a demo app (localhost redirect, secret printed) on the first start: on, off, or auto (on only for a loopback base URL)")
	fs.StringVar(&c.BridgeURL, "bridge-url", "", "Wallet Bridge relay for sign-in: 'self' serves the built-in relay on the public listener (development, tests, our own wallet); or a relay's URL, e.g. "+bridge.DefaultURL+", World's, the only one the World App accepts (default: self when the base URL is loopback, else World's)")
	fs.StringVar(&c.EmailDomain, "email-domain", "", "domain of the sign-in email claim <sub>@<domain> (default: the base URL's host, or worldid.invalid when that is an IP address)")
}

// Validate checks every field and names the failing ones.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("data: must not be empty"))
	}
	if c.Store != "" && !strings.HasPrefix(c.Store, "postgres://") && !strings.HasPrefix(c.Store, "postgresql://") {
		errs = append(errs, errors.New("store: must be empty (JSON store) or a postgres:// URL"))
	}
	for name, addr := range map[string]string{"addr": c.Addr, "admin-addr": c.AdminAddr} {
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("%s: %q is not host:port", name, addr))
		}
	}
	if c.ProofChecks < 0 {
		errs = append(errs, errors.New("refresh-proof-checks: must not be negative"))
	}
	if c.AcceptDataLoss && c.Store != "" {
		errs = append(errs, errors.New("accept-data-loss: applies to the JSON store only"))
	}
	if c.Addr == c.AdminAddr && !strings.HasSuffix(c.Addr, ":0") {
		errs = append(errs, errors.New("admin-addr: must differ from addr"))
	}
	for name, u := range map[string]string{"base-url": c.BaseURL, "issuer-url": c.IssuerURL, "verify-url": c.VerifyURL} {
		if err := validatePublicURL(u); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if _, err := c.SlogLevel(); err != nil {
		errs = append(errs, fmt.Errorf("log-level: %w", err))
	}
	var err error
	if c.sunset, err = time.Parse(time.DateOnly, c.Sunset); err != nil {
		errs = append(errs, fmt.Errorf("signin-sunset: %q is not YYYY-MM-DD", c.Sunset))
	}
	if c.EmailDomain != "" {
		if err := oidc.CheckEmailDomain(c.EmailDomain); err != nil {
			errs = append(errs, fmt.Errorf("email-domain: %w", err))
		}
	}
	if c.KeyRotation < 24*time.Hour {
		errs = append(errs, errors.New("key-rotation: must be at least 24h"))
	}
	if c.SigninSession < 0 || c.SigninSession > 30*24*time.Hour {
		errs = append(errs, errors.New("signin-session: must be between 0 (off) and 720h"))
	}
	if c.signinPageRate, err = parseRate(c.SigninPageRate); err != nil {
		errs = append(errs, fmt.Errorf("signin-page-rate: %w", err))
	}
	if c.trustedProxies, err = forwarded.ParsePrefixes(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Errorf("trusted-proxies: %w", err))
	}
	if c.MaxConns < 1 || c.MaxConnsPerIP < 1 {
		errs = append(errs, errors.New("max-conns, max-conns-per-client: must be at least 1"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("shutdown-timeout: must be positive"))
	}
	if !slices.Contains([]string{"auto", "public", "admin"}, c.Metrics) {
		errs = append(errs, errors.New("metrics: must be public, admin or auto"))
	}
	if !slices.Contains([]string{"auto", "on", "off"}, c.DemoApp) {
		errs = append(errs, errors.New("demo-app: must be on, off or auto"))
	}
	if err := validateBridgeURL(c.BridgeURL); err != nil {
		errs = append(errs, fmt.Errorf("bridge-url: %w", err))
	}
	if c.MinExpiration < 0 {
		errs = append(errs, errors.New("min-expiration: must not be negative"))
	}
	if c.CryptoPath == "" { // a Config built in code: the flag's default
		c.cryptoPath = field.Auto
	} else if c.cryptoPath, err = field.ParsePath(c.CryptoPath); err != nil {
		errs = append(errs, fmt.Errorf("crypto-path: %w", err))
	} else if c.cryptoPath == field.Vector && !field.VectorAvailable() {
		errs = append(errs, errors.New("crypto-path: vector needs a CPU with AVX-512 IFMA and a build without the noavx and purego tags"))
	}
	errs = append(errs, c.parseRoots())
	errs = append(errs, c.loadTLS())
	return errors.Join(errs...)
}

// validatePublicURL accepts "" (derived from the listener) or an absolute
// http(s) URL without query, fragment or trailing slash, since the OIDC
// issuer must compare byte-for-byte (OIDC Discovery §3).
func validatePublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "":
		return fmt.Errorf("%q is not an absolute URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q must not have a query, fragment or userinfo", s)
	case strings.HasSuffix(s, "/"):
		return fmt.Errorf("%q must not end with a slash", s)
	}
	return nil
}

// SlogLevel is the parsed -log-level.
func (c *Config) SlogLevel() (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(c.LogLevel))
	return l, err
}

// loadTLS loads the public listener's certificate, if configured.
func (c *Config) loadTLS() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("tls-cert, tls-key: give both or neither")
	}
	if c.TLSCert == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return fmt.Errorf("tls-cert, tls-key: %w", err)
	}
	c.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return nil
}

// parseRate reads a per-client rate: "BURST/EVERY" (a positive count and
// a positive Go duration), "off" (a negative Burst, as ratelimit and
// signin read it) or "" (the zero Rate: the handler's default).
func parseRate(s string) (ratelimit.Rate, error) {
	switch s {
	case "":
		return ratelimit.Rate{}, nil
	case "off":
		return ratelimit.Rate{Burst: -1}, nil
	}
	burst, every, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(burst)
	d, derr := time.ParseDuration(every)
	if !ok || err != nil || derr != nil || n < 1 || d <= 0 {
		return ratelimit.Rate{}, fmt.Errorf("%q is not BURST/EVERY (e.g. 20/3s) or off", s)
	}
	return ratelimit.Rate{Burst: n, Every: d}, nil
}

// refreshRate is the refresh endpoint's rate: its defaults, or off.
func (c *Config) refreshRate() refresh.Rate {
	if c.RefreshLimits {
		return refresh.Rate{}
	}
	return refresh.Rate{Burst: -1}
}

// batchRand is the registry's batch-verification randomness; nil turns
// batching off.
func (c *Config) batchRand() io.Reader {
	if c.NoBatching {
		return nil
	}
	return rand.Reader
}

// metricsOnAdmin reports whether /metrics is served on the admin listener
// only: asked for, or by default when the public listener is reachable
// from other hosts (the metrics name routes, apps' traffic and the build).
func (c *Config) metricsOnAdmin() bool {
	return c.Metrics == "admin" || c.Metrics == "auto" && !isLoopbackAddr(c.Addr)
}

// demoAppWanted reports whether a first start creates the demo app: asked
// for, or by default for a base URL on loopback (a developer's machine); a
// production first start creates no app whose secret ends up in its logs.
func (c *Config) demoAppWanted(baseURL string) bool {
	if c.DemoApp != "auto" {
		return c.DemoApp == "on"
	}
	u, err := url.Parse(baseURL)
	return err == nil && isLoopbackHost(u.Hostname())
}

func isLoopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && isLoopbackHost(host)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// withListenerDefaults fills the public URLs from the bound public address.
func (c Config) withListenerDefaults(publicAddr net.Addr) Config {
	if c.BaseURL == "" {
		scheme := "http://"
		if c.tls != nil {
			scheme = "https://"
		}
		c.BaseURL = scheme + publicAddr.String()
	}
	if c.IssuerURL == "" {
		c.IssuerURL = c.BaseURL
	}
	if c.VerifyURL == "" {
		c.VerifyURL = c.BaseURL
	}
	if c.BridgeURL == "" {
		c.BridgeURL = bridge.DefaultURL
		if isLoopbackURL(c.BaseURL) {
			c.BridgeURL = bridgeSelf
		}
	}
	return c
}

// bridgeSelf is the -bridge-url value that serves the built-in relay.
const bridgeSelf = "self"

// validateBridgeURL accepts "", "self", or an absolute http(s) URL without
// path, query, fragment or userinfo: IDKit joins "/request" to a bridge
// URL, which would drop a path (idkit rust/core/src/types.rs BridgeUrl).
func validateBridgeURL(s string) error {
	if s == "" || s == bridgeSelf {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return fmt.Errorf("%q is not 'self' or an absolute http(s) URL", s)
	case u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q must not have a path, query, fragment or userinfo", s)
	}
	return nil
}

// isLoopbackURL: the URL's host is localhost or a loopback address.
func isLoopbackURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// relayURL is the base URL of the relay sign-in uses: the public base URL
// when the built-in one is served, else -bridge-url.
func (c Config) relayURL() string {
	if c.BridgeURL == bridgeSelf {
		return c.BaseURL
	}
	return c.BridgeURL
}

// Version reports the module version and VCS revision from the
// build info (set by `go build`; "(devel)" for `go run`).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "worldid (no build info)"
	}
	v := "worldid " + info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified":
			v += " " + s.Key + "=" + s.Value
		}
	}
	return v + " " + info.GoVersion
}

// parseRoots reads -roots-rpc and -roots-contract.
func (c *Config) parseRoots() error {
	c.rootsRPC = map[string]string{}
	var errs []error
	for _, entry := range splitList(c.RootsRPC) {
		chain, u, ok := strings.Cut(entry, "=")
		if pu, err := url.Parse(u); !ok || chain == "" || err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			errs = append(errs, errors.New("roots-rpc: entries must be chain=http(s)://host/…")) // never echo: URLs may hold API keys
			continue
		}
		c.rootsRPC[chain] = u
	}
	c.rootsContracts = rootsource.DefaultContracts()
	for _, entry := range splitList(c.RootsContract) {
		ct, err := rootsource.ParseContract(entry)
		if err != nil {
			errs = append(errs, fmt.Errorf("roots-contract: %w", err))
			continue
		}
		c.rootsContracts = append(c.rootsContracts, ct)
	}
	return errors.Join(errs...)
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// rootSource is the registry's root source, or nil without -roots-rpc;
// observe gets every question it asks (rootsource.Options.Observe).
func (c *Config) rootSource(observe func(call, chain, outcome string, took time.Duration)) (registry.RootSource, map[string]string, error) {
	if len(c.rootsRPC) == 0 {
		return nil, nil, nil
	}
	src, err := rootsource.New(rootsource.Options{RPC: c.rootsRPC, Contracts: c.rootsContracts, Observe: observe})
	if err != nil {
		return nil, nil, err
	}
	return src, src.Trees(), nil
}

// sessionLifetime is oidc's Options.SessionLifetime for -signin-session,
// where 0 means off (oidc's negative).
func sessionLifetime(flag time.Duration) time.Duration {
	if flag == 0 {
		return -1
	}
	return flag
}
