package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"worldid/admin"
	"worldid/field"
	"worldid/internal/cli"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/record"
)

// benchScenarios are the scenarios of `worldid-bench`, in run order.
// abuse runs alone (abuse.go).
var benchScenarios = []string{"discovery", "jwks", "verify", "signin", "token", "refresh", "abuse"}

// benchFlags configure a bench run.
type benchFlags struct {
	cli.AdminFlags
	server   string
	clients  int
	duration time.Duration
	pool     int
	batching bool
	rate     float64
	// abuse only
	serverPID int
	worldid   string
	legitRate float64
	flood     string
	// token with prepared codes
	mint  string
	codes string
	rs256 bool
	// profiling the load generator and an in-process server
	cpuProfile string
}

// Main runs `worldid-bench SCENARIO...` against -server or an in-process
// server (cmd/worldid-bench).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var bf benchFlags
	fs := cli.NewFlagSet("worldid-bench", stderr)
	bf.AdminFlags.Register(fs)
	fs.StringVar(&bf.server, "server", "", "public URL of a running server, or comma-separated URLs of replicas that clients round-robin over (default: start one in-process on a throwaway data dir)")
	fs.IntVar(&bf.clients, "clients", 64, "concurrent clients")
	fs.DurationVar(&bf.duration, "duration", 10*time.Second, "how long each scenario runs (single-use scenarios also stop when their prepared requests run out)")
	fs.IntVar(&bf.pool, "n", 400, "prepared single-use requests for signin, token and refresh (each costs one proof to prepare)")
	fs.Float64Var(&bf.rate, "rate", 0, "open-loop: schedule this many requests per second (default: closed loop, each client back to back)")
	fs.BoolVar(&bf.batching, "batching", true, "in-process server only: batch concurrent Groth16 verifications")
	fs.IntVar(&bf.serverPID, "server-pid", 0, "with -server: the server's process id, to report its CPU time per request (abuse: its memory)")
	fs.StringVar(&bf.cpuProfile, "cpuprofile", "", "write a pprof CPU profile of the timed phases (this process: the load generator and the in-process server) to this file")
	fs.BoolVar(&bf.rs256, "rs256", false, "also time one RS256 signature's CPU in this process and state each scenario's server CPU per request in signatures (with -server-pid)")
	fs.StringVar(&bf.worldid, "worldid", "", "abuse without -server: the worldid binary to start as the server (default: worldid beside this command, else on PATH)")
	fs.StringVar(&bf.flood, "flood", "", "internal: run only the junk flood a spec file describes (abuse starts it as its own process)")
	fs.StringVar(&bf.mint, "mint-codes", "", "benchmark tool: with the server stopped, create an app and -n authorization codes in the -data directory's JSON store and write them to this file for -codes, then exit")
	fs.StringVar(&bf.codes, "codes", "", "token: redeem the codes of this file (written by -mint-codes, or by hand for another provider: {client_id, client_secret, redirect_uri, codes}) instead of signing in for each")
	fs.Float64Var(&bf.legitRate, "legit-rate", 2, "abuse: legitimate sign-ins and refreshes per second each (verify: ten times this); -clients is the junk clients")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: worldid-bench [flags] SCENARIO...   scenarios: %s\n", strings.Join(benchScenarios, " "))
		fs.PrintDefaults()
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.FillFromEnv(fs, os.Getenv); err != nil {
		return err
	}
	if bf.flood != "" {
		return runFlood(ctx, bf.flood, stdout)
	}
	if bf.mint != "" {
		return runMint(ctx, &bf, stdout)
	}
	scenarios := fs.Args()
	for _, s := range scenarios {
		if !has(benchScenarios, s) {
			return cli.UsageError{Err: fmt.Errorf("unknown scenario %q (have %s)", s, strings.Join(benchScenarios, " "))}
		}
	}
	if len(scenarios) == 0 {
		return cli.UsageError{Err: fmt.Errorf("name at least one scenario: %s", strings.Join(benchScenarios, " "))}
	}
	if has(scenarios, "abuse") {
		if len(scenarios) > 1 {
			return cli.UsageError{Err: errors.New("abuse runs alone")}
		}
		return runAbuse(ctx, &bf, stdout, stderr)
	}
	if bf.codes != "" && (len(scenarios) != 1 || scenarios[0] != "token") {
		return cli.UsageError{Err: errors.New("-codes is for the token scenario alone")}
	}
	env, stop, err := bf.environment(ctx, stderr)
	if err != nil {
		return err
	}
	defer stop()
	cpuPID := bf.serverPID
	if bf.server == "" {
		cpuPID = os.Getpid() // the in-process server, with the load generator
	}
	var results []Result
	for _, name := range benchScenarios {
		if !has(scenarios, name) {
			continue
		}
		op, err := env.prepare(ctx, name, bf.pool, stderr)
		if err != nil {
			return fmt.Errorf("%s: prepare: %w", name, err)
		}
		stopProfile, err := startCPUProfile(bf.cpuProfile)
		if err != nil {
			return err
		}
		r, err := runMeasured(ctx, Config{Name: name, Clients: bf.clients, Duration: bf.duration, Rate: bf.rate, Progress: stderr}, op, cpuPID)
		stopProfile()
		if err != nil {
			return fmt.Errorf("%s: server CPU: %w", name, err)
		}
		results = append(results, r)
	}
	var sig time.Duration
	if bf.rs256 {
		if sig, err = RS256CPU(); err != nil {
			return err
		}
	}
	if bf.JSON {
		return WriteJSON(stdout, results)
	}
	if err := WriteTable(stdout, results); err != nil {
		return err
	}
	writeCPU(stdout, results, sig)
	return nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// benchEnv is the server under load and the actors that drive it.
