package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"worldid/internal/wallet"
	"worldid/store/postgres/pgtest"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// The device authorization grant (RFC 8628) through the binary, with
// golang.org/x/oauth2's DeviceAuth and DeviceAccessToken as the device.

// deviceClient is rp's OAuth configuration as a device uses it: its
// endpoints from discovery, and its secret, which DeviceAuth does not send
// by itself, as client_secret_post.
func deviceClient(rp *relyingParty) (oauth2.Config, oauth2.AuthCodeOption) {
	conf := rp.oauth
	conf.Scopes = []string{oidc.ScopeOpenID, "email"}
	return conf, oauth2.SetAuthURLParam("client_secret", rp.app.ClientSecret)
}

var (
	deviceCSRFRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	userCodeRE   = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)
)

// enterUserCode plays the user's browser at the verification page:
// it opens page (verification_uri or _complete), submits the code and
// returns the browser at the wait page the sign-in started.
func enterUserCode(t *testing.T, page, userCode string) pendingBrowser {
	t.Helper()
	form := call(http.MethodGet, page, "", "")(t)
	m := deviceCSRFRE.FindSubmatch(form.body)
	csrf, err := http.ParseSetCookie(form.header.Get("Set-Cookie"))
	if form.status != http.StatusOK || m == nil || err != nil {
		t.Fatalf("device page: %d %.300s", form.status, form.body)
	}
	u, err := url.Parse(page)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = ""
	body := url.Values{"csrf": {html.UnescapeString(string(m[1]))}, "user_code": {userCode}}.Encode()
	r := call(http.MethodPost, u.String(), "application/x-www-form-urlencoded", body, "Cookie", csrf.Name+"="+csrf.Value)(t)
	binding, err := http.ParseSetCookie(r.header.Get("Set-Cookie"))
	if r.status != http.StatusSeeOther || err != nil || !strings.Contains(r.header.Get("Location"), "/authorize/wait?") {
		t.Fatalf("entering the user code: %d %s %.300s", r.status, r.header.Get("Location"), r.body)
	}
	b := pendingBrowser{waitURL: r.header.Get("Location"), cookie: binding.Name + "=" + binding.Value}
	if err := b.show(); err != nil {
		t.Fatal(err)
	}
	return b
}

// approveDevice has the wallet approve the browser's sign-in and the
// browser finish it: the verification page's outcome.
func approveDevice(t *testing.T, ctx context.Context, w *wallet.Wallet, b pendingBrowser) {
	t.Helper()
	if err := w.Approve(ctx, b.connect, "orb"); err != nil {
		t.Fatal(err)
	}
	done, err := b.finishWhenDone()
	if err != nil || done.status != http.StatusOK || !strings.Contains(string(done.body), "You are signed in on your device") {
		t.Fatalf("finish: %v %d %.300s", err, done.status, done.body)
	}
}

// pollOnce is one poll at the token endpoint of p as app.
func pollOnce(t *testing.T, tokenURL, clientID, secret, deviceCode string) (int, string) {
	t.Helper()
	r := call(http.MethodPost, tokenURL, "application/x-www-form-urlencoded",
		url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "device_code": {deviceCode},
			"client_id": {clientID}, "client_secret": {secret}}.Encode())(t)
	var body struct{ Error string }
	json.Unmarshal(r.body, &body)
	return r.status, body.Error
}

// deviceTokens waits (in the background, as a device does while its user
// signs in) for DeviceAccessToken's answer.
// (x/oauth2 authenticates the polls itself, with the config's secret.)
func deviceTokens(ctx context.Context, conf oauth2.Config, da *oauth2.DeviceAuthResponse) <-chan deviceResult {
	out := make(chan deviceResult, 1)
	go func() {
		tok, err := conf.DeviceAccessToken(ctx, da)
		out <- deviceResult{tok, err}
	}()
	return out
}

type deviceResult struct {
	tok *oauth2.Token
	err error
}

