package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"worldid/admin"
	"worldid/field"
	"worldid/record"
	"worldid/wallet"
)

// The end-to-end suite builds the real binary, runs `worldid serve` on a
// temporary data dir and drives every interface over HTTP with the wallet
// and coreos/go-oidc as an independent relying party.

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

func worldidBinary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "worldid-e2e-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "worldid")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// serverProc is a running `worldid serve`.
type serverProc struct {
	cmd         *exec.Cmd
	public, adm string
	stderr      *strings.Builder
	adminClient *admin.Client
	exited      chan error
}

func startProc(t testing.TB, dataDir string, extra ...string) *serverProc {
	t.Helper()
	args := append([]string{"serve", "-data", dataDir, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(worldidBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for (p.public == "" || p.adm == "") && lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) >= 4 && f[1] == "public":
			p.public = f[3]
		case len(f) >= 4 && f[1] == "admin":
			p.adm = f[3]
		}
	}
	if p.public == "" || p.adm == "" {
		cmd.Process.Kill()
		t.Fatalf("server did not report its listeners; stderr:\n%s", p.stderr)
	}
	go io.Copy(io.Discard, stdout)
	go func() { p.exited <- cmd.Wait() }()
	token, err := readAdminToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	p.adminClient = &admin.Client{BaseURL: p.adm, Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM and waits for a clean, bounded shutdown.
func (p *serverProc) stop(t testing.TB) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("server exited with %v; stderr:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("server did not shut down within 20s")
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

const e2eRedirect = "https://rp.example/callback"

// relyingParty is an OIDC client configured through go-oidc discovery.
type relyingParty struct {
	app      admin.CreatedApp
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
}

func newRelyingParty(t *testing.T, ctx context.Context, p *serverProc) *relyingParty {
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "e2e RP", RedirectURIs: []string{e2eRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	return connectRelyingParty(t, ctx, p, app)
}

func connectRelyingParty(t *testing.T, ctx context.Context, p *serverProc, app admin.CreatedApp) *relyingParty {
	provider, err := oidc.NewProvider(ctx, p.public)
	if err != nil {
		t.Fatalf("go-oidc discovery: %v", err)
	}
	return &relyingParty{app: app, provider: provider,
		verifier: provider.Verifier(&oidc.Config{ClientID: app.AppID}),
		oauth: oauth2.Config{ClientID: app.AppID, ClientSecret: app.ClientSecret, Endpoint: provider.Endpoint(),
			RedirectURL: e2eRedirect, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}}
}

func newWallet(t *testing.T, ctx context.Context, p *serverProc, trees ...[2]string) *wallet.Wallet {
	path := filepath.Join(t.TempDir(), "wallet.json")
	id, err := wallet.NewIdentityFile(path, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	for _, tree := range trees {
		if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: tree[0], Environment: tree[1], IdentityCommitment: field.Format(&c)}); err != nil {
			t.Fatal(err)
		}
	}
	return &wallet.Wallet{Identity: id, Server: p.public, HTTP: wallet.NewHTTPClient(), KeyCache: path + ".pk"}
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end suite builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	p := startProc(t, dataDir)
	rp := newRelyingParty(t, ctx, p)
	w := newWallet(t, ctx, p, [2]string{"orb", "production"}, [2]string{"orb", "staging"}, [2]string{"device", "production"})

	var code codeFlowResult
	t.Run("code flow with PKCE", func(t *testing.T) { code = codeFlow(t, ctx, rp, w) })
	t.Run("implicit and hybrid flows", func(t *testing.T) { implicitAndHybrid(t, ctx, rp, w) })
	var first verifyAnswer
	t.Run("verify production and staging", func(t *testing.T) { first = verifyBothEnvironments(t, ctx, p, rp, w) })

	t.Run("operator CLI", func(t *testing.T) { operatorCLI(t, p, dataDir) })
	var pinned string
	t.Run("refresh credential-only and with a PCP", func(t *testing.T) { pinned = refreshBothModes(t, ctx, p, w) })

	keysBefore := jwksKids(t, p)
	p.stop(t)
	p = startProc(t, dataDir)
	w.Server = p.public
	t.Run("state survives a restart", func(t *testing.T) {
		rp := connectRelyingParty(t, ctx, p, rp.app)
		if got := jwksKids(t, p); strings.Join(got, ",") != strings.Join(keysBefore, ",") {
			t.Errorf("signing keys changed across restart: %v → %v", keysBefore, got)
		}
		if _, err := rp.oauth.Exchange(ctx, code.code, oauth2.VerifierOption(code.verifier)); err == nil {
			t.Error("a redeemed code was accepted after restart")
		}
		again := postVerify(t, ctx, p, rp.app.RPID, []byte(first.request))
		if again.status != 200 || again.CreatedAt != first.CreatedAt || !strings.Contains(again.Message, "reuse") {
			t.Errorf("nullifier lost across restart: %+v (first %+v)", again, first)
		}
		if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(code.token)); err == nil {
			t.Error("a token revoked by code replay works after restart")
		}
		req := refreshRequest(t, ctx, w, "0x"+strings.Repeat("99", 8))
		issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, p.public)
		if err != nil {
			t.Fatal(err)
		}
		var refused *wallet.RefreshError
		if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Code != "SUB_MISMATCH" {
			t.Errorf("pinned sub %s lost across restart: %v", pinned, err)
		}
		codeFlow(t, ctx, rp, w) // and the server still signs people in
	})
}

type codeFlowResult struct {
	code, verifier string
	token          *oauth2.Token
}

func codeFlow(t *testing.T, ctx context.Context, rp *relyingParty, w *wallet.Wallet) codeFlowResult {
	verifier := oauth2.GenerateVerifier()
	state, nonce := rand.Text(), rand.Text()
	authURL := rp.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
	res, err := w.SignIn(ctx, authURL, "orb")
	if err != nil {
		t.Fatal(err)
	}
	if res.Params.Get("state") != state || !strings.HasPrefix(res.Location, e2eRedirect+"?") {
		t.Fatalf("redirect %q", res.Location)
	}
	code := res.Params.Get("code")
	tok, err := rp.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("go-oidc rejects the id_token: %v", err)
	}
	if idt.Nonce != nonce {
		t.Errorf("nonce %q, want %q", idt.Nonce, nonce)
	}
	var claims map[string]any
	idt.Claims(&claims)
	if _, err := field.ParseStrict(idt.Subject); err != nil {
		t.Errorf("sub %q is not a canonical field element: %v", idt.Subject, err)
	}
	if lvl, _ := claims[rp.provider.Endpoint().AuthURL[:strings.LastIndex(rp.provider.Endpoint().AuthURL, "/")]+"/v1"].(map[string]any); lvl["verification_level"] != "orb" {
		t.Errorf("verification level claim: %v", claims)
	}
	info, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	if info.Subject != idt.Subject || info.Email != idt.Subject+"@127.0.0.1" {
		t.Errorf("userinfo %+v for sub %s", info, idt.Subject)
	}
	if _, err := rp.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err == nil {
		t.Error("code replay accepted")
	}
	if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Error("tokens of a replayed code still work")
	}
	return codeFlowResult{code: code, verifier: verifier, token: tok}
}