type benchEnv struct {
	base    string   // the first server: setup and preparation go here
	servers []string // client i sends its timed requests to servers[i % len]
	http    *http.Client
	admin   *admin.Client
	app     admin.CreatedApp
	wallet  *wallet.Wallet
	dir     string
	codes   []string  // produced by signin, consumed by token
	batch   CodeBatch // -codes: prepared codes for token instead
}

// environment connects to -server or starts an in-process server, then
// registers an app and a wallet identity.
func (bf *benchFlags) environment(ctx context.Context, stderr io.Writer) (*benchEnv, func(), error) {
	dir, err := os.MkdirTemp("", "worldid-bench-")
	if err != nil {
		return nil, nil, err
	}
	stops := []func(){func() { os.RemoveAll(dir) }}
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	env := &benchEnv{dir: dir, http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: bf.clients * 2, MaxIdleConnsPerHost: bf.clients * 2}}}
	if bf.server == "" {
		srv, err := startBenchServer(ctx, dir, bf.batching)
		if err != nil {
			stop()
			return nil, nil, err
		}
		stops = append(stops, func() { srv.Shutdown() })
		env.base = srv.BaseURL()
		bf.URL, bf.DataDir = srv.AdminURL(), srv.DataDir()
		fmt.Fprintf(stderr, "bench: in-process server at %s (it shares this machine's cores with the load generator)\n", env.base)
	} else {
		for _, u := range strings.Split(bf.server, ",") {
			env.servers = append(env.servers, strings.TrimRight(strings.TrimSpace(u), "/"))
		}
		env.base = env.servers[0]
	}
	if len(env.servers) == 0 {
		env.servers = []string{env.base}
	}
	if bf.codes != "" { // token alone, against any provider: no admin API needed
		env.batch, err = readCodeBatch(bf.codes)
		if err != nil {
			stop()
			return nil, nil, err
		}
		return env, stop, nil
	}
	if env.admin, err = bf.Client(); err != nil {
		stop()
		return nil, nil, err
	}
	if err := env.register(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return env, stop, nil
}

