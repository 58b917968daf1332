package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"worldid/admin"
	"worldid/babyjub"
	"worldid/backup"
	"worldid/bridge/client"
	"worldid/internal/leaf/connlimit"
	"worldid/internal/leaf/forwarded"
	"worldid/internal/leaf/metrics"
	"worldid/internal/simulator"
	"worldid/oidc"
	"worldid/record"
	"worldid/refresh"
	"worldid/registry"
	"worldid/semaphore/prover"
	"worldid/signin"
	"worldid/store/postgres"
	"worldid/verify"
)

// Listener timeouts (doc/design.md §8) and the bounded shutdown.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	// RegistryFollowInterval bounds how long an identity added through
	// another replica takes to become provable and verifiable here.
	RegistryFollowInterval = 2 * time.Second
)

// Server is a running worldid: both listeners and what they depend on.
type Server struct {
	cfg         Config // with the public URLs resolved
	adminURL    string
	db          backend
	firstStart  *firstStartRecord // the JSON store's witness; nil with PostgreSQL
	httpServers []listening
	closers     []func() error // run in reverse order on shutdown
	errc        chan error
	log         *slog.Logger
	drainTime   time.Duration // -shutdown-timeout
}

// backend is every storage interface the handlers declare; both the
// file-backed JSON store and PostgreSQL implement it.
type backend interface {
	admin.Store
	verify.Store
	oidc.Store
	signin.Store
	refresh.Store
	registry.Store
	// Health is nil if the store accepts writes (PostgreSQL: answers),
	// else why not, wrapping record.ErrUnavailable.
	Health(ctx context.Context) error
	// NullifierCount is read for the metrics.
	NullifierCount(ctx context.Context) (int, error)
	Close() error
}

// Start finds the shared key files by a type assertion on the backend,
// which a changed method signature would turn silently into "not shared".
var _ sharedFiles = (*postgres.DB)(nil)

// storeName names the backend in a backup's header.
func storeName(cfg Config) string {
	if cfg.Store == "" {
		return "json"
	}
	return "postgres"
}

// openBackend opens the embedded JSON store in the data dir, or PostgreSQL
// when -store names one.
// The JSON store also returns its witness, FirstStartFile's record.
func openBackend(ctx context.Context, cfg Config, log *slog.Logger) (backend, *firstStartRecord, error) {
	if cfg.Store != "" {
		db, err := postgres.Open(ctx, cfg.Store) // its errors name the store and never the password
		if err != nil {
			return nil, nil, err
		}
		return db, nil, nil
	}
	return openJSONStore(ctx, cfg, log)
}