func implicitAndHybrid(t *testing.T, ctx context.Context, rp *relyingParty, w *wallet.Wallet) {
	for _, tc := range []struct{ responseType, mode, level string }{
		{"id_token", "", "orb"},
		{"id_token token", "", "device"},
		{"code id_token", "", "orb"},
		{"code token", "", "orb"},
		{"code id_token token", "", "orb"},
		{"id_token", "form_post", "orb"},
		{"code id_token", "form_post", "device"},
		{"code", "form_post", "orb"},
	} {
		t.Run(tc.responseType+"/"+orNone(tc.mode), func(t *testing.T) {
			state, nonce := rand.Text(), rand.Text()
			opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.SetAuthURLParam("response_type", tc.responseType)}
			if tc.mode != "" {
				opts = append(opts, oauth2.SetAuthURLParam("response_mode", tc.mode))
			}
			res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL(state, opts...), tc.level)
			if err != nil {
				t.Fatal(err)
			}
			if tc.mode == "form_post" {
				if res.FormPage == "" || !strings.Contains(res.FormPage, `action="`+e2eRedirect+`"`) {
					t.Fatalf("expected a form_post page, got %+v", res)
				}
			} else if !strings.HasPrefix(res.Location, e2eRedirect+"#") {
				t.Fatalf("expected a fragment redirect, got %q", res.Location)
			}
			if res.Params.Get("state") != state {
				t.Fatalf("state %q", res.Params.Get("state"))
			}
			types := strings.Fields(tc.responseType)
			if has(types, "id_token") {
				idt, err := rp.verifier.Verify(ctx, res.Params.Get("id_token"))
				if err != nil {
					t.Fatalf("go-oidc rejects the id_token: %v", err)
				}
				if idt.Nonce != nonce {
					t.Errorf("nonce mismatch")
				}
				if has(types, "token") {
					if err := idt.VerifyAccessToken(res.Params.Get("access_token")); err != nil {
						t.Errorf("at_hash: %v", err)
					}
				}
			}
			if has(types, "token") {
				tok := &oauth2.Token{AccessToken: res.Params.Get("access_token"), TokenType: "Bearer"}
				if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err != nil {
					t.Errorf("userinfo with the front-channel token: %v", err)
				}
			}
			if has(types, "code") {
				if _, err := rp.oauth.Exchange(ctx, res.Params.Get("code")); err != nil {
					t.Errorf("exchange: %v", err)
				}
			}
		})
	}
}