// startBenchServer runs worldid in-process with refresh rate limits off,
// since every bench request comes from one address and identity, and with
// re-issuance on, so that every refresh of an identity is timed issuing a
// credential rather than returning the one it holds.
func startBenchServer(ctx context.Context, dir string, batching bool) (*server.Server, error) {
	var cfg server.Config
	fs := flag.NewFlagSet("bench-server", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		return nil, err
	}
	cfg.DataDir, cfg.Addr, cfg.AdminAddr = filepath.Join(dir, "data"), "127.0.0.1:0", "127.0.0.1:0"
	cfg.RefreshLimits, cfg.Reissue, cfg.NoBatching = false, true, !batching
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return server.Start(ctx, cfg, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

const benchRedirect = "https://bench.example/callback"

func (e *benchEnv) register(ctx context.Context) error {
	app, err := e.admin.CreateApp(ctx, admin.CreateAppRequest{Name: "bench", RedirectURIs: []string{benchRedirect}})
	if err != nil {
		return err
	}
	e.app = app
	id, err := wallet.NewIdentityFile(filepath.Join(e.dir, "wallet.json"), rand.Reader)
	if err != nil {
		return err
	}
	c := id.Commitment()
	if _, err := e.admin.AddIdentity(ctx, admin.AddIdentityRequest{IdentityCommitment: field.Format(&c)}); err != nil {
		return err
	}
	e.wallet = &wallet.Wallet{Identity: id, Server: e.base, HTTP: wallet.NewHTTPClient()}
	return nil
}

// prepare returns the scenario's operation, doing its untimed setup.
func (e *benchEnv) prepare(ctx context.Context, name string, n int, progress io.Writer) (Op, error) {
	switch name {
	case "discovery":
		return e.getOp("/.well-known/openid-configuration"), nil
	case "jwks":
		return e.getOp("/jwks"), nil
	case "verify":
		return e.verifyOp(ctx)
	case "signin":
		return e.signinOp(ctx, n, progress)
	case "token":
		return e.tokenOp(ctx, n, progress)
	default:
		return e.refreshOp(ctx, n, progress)
	}
}

// target is where client worker sends path.
func (e *benchEnv) target(worker int, path string) string {
	return e.servers[worker%len(e.servers)] + path
}

func (e *benchEnv) getOp(path string) Op {
	return func(ctx context.Context, worker, _ int) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.target(worker, path), nil)
		return e.expect(req, http.StatusOK)
	}
}

// expect sends req and checks the status, draining the body so the
// connection is reused.
func (e *benchEnv) expect(req *http.Request, status int) error {
	return expectStatus(e.http, req, status)
}

// verifyProofs is how many distinct proofs the verify scenario cycles
// through; reuse is accepted (v4 semantics), so each stays valid.
const verifyProofs = 16

func (e *benchEnv) verifyOp(ctx context.Context) (Op, error) {
	bodies, err := parallelPrepare(ctx, verifyProofs, func(ctx context.Context, i int) ([]byte, error) {
		action := fmt.Sprintf("bench-%d", i)
		item, err := e.wallet.Prove(ctx, wallet.ProofRequest{AppID: e.app.AppID, Action: action, Signal: "bench"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "bench", "action": action, "responses": []wallet.ResponseItem{item}})
	})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, worker, seq int) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.target(worker, "/api/v4/verify/"+e.app.RPID), bytes.NewReader(bodies[(worker+seq)%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		return e.expect(req, http.StatusOK)
	}, nil
}

// signinSubmissions prepares n proven sign-ins (one proof each).
func (e *benchEnv) signinSubmissions(ctx context.Context, n int, progress io.Writer) ([]wallet.SignInSubmission, error) {
	fmt.Fprintf(progress, "bench: preparing %d sign-ins (one proof each)…\n", n)
	return parallelPrepare(ctx, n, func(ctx context.Context, i int) (wallet.SignInSubmission, error) {
		q := url.Values{"response_type": {"code"}, "client_id": {e.app.AppID}, "redirect_uri": {benchRedirect},
			"scope": {"openid"}, "state": {fmt.Sprint(i)}, "nonce": {rand.Text()}}
		return e.wallet.PrepareSignIn(ctx, e.base+"/authorize?"+q.Encode(), "orb")
	})
}

// signinOp times the wallet's submission and the browser's finish (proof
// check, approval, then code issuance at the wait page); the codes it
// yields feed the token scenario.
func (e *benchEnv) signinOp(ctx context.Context, n int, progress io.Writer) (Op, error) {
	subs, err := e.signinSubmissions(ctx, n, progress)
	if err != nil {
		return nil, err
	}
	pool := NewPool(subs)
	var mu sync.Mutex
	return func(ctx context.Context, _, _ int) error {
		s, err := pool.Take()
		if err != nil {
			return err
		}
		res, err := e.wallet.Submit(ctx, s)
		if err != nil {
			return err
		}
		if res.Params.Get("code") == "" {
			return fmt.Errorf("no code in %s", res.Location)
		}
		mu.Lock()
		e.codes = append(e.codes, res.Params.Get("code"))
		mu.Unlock()
		return nil
	}, nil
}

