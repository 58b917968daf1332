package oidc

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// relyingParty is an independent OIDC client (coreos/go-oidc and
// x/oauth2) talking to the fixture over HTTP.
type relyingParty struct {
	f        *fixture
	ctx      context.Context
	client   *http.Client // never follows redirects: the test plays the browser
	provider *gooidc.Provider
	verifier *gooidc.IDTokenVerifier
	conf     oauth2.Config
}

func newRelyingParty(t *testing.T, f *fixture, style oauth2.AuthStyle, scopes ...string) *relyingParty {
	t.Helper()
	client := f.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx := gooidc.ClientContext(context.Background(), client)
	provider := must(gooidc.NewProvider(ctx, f.issuer))
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = style
	return &relyingParty{
		f: f, ctx: ctx, client: client, provider: provider,
		verifier: provider.Verifier(&gooidc.Config{ClientID: testClientID, Now: f.clock.Now}),
		conf: oauth2.Config{
			ClientID: testClientID, ClientSecret: testSecret, Endpoint: endpoint,
			RedirectURL: testRedirect, Scopes: append([]string{gooidc.ScopeOpenID}, scopes...),
		},
	}
}

// authorize plays browser and wallet over HTTP: the browser (with a
// cookie jar) opens authURL and lands on the wait page; the wallet reads
// the bridge request of the page's connect URL and answers it; the browser
// reloads its wait page, whose load asks the bridge, and gets the
// response, which is returned without following it.
func (rp *relyingParty) authorize(t *testing.T, authURL, level string) *http.Response {
	t.Helper()
	browser := &http.Client{Transport: rp.client.Transport, Jar: must(cookiejar.New(nil)),
		CheckRedirect: func(r *http.Request, _ []*http.Request) error {
			if r.URL.Host != must(url.Parse(rp.f.issuer)).Host {
				return http.ErrUseLastResponse
			}
			return nil
		}}
	// Shown a second ago, so that the reload below may ask the relay.
	rp.f.clock.Advance(-time.Second)
	page := must(browser.Get(authURL))
	rp.f.clock.Advance(time.Second)
	body := string(must(io.ReadAll(page.Body)))
	page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Request.URL.Path != "/authorize/wait" {
		t.Fatalf("authorize: %d %s %s", page.StatusCode, page.Request.URL, body)
	}
	conn, req := rp.f.scan(body)
	if req.AppID != testClientID || req.Action != "" || conn.ReturnTo != page.Request.URL.String() {
		t.Fatalf("bridge request %+v from %+v", req, conn)
	}
	rp.f.answer(conn, proofAnswer(t, req, level))
	resp := must(browser.Get(page.Request.URL.String()))
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// redirectParams reads the parameters of a 303 to the redirect URI.
func redirectParams(t *testing.T, resp *http.Response, mode string) url.Values {
	t.Helper()
	if resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("want 303, got %d %s", resp.StatusCode, body)
	}
	loc := must(url.Parse(resp.Header.Get("Location")))
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != testRedirect {
		t.Fatalf("redirected to %q", got)
	}
	raw := loc.RawQuery
	if mode == modeFragment {
		raw = loc.Fragment
	}
	return must(url.ParseQuery(raw))
}

var hiddenInputRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// formPostParams reads the self-submitting form of a form_post response.
func formPostParams(t *testing.T, resp *http.Response) url.Values {
	t.Helper()
	body := string(must(io.ReadAll(resp.Body)))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("want 200, got %d %s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	m := regexp.MustCompile(`script-src 'nonce-([^']+)'`).FindStringSubmatch(csp)
	if m == nil || !strings.Contains(body, `<script nonce="`+m[1]+`">`) || !strings.HasPrefix(csp, "default-src 'none'") {
		t.Fatalf("form_post CSP %q does not match the page", csp)
	}
	if !strings.Contains(body, `<form method="post" action="`+testRedirect+`">`) || !strings.Contains(body, "<noscript>") {
		t.Fatalf("form_post page:\n%s", body)
	}
	v := url.Values{}
	for _, in := range hiddenInputRE.FindAllStringSubmatch(body, -1) {
		v.Add(in[1], html.UnescapeString(in[2]))
	}
	return v
}

func checkIdentity(t *testing.T, f *fixture, claims map[string]any, level string, scopes ...string) {
	t.Helper()
	if claims["sub"] != testNullifier {
		t.Errorf("sub = %v", claims["sub"])
	}
	likely := map[string]string{"orb": "strong", "device": "weak"}[level]
	beta, _ := claims[f.issuer+"/beta"].(map[string]any)
	if beta["likely_human"] != likely || beta["credential_type"] != level || len(beta) != 2 {
		t.Errorf("beta claim = %v", claims[f.issuer+"/beta"])
	}
	v1, _ := claims[f.issuer+"/v1"].(map[string]any)
	if v1["verification_level"] != level || len(v1) != 1 {
		t.Errorf("v1 claim = %v", claims[f.issuer+"/v1"])
	}
	want := map[string]any{}
	for _, s := range scopes {
		switch s {
		case "email":
			// The issuer's host is an IP address: the reserved domain
			// keeps the address valid (RFC 5322 dot-atom).
			want["email"] = testNullifier + "@worldid.invalid"
			if a, err := mail.ParseAddress(claims["email"].(string)); err != nil || a.Address != claims["email"] {
				t.Errorf("email %v is not an address: %v", claims["email"], err)
			}
		case "profile":
			want["name"], want["given_name"], want["family_name"] = "World ID User", "World ID", "User"
		}
	}
	for _, name := range []string{"email", "name", "given_name", "family_name"} {
		if claims[name] != want[name] {
			t.Errorf("%s = %v, want %v", name, claims[name], want[name])
		}
	}
}

func (rp *relyingParty) verifyIDToken(t *testing.T, raw, nonce string) (*gooidc.IDToken, map[string]any) {
	t.Helper()
	tok, err := rp.verifier.Verify(rp.ctx, raw)
	if err != nil {
		t.Fatalf("go-oidc rejects the ID token: %v", err)
	}
	if tok.Nonce != nonce {
		t.Fatalf("nonce = %q, want %q", tok.Nonce, nonce)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if claims["auth_time"] != float64(testStart.Unix()) || claims["jti"] == "" {
		t.Fatalf("auth_time/jti: %v", claims)
	}
	return tok, claims
}

func (rp *relyingParty) userinfo(t *testing.T, accessToken string) map[string]any {
	t.Helper()
	ui, err := rp.provider.UserInfo(rp.ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: accessToken, TokenType: "Bearer"}))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	var claims map[string]any
	if err := ui.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func (rp *relyingParty) introspect(t *testing.T, token string) map[string]any {
	t.Helper()
	req := must(http.NewRequest(http.MethodPost, rp.f.issuer+"/introspect", strings.NewReader(url.Values{"token": {token}}.Encode())))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(testClientID, testSecret)
	resp := must(rp.client.Do(req))
	defer resp.Body.Close()
	var out map[string]any
	if err := decodeJSON(resp.Body, &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("introspect: %d %v", resp.StatusCode, err)
	}
	return out
}

func TestRelyingPartyCodeFlowPKCE(t *testing.T) {
	f := newFixture(t)
	rp := newRelyingParty(t, f, oauth2.AuthStyleInHeader, "email", "profile")
	verifier := oauth2.GenerateVerifier()
	authURL := rp.conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), gooidc.Nonce("nonce-1"))
	params := redirectParams(t, rp.authorize(t, authURL, "orb"), modeQuery)
	if params.Get("state") != "state-1" || params.Get("code") == "" || params.Get("iss") != f.issuer || len(params) != 3 {
		t.Fatalf("code response: %v", params)
	}
	tok, err := rp.conf.Exchange(rp.ctx, params.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if tok.TokenType != "Bearer" || tok.Extra("scope") != "openid email profile" || tok.Extra("expires_in") != float64(3600) {
		t.Fatalf("token response: %+v", tok)
	}
	idt, claims := rp.verifyIDToken(t, tok.Extra("id_token").(string), "nonce-1")
	if claims["c_hash"] != nil || claims["at_hash"] != nil {
		t.Errorf("token endpoint ID token has c_hash/at_hash: %v", claims)
	}
	checkIdentity(t, f, claims, "orb", "email", "profile")
	if idt.Audience[0] != testClientID || len(idt.Audience) != 1 {
		t.Errorf("aud = %v", idt.Audience)
	}
	checkIdentity(t, f, rp.userinfo(t, tok.AccessToken), "orb", "email", "profile")
	in := rp.introspect(t, tok.AccessToken)
	if in["active"] != true || in["client_id"] != testClientID || in["sub"] != testNullifier || in["exp"] != float64(testStart.Unix()+3600) {
		t.Fatalf("introspection: %v", in)
	}

	// Replaying the code fails and revokes what it issued.
	_, err = rp.conf.Exchange(rp.ctx, params.Get("code"), oauth2.VerifierOption(verifier))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || re.Response.StatusCode != http.StatusBadRequest {
		t.Fatalf("replay: %v", err)
	}
	if in := rp.introspect(t, tok.AccessToken); in["active"] != false || len(in) != 1 {
		t.Fatalf("revoked token introspects as %v", in)
	}
	if _, err := rp.provider.UserInfo(rp.ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Fatal("userinfo accepts a revoked token")
	}
}

