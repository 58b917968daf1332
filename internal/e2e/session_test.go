package e2e

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// TestLoginSessionThroughTheBinary: after a sign-in the browser's login
// session re-authenticates it silently (prompt=none) to the same app, with
// the first sign-in's subject and auth_time, across a restart; another app
// gets login_required; logout clears the cookie and revokes the session.
func TestLoginSessionThroughTheBinary(t *testing.T) {
	ctx := parallelEndToEnd(t, "end-to-end suite builds and runs the binary")
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	rp := newRelyingParty(t, ctx, p)
	w := newWallet(t, ctx, p, [2]string{"orb", "production"})

	verifier := oauth2.GenerateVerifier()
	res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("first", oidc.Nonce("n1"), oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatal(err)
	}
	first := exchangeAndVerify(t, ctx, rp, res.Params.Get("code"), verifier, "n1")
	browser := res.Browser

	p.stop(t)
	p = startProc(t, dataDir)
	rp = connectRelyingParty(t, ctx, p, rp.app)
	params := silentSignIn(t, browser, rp, "n2", verifier)
	if params.Get("code") == "" || params.Get("state") != "silent" || params.Get("iss") != p.public {
		t.Fatalf("prompt=none with the session after a restart: %v", params)
	}
	again := exchangeAndVerify(t, ctx, rp, params.Get("code"), verifier, "n2")
	if again.sub != first.sub || again.authTime != first.authTime || again.acr != "" {
		t.Fatalf("silent sign-in %+v, first %+v", again, first)
	}

	other := newRelyingParty(t, ctx, p)
	if params := silentSignIn(t, browser, other, "n3", verifier); params.Get("error") != "login_required" {
		t.Fatalf("prompt=none for another app: %v", params)
	}

	signOut(t, browser, p.public)
	if params := silentSignIn(t, browser, rp, "n4", verifier); params.Get("error") != "login_required" {
		t.Fatalf("prompt=none after logout: %v", params)
	}
}

var hiddenInputRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// signOut logs the browser out at /end_session without an ID token hint:
// the server asks first (a page whose form holds the answer), and the
// posted answer clears the cookie.
func signOut(t *testing.T, browser *http.Client, public string) {
	t.Helper()
	resp, err := browser.Get(public + "/end_session")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	answer := url.Values{}
	for _, m := range hiddenInputRE.FindAllStringSubmatch(string(body), -1) {
		answer.Set(m[1], html.UnescapeString(m[2]))
	}
	if resp.StatusCode != http.StatusOK || answer.Get("confirm") == "" || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("logout without a hint: %s %q, not the question:\n%s", resp.Status, resp.Header.Values("Set-Cookie"), body)
	}
	resp, err = browser.PostForm(public+"/end_session", answer)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("the answer to the sign-out question: %s %q", resp.Status, resp.Header.Values("Set-Cookie"))
	}
}

// silentSignIn sends the browser to a prompt=none request of rp and returns
// the parameters of the redirect it gets back.
func silentSignIn(t *testing.T, browser *http.Client, rp *relyingParty, nonce, verifier string) url.Values {
	t.Helper()
	resp, err := browser.Get(rp.oauth.AuthCodeURL("silent", oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("prompt", "none")))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), e2eRedirect+"?") {
		t.Fatalf("prompt=none: %s %q", resp.Status, resp.Header.Get("Location"))
	}
	return loc.Query()
}

// idClaims are the ID token claims the session must keep.
type idClaims struct {
	sub      string
	authTime int64
	acr      string
}

// exchangeAndVerify redeems a code and verifies its ID token with go-oidc.
func exchangeAndVerify(t *testing.T, ctx context.Context, rp *relyingParty, code, verifier, nonce string) idClaims {
	t.Helper()
	tok, err := rp.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil {
		t.Fatalf("go-oidc rejects the ID token: %v", err)
	}
	var c struct {
		AuthTime int64  `json:"auth_time"`
		ACR      string `json:"acr"`
	}
	if err := idt.Claims(&c); err != nil || idt.Nonce != nonce || c.AuthTime == 0 {
		t.Fatalf("ID token nonce %q, auth_time %d: %v", idt.Nonce, c.AuthTime, err)
	}
	return idClaims{sub: idt.Subject, authTime: c.AuthTime, acr: c.ACR}
}

// sessionAcrossReplicas: the login session a sign-in through A left in the
// browser re-authenticates it silently on B; logout on B revokes it for A
// too, even when a copy of the cookie is presented.
func sessionAcrossReplicas(t *testing.T, browser *http.Client, a, b *serverProc, rp *relyingParty) {
	t.Helper()
	onB := *rp
	onB.oauth.Endpoint.AuthURL = b.public + "/authorize"
	if params := silentSignIn(t, browser, &onB, "r1", oauth2.GenerateVerifier()); params.Get("code") == "" {
		t.Fatalf("prompt=none on B with A's session: %v", params)
	}
	issuer, err := url.Parse(a.public)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, c := range browser.Jar.Cookies(issuer) {
		kept = append(kept, c.Name+"="+c.Value)
	}
	signOut(t, browser, b.public)
	copied := call(http.MethodGet, rp.oauth.AuthCodeURL("silent", oidc.Nonce("r2"), oauth2.SetAuthURLParam("prompt", "none")), "", "",
		"Cookie", strings.Join(kept, "; "))(t)
	if copied.errorCode() != "login_required" {
		t.Fatalf("a copy of the session cookie after logout on B, on A: %d %s", copied.status, copied.header.Get("Location"))
	}
}
