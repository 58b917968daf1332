package cli

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"worldid/admin"
	"worldid/credential"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/record"
)

// Demo runs every flow against an in-process server on a free loopback
// port and a throwaway data dir, printing a transcript. It exits non-zero
// if any step fails.
func Demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg server.Config
	var verbose bool
	fs := NewFlagSet("demo", stderr)
	cfg.RegisterFlags(fs)
	fs.BoolVar(&verbose, "v", false, "show the server's log on stderr")
	if err := ParseFlags(fs, args, func(string) string { return "" }); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "worldid-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.DataDir, cfg.Addr, cfg.AdminAddr = filepath.Join(dir, "data"), "127.0.0.1:0", "127.0.0.1:0"
	if err := cfg.Validate(); err != nil {
		return err
	}
	logOut := io.Discard
	if verbose {
		logOut = stderr
	}
	d := &demo{out: stdout, dir: dir, http: &http.Client{Timeout: time.Minute}}
	d.step("Start worldid on a free loopback port (first start: data dir, keys, local Semaphore setup)")
	srv, err := server.Start(ctx, cfg, io.Discard, slog.New(slog.NewTextHandler(logOut, nil)))
	if err != nil {
		return err
	}
	defer srv.Shutdown()
	d.base = srv.BaseURL()
	token, err := server.ReadAdminToken(cfg.DataDir)
	if err != nil {
		return err
	}
	d.admin = &admin.Client{BaseURL: srv.AdminURL(), Token: token, HTTP: d.http}
	d.say("public %s, admin %s", d.base, srv.AdminURL())
	for _, run := range []func(context.Context) error{d.createApp, d.createWallet, d.signIn, d.verifyProof, d.refreshCredentials} {
		if err := run(ctx); err != nil {
			return fmt.Errorf("demo failed: %w", err)
		}
	}
	d.step("Done: every step succeeded")
	return nil
}

// demo carries the state the steps hand on to each other.
type demo struct {
	out       io.Writer
	dir, base string
	http      *http.Client
	admin     *admin.Client
	app       admin.CreatedApp
	wallet    *wallet.Wallet
	access    string
	n         int
}

const demoRedirect = "http://localhost:3000/callback"

func (d *demo) step(title string) {
	d.n++
	fmt.Fprintf(d.out, "\n==> %d. %s\n", d.n, title)
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, "    "+format+"\n", args...) }

func (d *demo) createApp(ctx context.Context) error {
	d.step("Operator registers a relying-party app (admin API)")
	app, err := d.admin.CreateApp(ctx, admin.CreateAppRequest{Name: "Demo RP", RedirectURIs: []string{demoRedirect}})
	if err != nil {
		return err
	}
	d.app = app
	d.say("client_id %s  rp_id %s  redirect_uri %s", app.AppID, app.RPID, demoRedirect)
	return nil
}

func (d *demo) createWallet(ctx context.Context) error {
	d.step("User creates a World ID wallet; the operator adds its commitment to the orb tree")
	path := filepath.Join(d.dir, "wallet.json")
	id, err := wallet.NewIdentityFile(path, rand.Reader)
	if err != nil {
		return err
	}
	c := id.Commitment()
	added, err := d.admin.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: "orb", Environment: "production", IdentityCommitment: fieldHex(c.Bytes())})
	if err != nil {
		return err
	}
	d.wallet = &wallet.Wallet{Identity: id, Server: d.base, HTTP: wallet.NewHTTPClient()}
	d.say("identity commitment %s", fieldHex(c.Bytes()))
	d.say("leaf %d of orb/production; new root %s", added.Index, added.Root)
	return nil
}

func fieldHex(b [32]byte) string { return fmt.Sprintf("0x%x", b) }