func TestRelyingPartyClientSecretPost(t *testing.T) {
	f := newFixture(t)
	rp := newRelyingParty(t, f, oauth2.AuthStyleInParams)
	params := redirectParams(t, rp.authorize(t, rp.conf.AuthCodeURL("s"), "device"), modeQuery)
	tok, err := rp.conf.Exchange(rp.ctx, params.Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	_, claims := rp.verifyIDToken(t, tok.Extra("id_token").(string), "")
	checkIdentity(t, f, claims, "device")
	checkIdentity(t, f, rp.userinfo(t, tok.AccessToken), "device")
	if c := f.checker.last(); c.Identifier != "device" || c.AppID != testClientID || c.Action != "" || c.Environment != "production" {
		t.Fatalf("claim checked: %+v", c)
	}
}

func TestRelyingPartyImplicit(t *testing.T) {
	f := newFixture(t)
	rp := newRelyingParty(t, f, oauth2.AuthStyleInHeader, "email")
	for _, rt := range []string{"id_token token", "token id_token", "id_token"} {
		t.Run(rt, func(t *testing.T) {
			authURL := rp.conf.AuthCodeURL("st", oauth2.SetAuthURLParam("response_type", rt), gooidc.Nonce("n-"+rt))
			params := redirectParams(t, rp.authorize(t, authURL, "orb"), modeFragment)
			tok, claims := rp.verifyIDToken(t, params.Get("id_token"), "n-"+rt)
			checkIdentity(t, f, claims, "orb", "email")
			if params.Get("state") != "st" || params.Has("code") || claims["c_hash"] != nil {
				t.Fatalf("params %v claims %v", params, claims)
			}
			at := params.Get("access_token")
			if rt == "id_token" {
				if at != "" || claims["at_hash"] != nil {
					t.Fatalf("id_token response carries an access token: %v", params)
				}
				return
			}
			if err := tok.VerifyAccessToken(at); err != nil || claims["at_hash"] == nil {
				t.Fatalf("at_hash: %v", err)
			}
			if params.Get("token_type") != "Bearer" || params.Get("expires_in") != "3600" || params.Get("scope") != "openid email" {
				t.Fatalf("token params: %v", params)
			}
			checkIdentity(t, f, rp.userinfo(t, at), "orb", "email")
		})
	}
}

func TestRelyingPartyHybrid(t *testing.T) {
	for _, tc := range []struct{ rt, mode string }{
		{"code id_token", ""}, {"code token", ""}, {"code id_token token", ""},
		{"code id_token", modeFormPost}, {"code id_token token", modeFormPost}, {"code", modeFormPost}, {"code", modeFragment},
	} {
		t.Run(tc.rt+"/"+tc.mode, func(t *testing.T) {
			f := newFixture(t)
			rp := newRelyingParty(t, f, oauth2.AuthStyleInHeader, "profile")
			verifier := oauth2.GenerateVerifier()
			opts := []oauth2.AuthCodeOption{oauth2.SetAuthURLParam("response_type", tc.rt), gooidc.Nonce("hn"), oauth2.S256ChallengeOption(verifier)}
			if tc.mode != "" {
				opts = append(opts, oauth2.SetAuthURLParam("response_mode", tc.mode))
			}
			resp := rp.authorize(t, rp.conf.AuthCodeURL("hs", opts...), "orb")
			var params url.Values
			if tc.mode == modeFormPost {
				params = formPostParams(t, resp)
			} else {
				params = redirectParams(t, resp, modeFragment)
			}
			code, at := params.Get("code"), params.Get("access_token")
			if code == "" || params.Get("state") != "hs" || (at != "") != slices.Contains(strings.Fields(tc.rt), "token") {
				t.Fatalf("params: %v", params)
			}
			if raw := params.Get("id_token"); raw != "" {
				tok, claims := rp.verifyIDToken(t, raw, "hn")
				if claims["c_hash"] != halfHashIndependent(code) {
					t.Fatalf("c_hash %v", claims["c_hash"])
				}
				if at != "" {
					if err := tok.VerifyAccessToken(at); err != nil {
						t.Fatal(err)
					}
				}
			}
			tok, err := rp.conf.Exchange(rp.ctx, code, oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			_, claims := rp.verifyIDToken(t, tok.Extra("id_token").(string), "hn")
			checkIdentity(t, f, claims, "orb", "profile")
			if at == "" {
				return
			}
			// The front-channel token dies with the grant when the code is replayed.
			if rp.introspect(t, at)["active"] != true {
				t.Fatal("front-channel token inactive")
			}
			if _, err := rp.conf.Exchange(rp.ctx, code, oauth2.VerifierOption(verifier)); err == nil {
				t.Fatal("code replay accepted")
			}
			if rp.introspect(t, at)["active"] != false {
				t.Fatal("front-channel token survives code replay")
			}
		})
	}
}
