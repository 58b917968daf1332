package e2e

import (
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"worldid/admin"
	"worldid/bridge"
	"worldid/field"
	"worldid/internal/wallet"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

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
	// The base URL's host is an IP address: the email claim uses the
	// reserved domain, so that it stays an address (oidc Options.EmailDomain).
	if a, err := mail.ParseAddress(info.Email); err != nil || a.Address != info.Email {
		t.Errorf("email %q is not an address: %v", info.Email, err)
	}
	if info.Subject != idt.Subject || info.Email != idt.Subject+"@worldid.invalid" {
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
			if slices.Contains(types, "id_token") {
				idt, err := rp.verifier.Verify(ctx, res.Params.Get("id_token"))
				if err != nil {
					t.Fatalf("go-oidc rejects the id_token: %v", err)
				}
				if idt.Nonce != nonce {
					t.Errorf("nonce mismatch")
				}
				if slices.Contains(types, "token") {
					if err := idt.VerifyAccessToken(res.Params.Get("access_token")); err != nil {
						t.Errorf("at_hash: %v", err)
					}
				}
			}
			if slices.Contains(types, "token") {
				tok := &oauth2.Token{AccessToken: res.Params.Get("access_token"), TokenType: "Bearer"}
				if _, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err != nil {
					t.Errorf("userinfo with the front-channel token: %v", err)
				}
			}
			if slices.Contains(types, "code") {
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

func jwksKids(t *testing.T, p *serverProc) []string {
	resp, err := http.Get(p.public + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set struct{ Keys []struct{ Kid, Kty string } }
	json.NewDecoder(resp.Body).Decode(&set)
	// The RSA keys; each brings its ES256 access-token key (oidc doc.go).
	var kids []string
	ec := 0
	for _, k := range set.Keys {
		if k.Kty == "EC" {
			ec++
			continue
		}
		kids = append(kids, k.Kid)
	}
	if ec != len(kids) {
		t.Errorf("JWKS has %d RSA and %d EC keys", len(kids), ec)
	}
	return kids
}

// checkRedirectTarget fails on a Location that is neither the registered
// redirect URI with response parameters, nor the server's wait page, nor a
// path on the same server (net/http's path cleaning).
func checkRedirectTarget(t *testing.T, r reply) {
	t.Helper()
	switch loc := r.header.Get("Location"); {
	case loc == "":
	case strings.HasPrefix(loc, e2eRedirect+"?"), strings.HasPrefix(loc, e2eRedirect+"#"):
	case strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") && !strings.HasPrefix(loc, `/\`):
	case strings.HasPrefix(loc, "http://127.0.0.1:") && strings.Contains(loc, "/authorize/wait?r="): // the server's own wait page
	default:
		t.Errorf("redirect to an unvalidated target %q", loc)
	}
}

func (e *hostileEnv) authorizeURL(edit func(url.Values)) string {
	v := url.Values{"response_type": {"code"}, "client_id": {e.rp.app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}, "state": {"st"}}
	edit(v)
	return e.p.public + "/authorize?" + v.Encode()
}

func (e *hostileEnv) authorizeCases() []hostileCase {
	get := func(edit func(url.Values)) func(*testing.T) reply {
		return call(http.MethodGet, e.authorizeURL(edit), "", "")
	}
	set := func(name string, values ...string) func(url.Values) {
		return func(v url.Values) { v[name] = values }
	}
	page := func(name, code string, edit func(url.Values)) hostileCase {
		return hostileCase{name: name, send: get(edit), status: 400, code: code}
	}
	redirected := func(name, code string, edit func(url.Values)) hostileCase {
		return hostileCase{name: name, send: get(edit), status: 303, code: code}
	}
	form := url.Values{"response_type": {"code"}, "client_id": {e.rp.app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}}
	return []hostileCase{
		page("unknown client", "invalid_client", set("client_id", "app_"+strings.Repeat("0", 32))),
		page("client id traversal", "invalid_client", set("client_id", "../../admin/apps")),
		page("missing client", "required", set("client_id")),
		page("duplicate client", "invalid_request", set("client_id", e.rp.app.AppID, e.rp.app.AppID)),
		page("missing redirect_uri", "required", set("redirect_uri")),
		page("duplicate redirect_uri", "invalid_request", set("redirect_uri", e2eRedirect, e2eRedirect)),
		page("redirect_uri with a trailing slash", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"/")),
		page("redirect_uri with a query", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"?x=1")),
		page("redirect_uri with a fragment", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"#x")),
		page("redirect_uri in upper case", "invalid_redirect_uri", set("redirect_uri", strings.ToUpper(e2eRedirect))),
		page("redirect_uri of another host", "invalid_redirect_uri", set("redirect_uri", "https://evil.example/callback")),
		page("scheme-relative redirect_uri", "invalid_redirect_uri", set("redirect_uri", "//evil.example/callback")),
		page("javascript redirect_uri", "invalid_redirect_uri", set("redirect_uri", "javascript:alert(1)")),
		redirected("duplicate scope", "invalid_request", set("scope", "openid", "openid")),
		redirected("response_type token", "unsupported_response_type", set("response_type", "token")),
		redirected("missing response_type", "invalid_request", set("response_type")),
		redirected("scope without openid", "invalid_scope", set("scope", "email")),
		redirected("request object", "request_not_supported", set("request", "eyJhbGciOiJub25lIn0.e30.")),
		redirected("request_uri", "request_uri_not_supported", set("request_uri", "https://evil.example/r")),
		redirected("PKCE plain", "invalid_request", func(v url.Values) { v.Set("code_challenge", strings.Repeat("a", 43)) }),
		redirected("state of 600 bytes", "invalid_request", set("state", strings.Repeat("s", 600))),
		redirected("state with a control character", "invalid_request", set("state", "a\x00b")),
		redirected("id_token without nonce", "invalid_request", set("response_type", "id_token")),
		{name: "tokens in the query", send: get(func(v url.Values) {
			v.Set("response_type", "id_token")
			v.Set("nonce", "n")
			v.Set("response_mode", "query")
		}),
			status: 303, code: "invalid_request", check: func(t *testing.T, r reply) {
				if !strings.HasPrefix(r.header.Get("Location"), e2eRedirect+"#") {
					t.Errorf("an id_token error must use the fragment: %s", r.header.Get("Location"))
				}
			}},
		redirected("prompt none", "login_required", set("prompt", "none")),
		{name: "request object's response_mode and state", send: get(func(v url.Values) {
			v.Del("state")
			v.Set("request", "eyJhbGciOiJub25lIn0."+base64.RawURLEncoding.EncodeToString([]byte(`{"state":"obj","response_mode":"fragment"}`))+".")
		}), status: 303, code: "request_not_supported", check: func(t *testing.T, r reply) {
			if loc := r.header.Get("Location"); !strings.HasPrefix(loc, e2eRedirect+"#") || !strings.Contains(loc, "state=obj") ||
				!strings.Contains(loc, "iss=") {
				t.Errorf("the refusal must go where the object says, with its state and iss: %s", loc)
			}
		}},
		{name: "code token without nonce", send: get(set("response_type", "code token")), status: 303, code: "",
			check: func(t *testing.T, r reply) {
				if !strings.Contains(r.header.Get("Location"), "/authorize/wait?") {
					t.Errorf("code token without nonce refused: %s", r.header.Get("Location"))
				}
			}},
		redirected("code id_token without nonce", "invalid_request", set("response_type", "code id_token")),
		redirected("max_age negative", "invalid_request", set("max_age", "-1")),
		{name: "POST text/plain", send: call(http.MethodPost, e.p.public+"/authorize", "text/plain", form.Encode()), status: 415, code: "invalid_content_type"},
		{name: "POST over 64 KiB", send: call(http.MethodPost, e.p.public+"/authorize", "application/x-www-form-urlencoded", form.Encode()+"&nonce="+strings.Repeat("n", 64<<10)), status: 413, code: "request_too_large"},
		{name: "PUT", send: call(http.MethodPut, e.authorizeURL(func(url.Values) {}), "", ""), status: 405, code: "method_not_allowed"},
		// net/http refuses headers over MaxHeaderBytes before any handler.
		{name: "query of 128 KiB", send: get(set("nonce", strings.Repeat("n", 128<<10))), status: 431, code: ""},
		{name: "discovery POST", send: call(http.MethodPost, e.p.public+"/.well-known/openid-configuration", "", ""), status: 405, code: "method_not_allowed"},
		// The issuer comes from the configuration, never from the request.
		{name: "discovery for a forged Host", status: 200, code: "",
			send: callRaw(e.p.public, "GET /.well-known/openid-configuration HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n", nil),
			check: func(t *testing.T, r reply) {
				var doc struct{ Issuer string }
				if json.Unmarshal(r.body, &doc) != nil || doc.Issuer != e.p.public || bytes.Contains(r.body, []byte("evil.example")) {
					t.Errorf("discovery follows the request's Host: %s", r.body)
				}
			}},
		{name: "jwks POST", send: call(http.MethodPost, e.p.public+"/jwks", "", ""), status: 405, code: "method_not_allowed"},
	}
}

// walletLinkRE finds the wait page's link: the connect URL of its Wallet
// Bridge request.
var walletLinkRE = regexp.MustCompile(`<a id="wallet-link"[^>]* href="(https://(?:staging\.)?world\.org/verify\?t=wld[^"]*)"`)

// pendingBrowser is a browser at its wait page: the page's URL (the one
// carrying its bridge request), the binding cookie, and the page's
// connect URL.
type pendingBrowser struct {
	waitURL, cookie string
	connect         string
}

// openPending runs GET /authorize as a browser and loads the wait page,
// following its redirect to itself; safe on any goroutine.
func openPending(authorizeURL string) (pendingBrowser, error) {
	var b pendingBrowser
	r, err := get(authorizeURL, "")
	if err != nil {
		return b, err
	}
	cookie, err := http.ParseSetCookie(r.header.Get("Set-Cookie"))
	if r.status != http.StatusSeeOther || err != nil {
		return b, fmt.Errorf("authorize: %d %s %.300s", r.status, r.header.Get("Location"), r.body)
	}
	b.waitURL, b.cookie = r.header.Get("Location"), cookie.Name+"="+cookie.Value
	return b, b.show()
}

// show loads the wait page and reads its link (a page whose bridge
// request the relay forgot shows a fresh one).
func (b *pendingBrowser) show() error {
	page, err := b.load()
	if err != nil {
		return err
	}
	m := walletLinkRE.FindSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		return fmt.Errorf("wait page: %d %.300s", page.status, page.body)
	}
	b.connect = html.UnescapeString(string(m[1]))
	return nil
}

