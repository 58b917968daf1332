package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"worldid/admin"
	"worldid/bridge"
	"worldid/internal/wallet"
	"worldid/record"
)

// The sign-in of a person in a real browser (oidc doc.go "Wait page"):
// headless Chromium opens a tiny relying party's login link, lands on the
// wait page, and must reach the relying party's callback by itself once
// the wallet (played by this test with package wallet) approves.

// browserPath finds Chromium or Chrome: WORLDID_TEST_BROWSER, else the
// usual names on PATH.
func browserPath(t *testing.T) string {
	if p := os.Getenv("WORLDID_TEST_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium or Chrome found: install Debian's chromium (.ci/run does) or set WORLDID_TEST_BROWSER; the browser sign-in test needs one")
	return ""
}

// testRP is a relying party as a web developer writes one: the state,
// nonce and PKCE verifier live in its own cookie; its callback takes the
// query (code flow) or a form post, redeems the code and shows who signed
// in. Its logout link sends the browser to the provider's
// end_session_endpoint (RP-Initiated Logout 1.0), which returns it to
// /signed-out.
type testRP struct {
	srv        *httptest.Server
	oauth      oauth2.Config
	verifier   *oidc.IDTokenVerifier
	endSession string       // the provider's end_session_endpoint
	client     *http.Client // reaches the provider (nil: http.DefaultClient)
	mu         sync.Mutex
	signIns    []rpSignIn // completed sign-ins, oldest first
}

// rpSignIn is a verified ID token the relying party received.
type rpSignIn struct {
	raw, sub, acr string
	authTime      int64
	amr           []string
}

const rpCookie = "rp_login"

// rpPassedParams are the authorization request parameters the login link
// passes on from its own query.
var rpPassedParams = []string{"response_mode", "prompt", "max_age", "id_token_hint"}

// newTestRP registers an app with the given profile (record.App.Profile)
// whose redirect URI is the relying party's callback and whose
// post_logout_redirect_uri is its /signed-out; ctx carries the HTTP client
// that reaches the provider (oidc.ClientContext), if not the default.
func newTestRP(t *testing.T, ctx context.Context, p *serverProc, profile string) *testRP {
	rp := &testRP{}
	if c, ok := ctx.Value(oauth2.HTTPClient).(*http.Client); ok {
		rp.client = c
	}
	mux := http.NewServeMux()
	rp.srv = httptest.NewServer(mux)
	t.Cleanup(rp.srv.Close)
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "Browser RP", RedirectURIs: []string{rp.srv.URL + "/callback"},
		SigninSettings: admin.SigninSettings{Profile: profile, PostLogoutRedirectURIs: []string{rp.srv.URL + "/signed-out"}}})
	if err != nil {
		t.Fatal(err)
	}
	provider, err := oidc.NewProvider(ctx, p.public)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := provider.Claims(&doc); err != nil || doc.EndSession == "" {
		t.Fatalf("no end_session_endpoint in discovery: %v", err)
	}
	rp.endSession = doc.EndSession
	rp.verifier = provider.Verifier(&oidc.Config{ClientID: app.AppID})
	rp.oauth = oauth2.Config{ClientID: app.AppID, ClientSecret: app.ClientSecret, Endpoint: provider.Endpoint(),
		RedirectURL: rp.srv.URL + "/callback", Scopes: []string{oidc.ScopeOpenID, "email"}}
	mux.HandleFunc("GET /login", rp.login)
	mux.HandleFunc("/callback", rp.callback)
	mux.HandleFunc("GET /logout", rp.logout)
	mux.HandleFunc("GET /signed-out", rp.signedOut)
	return rp
}

func (rp *testRP) login(w http.ResponseWriter, r *http.Request) {
	state, nonce, verifier := rand.Text(), rand.Text(), oauth2.GenerateVerifier()
	http.SetCookie(w, &http.Cookie{Name: rpCookie, Value: state + "." + nonce + "." + verifier, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)}
	for _, name := range rpPassedParams {
		if v := r.URL.Query().Get(name); v != "" {
			opts = append(opts, oauth2.SetAuthURLParam(name, v))
		}
	}
	http.Redirect(w, r, rp.oauth.AuthCodeURL(state, opts...), http.StatusFound)
}