// TestDeviceFlowThroughTheBinary: a device starts the grant with
// x/oauth2, the server restarts, the user enters the code at the
// verification page and signs in with the wallet through the wait page,
// and the device's polling gets tokens go-oidc verifies, with the subject a
// code-flow sign-in of the same wallet gets. Then the negative cases:
// reuse, slow_down, another client, a refusal, expiry (in process).
func TestDeviceFlowThroughTheBinary(t *testing.T) {
	ctx := parallelEndToEnd(t, "end-to-end suite builds and runs the binary")
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	rp := newRelyingParty(t, ctx, p)
	conf, secret := deviceClient(rp)
	if conf.Endpoint.DeviceAuthURL != p.public+"/device_authorization" {
		t.Fatalf("discovery's device_authorization_endpoint %q", conf.Endpoint.DeviceAuthURL)
	}
	da, err := conf.DeviceAuth(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if !userCodeRE.MatchString(da.UserCode) || da.VerificationURI != p.public+"/device" || da.Interval != 5 ||
		da.VerificationURIComplete != p.public+"/device?user_code="+da.UserCode || time.Until(da.Expiry) < 9*time.Minute {
		t.Fatalf("device authorization %+v", da)
	}

	// The grant survives a restart (the new process listens elsewhere).
	p.stop(t)
	p = startProc(t, dataDir)
	rp = connectRelyingParty(t, ctx, p, rp.app)
	conf, _ = deviceClient(rp)
	w := newWallet(t, ctx, p, [2]string{"orb", "production"})
	polled := deviceTokens(ctx, conf, da)
	b := enterUserCode(t, p.public+"/device?"+url.Values{"user_code": {da.UserCode}}.Encode(), strings.ToLower(da.UserCode))
	approveDevice(t, ctx, w, b)
	res := <-polled
	if res.err != nil {
		t.Fatalf("DeviceAccessToken: %v", res.err)
	}
	raw, _ := res.tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("go-oidc rejects the device flow's ID token: %v", err)
	}
	var claims struct {
		AuthTime int64 `json:"auth_time"`
	}
	if err := idt.Claims(&claims); err != nil || claims.AuthTime == 0 || idt.Nonce != "" {
		t.Fatalf("ID token claims %+v, nonce %q: %v", claims, idt.Nonce, err)
	}
	verifier := oauth2.GenerateVerifier()
	signin, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("s", oidc.Nonce("n"), oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatal(err)
	}
	if code := exchangeAndVerify(t, ctx, rp, signin.Params.Get("code"), verifier, "n"); code.sub != idt.Subject {
		t.Fatalf("device flow sub %q, code flow sub %q", idt.Subject, code.sub)
	}

	tokenURL := conf.Endpoint.TokenURL
	if status, code := pollOnce(t, tokenURL, rp.app.AppID, rp.app.ClientSecret, da.DeviceCode); status != http.StatusBadRequest || code != "invalid_grant" {
		t.Fatalf("a second poll after the tokens: %d %q", status, code)
	}
	deviceNegatives(t, ctx, p, rp)
}