// load GETs the wait page, following its redirects to itself (the first
// showing creates the bridge request), and keeps the last URL.
func (b *pendingBrowser) load() (reply, error) {
	for range 3 {
		r, err := get(b.waitURL, b.cookie)
		if err != nil || r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "/authorize/wait?") {
			return r, err
		}
		b.waitURL = r.header.Get("Location")
	}
	return reply{}, errors.New("the wait page keeps redirecting")
}

// statusURL is the page's polling URL.
func (b pendingBrowser) statusURL() string {
	return strings.Replace(b.waitURL, "/authorize/wait?", "/authorize/status?", 1)
}

// state polls the page's status once, as its script does.
func (b pendingBrowser) state() (string, error) {
	r, err := get(b.statusURL(), b.cookie)
	if err != nil {
		return "", err
	}
	var s struct{ State string }
	if r.status != http.StatusOK || json.Unmarshal(r.body, &s) != nil {
		return "", fmt.Errorf("status: %d %s", r.status, r.body)
	}
	return s.State, nil
}

// awaitState polls the status (every 100 ms, as a page would, with a
// deadline) until it is no longer pending or scanned, and returns it.
func (b pendingBrowser) awaitState() (string, error) {
	var s string
	var err error
	eventually(20*time.Second, 100*time.Millisecond, func() bool {
		s, err = b.state()
		return err != nil || s != "pending" && s != "scanned" && s != "unavailable"
	})
	if err == nil && (s == "pending" || s == "scanned" || s == "unavailable") {
		err = errors.New("the sign-in stayed " + s)
	}
	return s, err
}