// Start opens the data dir and store, wires every handler and starts
// both listeners. It returns once they accept connections.
func Start(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) (_ *Server, err error) {
	// Every line logged with a request's context names its request id.
	log = slog.New(metrics.LogHandler(log.Handler()))
	s := &Server{errc: make(chan error, 2), log: log, drainTime: cfg.ShutdownTimeout}
	defer func() {
		if err != nil {
			s.Shutdown()
		}
	}()
	if err := requireConstantTime(babyjub.ConstantTime()); err != nil {
		return nil, err
	}
	if err := chooseCryptoPaths(cfg, log); err != nil {
		return nil, err
	}
	token, err := prepareDataDir(cfg.DataDir, rand.Reader)
	if err != nil {
		return nil, err
	}
	if s.db, s.firstStart, err = openBackend(ctx, cfg, log); err != nil {
		return nil, err
	}
	s.closers = append(s.closers, s.db.Close)
	m := metrics.NewRegistry()
	m.RegisterBuildInfo()
	m.RegisterRuntime(time.Now())
	requestIDs, err := metrics.NewRequestIDs(rand.Reader)
	if err != nil {
		return nil, err
	}
	mon := newMonitor(m, log)
	health := newStoreHealth(s.db.Health, m, log)
	health.update(ctx)
	s.every(ctx, healthInterval, func(ctx context.Context) { health.update(ctx) })
	shared, _ := s.db.(sharedFiles) // nil for the JSON store: the files stay in the data dir
	localKey, pkPath, err := loadOrCreateLocalKey(ctx, cfg.DataDir, shared, log)
	if err != nil {
		return nil, err
	}
	issuerKey, err := loadOrCreateIssuerKey(ctx, cfg.DataDir, shared, rand.Reader)
	if err != nil {
		return nil, err
	}
	roots, rootTrees, err := cfg.rootSource(mon.rootCall)
	if err != nil {
		return nil, err
	}
	// Our own PoH credential issuer is schema 1's issuer unless the
	// operator stores another key (registry/v4.go).
	x, y := issuerKey.Public().Coordinates()
	regOpts := registry.Options{Store: s.db, LocalKey: localKey, Now: time.Now, Rand: cfg.batchRand(), ObserveBatch: mon.batch,
		Roots: roots, MinExpiration: cfg.MinExpiration,
		DefaultAnchors: []record.TrustAnchor{{Kind: record.AnchorIssuerKey, ID: "1", X: x, Y: y}},
		Checkpoints:    dirCheckpoints{filepath.Join(cfg.DataDir, TreeCheckpointDir)}, Log: log}
	// The root source also reads World ID 4.0 trust anchors from World's
	// key registries (rootsource), after the operator's hand-set ones.
	if keys, ok := roots.(registry.KeySource); ok {
		regOpts.Keys = keys
	}
	// The simulator's test identities live in memory only: this process
	// accepts their root while it runs with -simulator, nothing else does.
	var testTrees *simulator.Trees
	if cfg.Simulator {
		if testTrees, err = simulator.NewTrees(); err != nil {
			return nil, err
		}
		regOpts.TestRoots = testTrees.Accepts
	}
	ids, err := registry.Open(ctx, regOpts)
	if err != nil {
		return nil, err
	}
	if roots != nil {
		log.Info("root source", "trees", rootTrees)
	}
	s.closers = append(s.closers, func() error {
		// Derived data: a failed write costs the next start a replay, not the shutdown.
		if err := ids.SaveCheckpoints(context.Background()); err != nil {
			log.Error("registry: writing tree checkpoints at shutdown", "err", err)
		}
		ids.Close()
		return nil
	})
	s.background(ctx, func(ctx context.Context) {
		ids.Follow(ctx, RegistryFollowInterval, func(err error) { log.Error("registry: catching up from the store", "err", err) })
	})
	s.background(ctx, func(ctx context.Context) {
		ids.KeepCheckpoints(ctx, checkpointInterval, func(err error) { log.Error("registry: writing tree checkpoints", "err", err) })
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

	instrument := metrics.NewHTTP(m, log, requestIDs)
	public := http.NewServeMux()
	public.Handle("GET /healthz", health)
	if !cfg.metricsOnAdmin() {
		public.Handle("GET /metrics", m.Handler())
	}
	wallets, err := registry.NewHandler(registry.HandlerOptions{Registry: ids, ProvingKeyFile: pkPath, Log: log})
	if err != nil {
		return nil, err
	}
	wallets.Register(public)
	verifier, err := verify.New(verify.Options{Store: s.db, Checker: ids, CheckerV4: ids, Now: time.Now, Log: log, Observe: mon.verify})
	if err != nil {
		return nil, err
	}
	verifier.Register(public)
	listenerURL := strings.SplitN(s.cfg.BaseURL, "://", 2)[0] + "://" + publicLn.Addr().String()
	provider, err := oidc.New(oidc.Options{Issuer: s.cfg.BaseURL, Store: s.db, Rand: rand.Reader, Now: time.Now, Log: log,
		SunsetDate: cfg.sunset, SunsetEnforce: cfg.SunsetEnforce, KeyRotationPeriod: cfg.KeyRotation, EmailDomain: cfg.EmailDomain,
		SessionLifetime: sessionLifetime(cfg.SigninSession), ObserveDevice: mon.device})
	if err != nil {
		return nil, err
	}
	signinOpts := signin.Options{Issuer: s.cfg.BaseURL, Store: s.db, Checker: ids, CheckerV4: ids, Provider: provider, Rand: rand.Reader, Now: time.Now, Log: log,
		BridgeURL: s.cfg.relayURL(), Bridge: &client.Client{}, Observe: mon.signin, CreateRate: s.cfg.signinPageRate}
	if s.cfg.BridgeURL == bridgeSelf {
		relayHandler, err := s.serveRelay(public)
		if err != nil {
			return nil, err
		}
		signinOpts.Bridge = &client.Client{HTTP: &http.Client{Transport: inProcess{relayHandler}}}
	}
	if cfg.Simulator {
		if err := startSimulator(public, testTrees, pkPath, listenerURL, &signinOpts, stdout, log); err != nil {
			return nil, err
		}
	}
	flow, err := signin.New(signinOpts)
	if err != nil {
		return nil, err
	}
	provider.Register(public, flow)
	flow.Register(public)
	s.background(ctx, provider.Run)
	issuer, err := refresh.New(refresh.Options{Store: s.db, VerifyingKey: localKey, IssuerKey: issuerKey,
		PerIP: cfg.refreshRate(), PerIDComm: cfg.refreshRate(), Reissue: cfg.Reissue, ProofChecks: cfg.ProofChecks, Now: time.Now, Rand: rand.Reader, Log: log, Observe: mon.refresh})
	if err != nil {
		return nil, err
	}
	issuer.Register(public)
	mon.watchRegistry(ids)
	readings := mon.watchStore(s.db.NullifierCount, provider, cfg.KeyRotation)
	readings.read(ctx)
	s.every(ctx, storeReadInterval, readings.read)
	mon.watchProofLane(issuer)
	adminAPI, err := admin.New(admin.Options{Token: token, Store: s.db, Registry: ids, Keys: provider, CheckSector: provider.CheckSectorIdentifier,
		StoreName: storeName(cfg), Files: func(ctx context.Context) ([]backup.File, error) { return dataFiles(ctx, cfg.DataDir, shared) },
		ParseOrbKey: func(pem []byte) error { _, err := refresh.ParseOrbKeyPEM(pem); return err }, Rand: rand.Reader, Now: time.Now, Log: log})
	if err != nil {
		return nil, err
	}

	adminMux := http.NewServeMux()
	adminMux.Handle("/", adminAPI)
	if cfg.metricsOnAdmin() {
		adminMux.Handle("GET /metrics", m.Handler())
	}
	log.Info("metrics", "served_on", map[bool]string{true: "admin", false: "public"}[cfg.metricsOnAdmin()])
	refused := m.NewCounter("worldid_connections_refused_total", "Connections closed at once for exceeding -max-conns (limit=total) or -max-conns-per-client (limit=client).", "limit")
	publicConns := connlimit.New(publicLn, connlimit.Options{Total: cfg.MaxConns, PerClient: cfg.MaxConnsPerIP,
		Exempt: cfg.trustedProxies, PlainHTTP: cfg.tls == nil, Refused: func(limit string) { refused.Inc(limit) }})
	m.NewGaugeFunc("worldid_connections_open", "Open connections, by listener.", func(report func(float64, ...string)) {
		report(float64(publicConns.Open()), "public")
	}, "server")
	publicHandler := forwarded.Middleware(cfg.trustedProxies, instrument.Wrap("public", public))
	if cfg.tls != nil {
		publicHandler = withHSTS(publicHandler)
	}
	s.serve("public", publicConns, publicHandler, cfg.tls)
	s.serve("admin", adminLn, instrument.Wrap("admin", adminMux), nil)

	if err := s.finishFirstStart(ctx, cfg, stdout); err != nil {
		return nil, fmt.Errorf("first start: %w", err)
	}
	printListeners(stdout, listenerURL, s.cfg.BaseURL, s.adminURL, filepath.Join(cfg.DataDir, AdminTokenFile))
	printBridge(stdout, s.cfg)
	log.Info("started", "public", s.cfg.BaseURL, "admin", s.adminURL, "data", cfg.DataDir, "bridge", s.cfg.relayURL())
	return s, nil
}

// BridgeURL is the base URL of the Wallet Bridge relay sign-in uses.
func (s *Server) BridgeURL() string { return s.cfg.relayURL() }

// BaseURL is the public URL of the sign-in interface.
func (s *Server) BaseURL() string { return s.cfg.BaseURL }

// AdminURL is the admin listener's URL.
func (s *Server) AdminURL() string { return s.adminURL }

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return s.cfg.DataDir }

// background runs fn until shutdown.
func (s *Server) background(ctx context.Context, fn func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	s.closers = append(s.closers, func() error { cancel(); <-done; return nil })
}

// every runs fn every interval until shutdown.
func (s *Server) every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	s.background(ctx, func(ctx context.Context) {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	})
}

