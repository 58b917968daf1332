package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"worldid/admin"
	"worldid/forwarded"
	"worldid/metrics"
	"worldid/oidc"
	"worldid/refresh"
	"worldid/registry"
	"worldid/store"
	"worldid/store/postgres"
	"worldid/verify"
)

// Server timeouts (design.md §8) and the bounded shutdown.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownTimeout   = 10 * time.Second
	// registryFollowInterval bounds how long an identity added through
	// another replica takes to become provable and verifiable here.
	registryFollowInterval = 2 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worldid:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run dispatches a subcommand; "serve" is the default.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return cmdServe(ctx, args, stdout, stderr)
	case "wallet":
		return cmdWallet(ctx, args, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, args, stdout, stderr)
	case "bench":
		return cmdBench(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	case "version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "app", "identity", "roots", "action", "keys", "signup", "orbkey", "refresh":
		return runAdminCommand(ctx, cmd, args, stdout, stderr)
	default:
		return usageError{fmt.Errorf("unknown command %q (try 'worldid help')", cmd)}
	}
}

const usageText = `usage: worldid <command> [flags]

  serve                 run the server (default); flags: worldid serve -h
  demo                  run every flow against a throwaway in-process server
  bench SCENARIO...     load-test endpoints: discovery jwks verify signin token refresh
  app create|list       manage relying-party apps (admin API)
  identity add C...     insert identity commitments (or -file F) into a tree (admin API)
  roots add R           accept a root of a tree kept elsewhere (admin API)
  action limit          set an action's max_verifications (admin API)
  keys rotate           publish the next OIDC signing key (admin API)
  signup import FILE    import signup records, JSON lines (admin API)
  orbkey add -orb O PEM trust an Orb's PCP signing key (admin API)
  refresh enable|disable  turn credential refresh on or off (admin API)
  wallet new|prove|signin|pcp|refresh  the development wallet
  version               module version and VCS revision
  help                  this text

Every flag also reads WORLDID_<FLAG> from the environment (e.g. WORLDID_ADDR).
`

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := newFlagSet("serve", stderr)
	cfg.configFlags(fs)
	if err := parseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	level, _ := cfg.slogLevel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := startServer(ctx, cfg, stdout, log)
	if err != nil {
		return err
	}
	return srv.wait(ctx)
}