func (d *demo) signIn(ctx context.Context) error {
	d.step("Sign in with World ID: authorization code flow with PKCE (S256)")
	verifier := randomURLToken()
	challenge := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {d.app.AppID}, "redirect_uri": {demoRedirect},
		"scope": {"openid email profile"}, "state": {"st-" + randomURLToken()[:8]}, "nonce": {randomURLToken()},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])}, "code_challenge_method": {"S256"},
	}
	d.say("GET /authorize → 303 to the wait page (binding cookie), which creates its Wallet Bridge request (QR code: the connect URL); the wallet reads it from the bridge, proves (app, action \"\", the sign-in's signal) and answers through the bridge; the page's status poll fetches and verifies the answer, and the browser reloads its wait page")
	res, err := d.wallet.SignIn(ctx, d.base+"/authorize?"+q.Encode(), "orb")
	if err != nil {
		return err
	}
	if res.Params.Get("state") != q.Get("state") || res.Params.Get("code") == "" {
		return fmt.Errorf("unexpected redirect %s", res.Location)
	}
	d.say("the wait page answers 303 → %s", redact(res.Location, res.Params.Get("code")))

	form := url.Values{"grant_type": {"authorization_code"}, "code": {res.Params.Get("code")},
		"redirect_uri": {demoRedirect}, "code_verifier": {verifier}}
	var tok struct {
		AccessToken string `json:"access_token"`
		IDToken     string `json:"id_token"`
		ExpiresIn   int    `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	if err := d.postForm(ctx, "/token", form, true, &tok); err != nil {
		return err
	}
	d.say("POST /token (client_secret_basic) → access_token (%d s), id_token, scope %q", tok.ExpiresIn, tok.Scope)
	claims, kid, err := d.verifyJWT(ctx, tok.IDToken)
	if err != nil {
		return fmt.Errorf("id_token: %w", err)
	}
	if claims["nonce"] != q.Get("nonce") || claims["aud"] != d.app.AppID || claims["iss"] != d.base {
		return fmt.Errorf("id_token claims do not match the request: %v", claims)
	}
	d.say("id_token RS256 signature verified against /jwks (kid %s); claims:", kid)
	d.printJSON(claims)
	d.access = tok.AccessToken

	var info map[string]any
	if err := d.bearerPost(ctx, "/userinfo", tok.AccessToken, &info); err != nil {
		return err
	}
	d.say("POST /userinfo (Bearer) →")
	d.printJSON(info)
	var intro map[string]any
	if err := d.postForm(ctx, "/introspect", url.Values{"token": {tok.AccessToken}}, true, &intro); err != nil {
		return err
	}
	if intro["active"] != true {
		return fmt.Errorf("introspection says inactive: %v", intro)
	}
	d.say("POST /introspect →")
	d.printJSON(intro)
	if err := d.postForm(ctx, "/token", form, true, &tok); err == nil {
		return errors.New("a replayed code was accepted")
	}
	d.say("replaying the code → rejected (invalid_grant), and its tokens are revoked:")
	if err := d.postForm(ctx, "/introspect", url.Values{"token": {tok.AccessToken}}, true, &intro); err != nil || intro["active"] != false {
		return fmt.Errorf("token still active after code replay: %v %v", intro, err)
	}
	d.say("POST /introspect → {\"active\":false}")
	return nil
}

func (d *demo) verifyProof(ctx context.Context) error {
	d.step("Uniqueness proof for an action, verified at /api/v4/verify/{rp_id}")
	item, err := d.wallet.Prove(ctx, wallet.ProofRequest{AppID: d.app.AppID, Action: "vote-2026", Signal: "proposal-42"})
	if err != nil {
		return err
	}
	d.say("wallet proof: nullifier %s, root %s", item.Nullifier, item.MerkleRoot)
	body, _ := json.Marshal(map[string]any{"protocol_version": "3.0", "nonce": randomURLToken(), "action": "vote-2026",
		"environment": "production", "responses": []wallet.ResponseItem{item}})
	for _, attempt := range []string{"first use", "second use"} {
		var out struct {
			Success   bool   `json:"success"`
			Message   string `json:"message"`
			CreatedAt string `json:"created_at"`
		}
		if err := d.postJSON(ctx, "/api/v4/verify/"+d.app.RPID, body, &out); err != nil {
			return err
		}
		if !out.Success {
			return fmt.Errorf("verification failed: %+v", out)
		}
		d.say("%s → success, %q, created_at %s", attempt, out.Message, out.CreatedAt)
	}
	return nil
}

func (d *demo) refreshCredentials(ctx context.Context) error {
	d.step("Proof-of-human credential refresh (/api/v1/refresh): credential-only, then with a PCP")
	orbKey, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		return err
	}
	const orbID, signupID = "orb-demo-1", "signup-demo-1"
	c := d.wallet.Identity.Commitment()
	signup := record.Signup{IDCommitment: fieldHex(c.Bytes()), SignupID: signupID, VerifiedAt: time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)}
	if err := d.admin.ImportSignups(ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
		return err
	}
	if err := d.admin.AddOrbKey(ctx, admin.OrbKeyRequest{OrbID: orbID, PublicKeyPEM: string(wallet.OrbKeyPEM(&orbKey.PublicKey))}); err != nil {
		return err
	}
	d.say("operator imported the signup record (enrolled %s) and trusts the test Orb key of %s", signup.VerifiedAt.Format(time.DateOnly), orbID)
	issuer, err := wallet.FetchIssuerKey(ctx, d.http, d.base)
	if err != nil {
		return err
	}
	pk, err := d.wallet.ProvingKey(ctx)
	if err != nil {
		return err
	}
	sub := "0x" + strings.Repeat("ab", 16)
	req := &wallet.RefreshRequest{IssuerURL: d.base, Identity: d.wallet.Identity, ProvingKey: pk, Sub: sub, Now: time.Now()}
	cred, err := wallet.Refresh(ctx, d.wallet.HTTP, req, issuer)
	if err != nil {
		return err
	}
	first := cred.ID
	d.say("credential-only refresh → credential id %d, sub %s, expires %s", cred.ID, fieldHex(cred.Sub.Bytes()), time.Unix(int64(cred.ExpiresAt), 0).UTC().Format(time.DateOnly))
	d.say("  claims[0] %s (sponge over idComm‖sub‖ts); EdDSA signature verified against /api/v1/refresh/issuer", fieldHex(cred.Claims[0].Bytes()))

	if req.PCP, err = wallet.BuildTestPCP(rand.Reader, orbKey, orbID, signupID, time.Now()); err != nil {
		return err
	}
	req.Now = time.Now()
	cred, err = wallet.Refresh(ctx, d.wallet.HTTP, req, issuer)
	if err != nil {
		return err
	}
	// The PCP is new evidence: the held credential-only credential is
	// replaced by one whose claims[0] commits to hashes.json.
	want, err := credential.ClaimFromBytes(req.PCP.HashesJSON)
	if err != nil {
		return err
	}
	if cred.ID == first || !cred.Claims[0].Equal(&want) {
		return fmt.Errorf("the PCP refresh returned credential %d, whose claims[0] is not the sponge over hashes.json", cred.ID)
	}
	d.say("PCP refresh (synthetic PCP v2.3, hashes.sign by the test Orb key) → new credential id %d (the held one lacked this PCP)", cred.ID)
	d.say("  claims[0] %s = sponge over hashes.json (%d bytes), checked; signature verified", fieldHex(cred.Claims[0].Bytes()), len(req.PCP.HashesJSON))

	req.PCP, req.Sub, req.Now = nil, "0x"+strings.Repeat("cd", 16), time.Now()
	_, err = wallet.Refresh(ctx, d.wallet.HTTP, req, issuer)
	var refused *wallet.RefreshError
	if !errors.As(err, &refused) || refused.Code != "SUB_MISMATCH" {
		return fmt.Errorf("a different sub was not refused: %v", err)
	}
	d.say("a refresh with a different sub → %d %s: the first refresh pinned the sub", refused.Status, refused.Code)
	return nil
}

// verifyJWT checks an RS256 JWT against the server's JWKS and returns its
// claims: the demo checks what a relying party would, with no library.
func (d *demo) verifyJWT(ctx context.Context, jwt string) (map[string]any, string, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, "", errors.New("not a JWS")
	}
	var header struct{ Alg, Kid string }
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "RS256" {
		return nil, "", fmt.Errorf("bad header %+v: %v", header, err)
	}
	var jwks struct {
		Keys []struct{ Kid, N, E string }
	}
	if err := d.get(ctx, "/jwks", &jwks); err != nil {
		return nil, "", err
	}
	for _, k := range jwks.Keys {
		if k.Kid != header.Kid {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, "", err
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
			return nil, "", err
		}
		var claims map[string]any
		return claims, k.Kid, decodeSegment(parts[1], &claims)
	}
	return nil, "", fmt.Errorf("kid %q not in /jwks", header.Kid)
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (d *demo) printJSON(v any) {
	b, _ := json.MarshalIndent(v, "      ", "  ")
	fmt.Fprintf(d.out, "      %s\n", b)
}

func randomURLToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// redact shortens a secret inside s for the transcript.
func redact(s, secret string) string {
	if len(secret) < 12 {
		return s
	}
	return strings.ReplaceAll(s, secret, secret[:6]+"…")
}

func (d *demo) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.base+path, nil)
	if err != nil {
		return err
	}
	return d.send(req, out)
}

func (d *demo) postForm(ctx context.Context, path string, form url.Values, basicAuth bool, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basicAuth {
		req.SetBasicAuth(d.app.AppID, d.app.ClientSecret)
	}
	return d.send(req, out)
}

func (d *demo) postJSON(ctx context.Context, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return d.send(req, out)
}

func (d *demo) bearerPost(ctx context.Context, path, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return d.send(req, out)
}

// send performs req; a non-2xx answer is an error carrying the body.
func (d *demo) send(req *http.Request, out any) error {
	resp, err := d.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}