// listen binds addr; setting names the flag in errors.
func (s *Server) listen(addr, setting string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	s.closers = append(s.closers, func() error { ln.Close(); return nil })
	return ln, nil
}

func (s *Server) serve(name string, ln net.Listener, h http.Handler, tlsConfig *tls.Config) {
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
	var open atomic.Int64 // connections not yet closed, for the shutdown's report
	hs.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	s.httpServers = append(s.httpServers, listening{name, hs, &open})
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

// Wait blocks until ctx is done or a listener fails, then shuts down.
func (s *Server) Wait(ctx context.Context) error {
	var err error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case err = <-s.errc:
		s.log.Error("listener failed", "err", err)
	}
	return errors.Join(err, s.Shutdown())
}

// Shutdown stops accepting, drains in-flight requests for at most
// -shutdown-timeout, then closes what startServer opened, newest first. A
// connection still busy when the drain time is over (a client stalling
// its request body, say) is cut: an orderly stop, logged with how many
// were cut, not a failure.
func (s *Server) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.drainTime)
	defer cancel()
	errc := make(chan error, len(s.httpServers))
	for _, l := range s.httpServers {
		go func() { errc <- s.drain(ctx, l) }()
	}
	var errs []error
	for range s.httpServers {
		errs = append(errs, <-errc)
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// listening is a started http.Server and its count of open connections.
type listening struct {
	name string
	*http.Server
	open *atomic.Int64
}

// drain shuts l down gracefully until ctx ends, then cuts what is left.
func (s *Server) drain(ctx context.Context, l listening) error {
	err := l.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	cut := l.open.Load()
	s.log.Warn("shutdown: drain time over, connections cut", "listener", l.name, "cut", cut, "drain", s.drainTime)
	return l.Close()
}

// finishFirstStart completes a data dir's first start: the demo app, if
// wanted (Config.demoAppWanted), then the record that the first start is
// done. Both choices are logged.
func (s *Server) finishFirstStart(ctx context.Context, cfg Config, stdout io.Writer) error {
	done, err := firstStartDone(cfg.DataDir)
	if err != nil || done {
		return err
	}
	if cfg.demoAppWanted(s.cfg.BaseURL) {
		created, err := createDemoApp(ctx, s.db, cfg.DataDir, stdout)
		if err != nil {
			return err
		}
		s.log.Info("first start: demo app (loopback base URL or -demo-app on)", "created", created)
	} else {
		s.log.Info("first start: no demo app (base URL off loopback, or -demo-app off); register apps with worldid app create")
	}
	return markFirstStartDone(cfg.DataDir, s.firstStart)
}

// createDemoApp registers the app a newcomer signs in to on first start and
// prints its credentials (the only time the secret is shown). The app's id
// is written to DemoAppFile before the app is stored: if this start is
// killed before the secret is printed, the next one finds the app by that
// id and prints it with a new secret, rather than leaving an app whose
// secret nobody has. A store that already has other apps gets none: a
// replica joining a shared store, or a data dir from before FirstStartFile.
func createDemoApp(ctx context.Context, db admin.Store, dir string, stdout io.Writer) (created bool, err error) {
	id, err := pendingDemoApp(dir)
	if err != nil {
		return false, err
	}
	if id != "" {
		secret, hash, err := admin.NewSecret(rand.Reader)
		if err != nil {
			return false, err
		}
		app, err := db.UpdateApp(ctx, id, func(a *record.App) error { a.SecretHash = hash; return nil })
		if err == nil {
			printDemoApp(stdout, app, secret)
			return true, nil
		}
		if !errors.Is(err, record.ErrNotFound) {
			return false, err
		}
		// Killed before the app was stored: create one now.
	}
	if apps, err := db.Apps(ctx); err != nil || len(apps) > 0 {
		return false, err
	}
	app, secret, err := admin.NewApp(rand.Reader, time.Now(), admin.CreateAppRequest{
		Name: "Demo app", RedirectURIs: []string{demoRedirectURI},
	})
	if err != nil {
		return false, err
	}
	if err := writeFileAtomic(filepath.Join(dir, DemoAppFile), []byte(app.ID+"\n"), 0o600); err != nil {
		return false, err
	}
	if err := db.CreateApp(ctx, app); err != nil {
		return false, err
	}
	printDemoApp(stdout, app, secret)
	return true, nil
}

func printDemoApp(stdout io.Writer, app record.App, secret string) {
	fmt.Fprintf(stdout, "worldid: demo app created (first start)\n  client_id     %s\n  client_secret %s\n  redirect_uri  %s\n  rp_id         %s\n",
		app.ID, secret, demoRedirectURI, app.RPID)
}

// demoRedirectURI is the demo app's callback: a loopback address where a
// developer's relying party would listen.
const demoRedirectURI = "http://localhost:3000/callback"

// startSimulator serves the simulator page and links the wait page to it,
// with a warning nobody can miss (internal/simulator doc.go).
func startSimulator(mux *http.ServeMux, trees *simulator.Trees, pkPath, listenerURL string,
	o *signin.Options, stdout io.Writer, log *slog.Logger) error {
	// Only the simulator proves in the server, so only it reads the
	// proving key (a start otherwise reads the verifying key alone).
	pk, err := readProvingKey(pkPath)
	if err != nil {
		return err
	}
	sim, err := simulator.New(listenerURL, o.Issuer, trees, pk)
	if err != nil {
		return err
	}
	sim.Register(mux)
	o.SimulatorPath, o.SimulatorAllowed = simulator.Path, sim.Allowed
	fmt.Fprintf(stdout, "worldid: WARNING: -simulator is ON. Test identities that can sign in to EVERY app are accepted while it is on.\n"+
		"worldid: WARNING: never run this in production; the simulator page %s%s answers loopback clients only.\n", listenerURL, simulator.Path)
	log.Warn("developer simulator on: test identities can sign in to every app until this process stops; never run this in production")
	return nil
}

// readProvingKey reads the local proving key file.
func readProvingKey(path string) (*prover.ProvingKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pk, err := prover.ReadProvingKey(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pk, nil
}

// printListeners tells the operator, and the tools that start a server
// (ScanListeners), where it listens.
func printListeners(stdout io.Writer, listenerURL, baseURL, adminURL, tokenFile string) {
	fmt.Fprintf(stdout, "worldid: public listener  %s\n", listenerURL)
	if baseURL != listenerURL {
		fmt.Fprintf(stdout, "worldid: base URL         %s\n", baseURL)
	}
	fmt.Fprintf(stdout, "worldid: admin listener   %s (token: %s)\n", adminURL, tokenFile)
}

// ScanListeners reads a starting server's standard output up to both
// listener lines and returns their URLs; seen, if not nil, gets every line
// read. It fails if the output ends first.
func ScanListeners(lines *bufio.Scanner, seen func(line string)) (public, admin string, err error) {
	for (public == "" || admin == "") && lines.Scan() {
		if seen != nil {
			seen(lines.Text())
		}
		switch f := strings.Fields(lines.Text()); {
		case len(f) >= 4 && f[1] == "public" && f[2] == "listener":
			public = f[3]
		case len(f) >= 4 && f[1] == "admin" && f[2] == "listener":
			admin = f[3]
		}
	}
	if public == "" || admin == "" {
		return "", "", errors.New("the server did not report its listeners")
	}
	return public, admin, nil
}