// deviceNegatives: polling too fast, another client's poll, and a user
// who cancels at the wait page.
func deviceNegatives(t *testing.T, ctx context.Context, p *serverProc, rp *relyingParty) {
	conf, secret := deviceClient(rp)
	tokenURL := conf.Endpoint.TokenURL
	da, err := conf.DeviceAuth(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	other := newRelyingParty(t, ctx, p)
	for i, want := range []string{"authorization_pending", "slow_down"} {
		if status, code := pollOnce(t, tokenURL, rp.app.AppID, rp.app.ClientSecret, da.DeviceCode); status != http.StatusBadRequest || code != want {
			t.Fatalf("poll %d: %d %q, want %s", i, status, code, want)
		}
	}
	if status, code := pollOnce(t, tokenURL, other.app.AppID, other.app.ClientSecret, da.DeviceCode); status != http.StatusBadRequest || code != "invalid_grant" {
		t.Fatalf("another client's poll: %d %q", status, code)
	}
	if status, code := pollOnce(t, tokenURL, rp.app.AppID, "wrong", da.DeviceCode); status != http.StatusUnauthorized || code != "invalid_client" {
		t.Fatalf("a poll with a wrong secret: %d %q", status, code)
	}

	refused, err := conf.DeviceAuth(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	polled := deviceTokens(ctx, conf, refused)
	b := enterUserCode(t, refused.VerificationURI, refused.UserCode)
	r := call(http.MethodPost, p.public+"/authorize/cancel", "application/x-www-form-urlencoded",
		url.Values{"r": {waitToken(b)}}.Encode(), "Cookie", b.cookie)(t)
	if r.status != http.StatusOK || !strings.Contains(string(r.body), "Sign-in refused") {
		t.Fatalf("cancel: %d %.300s", r.status, r.body)
	}
	res := <-polled
	var re *oauth2.RetrieveError
	if !errors.As(res.err, &re) || re.ErrorCode != "access_denied" {
		t.Fatalf("DeviceAccessToken after the refusal: %v", res.err)
	}
}

// waitToken is the sealed request in the wait page's URL.
func waitToken(b pendingBrowser) string {
	u, err := url.Parse(b.waitURL)
	if err != nil {
		panic(fmt.Sprintf("wait URL %q: %v", b.waitURL, err))
	}
	return u.Query().Get("r")
}

// TestDeviceFlowExpires: on the in-process provider's clock, a device
// code past its 10 minutes is answered expired_token, which ends x/oauth2's
// polling.
func TestDeviceFlowExpires(t *testing.T) {
	t.Parallel()
	h := newSigninHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conf := oauth2.Config{ClientID: h.app.ID, ClientSecret: h.secret, Scopes: []string{oidc.ScopeOpenID},
		Endpoint: oauth2.Endpoint{DeviceAuthURL: h.srv.URL + "/device_authorization", TokenURL: h.srv.URL + "/token", AuthStyle: oauth2.AuthStyleInHeader}}
	secret := oauth2.SetAuthURLParam("client_secret", h.secret)
	da, err := conf.DeviceAuth(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Add(10 * time.Minute)
	_, err = conf.DeviceAccessToken(ctx, da)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "expired_token" {
		t.Fatalf("DeviceAccessToken after the expiry: %v", err)
	}
}

// TestDeviceFlowAcrossReplicas: a device grant started at replica A is
// signed in through replica B and its tokens are polled at A (one
// PostgreSQL database).
func TestDeviceFlowAcrossReplicas(t *testing.T) {
	ctx := parallelEndToEnd(t, "runs two servers")
	dsn := pgtest.FreshSchema(t)
	addrA := freeLoopbackAddr(t)
	shared := []string{"-store", dsn, "-base-url", "http://" + addrA}
	a := startProc(t, hardenedDataDir(t), append([]string{"-addr", addrA}, shared...)...)
	b := startProc(t, hardenedDataDir(t), shared...)
	rp := newRelyingParty(t, ctx, a)
	conf, secret := deviceClient(rp)
	da, err := conf.DeviceAuth(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	w := newWallet(t, ctx, b, [2]string{"orb", "production"})
	polled := deviceTokens(ctx, conf, da)
	// The form at B finds the grant A stored; B finishes the sign-in.
	browser := enterUserCode(t, b.public+"/device", da.UserCode)
	browser.waitURL = strings.Replace(browser.waitURL, a.public, b.public, 1)
	approveDevice(t, ctx, w, browser)
	res := <-polled
	if res.err != nil {
		t.Fatalf("DeviceAccessToken at A after the sign-in at B: %v", res.err)
	}
	if _, err := rp.verifier.Verify(ctx, res.tok.Extra("id_token").(string)); err != nil {
		t.Fatal(err)
	}
}