func orNone(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

type verifyAnswer struct {
	status    int
	request   string
	Success   bool   `json:"success"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
	Nullifier string `json:"nullifier"`
}

func postVerify(t *testing.T, ctx context.Context, p *serverProc, rpID string, body []byte) verifyAnswer {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.public+"/api/v4/verify/"+rpID, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := verifyAnswer{status: resp.StatusCode, request: string(body)}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatal(err)
	}
	return a
}

func verifyBothEnvironments(t *testing.T, ctx context.Context, p *serverProc, rp *relyingParty, w *wallet.Wallet) verifyAnswer {
	var first verifyAnswer
	for _, env := range []string{"production", "staging"} {
		item, err := w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "e2e-vote", Signal: "yes", Environment: env})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": rand.Text(), "action": "e2e-vote",
			"environment": env, "responses": []wallet.ResponseItem{item}})
		a := postVerify(t, ctx, p, rp.app.RPID, body)
		if a.status != 200 || !a.Success || a.Nullifier != item.Nullifier {
			t.Fatalf("%s: %+v", env, a)
		}
		if env == "production" {
			first = a
		}
	}
	// A proof against a production root sent to staging: the trees differ
	// once a second identity joins production only.
	newWallet(t, ctx, p, [2]string{"orb", "production"})
	item, err := w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "e2e-cross", Signal: "yes"})
	if err != nil {
		t.Fatal(err)
	}
	cross, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "e2e-cross",
		"environment": "staging", "responses": []wallet.ResponseItem{item}})
	if b := postVerify(t, ctx, p, rp.app.RPID, cross); b.status != 400 || b.Code != "all_verifications_failed" {
		t.Errorf("production proof at staging: %+v", b)
	}
	// max_verifications: a fresh action limited to one use.
	if _, err := p.adminClient.SetActionLimit(ctx, admin.ActionLimitRequest{RPID: rp.app.RPID, Action: "once", MaxVerifications: 1}); err != nil {
		t.Fatal(err)
	}
	item, err = w.Prove(ctx, wallet.ProofRequest{AppID: rp.app.AppID, Action: "once", Signal: "x"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": "n", "action": "once", "responses": []wallet.ResponseItem{item}})
	if a := postVerify(t, ctx, p, rp.app.AppID, body); a.status != 200 {
		t.Fatalf("first use via app_ id: %+v", a)
	}
	if a := postVerify(t, ctx, p, rp.app.RPID, body); a.status != 400 || a.Code != "max_verifications_reached" {
		t.Fatalf("second use: %+v", a)
	}
	return first
}

func refreshRequest(t *testing.T, ctx context.Context, w *wallet.Wallet, sub string) *wallet.RefreshRequest {
	pk, err := w.ProvingKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &wallet.RefreshRequest{IssuerURL: w.Server, Identity: w.Identity, ProvingKey: pk, Sub: sub, Now: time.Now()}
}

// refreshBothModes imports the wallet's signup record and an Orb key, then
// refreshes credential-only and with a PCP; it returns the pinned sub.
func refreshBothModes(t *testing.T, ctx context.Context, p *serverProc, w *wallet.Wallet) string {
	orbKey, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Identity.Commitment()
	req := refreshRequest(t, ctx, w, "0x"+strings.Repeat("42", 8))
	issuer, err := wallet.FetchIssuerKey(ctx, w.HTTP, p.public)
	if err != nil {
		t.Fatal(err)
	}
	var refused *wallet.RefreshError
	if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Code != "NO_SIGNUP_RECORD" {
		t.Fatalf("refresh before the signup import: %v", err)
	}
	signup := record.Signup{IDCommitment: field.Format(&c), SignupID: "e2e-signup", VerifiedAt: time.Unix(1_700_000_000, 0).UTC()}
	if err := p.adminClient.ImportSignups(ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
		t.Fatal(err)
	}
	if err := p.adminClient.AddOrbKey(ctx, admin.OrbKeyRequest{OrbID: "orb-e2e", PublicKeyPEM: string(wallet.OrbKeyPEM(&orbKey.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	// Each x-zkp-proof is single use and binds its timestamp (seconds), so
	// every attempt below proves for a later second.
	req.Now = req.Now.Add(time.Second)
	cred, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		t.Fatalf("credential-only refresh: %v", err)
	}
	if cred.GenesisIssuedAt != 1_700_000_000 || cred.Claims[0].IsZero() {
		t.Errorf("credential %+v", cred)
	}
	if req.PCP, err = wallet.BuildTestPCP(rand.Reader, orbKey, "orb-e2e", "e2e-signup", time.Now()); err != nil {
		t.Fatal(err)
	}
	req.Now = req.Now.Add(time.Second)
	pcpCred, err := wallet.Refresh(ctx, w.HTTP, req, issuer)
	if err != nil {
		t.Fatalf("PCP refresh: %v", err)
	}
	if pcpCred.Claims[0] == cred.Claims[0] {
		t.Error("PCP claim equals the credential-only claim")
	}
	if err := p.adminClient.SetRefresh(ctx, false); err != nil {
		t.Fatal(err)
	}
	req.PCP, req.Now = nil, req.Now.Add(time.Second)
	if _, err := wallet.Refresh(ctx, w.HTTP, req, issuer); !errors.As(err, &refused) || refused.Status != 503 {
		t.Errorf("refresh while disabled: %v", err)
	}
	if err := p.adminClient.SetRefresh(ctx, true); err != nil {
		t.Fatal(err)
	}
	return req.Sub
}

func jwksKids(t *testing.T, p *serverProc) []string {
	resp, err := http.Get(p.public + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct{ Keys []struct{ Kid string } }
	json.NewDecoder(resp.Body).Decode(&set)
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.Kid)
	}
	return kids
}

// identityBatches adds commitments from arguments and a file through
// `identity add`: one batch request per admin.MaxIdentitiesPerRequest, each
// atomic, and a malformed or repeated commitment refused before any is sent.
func identityBatches(t *testing.T, run func(wantStatus int, args ...string) string) {
	list := filepath.Join(t.TempDir(), "commitments")
	var lines strings.Builder
	for i := range admin.MaxIdentitiesPerRequest + 1 {
		fmt.Fprintf(&lines, "%d\n\n", 1000+i) // blank lines are skipped
	}
	if err := os.WriteFile(list, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run(0, "identity", "add", "-json", "-identifier", "device", "-file", list, "0x2b")
	var added []admin.AddedIdentity
	if err := json.Unmarshal([]byte(out), &added); err != nil || len(added) != 2 ||
		added[0].Count != admin.MaxIdentitiesPerRequest || added[1].Count != 2 || added[1].Index != added[0].Index+admin.MaxIdentitiesPerRequest {
		t.Fatalf("identity add of %d commitments: %v\n%s", admin.MaxIdentitiesPerRequest+2, err, out)
	}
	next := added[1].Index + 2
	run(1, "identity", "add", "-identifier", "device", "0x2c", "44")   // one commitment twice
	run(1, "identity", "add", "-identifier", "device", "0x2c", "0x2b") // 0x2b is in the tree
	run(1, "identity", "add", "-identifier", "device", "0x2c", "0x2g")
	out = run(0, "identity", "add", "-identifier", "device", "0x2c", "0x2d")
	if want := fmt.Sprintf("added 2 to device/production at indexes %d to %d;", next, next+1); !strings.Contains(out, want) {
		t.Fatalf("after refused batches: %s, want %q", out, want)
	}
}

// operatorCLI runs the admin subcommands of the built binary against the
// server, checking output and exit statuses (1 for refused, 2 for usage).
func operatorCLI(t *testing.T, p *serverProc, dataDir string) {
	run := func(wantStatus int, args ...string) string {
		t.Helper()
		args = append(args[:2:2], append([]string{"-admin-url", p.adm, "-data", dataDir}, args[2:]...)...)
		out, err := exec.Command(worldidBinary(t), args...).CombinedOutput()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if status != wantStatus {
			t.Fatalf("worldid %v: exit %d, want %d\n%s", args, status, wantStatus, out)
		}
		return string(out)
	}
	created := run(0, "app", "create", "-json", "-name", "cli", "-redirect-uri", "https://cli.example/cb")
	var app admin.CreatedApp
	if err := json.Unmarshal([]byte(created), &app); err != nil || !strings.HasPrefix(app.ClientSecret, "sk_") {
		t.Fatalf("app create -json: %q %v", created, err)
	}
	if out := run(0, "app", "list"); !strings.Contains(out, app.AppID) || strings.Contains(out, app.ClientSecret) {
		t.Fatalf("app list:\n%s", out)
	}
	if out := run(0, "identity", "add", "-identifier", "device", "0x2a"); !strings.Contains(out, "device/production at index") {
		t.Fatalf("identity add: %s", out)
	}
	run(1, "identity", "add", "-identifier", "device", "42") // the same commitment, in decimal
	run(1, "identity", "add", "-identifier", "passport", "0x2b")
	run(2, "identity", "add")
	identityBatches(t, run)
	run(2, "identity", "remove", "0x2b")
	run(0, "action", "limit", "-rp", app.RPID, "-action", "cli", "-max", "3")
	run(0, "keys", "rotate")
	if kids := jwksKids(t, p); len(kids) != 2 {
		t.Errorf("after rotation JWKS has %d keys, want the current and the next", len(kids))
	}
	run(0, "refresh", "disable")
	run(0, "refresh", "enable")
	err := exec.Command(worldidBinary(t), "serve", "-data", t.TempDir(), "-addr", "nonsense", "-log-level", "loud").Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("invalid serve flags: %v, want exit status 2", err)
	}
}