func (rp *testRP) callback(w http.ResponseWriter, r *http.Request) {
	in, err := rp.finish(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err != nil {
		fmt.Fprintf(w, `<!doctype html><p id="rp-error">%s</p>`, html.EscapeString(err.Error()))
		return
	}
	rp.mu.Lock()
	rp.signIns = append(rp.signIns, in)
	rp.mu.Unlock()
	fmt.Fprintf(w, `<!doctype html><p id="signed-in">%s</p>`, html.EscapeString(in.sub))
}

func (rp *testRP) finish(r *http.Request) (rpSignIn, error) {
	if err := r.ParseForm(); err != nil {
		return rpSignIn{}, err
	}
	c, err := r.Cookie(rpCookie)
	if err != nil {
		return rpSignIn{}, fmt.Errorf("no login cookie: %v", err)
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 || r.Form.Get("state") != parts[0] {
		return rpSignIn{}, fmt.Errorf("state %q does not match the login cookie", r.Form.Get("state"))
	}
	if e := r.Form.Get("error"); e != "" {
		return rpSignIn{}, fmt.Errorf("error=%s", e)
	}
	ctx := r.Context()
	if rp.client != nil {
		ctx = oidc.ClientContext(ctx, rp.client)
	}
	tok, err := rp.oauth.Exchange(ctx, r.Form.Get("code"), oauth2.VerifierOption(parts[2]))
	if err != nil {
		return rpSignIn{}, err
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil {
		return rpSignIn{}, err
	}
	if idt.Nonce != parts[1] {
		return rpSignIn{}, fmt.Errorf("nonce %q", idt.Nonce)
	}
	var claims struct {
		AuthTime int64    `json:"auth_time"`
		ACR      string   `json:"acr"`
		AMR      []string `json:"amr"`
	}
	if err := idt.Claims(&claims); err != nil {
		return rpSignIn{}, err
	}
	return rpSignIn{raw: raw, sub: idt.Subject, acr: claims.ACR, authTime: claims.AuthTime, amr: claims.AMR}, nil
}

// logout sends the browser to the provider's end_session_endpoint with
// its client_id, the id_token_hint (if any) and state of its own query and
// /signed-out as the post_logout_redirect_uri.
func (rp *testRP) logout(w http.ResponseWriter, r *http.Request) {
	q := url.Values{"client_id": {rp.oauth.ClientID}, "post_logout_redirect_uri": {rp.srv.URL + "/signed-out"},
		"state": {r.URL.Query().Get("state")}}
	if hint := r.URL.Query().Get("id_token_hint"); hint != "" {
		q.Set("id_token_hint", hint)
	}
	http.Redirect(w, r, rp.endSession+"?"+q.Encode(), http.StatusFound)
}

func (rp *testRP) signedOut(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><p id="signed-out">%s</p>`, html.EscapeString(r.URL.Query().Get("state")))
}

// lastSignIn is the newest completed sign-in.
func (rp *testRP) lastSignIn(t *testing.T) rpSignIn {
	t.Helper()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if len(rp.signIns) == 0 {
		t.Fatal("no completed sign-in")
	}
	return rp.signIns[len(rp.signIns)-1]
}

// browserEnv is a server, a wallet enrolled in both trees, a relying party
// and a running browser.
type browserEnv struct {
	ctx     context.Context // carries the client that reaches the server (oidc.ClientContext)
	p       *serverProc
	w       *wallet.Wallet
	rp      *testRP
	browser context.Context // the first tab; new tabs get their own cookie jar
}

func newBrowserEnv(t *testing.T, serveFlags ...string) *browserEnv {
	return launchBrowserEnv(t, nil, serveFlags...)
}

// newHTTPSBrowserEnv is newBrowserEnv with the binary serving HTTPS under
// a self-signed certificate for 127.0.0.1 (tls_test.go): the wallet and
// the relying party trust that certificate; Chromium, which cannot be
// given a root without a system store, ignores certificate errors. Its
// relying party has the current profile (acr, amr).
func newHTTPSBrowserEnv(t *testing.T) *browserEnv {
	cert, key := selfSignedCert(t)
	pem, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("the test certificate does not parse")
	}
	return launchBrowserEnv(t, &tls.Config{RootCAs: roots}, "-tls-cert", cert, "-tls-key", key)
}

// launchBrowserEnv starts the binary with serveFlags and the browser;
// trust, when not nil, is what the test's clients trust of the server's
// HTTPS.
func launchBrowserEnv(t *testing.T, trust *tls.Config, serveFlags ...string) *browserEnv {
	exe := browserPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	p := startProc(t, hardenedDataDir(t), serveFlags...)
	t.Cleanup(func() { p.stop(t) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	profile := record.ProfileV1
	if trust != nil {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: trust}, Timeout: time.Minute}
		ctx = oidc.ClientContext(ctx, client)
		opts = append(opts, chromedp.IgnoreCertErrors)
		profile = record.ProfileCurrent
	}
	e := &browserEnv{ctx: ctx, p: p, w: keyedWallet(t, ctx, p, [2]string{"orb", "production"}, [2]string{"device", "production"})}
	if trust != nil {
		e.w.HTTP.Transport = &http.Transport{TLSClientConfig: trust}
	}
	e.rp = newTestRP(t, ctx, p, profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	e.browser = browser
	return e
}

// tab opens a tab in a browser context of its own (its own cookies), and
// records what the console says about the Content Security Policy.
func (e *browserEnv) tab(t *testing.T) (context.Context, func() []string) {
	ctx, cancel := chromedp.NewContext(e.browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	var mu sync.Mutex
	var violations []string
	chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*cdplog.EventEntryAdded); ok && strings.Contains(ev.Entry.Text, "Content Security Policy") {
			mu.Lock()
			violations = append(violations, ev.Entry.Text)
			mu.Unlock()
		}
	})
	if _, err := chromedp.Call(ctx, cdplog.Enable, struct{}{}); err != nil {
		t.Fatal(err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), violations...)
	}
}

// waitPage opens the relying party's login link and returns the wait
// page's URL and the connect URL its QR code carries (decoded from the
// page, and checked against the "Open World App" button's, which adds
// return_to: this page).
func (e *browserEnv) waitPage(t *testing.T, tab context.Context, mode string) (waitURL, link string) {
	t.Helper()
	login := e.rp.srv.URL + "/login"
	if mode != "" {
		login += "?response_mode=" + mode
	}
	if err := chromedp.Do(tab, chromedp.Navigate(login), chromedp.WaitVisible(chromedp.ID("wallet-link"))); err != nil {
		t.Fatalf("wait page: %v", err)
	}
	waitURL, err := chromedp.Run(tab, chromedp.Location())
	if err != nil || !strings.HasPrefix(waitURL, e.p.public+"/authorize/wait?r=") {
		t.Fatalf("the browser is at %q (%v)", waitURL, err)
	}
	href, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.ID("wallet-link"), "href"))
	if err != nil {
		t.Fatal(err)
	}
	button, err := bridge.ParseConnect(href.Value)
	if err != nil || button.Base != bridge.ProductionVerify || button.ReturnTo != waitURL || button.BridgeURL() != e.p.public {
		t.Fatalf("the button's connect URL %q (%v): want World's verify URL, this relay and return_to %q", href.Value, err, waitURL)
	}
	button.ReturnTo = ""
	e.checkQR(t, tab, button.String())
	return waitURL, button.String()
}

// checkQR decodes the page's QR code (the SVG's unit squares, rendered
// and read by zbarimg when it is installed) and compares it with the link.
func (e *browserEnv) checkQR(t *testing.T, tab context.Context, link string) {
	t.Helper()
	d, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS("#qr path"), "d"))
	if err != nil || !d.Exists {
		t.Fatalf("no QR code on the wait page: %v", err)
	}
	zbar, err := exec.LookPath("zbarimg")
	if err != nil {
		t.Log("zbarimg not found: the QR code is not decoded, only found (install zbar-tools)")
		return
	}
	img := filepath.Join(t.TempDir(), "qr.pgm")
	if err := os.WriteFile(img, svgPathPGM(t, d.Value), 0o600); err != nil {
		t.Fatal(err)
	}
	// QR codes only: with every symbology on, zbarimg may also find an
	// Interleaved 2 of 5 code in a QR symbol's modules and append its
	// digits (it reads "016899" next to a 153-byte link in version 9,
	// mask 2, whose modules another encoder draws identically).
	out, err := exec.Command(zbar, "--raw", "-q", "-Sdisable", "-Sqrcode.enable", "-Sbinary", img).Output()
	if got := strings.TrimSuffix(string(out), "\n"); err != nil || got != link {
		t.Fatalf("the QR code reads %q (%v), the link is %q", got, err, link)
	}
}

// svgPathPGM renders the path "M<x> <y>h1v1h-1z…" at 4 pixels a module.
func svgPathPGM(t *testing.T, d string) []byte {
	t.Helper()
	var xs, ys []int
	size := 0
	for _, sq := range strings.Split(strings.TrimSuffix(d, "z"), "z") {
		var x, y int
		if _, err := fmt.Sscanf(sq, "M%d %dh1v1h-1", &x, &y); err != nil {
			t.Fatalf("QR path element %q: %v", sq, err)
		}
		xs, ys = append(xs, x), append(ys, y)
		size = max(size, x+1+4, y+1+4) // the symbol's quiet zone is 4 modules
	}
	const scale = 4
	n := size * scale
	img := make([]byte, n*n)
	for i := range img {
		img[i] = 255
	}
	for i := range xs {
		for py := ys[i] * scale; py < (ys[i]+1)*scale; py++ {
			for px := xs[i] * scale; px < (xs[i]+1)*scale; px++ {
				img[py*n+px] = 0
			}
		}
	}
	return append([]byte(fmt.Sprintf("P5 %d %d 255\n", n, n)), img...)
}

// signedIn waits until the tab shows the relying party's signed-in page.
func signedIn(t *testing.T, tab context.Context) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		body, _ := chromedp.Run(tab, chromedp.OuterHTML(chromedp.CSS("body")))
		t.Fatalf("the browser did not reach the relying party's callback: %v; at %s: %.500s", err, loc, body)
	}
	sub, err := chromedp.Run(tab, chromedp.Text(chromedp.ID("signed-in")))
	if err != nil || !strings.HasPrefix(sub, "0x") {
		t.Fatalf("signed in as %q: %v", sub, err)
	}
	return sub
}

func TestBrowserSignIn(t *testing.T) {
	t.Parallel()
	e := newBrowserEnv(t)
	// Without -simulator there is no simulator, even for loopback.
	if r := call(http.MethodGet, e.p.public+"/simulator?link="+url.QueryEscape("https://world.org/verify?t=wld"), "", "")(t); r.status != http.StatusNotFound {
		t.Fatalf("simulator without -simulator: %d", r.status)
	}

	t.Run("code flow lands on the callback by itself", func(t *testing.T) {
		tab, violations := e.tab(t)
		_, link := e.waitPage(t, tab, "")
		if text, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("status"))); !strings.HasPrefix(text, "Scan this code") {
			t.Fatalf("before the wallet reads the request the page says %q", text)
		}
		// The wallet reads the request from the bridge; the page notices
		// by polling (a reload would end the Poll with an error).
		req, err := e.w.ReadBridgeRequest(e.ctx, link)
		if err != nil {
			t.Fatal(err)
		}
		scanned := `document.getElementById("status").textContent === "Confirm the sign-in in World App."`
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](scanned, chromedp.WithPollingInterval(100*time.Millisecond),
			chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("the page did not ask to confirm in the wallet by itself: %v", err)
		}
		if _, err := e.w.AnswerBridgeRequest(e.ctx, req, "orb", rand.Reader); err != nil {
			t.Fatal(err)
		}
		if sim, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("simulator") !== null`)); sim {
			t.Error("the wait page offers the simulator without -simulator")
		}
		signedIn(t, tab)
		if v := violations(); len(v) > 0 {
			t.Errorf("CSP violations: %q", v)
		}
	})

	t.Run("form_post under the CSP", func(t *testing.T) {
		tab, violations := e.tab(t)
		_, link := e.waitPage(t, tab, "form_post")
		if err := e.w.Approve(e.ctx, link, "device"); err != nil {
			t.Fatal(err)
		}
		signedIn(t, tab)
		if v := violations(); len(v) > 0 {
			t.Errorf("CSP violations: %q", v)
		}
	})

	t.Run("without JavaScript the page refreshes itself", func(t *testing.T) {
		tab, _ := e.tab(t)
		if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		_, link := e.waitPage(t, tab, "")
		if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
			t.Fatal(err)
		}
		signedIn(t, tab)
	})

	t.Run("a second browser cannot finish", func(t *testing.T) {
		owner, _ := e.tab(t)
		waitURL, link := e.waitPage(t, owner, "")
		// The owner looks away, so that it does not finish first.
		if err := chromedp.Do(owner, chromedp.Navigate("about:blank")); err != nil {
			t.Fatal(err)
		}
		if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
			t.Fatal(err)
		}
		other, _ := e.tab(t)
		if err := chromedp.Do(other, chromedp.Navigate(waitURL), chromedp.WaitVisible(chromedp.ID("error-detail"))); err != nil {
			t.Fatal(err)
		}
		if text, _ := chromedp.Run(other, chromedp.Text(chromedp.ID("error-detail"))); !strings.Contains(text, "another browser") {
			t.Fatalf("the second browser sees %q", text)
		}
		e.rp.mu.Lock()
		before := len(e.rp.signIns)
		e.rp.mu.Unlock()
		if err := chromedp.Do(owner, chromedp.Navigate(waitURL)); err != nil {
			t.Fatal(err)
		}
		signedIn(t, owner)
		e.rp.mu.Lock()
		defer e.rp.mu.Unlock()
		if len(e.rp.signIns) != before+1 {
			t.Fatalf("%d sign-ins completed, want 1", len(e.rp.signIns)-before)
		}
	})

	t.Run("cancel returns access_denied", func(t *testing.T) {
		tab, _ := e.tab(t)
		waitURL, link := e.waitPage(t, tab, "")
		if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("cancel")), chromedp.WaitVisible(chromedp.ID("rp-error"))); err != nil {
			t.Fatal(err)
		}
		if text, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("rp-error"))); text != "error=access_denied" {
			t.Fatalf("the relying party got %q", text)
		}
		// The wallet may still answer at the bridge; nothing acts on it, and
		// the page's URL says the sign-in is over.
		if err := e.w.Approve(e.ctx, link, "orb"); err != nil {
			t.Fatal(err)
		}
		// Its true state, with or without the cookie: cancelled.
		if r := call(http.MethodGet, waitURL, "", "")(t); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "This sign-in was cancelled") {
			t.Errorf("the wait page after cancel, without the cookie: %d", r.status)
		}
		if err := chromedp.Do(tab, chromedp.Navigate(waitURL), chromedp.WaitVisible(chromedp.ID("ended-detail"))); err != nil {
			t.Fatal(err)
		}
		if link, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("wallet-link") !== null`)); link {
			t.Fatal("the wait page still offers the sign-in after cancel")
		}
	})
}

// TestBrowserExpiredRequest lets a request expire on the in-process
// provider's clock: the wait page turns into a clear page whose link
// starts the same sign-in again.
func TestBrowserExpiredRequest(t *testing.T) {
	t.Parallel()
	exe := browserPath(t)
	h := newSigninHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if err := chromedp.Do(tab, chromedp.Navigate(h.authorizeURL()), chromedp.WaitVisible(chromedp.ID("wallet-link"))); err != nil {
		t.Fatal(err)
	}
	first, _ := chromedp.Run(tab, chromedp.AttributeValue(chromedp.ID("wallet-link"), "href"))
	h.clock.Add(11 * time.Minute)
	// The polling script notices by itself.
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("restart"))); err != nil {
		t.Fatal(err)
	}
	if text, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("h1"))); !strings.Contains(text, "expired") {
		t.Fatalf("expired page heading %q", text)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.ID("restart")), chromedp.WaitVisible(chromedp.ID("wallet-link"))); err != nil {
		t.Fatal(err)
	}
	second, _ := chromedp.Run(tab, chromedp.AttributeValue(chromedp.ID("wallet-link"), "href"))
	loc, _ := chromedp.Run(tab, chromedp.Location())
	u, err := url.Parse(loc)
	if err != nil || u.Path != "/authorize/wait" || !second.Exists || second.Value == first.Value {
		t.Fatalf("starting again led to %s with connect URL %q (was %q)", loc, second.Value, first.Value)
	}
}

// TestBrowserSimulator clicks through the developer simulator: an invalid
// proof is refused and the waiting tab keeps waiting; a test identity's
// approval sends the waiting tab to the relying party by itself.
func TestBrowserSimulator(t *testing.T) {
	t.Parallel()
	e := newBrowserEnv(t, "-simulator")
	if out := strings.Join(e.p.startup, "\n"); !strings.Contains(out, "WARNING: -simulator is ON") {
		t.Errorf("no start-up warning:\n%s", out)
	}
	// A client that came through a proxy is not served.
	if r := call(http.MethodGet, e.p.public+"/simulator?link="+url.QueryEscape("https://world.org/verify?t=wld"), "", "", "X-Forwarded-For", "192.0.2.7")(t); r.status != http.StatusNotFound {
		t.Fatalf("simulator through a proxy: %d", r.status)
	}
	waiting, _ := e.tab(t)
	waitURL, _ := e.waitPage(t, waiting, "")
	href, err := chromedp.Run(waiting, chromedp.AttributeValue(chromedp.ID("simulator"), "href"))
	if err != nil || !href.Exists {
		t.Fatalf("no simulator link on the wait page: %v", err)
	}
	sim, _ := e.tab(t)
	open := func() {
		t.Helper()
		if err := chromedp.Do(sim, chromedp.Navigate(e.p.public+href.Value), chromedp.WaitVisible(chromedp.ID("approve"))); err != nil {
			t.Fatal(err)
		}
	}
	result := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(sim, time.Minute)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("result"))); err != nil {
			t.Fatal(err)
		}
		text, _ := chromedp.Run(sim, chromedp.Text(chromedp.ID("result")))
		return text
	}
	// A mark on the wait page's document: a reload would drop it.
	if _, err := chromedp.Run(waiting, chromedp.Evaluate[bool](`window.stillWaiting = true`)); err != nil {
		t.Fatal(err)
	}
	open()
	if err := chromedp.Do(sim, chromedp.Click(chromedp.ID("invalid")), chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	if text := result(); !strings.HasPrefix(text, "Answered as test identity 1 (orb)") {
		t.Fatalf("an invalid proof: %q", text)
	}
	// The waiting tab's poll fetches the answer, the server refuses the
	// proof, and the page says so without leaving.
	refused := `document.getElementById("message").textContent.indexOf("did not accept") >= 0`
	if _, err := chromedp.Run(waiting, chromedp.Poll[bool](refused, chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the waiting tab did not show the refusal: %v", err)
	}
	still, _ := chromedp.Run(waiting, chromedp.Evaluate[bool](`window.stillWaiting === true`))
	if loc, _ := chromedp.Run(waiting, chromedp.Location()); loc != waitURL || !still {
		t.Fatalf("after a refused proof the waiting tab is at %s (same document: %v)", loc, still)
	}
	// Try again: a fresh bridge request for the same sign-in, on a new page.
	if err := chromedp.Do(waiting, chromedp.Click(chromedp.ID("retry"))); err != nil {
		t.Fatal(err)
	}
	old := href.Value
	if !eventually(30*time.Second, 100*time.Millisecond, func() bool {
		href, err = chromedp.Run(waiting, chromedp.AttributeValue(chromedp.ID("simulator"), "href"))
		return err == nil && href.Exists && href.Value != old
	}) {
		t.Fatalf("no fresh simulator link after Try again: %v", err)
	}
	open()
	if err := chromedp.Do(sim, chromedp.Click(chromedp.ID("identity-2")), chromedp.Click(chromedp.ID("level-device")), chromedp.Click(chromedp.ID("approve"))); err != nil {
		t.Fatal(err)
	}
	if text := result(); !strings.HasPrefix(text, "Answered as test identity 2 (device)") {
		t.Fatalf("the simulator says %q", text)
	}
	signedIn(t, waiting)
}
