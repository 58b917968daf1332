package oidc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/bridge/relay"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
	"worldid/signin"
	"worldid/store"
	"worldid/store/engine"
	"worldid/store/jsontest"
)

// testStore is the JSON store, which passes the backends' conformance
// suite (store/storetest), with faults to inject into the methods of the
// provider's and the sign-in flow's Store.
type testStore struct {
	*store.DB
	t        testing.TB
	mu       sync.Mutex
	fail     error            // returned by every method when set
	failOnce map[string]error // method name → error of its next call only
}

func newTestStore(t testing.TB) *testStore {
	t.Helper()
	return &testStore{DB: jsontest.Open(t), t: t}
}

func (s *testStore) setFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// failNext makes the next call of method fail with err.
func (s *testStore) failNext(method string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failOnce == nil {
		s.failOnce = map[string]error{}
	}
	s.failOnce[method] = err
}

// failing is the error the method returns now, if any.
func (s *testStore) failing(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	err := s.failOnce[method]
	delete(s.failOnce, method)
	return err
}

// unlessFailing is call's result, or the method's injected failure.
func unlessFailing[T any](s *testStore, method string, call func() (T, error)) (T, error) {
	if err := s.failing(method); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

// errUnlessFailing is unlessFailing for a method returning only an error.
func (s *testStore) errUnlessFailing(method string, call func() error) error {
	_, err := unlessFailing(s, method, func() (struct{}, error) { return struct{}{}, call() })
	return err
}

func (s *testStore) App(ctx context.Context, id string) (record.App, error) {
	return unlessFailing(s, "App", func() (record.App, error) { return s.DB.App(ctx, id) })
}

func (s *testStore) SigningKeys(ctx context.Context) ([]record.SigningKey, error) {
	return unlessFailing(s, "SigningKeys", func() ([]record.SigningKey, error) { return s.DB.SigningKeys(ctx) })
}

func (s *testStore) AddSigningKey(ctx context.Context, k record.SigningKey, pendingAfter time.Time) error {
	return s.errUnlessFailing("AddSigningKey", func() error { return s.DB.AddSigningKey(ctx, k, pendingAfter) })
}

func (s *testStore) SigninProgress(ctx context.Context, id string) (record.SigninProgress, error) {
	return unlessFailing(s, "SigninProgress", func() (record.SigninProgress, error) { return s.DB.SigninProgress(ctx, id) })
}

func (s *testStore) MarkScanned(ctx context.Context, id string, expiresAt time.Time) error {
	return s.errUnlessFailing("MarkScanned", func() error { return s.DB.MarkScanned(ctx, id, expiresAt) })
}

func (s *testStore) AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (record.SigninProgress, error) {
	return unlessFailing(s, "AdvanceSignin", func() (record.SigninProgress, error) { return s.DB.AdvanceSignin(ctx, p, from...) })
}

func (s *testStore) UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error {
	return s.errUnlessFailing("UseProofOnce", func() error { return s.DB.UseProofOnce(ctx, key, expiresAt) })
}

func (s *testStore) SaveCode(ctx context.Context, c record.AuthCode) error {
	return s.errUnlessFailing("SaveCode", func() error { return s.DB.SaveCode(ctx, c) })
}

func (s *testStore) RedeemCode(ctx context.Context, id string, b record.CodeBinding, now time.Time) (record.AuthCode, error) {
	return unlessFailing(s, "RedeemCode", func() (record.AuthCode, error) { return s.DB.RedeemCode(ctx, id, b, now) })
}

func (s *testStore) IsGrantRevoked(ctx context.Context, grantID string) (bool, error) {
	return unlessFailing(s, "IsGrantRevoked", func() (bool, error) { return s.DB.IsGrantRevoked(ctx, grantID) })
}

func (s *testStore) RevokeGrant(ctx context.Context, grantID string, retainUntil time.Time) error {
	return s.errUnlessFailing("RevokeGrant", func() error { return s.DB.RevokeGrant(ctx, grantID, retainUntil) })
}

func (s *testStore) PruneExpired(ctx context.Context, now time.Time) error {
	return s.errUnlessFailing("PruneExpired", func() error { return s.DB.PruneExpired(ctx, now) })
}

// putApp stores a, replacing the app of its ID.
func (s *testStore) putApp(a record.App) {
	s.t.Helper()
	if err := s.ImportApps(s.t.Context(), []record.App{a}, true); err != nil {
		s.t.Fatal(err)
	}
}

// changeApp changes the stored app of id.
func (s *testStore) changeApp(id string, change func(*record.App)) {
	s.t.Helper()
	_, err := s.UpdateApp(s.t.Context(), id, func(a *record.App) error { change(a); return nil })
	if err != nil {
		s.t.Fatal(err)
	}
}

// addKey stores k, which activates after every stored key.
func (s *testStore) addKey(k record.SigningKey) {
	s.t.Helper()
	if err := s.DB.AddSigningKey(s.t.Context(), k, k.ActivateAt); err != nil {
		s.t.Fatal(err)
	}
}

// keys is every stored signing key.
func (s *testStore) keys() []record.SigningKey {
	s.t.Helper()
	keys, err := s.DB.SigningKeys(s.t.Context())
	if err != nil {
		s.t.Fatal(err)
	}
	return keys
}

// rows is the number of stored rows of a backup table.
func (s *testStore) rows(table string) int {
	s.t.Helper()
	n := 0
	err := s.Export(s.t.Context(), func(t string, _ any) error {
		if t == table {
			n++
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return n
}

// lsn is the number of the store's last write: unchanged means nothing
// was stored.
func (s *testStore) lsn() uint64 {
	var lsn uint64
	s.View(func(tx *engine.ReadTx) error { lsn = tx.LSN(); return nil })
	return lsn
}

// fakeChecker accepts exactly the proof "proof-for-<hex signal hash>", as
// the test wallet makes it, and records every claim.
type fakeChecker struct {
	mu     sync.Mutex
	claims []record.Claim
	err    error // returned instead of deciding, when set
}

func (c *fakeChecker) CheckClaim(_ context.Context, cl record.Claim) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims = append(c.claims, cl)
	if c.err != nil {
		return c.err
	}
	if cl.Proof != fakeProof(cl.SignalHash) || cl.Action != "" || cl.Environment != "production" {
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "fake proof rejected"}
	}
	return nil
}

func (c *fakeChecker) last() record.Claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claims[len(c.claims)-1]
}

func fakeProof(signalHash [32]byte) string { return "proof-for-" + hex.EncodeToString(signalHash[:]) }

// fakeClock is the injected clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var testStart = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// sharedKey is one RSA key generated per test binary (key generation takes
// up to a second).
var sharedKey = sync.OnceValue(func() record.SigningKey {
	k, err := newSigningKey(testStart.Add(-time.Hour), testStart.Add(-time.Hour))
	if err != nil {
		panic(err)
	}
	return k
})

const (
	testSecret   = "s3cret-0123456789abcdef0123456789abcdef"
	testRedirect = "https://rp.example/callback"
	testClientID = "app_0123456789abcdef0123456789abcdef"
)

// fixture is a provider behind an httptest server with one app.
type fixture struct {
	t       testing.TB
	p       *Provider
	store   *testStore
	checker *fakeChecker
	clock   *fakeClock
	relay   *testRelay
	mux     *http.ServeMux
	srv     *httptest.Server
	issuer  string
	app     record.App
}

func newFixture(t testing.TB, opts ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, store: newTestStore(t), checker: &fakeChecker{}, clock: &fakeClock{t: testStart}, mux: http.NewServeMux()}
	f.srv = httptest.NewUnstartedServer(f.mux)
	f.issuer = "http://" + f.srv.Listener.Addr().String()
	sum := sha256.Sum256([]byte(testSecret))
	f.app = record.App{ID: testClientID, RPID: "rp_0123456789abcdef", Name: "Test <RP>", SecretHash: hex.EncodeToString(sum[:]),
		RedirectURIs: []string{testRedirect, "https://rp.example/cb?x=1", "com.example.app:/cb"}}
	f.store.putApp(f.app)
	f.store.addKey(sharedKey())
	o := Options{Issuer: f.issuer, Store: f.store, Rand: rand.Reader, Now: f.clock.Now}
	for _, fn := range opts {
		fn(&o)
	}
	var err error
	if f.p, err = New(o); err != nil {
		t.Fatal(err)
	}
	f.relay = newTestRelay(t, f.clock.Now)
	register(t, f.p, f.store, f.checker, f.mux, f.relay)
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// storedCode is the stored record of an issued, unredeemed code: a
// redemption for no client returns it and spends nothing.
func (f *fixture) storedCode(code string) record.AuthCode {
	f.t.Helper()
	c, err := f.store.DB.RedeemCode(f.t.Context(), oauth.HashHex(code), record.CodeBinding{}, f.clock.Now())
	if !errors.Is(err, record.ErrCodeBinding) {
		f.t.Fatalf("stored code: %v, want it unredeemed", err)
	}
	return c
}

// register puts p and a sign-in flow on its store and checker on mux, as
// the wiring does: the provider's tests drive sign-ins end to end.
func register(t testing.TB, p *Provider, store signin.Store, checker signin.Checker, mux *http.ServeMux, rl *testRelay) {
	t.Helper()
	flow, err := signin.New(signin.Options{Issuer: p.issuer, Store: store, Checker: checker, Provider: p, Rand: rand.Reader, Now: p.now,
		BridgeURL: testBridgeURL, Bridge: rl.client, CreateRate: ratelimit.Rate{Burst: -1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Register(mux, flow)
	flow.Register(mux)
}

// The sign-in flow's lifetimes (package signin), as the tests see them.
const (
	signinLifetime = 10 * time.Minute
	finishGrace    = 60 * time.Second
	maxBody        = 64 << 10 // internal/oauth's body limit
)

// do runs one request through the mux (no network).
func (f *fixture) do(method, target string, body io.Reader, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, body)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, r)
	return w
}

func (f *fixture) postForm(target string, v url.Values, header map[string]string) *httptest.ResponseRecorder {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	maps.Copy(h, header)
	return f.do(http.MethodPost, target, strings.NewReader(v.Encode()), h)
}

// authorizeQuery is a valid code-flow request.
func authorizeQuery() url.Values {
	return url.Values{
		"response_type": {"code"}, "scope": {"openid email profile"}, "client_id": {testClientID},
		"redirect_uri": {testRedirect}, "state": {"st-1"}, "nonce": {"n-1"},
	}
}

var walletLinkRE = regexp.MustCompile(`<a id="wallet-link"[^>]* href="([^"]+)"`)

// walletConnect extracts the connect URL of the page's bridge request
// (the "Open World App" button's) from a wait page.
func walletConnect(t testing.TB, page string) bridge.Connect {
	t.Helper()
	m := walletLinkRE.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("want exactly one wallet link, got %d in\n%s", len(m), page)
	}
	conn, err := bridge.ParseConnect(html.UnescapeString(m[0][1]))
	if err != nil || conn.Bridge != testBridgeURL {
		t.Fatalf("wallet link %q: %v", m[0][1], err)
	}
	return conn
}

// testBridgeURL is where the in-process relay answers.
const testBridgeURL = "http://bridge.test"

// testRelay is the built-in Wallet Bridge relay (in memory) served in
// process: the sign-in flow creates its requests there and the tests'
// wallet answers them as World App does.
type testRelay struct {
	h      http.Handler
	client *client.Client
}

func newTestRelay(t testing.TB, now func() time.Time) *testRelay {
	t.Helper()
	rl, err := relay.New(relay.Options{Store: relay.NewMemory(1<<10, 1<<24), Now: now, Rand: rand.Reader, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rl.Register(mux, "")
	r := &testRelay{h: mux}
	r.client = &client.Client{HTTP: &http.Client{Transport: r}}
	return r
}

func (r *testRelay) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	res := rec.Result()
	res.Request = req
	return res, nil
}

// testNullifier is a valid field element in canonical form.
const testNullifier = "0x0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"

// browser is the state of one user agent: its cookies and the wait page
// it was sent to.
type browser struct {
	cookie  string         // Cookie header
	waitURL string         // path and query of the wait page
	conn    bridge.Connect // the connect URL on the wait page
}

// authorize runs GET /authorize as a browser and returns it at its wait
// page, whose first showing created the page's bridge request. The page is
// shown a second before now, so that a status poll now may ask the relay
// (at most one ask per second per sign-in).
func (f *fixture) authorize(q url.Values) browser {
	f.t.Helper()
	return f.startedBrowser(f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil))
}

// startedBrowser is the browser that got w, the 303 of a started sign-in
// (Signin.Start), at its wait page, as authorize returns it.
func (f *fixture) startedBrowser(w *httptest.ResponseRecorder) browser {
	f.t.Helper()
	if w.Code != http.StatusSeeOther {
		f.t.Fatalf("authorize: %s", describe(w))
	}
	loc := must(url.Parse(w.Header().Get("Location")))
	if !strings.HasPrefix(loc.String(), f.issuer+"/authorize/wait?r=") {
		f.t.Fatalf("authorize redirects to %s", loc)
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode || cookies[0].Path != "/" {
		f.t.Fatalf("binding cookie: %v", w.Header()["Set-Cookie"])
	}
	b := browser{cookie: cookies[0].Name + "=" + cookies[0].Value, waitURL: loc.RequestURI()}
	f.clock.Advance(-time.Second)
	defer f.clock.Advance(time.Second)
	w = f.open(b)
	if w.Code != http.StatusSeeOther {
		f.t.Fatalf("first showing: %s", describe(w))
	}
	b.waitURL = must(url.Parse(w.Header().Get("Location"))).RequestURI()
	b.conn = walletConnect(f.t, f.waitPage(b))
	return b
}

// open loads the browser's wait page (which finishes an approved sign-in).
func (f *fixture) open(b browser) *httptest.ResponseRecorder {
	return f.do(http.MethodGet, b.waitURL, nil, map[string]string{"Cookie": b.cookie})
}

// waitPage loads the wait page and requires it to be one.
func (f *fixture) waitPage(b browser) string {
	f.t.Helper()
	w := f.open(b)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="wallet-link"`) {
		f.t.Fatalf("wait page: %s", describe(w))
	}
	return w.Body.String()
}

// scan reads the bridge request of a wait page, as World App does after
// scanning its QR code.
func (f *fixture) scan(page string) (bridge.Connect, bridge.Request) {
	f.t.Helper()
	conn := walletConnect(f.t, page)
	return conn, f.fetch(conn)
}

// fetch reads the bridge request of a connect URL, as World App does.
func (f *fixture) fetch(conn bridge.Connect) bridge.Request {
	f.t.Helper()
	req, err := f.relay.client.Fetch(f.t.Context(), conn)
	if err != nil {
		f.t.Fatalf("wallet: fetch: %v", err)
	}
	return req
}

// proofAnswer is the wallet's answer to req: a proof the fake checker
// accepts for the request's signal hash.
func proofAnswer(t testing.TB, req bridge.Request, level string) bridge.Response {
	t.Helper()
	sh, err := hex.DecodeString(strings.TrimPrefix(req.Signal, "0x"))
	if err != nil || len(sh) != 32 {
		t.Fatalf("signal %q", req.Signal)
	}
	return bridge.Response{Proof: fakeProof([32]byte(sh)), MerkleRoot: "0x01", NullifierHash: testNullifier, VerificationLevel: level}
}

// answer puts the wallet's answer at the relay.
func (f *fixture) answer(conn bridge.Connect, resp bridge.Response) {
	f.t.Helper()
	if err := f.relay.client.Answer(f.t.Context(), conn, rand.Reader, resp); err != nil {
		f.t.Fatalf("wallet: answer: %v", err)
	}
}

// poll is the browser's next status poll, a second later: the flow asks
// the relay at most once a second per sign-in.
func (f *fixture) poll(b browser) string {
	f.t.Helper()
	f.clock.Advance(time.Second)
	return f.status(b)
}

// retry is the page's "Try again" (a fresh bridge request for the same
// sign-in), a second before now as authorize's first showing; it returns
// the browser at the new page.
func (f *fixture) retry(b browser) browser {
	f.t.Helper()
	f.clock.Advance(-time.Second)
	defer f.clock.Advance(time.Second)
	w := f.postForm("/authorize/retry", url.Values{"r": {waitToken(b)}}, map[string]string{"Cookie": b.cookie})
	if w.Code != http.StatusSeeOther {
		f.t.Fatalf("retry: %s", describe(w))
	}
	b.waitURL = must(url.Parse(w.Header().Get("Location"))).RequestURI()
	b.conn = walletConnect(f.t, f.waitPage(b))
	return b
}

// waitToken is the sealed request of the browser's wait page.
func waitToken(b browser) string {
	return must(url.ParseQuery(must(url.Parse(b.waitURL)).RawQuery)).Get("r")
}

// approve runs the wallet's side for the browser's request and the
// browser's poll that records the approval, and requires it.
func (f *fixture) approve(b browser, level string) {
	f.t.Helper()
	f.answer(b.conn, proofAnswer(f.t, f.fetch(b.conn), level))
	if s := f.status(b); s != "done" {
		f.t.Fatalf("status after the wallet's answer %q", s)
	}
}

// signIn runs authorize, the wallet's side and the browser's finish
// through the mux and returns the finish's response: the authorization
// response.
func (f *fixture) signIn(q url.Values, level string) *httptest.ResponseRecorder {
	f.t.Helper()
	b := f.authorize(q)
	f.approve(b, level)
	return f.open(b)
}

// responseParams reads the parameters of a 303 in the given mode.
func responseParams(t testing.TB, w *httptest.ResponseRecorder, mode string) url.Values {
	t.Helper()
	if w.Code != http.StatusSeeOther {
		t.Fatalf("want 303, got %d: %s", w.Code, w.Body)
	}
	loc, err := url.Parse(w.Header().Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	raw := loc.RawQuery
	if mode == modeFragment {
		if loc.RawQuery != "" {
			t.Fatalf("fragment response also has a query: %s", loc)
		}
		raw = loc.EscapedFragment()
	} else if loc.Fragment != "" {
		t.Fatalf("query response has a fragment: %s", loc)
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func basicAuth(id, secret string) map[string]string {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.SetBasicAuth(id, secret)
	return map[string]string{"Authorization": r.Header.Get("Authorization")}
}

// must unwraps the result of a call that only fails when the test setup
// is broken.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func describe(w *httptest.ResponseRecorder) string {
	return fmt.Sprintf("%d %v %s", w.Code, w.Header(), w.Body)
}

func decodeJSON(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// halfHashIndependent recomputes c_hash / at_hash from OIDC Core §3.3.2.11.
func halfHashIndependent(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