// finishWhenDone waits for the page's status to say done, then reloads
// the page, as its script does: the authorization response.
func (b pendingBrowser) finishWhenDone() (reply, error) {
	s, err := b.awaitState()
	if err != nil {
		return reply{}, err
	}
	if s != "done" {
		return reply{}, errors.New("the sign-in is " + s)
	}
	return b.finish()
}

// read is the wallet's read of the page's bridge request.
func (b pendingBrowser) read(t *testing.T, ctx context.Context, w *wallet.Wallet) wallet.BridgeRequest {
	t.Helper()
	r, err := w.ReadBridgeRequest(ctx, b.connect)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func get(target, cookie string) (reply, error) {
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return reply{}, err
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	return roundTrip(req)
}

// pendingSignin is openPending for the test goroutine.
func pendingSignin(t *testing.T, authorizeURL string) pendingBrowser {
	t.Helper()
	b, err := openPending(authorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// finish reloads the wait page: the authorization response once the
// wallet has approved; safe on any goroutine.
func (b pendingBrowser) finish() (reply, error) { return get(b.waitURL, b.cookie) }

// hostileSignin feeds the sign-in's bridge side bad input: the relay's
// routes (oversize, wrong type, unknown ids, a second answer), and answers
// the page must refuse (one that does not decrypt, one replayed from
// another sign-in, proofs for another signal, action or app, a wallet's
// error code). None writes to the store, and the relying party's request
// survives each: Try again, then a good answer, signs in.
func (e *hostileEnv) hostileSignin(t *testing.T) {
	relay := e.p.public
	put := func(id, contentType, body string) func(*testing.T) reply {
		return call(http.MethodPut, relay+"/response/"+id, contentType, body)
	}
	pending := func(t *testing.T) (pendingBrowser, bridge.Connect) {
		t.Helper()
		b := pendingSignin(t, e.authorizeURL(func(url.Values) {}))
		conn, err := bridge.ParseConnect(b.connect)
		if err != nil {
			t.Fatal(err)
		}
		return b, conn
	}
	sealed := func(t *testing.T, key bridge.Key, v any) string {
		t.Helper()
		pt, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		env, err := key.Seal(rand.Reader, pt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(env)
		return string(b)
	}
	// settled answers the page's status once it is no longer waiting.
	settled := func(b pendingBrowser) func(*testing.T) reply {
		return func(t *testing.T) reply {
			t.Helper()
			if _, err := b.awaitState(); err != nil {
				t.Fatal(err)
			}
			return call(http.MethodGet, b.statusURL(), "", "", "Cookie", b.cookie)(t)
		}
	}
	state := func(want string) func(*testing.T, reply) {
		return func(t *testing.T, r reply) {
			if !strings.Contains(string(r.body), `"state":"`+want+`"`) {
				t.Errorf("status %s, want state %s", r.body, want)
			}
		}
	}
	// answerFor reads b's request as the wallet, edits it, and answers
	// with a real proof for the edited request.
	answerFor := func(b pendingBrowser, edit func(*bridge.Request)) func(*testing.T) reply {
		return func(t *testing.T) reply {
			t.Helper()
			r := b.read(t, e.ctx, e.w)
			edit(&r.Request)
			if _, err := e.w.AnswerBridgeRequest(e.ctx, r, "orb", rand.Reader); err != nil {
				t.Fatal(err)
			}
			return settled(b)(t)
		}
	}

	main, conn := pending(t)
	other, otherConn := pending(t)
	undecryptable, undecryptableConn := pending(t)
	_, twice := pending(t)
	action, _ := pending(t)
	app, _ := pending(t)
	declined, _ := pending(t)
	signal := main
	wrongKey := bridge.Key{1}
	runHostile(t, e.dataDir, []hostileCase{
		{name: "PUT /response text/plain", send: put(conn.RequestID, "text/plain", `{"iv":"","payload":""}`), status: 415},
		{name: "PUT /response over 64 KiB", send: put(conn.RequestID, "application/json", `{"iv":"`+strings.Repeat("A", 64<<10)+`","payload":""}`), status: 413},
		{name: "PUT /response unknown id", send: put("0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", "application/json", `{"iv":"AAAA","payload":"AAAA"}`), status: 400},
		{name: "GET /response unknown id", send: call(http.MethodGet, relay+"/response/0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", "", ""), status: 404},
		{name: "GET /request id too short", send: call(http.MethodGet, relay+"/request/short", "", ""), status: 400},
		{name: "status without the cookie", send: call(http.MethodGet, main.statusURL(), "", ""), status: 403, code: "other_browser"},
		{name: "status of a damaged token", send: call(http.MethodGet, e.p.public+"/authorize/status?r=AAAA", "", "", "Cookie", main.cookie), status: 400, code: "invalid_request"},
		{name: "answer that does not decrypt", send: func(t *testing.T) reply {
			put(undecryptableConn.RequestID, "application/json", sealed(t, wrongKey, bridge.Response{ErrorCode: "x"}))(t)
			return settled(undecryptable)(t)
		}, status: 200, check: state("refused")},
		{name: "answer replayed from another sign-in", send: func(t *testing.T) reply {
			if r := put(otherConn.RequestID, "application/json", sealed(t, conn.Key, bridge.Response{ErrorCode: "x"}))(t); r.status != http.StatusCreated {
				t.Fatalf("PUT: %d", r.status)
			}
			return settled(other)(t)
		}, status: 200, check: state("refused")},
		{name: "PUT /response twice", send: func(t *testing.T) reply {
			body := sealed(t, twice.Key, bridge.Response{ErrorCode: "x"})
			if r := put(twice.RequestID, "application/json", body)(t); r.status != http.StatusCreated {
				t.Fatalf("first PUT: %d", r.status)
			}
			return put(twice.RequestID, "application/json", body)(t)
		}, status: 409},
		{name: "PUT /response after the answer was taken", send: put(otherConn.RequestID, "application/json", sealed(t, otherConn.Key, bridge.Response{ErrorCode: "x"})), status: 400},
		{name: "proof for another signal", send: answerFor(signal, func(r *bridge.Request) { r.Signal = "0x01" }), status: 200, check: state("refused")},
		{name: "proof for another action", send: answerFor(action, func(r *bridge.Request) { r.Action = "other" }), status: 200, check: state("refused")},
		{name: "proof for another app", send: answerFor(app, func(r *bridge.Request) { r.AppID = "app_" + strings.Repeat("0", 32) }), status: 200, check: state("refused")},
		{name: "wallet declines", send: func(t *testing.T) reply {
			if err := e.w.RefuseBridgeRequest(e.ctx, declined.read(t, e.ctx, e.w), bridge.ErrCodeVerificationRejected, rand.Reader); err != nil {
				t.Fatal(err)
			}
			return settled(declined)(t)
		}, status: 200, check: state("wallet_error")},
		{name: "refused page without a bridge call", send: call(http.MethodGet, signal.waitURL, "", "", "Cookie", signal.cookie), status: 200},
		{name: "anonymous authorization request", send: call(http.MethodGet, e.authorizeURL(func(url.Values) {}), "", ""), status: 303},
	})
	// The relying party's request survived the refused proof: Try again
	// gives the page a fresh bridge request, and a good answer signs in.
	r := call(http.MethodPost, e.p.public+"/authorize/retry", "application/x-www-form-urlencoded",
		url.Values{"r": {mustQuery(t, signal.waitURL).Get("r")}}.Encode(), "Cookie", signal.cookie)(t)
	if r.status != http.StatusSeeOther {
		t.Fatalf("Try again: %d %s", r.status, r.body)
	}
	signal.waitURL = r.header.Get("Location")
	if err := signal.show(); err != nil {
		t.Fatal(err)
	}
	if err := e.w.Approve(e.ctx, signal.connect, "orb"); err != nil {
		t.Fatal(err)
	}
	if r, err := signal.finishWhenDone(); err != nil || codeOf(r) == "" {
		t.Fatalf("the sign-in after Try again: %v %d %s", err, r.status, r.header.Get("Location"))
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// signInCode signs the wallet in with PKCE and returns the code.
func (e *hostileEnv) signInCode(t *testing.T) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	res, err := e.w.SignIn(e.ctx, e.rp.oauth.AuthCodeURL("st", oidc.Nonce("n"), oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatal(err)
	}
	if code = res.Params.Get("code"); code == "" {
		t.Fatalf("no code: %s", res.Location)
	}
	return code, verifier
}

// hostileTokens covers /token, /userinfo and /introspect; the code replay
// that revokes the first sign-in's tokens comes last.
func (e *hostileEnv) hostileTokens(t *testing.T) {
	code1, verifier1 := e.signInCode(t)
	tok, err := e.rp.oauth.Exchange(e.ctx, code1, oauth2.VerifierOption(verifier1))
	if err != nil {
		t.Fatal(err)
	}
	at := tok.AccessToken
	idToken, _ := tok.Extra("id_token").(string)
	t.Run("userinfo", func(t *testing.T) { runHostile(t, e.dataDir, e.userinfoCases(t, at, idToken)) })
	t.Run("introspect", func(t *testing.T) { runHostile(t, e.dataDir, e.introspectCases(t, at, idToken)) })
	code2, verifier2 := e.signInCode(t)
	code3, verifier3 := e.signInCode(t)
	code4, _ := e.signInCode(t)
	t.Run("token", func(t *testing.T) {
		runHostile(t, e.dataDir, e.tokenCases(code1, verifier1, code2, verifier2, code3, verifier3, code4))
	})
	t.Run("tokens revoked by the replay", func(t *testing.T) {
		runHostile(t, e.dataDir, []hostileCase{
			{name: "userinfo", send: call(http.MethodGet, e.p.public+"/userinfo", "", "", "Authorization", "Bearer "+at), status: 401, code: "invalid_token"},
			{name: "introspect", send: e.introspect(e.rp.app, at), status: 200, code: "", check: activeIs(false)},
		})
	})
}

func (e *hostileEnv) tokenCases(code1, verifier1, code2, verifier2, code3, verifier3, code4 string) []hostileCase {
	target := e.p.public + "/token"
	const formCT = "application/x-www-form-urlencoded"
	basic := basicAuth(e.rp.app.AppID, e.rp.app.ClientSecret)
	grant := func(code, redirect, verifier string) url.Values {
		v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}}
		if verifier != "" {
			v.Set("code_verifier", verifier)
		}
		return v
	}
	post := func(form url.Values, auth string) func(*testing.T) reply {
		return call(http.MethodPost, target, formCT, form.Encode(), "Authorization", auth)
	}
	unknown := grant(strings.Repeat("A", 43), e2eRedirect, "")
	withSecret := grant(strings.Repeat("A", 43), e2eRedirect, "")
	withSecret.Set("client_secret", e.rp.app.ClientSecret)
	noGrantType := grant(strings.Repeat("A", 43), e2eRedirect, "")
	noGrantType.Del("grant_type")
	refreshGrant := grant(strings.Repeat("A", 43), e2eRedirect, "")
	refreshGrant.Set("grant_type", "refresh_token")
	noCode := grant("", e2eRedirect, "")
	noCode.Del("code")
	return []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", unknown.Encode(), "Authorization", basic), status: 415, code: "invalid_content_type"},
		{name: "no client authentication", send: call(http.MethodPost, target, formCT, unknown.Encode()), status: 401, code: "unauthenticated"},
		{name: "wrong secret", send: post(unknown, basicAuth(e.rp.app.AppID, e.other.ClientSecret)), status: 401, code: "unauthenticated"},
		{name: "unknown client", send: post(unknown, basicAuth("app_"+strings.Repeat("0", 32), e.rp.app.ClientSecret)), status: 401, code: "unauthenticated"},
		{name: "Basic and client_secret", send: post(withSecret, basic), status: 400, code: "invalid_request"},
		{name: "duplicate code", send: call(http.MethodPost, target, formCT, unknown.Encode()+"&code=x", "Authorization", basic), status: 400, code: "invalid_request"},
		{name: "refresh_token grant", send: post(refreshGrant, basic), status: 400, code: "invalid_grant_type"},
		{name: "missing grant_type", send: post(noGrantType, basic), status: 400, code: "required"},
		{name: "missing code", send: post(noCode, basic), status: 400, code: "required"},
		{name: "unknown code", send: post(unknown, basic), status: 400, code: "invalid_grant"},
		{name: "malformed verifier", send: post(grant(code2, e2eRedirect, "short"), basic), status: 400, code: "invalid_request"},
		{name: "over 64 KiB", send: post(grant(strings.Repeat("A", 64<<10), e2eRedirect, ""), basic), status: 413, code: "request_too_large"},
		// Every binding is checked before the code is spent (oidc doc.go):
		// a failed call writes nothing and the code still redeems.
		{name: "redirect_uri mismatch", send: post(grant(code2, e2eRedirect+"/", verifier2), basic), status: 400, code: "invalid_grant"},
		{name: "code presented correctly after a failure", send: post(grant(code2, e2eRedirect, verifier2), basic), status: 200, code: "", writes: 1},
		{name: "wrong PKCE verifier", send: post(grant(code3, e2eRedirect, verifier1), basic), status: 400, code: "invalid_grant"},
		{name: "code of another client", send: post(grant(code4, e2eRedirect, ""), basicAuth(e.other.AppID, e.other.ClientSecret)), status: 400, code: "invalid_grant"},
		{name: "missing PKCE verifier", send: post(grant(code3, e2eRedirect, ""), basic), status: 400, code: "invalid_grant"},
		{name: "right verifier after failures", send: post(grant(code3, e2eRedirect, verifier3), basic), status: 200, code: "", writes: 1},
		// Replay revokes every token of the first sign-in (one write).
		{name: "code replay", send: post(grant(code1, e2eRedirect, verifier1), basic), status: 400, code: "invalid_grant", writes: 1},
	}
}

// forgeries are access tokens an attacker can make from a real one.
func forgeries(t *testing.T, at, idToken string) map[string]string {
	t.Helper()
	parts := strings.Split(at, ".")
	var header struct{ Kid string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if json.Unmarshal(hb, &header) != nil || header.Kid == "" {
		t.Fatalf("access token header %s", hb)
	}
	hdr := func(alg, extra string) string {
		return b64url(`{"alg":"` + alg + `","kid":"` + header.Kid + `","typ":"at+jwt"` + extra + `}`)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(payload, &claims)
	claims["sub"] = "0x" + strings.Repeat("0", 63) + "1"
	tampered, _ := json.Marshal(claims)

	mac := hmac.New(sha256.New, []byte(header.Kid))
	mac.Write([]byte(hdr("HS256", "") + "." + parts[1]))
	foreignKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	foreignSig, err := rsa.SignPKCS1v15(nil, foreignKey, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"alg none":         hdr("none", "") + "." + parts[1] + ".",
		"HS256":            hdr("HS256", "") + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)),
		"foreign RSA key":  parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(foreignSig),
		"tampered payload": parts[0] + "." + base64.RawURLEncoding.EncodeToString(tampered) + "." + parts[2],
		"jku header":       hdr("RS256", `,"jku":"https://evil.example/jwks"`) + "." + parts[1] + "." + parts[2],
		"padded signature": at + "=",
		"ID token":         idToken,
		"over 8 KiB":       parts[0] + "." + b64url(`{"x":"`+strings.Repeat("x", 8<<10)+`"}`) + "." + parts[2],
	}
}

func (e *hostileEnv) userinfoCases(t *testing.T, at, idToken string) []hostileCase {
	target := e.p.public + "/userinfo"
	bearer := func(token string) func(*testing.T) reply {
		return call(http.MethodGet, target, "", "", "Authorization", "Bearer "+token)
	}
	cases := []hostileCase{
		{name: "valid token (control)", send: bearer(at), status: 200, code: ""},
		{name: "no token", send: call(http.MethodGet, target, "", ""), status: 401, code: "unauthenticated"},
		{name: "Basic scheme", send: call(http.MethodGet, target, "", "", "Authorization", "Basic "+at), status: 401, code: "unauthenticated"},
		{name: "token in the query", send: call(http.MethodGet, target+"?access_token="+at, "", ""), status: 401, code: "unauthenticated"},
		{name: "header and body", send: call(http.MethodPost, target, "application/x-www-form-urlencoded", "access_token="+at, "Authorization", "Bearer "+at), status: 400, code: "invalid_request"},
		{name: "body as text/plain", send: call(http.MethodPost, target, "text/plain", "access_token="+at), status: 415, code: "invalid_content_type"},
		{name: "PUT", send: call(http.MethodPut, target, "", "", "Authorization", "Bearer "+at), status: 405, code: "method_not_allowed"},
	}
	for name, token := range forgeries(t, at, idToken) {
		cases = append(cases, hostileCase{name: name, send: bearer(token), status: 401, code: "invalid_token"})
	}
	return cases
}

func (e *hostileEnv) introspect(app admin.CreatedApp, token string) func(*testing.T) reply {
	return call(http.MethodPost, e.p.public+"/introspect", "application/x-www-form-urlencoded", url.Values{"token": {token}}.Encode(),
		"Authorization", basicAuth(app.AppID, app.ClientSecret))
}

func activeIs(want bool) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct{ Active *bool }
		if json.Unmarshal(r.body, &b) != nil || b.Active == nil || *b.Active != want {
			t.Errorf("introspection %s, want active %v", r.body, want)
		}
	}
}

func (e *hostileEnv) introspectCases(t *testing.T, at, idToken string) []hostileCase {
	target := e.p.public + "/introspect"
	const formCT = "application/x-www-form-urlencoded"
	basic := basicAuth(e.rp.app.AppID, e.rp.app.ClientSecret)
	cases := []hostileCase{
		{name: "own token (control)", send: e.introspect(e.rp.app, at), status: 200, code: "", check: activeIs(true)},
		{name: "another client's token", send: e.introspect(e.other, at), status: 200, code: "", check: activeIs(false)},
		{name: "no client authentication", send: call(http.MethodPost, target, formCT, "token="+at), status: 401, code: "unauthenticated"},
		{name: "GET", send: call(http.MethodGet, target, "", "", "Authorization", basic), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", "token="+at, "Authorization", basic), status: 415, code: "invalid_content_type"},
		{name: "missing token", send: call(http.MethodPost, target, formCT, "token_type_hint=access_token", "Authorization", basic), status: 400, code: "required"},
		{name: "duplicate token", send: call(http.MethodPost, target, formCT, "token="+at+"&token="+at, "Authorization", basic), status: 400, code: "invalid_request"},
	}
	for name, token := range forgeries(t, at, idToken) {
		cases = append(cases, hostileCase{name: name, send: e.introspect(e.rp.app, token), status: 200, code: "", check: activeIs(false)})
	}
	return cases
}

// TestHostileTokenLifetimeAndIssuer refuses expired codes, sign-in
// requests and tokens, tokens from the future and tokens of another
// issuer. It runs in process with a settable clock (signinHarness in
// concurrency_test.go), since the binary reads the real one.
func TestHostileTokenLifetimeAndIssuer(t *testing.T) {
	a, b := newSigninHarness(t), newSigninHarness(t)
	tok, err := a.issue()
	if err != nil {
		t.Fatal(err)
	}
	issuedAt := a.clock.Now()
	foreign, err := b.issue()
	if err != nil {
		t.Fatal(err)
	}
	expect := func(name, token string, status int, code string, active bool) {
		t.Helper()
		if r := a.userinfo(t, token); r.status != status || r.errorCode() != code {
			t.Errorf("%s: userinfo %d %q, want %d %q", name, r.status, r.errorCode(), status, code)
		}
		if r := a.introspect(t, token); r.status != http.StatusOK || bytes.Contains(r.body, []byte(`"active":true`)) != active {
			t.Errorf("%s: introspection %d %s, want active %v", name, r.status, r.body, active)
		}
	}
	expect("fresh token", tok.AccessToken, 200, "", true)
	expect("another issuer's token", foreign.AccessToken, 401, "invalid_token", false)
	a.clock.Set(issuedAt.Add(3599 * time.Second))
	expect("token in its last second", tok.AccessToken, 200, "", true)
	a.clock.Set(issuedAt.Add(3600 * time.Second))
	expect("expired token", tok.AccessToken, 401, "invalid_token", false)
	a.clock.Set(issuedAt.Add(-2 * time.Minute))
	expect("token issued in the future", tok.AccessToken, 401, "invalid_token", false)

	a.clock.Set(issuedAt)
	code, err := a.signIn(randomFE())
	if err != nil {
		t.Fatal(err)
	}
	pending := pendingSignin(t, a.authorizeURL())
	a.clock.Add(10 * time.Minute)
	if r, _, err := a.exchange(code); err != nil || r.status != http.StatusBadRequest || r.errorCode() != "invalid_grant" {
		t.Errorf("expired code: %v %d %s", err, r.status, r.body)
	}
	// The wallet answers too late (if the relay still takes the answer):
	// the page says the request expired, and nothing was approved.
	_ = a.answer(t.Context(), pending, randomFE())
	if r, err := pending.finish(); err != nil || r.status != http.StatusGone || !bytes.Contains(r.body, []byte(`id="restart"`)) {
		t.Errorf("expired wait page: %v %d %s", err, r.status, r.body)
	}
}

// TestWalletSigninCommand runs `worldid wallet signin URL` as a script
// would: it plays browser and wallet, and its last line is the final
// redirect URL, or for form_post the auto-submitting page ends the output.
func TestWalletSigninCommand(t *testing.T) {
	ctx := context.Background()
	p := startProc(t, hardenedDataDir(t))
	rp := newRelyingParty(t, ctx, p)
	file := filepath.Join(t.TempDir(), "wallet.json")
	id, err := wallet.NewIdentityFile(file, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: "orb", Environment: "production", IdentityCommitment: field.Format(&c)}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sharedKeyFile(t), file+".pk"); err != nil {
		t.Fatal(err)
	}
	run := func(authURL string) string {
		t.Helper()
		out, err := exec.Command(worldidBinary(t), "wallet", "signin", "-wallet", file, "-server", p.public, authURL).Output()
		if err != nil {
			t.Fatalf("wallet signin: %v\n%s", err, out)
		}
		return strings.TrimRight(string(out), "\n")
	}
	out := run(rp.oauth.AuthCodeURL("st-cli", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	last := out[strings.LastIndexByte(out, '\n')+1:]
	u, err := url.Parse(last)
	if err != nil || !strings.HasPrefix(last, e2eRedirect+"?") || u.Query().Get("state") != "st-cli" || u.Query().Get("code") == "" {
		t.Fatalf("last line %q is not the redirect with a code; output:\n%s", last, out)
	}
	out = run(rp.oauth.AuthCodeURL("st-form", oauth2.SetAuthURLParam("response_mode", "form_post")))
	if !strings.HasSuffix(out, "</html>") || !strings.Contains(out, `<form method="post" action="`+e2eRedirect+`">`) ||
		!strings.Contains(out, `name="state" value="st-form"`) {
		t.Fatalf("form_post output:\n%s", out)
	}
}