func newFlagSet(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("worldid "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// server is a running worldid: both listeners and what they depend on.
type server struct {
	cfg         Config // with the public URLs resolved
	adminURL    string
	db          backend
	httpServers []*http.Server
	closers     []func() error // run in reverse order on shutdown
	errc        chan error
	log         *slog.Logger
}

// backend is every storage interface the handlers declare; both the
// file-backed JSON store and PostgreSQL implement it.
type backend interface {
	admin.Store
	verify.Store
	oidc.Store
	refresh.Store
	registry.Store
	Close() error
}

// openBackend opens the embedded JSON store in the data dir, or PostgreSQL
// when -store names one.
func openBackend(ctx context.Context, cfg Config) (backend, error) {
	if cfg.Store == "" {
		return store.Open(cfg.DataDir, store.Options{})
	}
	return postgres.Open(ctx, cfg.Store) // its errors name the store and never the password
}

// startServer opens the data dir and store, wires every handler and starts
// both listeners. It returns once they accept connections.
func startServer(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) (_ *server, err error) {
	s := &server{errc: make(chan error, 2), log: log}
	defer func() {
		if err != nil {
			s.shutdown()
		}
	}()
	token, firstStart, err := prepareDataDir(cfg.DataDir, rand.Reader)
	if err != nil {
		return nil, err
	}
	if s.db, err = openBackend(ctx, cfg); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.db.Close)
	shared, _ := s.db.(sharedFiles) // nil for the JSON store: the files stay in the data dir
	localKey, pkPath, err := loadOrCreateLocalKey(ctx, cfg.DataDir, shared, log)
	if err != nil {
		return nil, err
	}
	ids, err := registry.Open(ctx, registry.Options{Store: s.db, LocalKey: localKey, Now: time.Now, Rand: cfg.batchRand()})
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() error { ids.Close(); return nil })
	s.background(ctx, func(ctx context.Context) {
		ids.Follow(ctx, registryFollowInterval, func(err error) { log.Error("registry: catching up from the store", "err", err) })
	})
	// Recovery decodes the whole journal and snapshot: garbage as large as
	// the live state. Return it to the OS now rather than carrying it as
	// resident memory until the scavenger gets to it.
	debug.FreeOSMemory()
	publicLn, err := s.listen(cfg.Addr, "addr")
	if err != nil {
		return nil, err
	}
	adminLn, err := s.listen(cfg.AdminAddr, "admin-addr")
	if err != nil {
		return nil, err
	}
	s.cfg = cfg.withListenerDefaults(publicLn.Addr())
	s.adminURL = "http://" + adminLn.Addr().String()

	m := metrics.NewRegistry()
	instrument := metrics.NewHTTP(m, log)
	public := http.NewServeMux()
	public.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	public.Handle("GET /metrics", m.Handler())
	ids.Register(public, pkPath)
	verifier, err := verify.New(verify.Options{Store: s.db, Checker: ids, Now: time.Now, Log: log})
	if err != nil {
		return nil, err
	}
	verifier.Register(public)
	signin, err := oidc.New(oidc.Options{Issuer: s.cfg.BaseURL, Store: s.db, Checker: ids, Rand: rand.Reader, Now: time.Now, Log: log,
		SunsetDate: cfg.sunset, SunsetEnforce: cfg.SunsetEnforce, KeyRotationPeriod: cfg.KeyRotation})
	if err != nil {
		return nil, err
	}
	signin.Register(public)
	s.background(ctx, signin.Run)
	issuerKey, err := loadOrCreateIssuerKey(ctx, cfg.DataDir, shared, rand.Reader)
	if err != nil {
		return nil, err
	}
	issuer, err := refresh.New(refresh.Options{Store: s.db, VerifyingKey: localKey, IssuerKey: issuerKey,
		PerIP: cfg.refreshRate(), PerIDComm: cfg.refreshRate(), Now: time.Now, Rand: rand.Reader, Log: log})
	if err != nil {
		return nil, err
	}
	issuer.Register(public)
	adminAPI := admin.New(admin.Options{Token: token, Store: s.db, Registry: ids, Keys: signin,
		ParseOrbKey: func(pem []byte) error { _, err := refresh.ParseOrbKeyPEM(pem); return err }, Rand: rand.Reader, Now: time.Now, Log: log})

	s.serve(publicLn, forwarded.Middleware(cfg.trustedProxies, instrument.Wrap("public", public)), cfg.tls)
	s.serve(adminLn, instrument.Wrap("admin", adminAPI), nil)

	if firstStart {
		if err := createDemoApp(ctx, s, stdout); err != nil {
			return nil, err
		}
	}
	listenerURL := strings.SplitN(s.cfg.BaseURL, "://", 2)[0] + "://" + publicLn.Addr().String()
	fmt.Fprintf(stdout, "worldid: public listener  %s\n", listenerURL)
	if s.cfg.BaseURL != listenerURL {
		fmt.Fprintf(stdout, "worldid: base URL         %s\n", s.cfg.BaseURL)
	}
	fmt.Fprintf(stdout, "worldid: admin listener   %s (token: %s)\n", s.adminURL, filepath.Join(cfg.DataDir, adminTokenFile))
	log.Info("started", "public", s.cfg.BaseURL, "admin", s.adminURL, "data", cfg.DataDir)
	return s, nil
}

// background runs fn until shutdown.
func (s *server) background(ctx context.Context, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	s.closers = append(s.closers, func() error { cancel(); <-done; return nil })
}

// listen binds addr; setting names the flag in errors.
func (s *server) listen(addr, setting string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	s.closers = append(s.closers, func() error { ln.Close(); return nil })
	return ln, nil
}

func (s *server) serve(ln net.Listener, h http.Handler, tlsConfig *tls.Config) {
	hs := &http.Server{
		TLSConfig:         tlsConfig,
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.httpServers = append(s.httpServers, hs)
	go func() {
		var err error
		if tlsConfig != nil {
			err = hs.ServeTLS(ln, "", "") // certificates come from TLSConfig
		} else {
			err = hs.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			s.errc <- err
		}
	}()
}

// wait blocks until ctx is done or a listener fails, then shuts down.
func (s *server) wait(ctx context.Context) error {
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case err = <-s.errc:
		s.log.Error("listener failed", "err", err)
	}
	return errors.Join(err, s.shutdown())
}

// shutdown stops accepting, drains in-flight requests for at most
// shutdownTimeout, then closes what startServer opened, newest first.
func (s *server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, hs := range s.httpServers {
		errs = append(errs, hs.Shutdown(ctx))
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// createDemoApp registers the app a newcomer signs in to on first start and
// prints its credentials (the only time the secret is shown). A replica
// joining a shared store that already has apps creates none.
func createDemoApp(ctx context.Context, s *server, stdout io.Writer) error {
	if apps, err := s.db.Apps(ctx); err != nil || len(apps) > 0 {
		return err
	}
	app, secret, err := admin.NewApp(rand.Reader, time.Now(), admin.CreateAppRequest{
		Name: "Demo app", RedirectURIs: []string{demoRedirectURI},
	})
	if err != nil {
		return err
	}
	if err := s.db.CreateApp(ctx, app); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "worldid: demo app created (first start)\n  client_id     %s\n  client_secret %s\n  redirect_uri  %s\n  rp_id         %s\n",
		app.ID, secret, demoRedirectURI, app.RPID)
	return nil
}

// demoRedirectURI is the demo app's callback: a loopback address where a
// developer's relying party would listen.
const demoRedirectURI = "http://localhost:3000/callback"