// tokenOp times code redemption at /token (an RS256 ID token and an ES256
// access token each).
func (e *benchEnv) tokenOp(ctx context.Context, n int, progress io.Writer) (Op, error) {
	client := CodeBatch{ClientID: e.app.AppID, ClientSecret: e.app.ClientSecret, RedirectURI: benchRedirect}
	if len(e.batch.Codes) > 0 {
		client, e.codes = e.batch, e.batch.Codes
	}
	if len(e.codes) == 0 {
		subs, err := e.signinSubmissions(ctx, n, progress)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			res, err := e.wallet.Submit(ctx, s)
			if err != nil {
				return nil, err
			}
			e.codes = append(e.codes, res.Params.Get("code"))
		}
	}
	pool := NewPool(e.codes)
	e.codes = nil
	return func(ctx context.Context, worker, _ int) error {
		code, err := pool.Take()
		if err != nil {
			return err
		}
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {client.RedirectURI}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.target(worker, "/token"), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(client.ClientID), url.QueryEscape(client.ClientSecret))
		return e.expect(req, http.StatusOK)
	}, nil
}

// refreshPerIdentity bounds the proofs one identity contributes: each
// needs its own timestamp (seconds) inside the server's ±300 s window.
const refreshPerIdentity = 200

// refreshOp times credential-only refreshes, each with its own
// x-zkp-proof. The server must run with -refresh-rate-limits=false.
func (e *benchEnv) refreshOp(ctx context.Context, n int, progress io.Writer) (Op, error) {
	fmt.Fprintf(progress, "bench: preparing %d credential-only refreshes (one proof each)…\n", n)
	pk, err := e.wallet.ProvingKey(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]wallet.RefreshRequest, (n+refreshPerIdentity-1)/refreshPerIdentity)
	var signups []record.Signup
	for i := range ids {
		id, err := wallet.NewIdentityFile(filepath.Join(e.dir, fmt.Sprintf("refresh-%d.json", i)), rand.Reader)
		if err != nil {
			return nil, err
		}
		c := id.Commitment()
		signups = append(signups, record.Signup{IDCommitment: field.Format(&c), SignupID: fmt.Sprint("bench-", i), VerifiedAt: time.Now().UTC()})
		ids[i] = wallet.RefreshRequest{IssuerURL: e.base, Identity: id, ProvingKey: pk, Sub: fmt.Sprintf("0x%x", i+1)}
	}
	if err := cli.ImportSignups(ctx, e.admin, signups); err != nil {
		return nil, err
	}
	now := time.Now()
	reqs, err := parallelPrepare(ctx, n, func(ctx context.Context, i int) (*http.Request, error) {
		r := ids[i/refreshPerIdentity]
		r.Now = now.Add(-time.Duration(i%refreshPerIdentity) * time.Second)
		return wallet.NewRefreshHTTPRequest(ctx, &r)
	})
	if err != nil {
		return nil, err
	}
	pool := NewPool(reqs)
	return func(ctx context.Context, worker, _ int) error {
		r, err := pool.Take()
		if err != nil {
			return err
		}
		body, err := r.GetBody()
		if err != nil {
			return err
		}
		req := r.Clone(ctx)
		req.Body = body
		server, err := url.Parse(e.servers[worker%len(e.servers)])
		if err != nil {
			return err
		}
		req.URL.Scheme, req.URL.Host, req.Host = server.Scheme, server.Host, server.Host
		return e.expect(req, http.StatusOK)
	}, nil
}

// parallelPrepare runs build for i in [0, n) on every core.
func parallelPrepare[T any](ctx context.Context, n int, build func(context.Context, int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, runtime.NumCPU())
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= n || ctx.Err() != nil {
					return
				}
				v, err := build(ctx, j)
				if err != nil {
					errs[w] = err
					return
				}
				out[j] = v
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
