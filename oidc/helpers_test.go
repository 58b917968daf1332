package oidc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/sha3"

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

func (s *testStore) Code(ctx context.Context, id string, now time.Time) (record.AuthCode, error) {
	return unlessFailing(s, "Code", func() (record.AuthCode, error) { return s.DB.Code(ctx, id, now) })
}

func (s *testStore) RedeemCode(ctx context.Context, id string, now time.Time) (record.AuthCode, error) {
	return unlessFailing(s, "RedeemCode", func() (record.AuthCode, error) { return s.DB.RedeemCode(ctx, id, now) })
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

// keccakHashToField is an independent hashToField (doc/crypto.md §g):
// Keccak-256 shifted right by 8 bits.
func keccakHashToField(b []byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	h.Write(b)
	d := h.Sum(nil)
	var out [32]byte
	copy(out[1:], d[:31])
	return out
}

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
	register(t, f.p, f.store, f.checker, f.mux)
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// storedCode is the stored record of an issued, unredeemed code.
func (f *fixture) storedCode(code string) record.AuthCode {
	f.t.Helper()
	c, err := f.store.DB.Code(f.t.Context(), oauth.HashHex(code), f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// register puts p and a sign-in flow on its store and checker on mux, as
// the wiring does: the provider's tests drive sign-ins end to end.
func register(t testing.TB, p *Provider, store signin.Store, checker signin.Checker, mux *http.ServeMux) {
	t.Helper()
	flow, err := signin.New(signin.Options{Issuer: p.issuer, Store: store, Checker: checker, Provider: p, Rand: rand.Reader, Now: p.now})
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

// walletDetails is GET /authorize/request's answer, as a wallet reads it.
type walletDetails struct {
	Request     string `json:"request"`
	AppID       string `json:"app_id"`
	AppName     string `json:"app_name"`
	ReturnHost  string `json:"return_host"`
	MatchCode   string `json:"match_code"`
	Action      string `json:"action"`
	Signal      string `json:"signal"`
	ExpiresAt   string `json:"expires_at"`
	Submit      string `json:"submit"`
	Environment string `json:"environment,omitempty"`
}

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

var walletLinkRE = regexp.MustCompile(`<a id="wallet-link" class="button" href="([^"]+)">`)

// walletParams extracts the wallet link's query from a wait page.
func walletParams(t testing.TB, page string) url.Values {
	t.Helper()
	m := walletLinkRE.FindAllStringSubmatch(page, -1)
	if len(m) != 1 {
		t.Fatalf("want exactly one wallet link, got %d in\n%s", len(m), page)
	}
	link, err := url.Parse(html.UnescapeString(m[0][1]))
	if err != nil || link.Scheme != "worldid" || link.Host != "signin" {
		t.Fatalf("wallet link %q: %v", m[0][1], err)
	}
	return link.Query()
}

// testNullifier is a valid field element in canonical form.
const testNullifier = "0x0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"

// browser is the state of one user agent: its cookies and the wait page
// it was sent to.
type browser struct {
	cookie  string // Cookie header
	waitURL string // path and query of the wait page
}

// authorize runs GET /authorize as a browser and returns it at its wait
// page.
func (f *fixture) authorize(q url.Values) browser {
	f.t.Helper()
	w := f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil)
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
	return browser{cookie: cookies[0].Name + "=" + cookies[0].Value, waitURL: loc.RequestURI()}
}

// open loads the browser's wait page (which finishes an approved sign-in).
func (f *fixture) open(b browser) *httptest.ResponseRecorder {
	return f.do(http.MethodGet, b.waitURL, nil, map[string]string{"Cookie": b.cookie})
}

// waitPage loads the wait page and requires it to be one.
func (f *fixture) waitPage(b browser) string {
	f.t.Helper()
	w := f.open(b)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="match-code"`) {
		f.t.Fatalf("wait page: %s", describe(w))
	}
	return w.Body.String()
}

// walletRequest fetches the details of the request on a wait page, as the
// wallet does after scanning.
func (f *fixture) walletRequest(page string) (walletDetails, *httptest.ResponseRecorder) {
	f.t.Helper()
	link := walletParams(f.t, page)
	if link.Get("server") != f.issuer {
		f.t.Fatalf("wallet link server %q", link.Get("server"))
	}
	w := f.do(http.MethodGet, "/authorize/request?"+url.Values{"request": {link.Get("request")}}.Encode(), nil, nil)
	var d walletDetails
	if w.Code == http.StatusOK {
		if err := decodeJSON(w.Body, &d); err != nil {
			f.t.Fatal(err)
		}
	}
	return d, w
}

// walletSubmission is what a wallet posts for the request of a wait page.
func (f *fixture) walletSubmission(page, level string) (walletDetails, url.Values) {
	f.t.Helper()
	d, w := f.walletRequest(page)
	if w.Code != http.StatusOK {
		f.t.Fatalf("wallet request: %s", describe(w))
	}
	sh := keccakHashToField([]byte(d.Signal))
	return d, url.Values{
		"request": {d.Request}, "proof": {fakeProof(sh)},
		"merkle_root": {"0x01"}, "nullifier_hash": {testNullifier}, "verification_level": {level},
	}
}

// approve runs the wallet's side for the browser's request and requires
// the approval.
func (f *fixture) approve(b browser, level string) {
	f.t.Helper()
	_, form := f.walletSubmission(f.waitPage(b), level)
	if w := f.postForm("/authorize/complete", form, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"status":"approved"`) {
		f.t.Fatalf("complete: %s", describe(w))
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
