package signin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/bridge/relay"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/oauth"
	"worldid/record"
	"worldid/store"
	"worldid/store/engine"
	"worldid/store/jsontest"
)

// The wait page as a bridge requester, against the built-in relay (in
// memory, served in process) with a fake provider and checker, on the
// JSON store.

const testApp = "app_0123456789abcdef0123456789abcdef"

// testStore is the JSON store (which passes the backends' conformance
// suite, store/storetest) holding the test app, with a store outage to
// inject and a count of its durable writes.
type testStore struct {
	*store.DB
	fail atomic.Bool // AdvanceSignin fails (a store outage)
	base uint64      // the journal's LSN once the test app is stored
}

func newTestStore(t testing.TB) *testStore {
	t.Helper()
	s := &testStore{DB: jsontest.Open(t)}
	if err := s.CreateApp(t.Context(), record.App{ID: testApp, RPID: "rp_0123456789abcdef", Name: "Test app"}); err != nil {
		t.Fatal(err)
	}
	s.base = s.lsn()
	return s
}

func (s *testStore) AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (record.SigninProgress, error) {
	if s.fail.Load() {
		return record.SigninProgress{}, errors.New("store down")
	}
	return s.DB.AdvanceSignin(ctx, p, from...)
}

func (s *testStore) lsn() uint64 {
	var lsn uint64
	s.View(func(tx *engine.ReadTx) error { lsn = tx.LSN(); return nil })
	return lsn
}

// writes counts the durable writes since the test app was stored (scan
// marks are not durable, so they do not count).
func (s *testStore) writes() uint64 { return s.lsn() - s.base }

// fakeChecker accepts a proof string naming exactly the claim's signal
// hash, app and action (proofFor), so a proof for anything else is refused.
type fakeChecker struct{}

func proofFor(signalHash, app, action string) string {
	return "p:" + signalHash + ":" + app + ":" + action
}

func (fakeChecker) CheckClaim(_ context.Context, c record.Claim) error {
	if c.Proof != proofFor("0x"+hex.EncodeToString(c.SignalHash[:]), c.AppID, c.Action) {
		return &record.ProofError{Code: "invalid_proof", Detail: "does not verify"}
	}
	return nil
}

// fakeProvider seals as plainSealer and answers an approved request with
// its subject.
type fakeProvider struct{ plainSealer }

func (fakeProvider) AuthorizationResponse(_ context.Context, _ oauth.Request, p record.SigninProgress) (oauth.Response, error) {
	return oauth.Response{Params: url.Values{"code": {"code-for-" + p.Subject}}}, nil
}
func (fakeProvider) Denied(oauth.Request, string) oauth.Response {
	return oauth.Response{Params: url.Values{"error": {"access_denied"}}}
}
func (fakeProvider) Respond(_ context.Context, w http.ResponseWriter, req oauth.Request, resp oauth.Response) {
	oauth.Redirect(w, req.RedirectURI+"?"+resp.Params.Encode())
}
func (fakeProvider) RestartURL(oauth.Request) string { return "https://id.example/authorize?again" }

// relayTransport serves the relay in process and counts GET /response.
type relayTransport struct {
	h     http.Handler
	polls atomic.Int64
	down  atomic.Bool
	slow  atomic.Bool // answers only when the caller gives up
}

func (rt *relayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if rt.slow.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	if rt.down.Load() {
		return nil, errors.New("connection refused")
	}
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/response/") {
		rt.polls.Add(1)
	}
	rec := httptest.NewRecorder()
	rt.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type bridgeEnv struct {
	f      *Flow
	store  *testStore
	relay  *relayTransport
	clock  *testClock
	events sync.Map // event → *atomic.Int64
	wallet *client.Client
}

const testBridge = "http://bridge.test"

func newBridgeEnv(t testing.TB, rate ratelimit.Rate) *bridgeEnv {
	e := &bridgeEnv{store: newTestStore(t), clock: &testClock{t: time.Unix(1_800_000_000, 0)}}
	rl, err := relay.New(relay.Options{Store: relay.NewMemory(1<<20, 1<<30), Now: e.clock.Now, Rand: rand.Reader, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rl.Register(mux, "")
	e.relay = &relayTransport{h: mux}
	hc := &http.Client{Transport: e.relay}
	e.wallet = &client.Client{HTTP: hc}
	e.f, err = New(Options{Issuer: "https://id.example", Store: e.store, Checker: fakeChecker{}, Provider: fakeProvider{}, Rand: rand.Reader,
		Now: e.clock.Now, BridgeURL: testBridge, Bridge: &client.Client{HTTP: hc}, BridgeTimeout: 50 * time.Millisecond, CreateRate: rate,
		Observe: func(ev string) {
			n, _ := e.events.LoadOrStore(ev, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *bridgeEnv) count(ev string) int64 {
	n, ok := e.events.Load(ev)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// browser is a browser's cookie and wait page URL.
type browser struct {
	cookie  *http.Cookie
	waitURL string
}

func (e *bridgeEnv) do(b browser, method, target string, form url.Values, remote string) *httptest.ResponseRecorder {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.RemoteAddr = remote
	if b.cookie != nil {
		r.AddCookie(b.cookie)
	}
	w := httptest.NewRecorder()
	switch u, _ := url.Parse(target); u.Path {
	case pathWait:
		e.f.serveWait(w, r)
	case pathStatus:
		e.f.serveStatus(w, r)
	case pathRetry:
		e.f.serveRetry(w, r)
	}
	return w
}

// start is GET /authorize for a valid request, then the first showing of
// the wait page, which creates the bridge request and redirects to the
// page that carries it.
func (e *bridgeEnv) start(t testing.TB, remote string) (browser, *httptest.ResponseRecorder) {
	w := httptest.NewRecorder()
	e.f.Start(t.Context(), w, oauth.Request{ClientID: testApp, RedirectURI: "https://rp.example/cb", ResponseType: "code", Mode: "query", Scope: "openid"})
	b := browser{cookie: w.Result().Cookies()[0], waitURL: w.Header().Get("Location")}
	return b, e.do(b, http.MethodGet, b.waitURL, nil, remote)
}

var connectHref = regexp.MustCompile(`id="wallet-link"[^>]* href="([^"]+)"`)

// page shows the wait page that carries the bridge request and returns
// the browser there and the page's connect URL (the button's).
func (e *bridgeEnv) page(t testing.TB) (browser, bridge.Connect) {
	b, w := e.start(t, "192.0.2.1:1")
	if w.Code != http.StatusSeeOther {
		t.Fatalf("first showing: %d %s", w.Code, w.Body)
	}
	b.waitURL = w.Header().Get("Location")
	w = e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	m := connectHref.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		t.Fatalf("wait page: %d %s", w.Code, w.Body)
	}
	conn, err := bridge.ParseConnect(strings.ReplaceAll(m[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(bridgePollInterval) // the page's load asked the relay
	return b, conn
}

func (e *bridgeEnv) state(t testing.TB, b browser) waitState {
	t.Helper()
	w := e.do(b, http.MethodGet, strings.Replace(b.waitURL, pathWait, pathStatus, 1), nil, "192.0.2.1:1")
	var s waitState
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &s) != nil {
		t.Fatalf("status: %d %s", w.Code, w.Body)
	}
	e.clock.Add(bridgePollInterval) // the next poll may ask the relay
	return s
}

// answer reads the request as a wallet and answers resp(request).
func (e *bridgeEnv) answer(t testing.TB, conn bridge.Connect, resp func(bridge.Request) bridge.Response) {
	t.Helper()
	req, err := e.wallet.Fetch(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.wallet.Answer(context.Background(), conn, rand.Reader, resp(req)); err != nil {
		t.Fatal(err)
	}
}

func goodProof(r bridge.Request) bridge.Response {
	return bridge.Response{Proof: proofFor(r.Signal, r.AppID, r.Action), MerkleRoot: "0x01", NullifierHash: "0x02", VerificationLevel: "orb"}
}

func TestBridgeSignin(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, conn := e.page(t)
	if conn.Base != bridge.ProductionVerify || conn.Bridge != testBridge || !strings.Contains(conn.ReturnTo, "https://id.example/authorize/wait?r=") {
		t.Fatalf("connect URL %+v", conn)
	}
	if s := e.state(t, b); s.State != statePending {
		t.Fatalf("before the wallet: %+v", s)
	}
	req, err := e.wallet.Fetch(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
	if req.AppID != testApp || req.Action != "" || req.Signal != hashedSignal(pr.ID) || req.VerificationLevel != "device" {
		t.Fatalf("bridge request %+v", req)
	}
	if s := e.state(t, b); s.State != stateScanned {
		t.Fatalf("after the read: %+v", s)
	}
	if err := e.wallet.Answer(context.Background(), conn, rand.Reader, goodProof(req)); err != nil {
		t.Fatal(err)
	}
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("after the answer: %+v", s)
	}
	w := e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "https://rp.example/cb?code=") {
		t.Fatalf("finish: %d %s", w.Code, w.Header().Get("Location"))
	}
	if e.store.writes() != 2 { // approved, finished
		t.Errorf("%d store writes, want 2", e.store.writes())
	}
	for ev, want := range map[string]int64{EventStarted: 1, EventBridgeCreateOK: 1, EventScanned: 1, EventApproved: 1, EventFinished: 1} {
		if got := e.count(ev); got != want {
			t.Errorf("event %s observed %d times, want %d", ev, got, want)
		}
	}
}

// TestBridgeKeyInToken: the page's key is carried in its sealed token
// (and the connect URL), and nothing is stored before the wallet answers.
func TestBridgeKeyInToken(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, conn := e.page(t)
	pr, err := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
	if err != nil || pr.Bridge == nil || pr.Bridge.key() != conn.Key {
		t.Fatalf("the token's bridge request %+v differs from the page's", pr.Bridge)
	}
	if e.store.writes() != 0 {
		t.Errorf("%d store writes before the wallet answered", e.store.writes())
	}
}

// TestBridgePollRate: however often the page polls, the relay is asked at
// most once per bridgePollInterval per sign-in, and not by the showing of
// a page whose request was just made.
func TestBridgePollRate(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, _ := e.page(t)
	before := e.relay.polls.Load()
	if before != 0 {
		t.Fatalf("showing a page with a new bridge request asked the relay %d times", before)
	}
	for range 20 {
		w := e.do(b, http.MethodGet, strings.Replace(b.waitURL, pathWait, pathStatus, 1), nil, "192.0.2.1:1")
		if w.Code != http.StatusOK {
			t.Fatal(w.Code)
		}
	}
	if n := e.relay.polls.Load() - before; n > 1 {
		t.Fatalf("20 polls within a second asked the relay %d times", n)
	}
	e.clock.Add(bridgePollInterval)
	e.state(t, b)
	if n := e.relay.polls.Load() - before; n > 2 {
		t.Fatalf("a poll a second later: %d relay calls in all", n)
	}
}

// TestBridgeBadAnswers: each bad answer is a clear state, writes nothing,
// and Try again gives the same sign-in a fresh bridge request that a good
// answer completes.
func TestBridgeBadAnswers(t *testing.T) {
	for _, c := range []struct {
		name, state string
		answer      func(e *bridgeEnv, conn bridge.Connect) error
	}{
		{"does not decrypt", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			conn.Key = bridge.Key{7}
			return e.wallet.Answer(context.Background(), conn, rand.Reader, bridge.Response{ErrorCode: "x"})
		}},
		{"not a response", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			return e.wallet.Answer(context.Background(), conn, rand.Reader, bridge.Response{})
		}},
		{"another signal", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			r := goodProof(bridge.Request{AppID: testApp, Signal: "0x01"})
			return e.wallet.Answer(context.Background(), conn, rand.Reader, r)
		}},
		{"another action", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			req, _ := e.wallet.Fetch(context.Background(), conn)
			req.Action = "x"
			return e.wallet.Answer(context.Background(), conn, rand.Reader, goodProof(req))
		}},
		{"another app", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			req, _ := e.wallet.Fetch(context.Background(), conn)
			req.AppID = "app_" + strings.Repeat("f", 32)
			return e.wallet.Answer(context.Background(), conn, rand.Reader, goodProof(req))
		}},
		{"a World ID 4.0 answer", stateRefused, func(e *bridgeEnv, conn bridge.Connect) error {
			return e.wallet.Answer(context.Background(), conn, rand.Reader, bridge.Response{ProofResponse: &bridge.ProofResponse{ID: "x"}})
		}},
		{"the wallet declines", stateWalletError, func(e *bridgeEnv, conn bridge.Connect) error {
			return e.wallet.Answer(context.Background(), conn, rand.Reader, bridge.Response{ErrorCode: bridge.ErrCodeVerificationRejected})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newBridgeEnv(t, ratelimit.Rate{})
			b, conn := e.page(t)
			if err := c.answer(e, conn); err != nil {
				t.Fatal(err)
			}
			s := e.state(t, b)
			if s.State != c.state || s.Message == "" || strings.Contains(s.Message, "_") {
				t.Fatalf("state %+v, want %s with a plain message", s, c.state)
			}
			if again := e.state(t, b); again != s {
				t.Fatalf("polled again: %+v", again)
			}
			if e.store.writes() != 0 {
				t.Fatalf("%d store writes", e.store.writes())
			}
			w := e.do(b, http.MethodPost, "https://id.example"+pathRetry, url.Values{"r": {mustQuery(t, b.waitURL).Get("r")}}, "192.0.2.1:1")
			if w.Code != http.StatusSeeOther {
				t.Fatalf("Try again: %d %s", w.Code, w.Body)
			}
			b.waitURL = w.Header().Get("Location")
			pr, _ := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
			if pr.Bridge.ID == conn.RequestID {
				t.Fatal("Try again kept the bridge request")
			}
			fresh := bridge.Connect{Base: conn.Base, RequestID: pr.Bridge.ID, Key: pr.Bridge.key(), Bridge: conn.Bridge}
			e.answer(t, fresh, goodProof)
			e.clock.Add(bridgePollInterval) // a page is not polled within a second of its request's creation
			if s := e.state(t, b); s.State != stateDone {
				t.Fatalf("after Try again: %+v", s)
			}
		})
	}
}

// TestBridgeUnavailable: a relay that cannot be reached makes the page say
// so (create and poll alike); the relying party's request survives, and the
// page completes once the relay is back.
func TestBridgeUnavailable(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	e.relay.down.Store(true)
	b, w := e.start(t, "192.0.2.1:1")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "cannot be reached") {
		t.Fatalf("wait page without a relay: %d %s", w.Code, w.Body)
	}
	if s := e.state(t, b); s.State != stateUnavailable {
		t.Fatalf("status without a relay: %+v", s)
	}
	e.relay.down.Store(false)
	w = e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	if w.Code != http.StatusSeeOther {
		t.Fatalf("reload with the relay back: %d", w.Code)
	}
	b.waitURL = w.Header().Get("Location")
	pr, _ := e.f.openPending(mustQuery(t, b.waitURL).Get("r"))
	e.clock.Add(bridgePollInterval)
	e.relay.down.Store(true)
	if s := e.state(t, b); s.State != stateUnavailable || s.Message == "" {
		t.Fatalf("poll without a relay: %+v", s)
	}
	e.relay.down.Store(false)
	e.answer(t, bridge.Connect{Base: bridge.ProductionVerify, RequestID: pr.Bridge.ID, Key: pr.Bridge.key(), Bridge: testBridge}, goodProof)
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("after the relay came back: %+v", s)
	}
	if e.count(EventBridgeCreateError) != 1 || e.count(EventBridgePollError) != 1 {
		t.Errorf("create errors %d, poll errors %d", e.count(EventBridgeCreateError), e.count(EventBridgePollError))
	}
}

// TestBridgeSlow: a relay that does not answer within the bound makes the
// page say it is unavailable, creating and polling alike; nothing hangs
// and the sign-in survives.
func TestBridgeSlow(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, conn := e.page(t)
	e.relay.slow.Store(true)
	if s := e.state(t, b); s.State != stateUnavailable {
		t.Fatalf("poll of a slow relay: %+v", s)
	}
	if _, w := e.start(t, "192.0.2.1:1"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "cannot be reached") {
		t.Fatalf("first showing with a slow relay: %d", w.Code)
	}
	e.relay.slow.Store(false)
	e.answer(t, conn, goodProof)
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("once the relay answers: %+v", s)
	}
}

// TestBridgeStoreOutage: an answer fetched while the store cannot record
// the approval is kept and checked again, not lost.
func TestBridgeStoreOutage(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, conn := e.page(t)
	e.answer(t, conn, goodProof)
	e.store.fail.Store(true)
	if s := e.state(t, b); s.State != stateUnavailable {
		t.Fatalf("during the outage: %+v", s)
	}
	e.store.fail.Store(false)
	if s := e.state(t, b); s.State != stateDone {
		t.Fatalf("after the outage: %+v", s)
	}
}

// TestBridgeGone: a bridge request the relay forgot (expired, or its
// answer taken elsewhere) makes the status answer 409, and the page's
// reload shows a fresh one for the same sign-in.
func TestBridgeGone(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	b, conn := e.page(t)
	e.answer(t, conn, goodProof)
	// Another requester (say, a replica whose poll then crashed) takes the
	// answer: the relay forgets the id.
	if _, err := e.wallet.Poll(context.Background(), testBridge, conn.RequestID, conn.Key); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(bridgePollInterval)
	w := e.do(b, http.MethodGet, strings.Replace(b.waitURL, pathWait, pathStatus, 1), nil, "192.0.2.1:1")
	if w.Code != http.StatusConflict {
		t.Fatalf("status of a forgotten bridge request: %d %s", w.Code, w.Body)
	}
	w = e.do(b, http.MethodGet, b.waitURL, nil, "192.0.2.1:1")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") == b.waitURL {
		t.Fatalf("reload: %d %s", w.Code, w.Header().Get("Location"))
	}
	if e.store.writes() != 0 {
		t.Fatalf("%d store writes", e.store.writes())
	}
}

// TestBridgeCreateRate: the first showings of wait pages are limited per
// client address (429 page past the burst); other addresses are not.
func TestBridgeCreateRate(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{Burst: 2, Every: time.Hour})
	for i := range 3 {
		_, w := e.start(t, "198.51.100.7:1")
		if want := http.StatusSeeOther; i == 2 {
			if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "too many sign-in pages") {
				t.Fatalf("third page: %d %s", w.Code, w.Body)
			}
		} else if w.Code != want {
			t.Fatalf("page %d: %d", i, w.Code)
		}
	}
	if _, w := e.start(t, "203.0.113.9:1"); w.Code != http.StatusSeeOther {
		t.Fatalf("another address: %d", w.Code)
	}
}

// TestBridgeDisabledApp: a disabled or deleted app's page is a 403, never
// a 500, and no bridge request is made for it.
func TestBridgeDisabledApp(t *testing.T) {
	e := newBridgeEnv(t, ratelimit.Rate{})
	if _, err := e.store.UpdateApp(t.Context(), testApp, func(a *record.App) error { a.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, w := e.start(t, "192.0.2.1:1"); w.Code != http.StatusForbidden {
		t.Fatalf("disabled app: %d", w.Code)
	}
	if err := e.store.DeleteApp(t.Context(), testApp); err != nil {
		t.Fatal(err)
	}
	if _, w := e.start(t, "192.0.2.1:1"); w.Code != http.StatusForbidden {
		t.Fatalf("deleted app: %d", w.Code)
	}
	if e.count(EventBridgeCreateOK) != 0 {
		t.Fatal("a bridge request was made for a disabled app")
	}
}

func mustQuery(t testing.TB, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// BenchmarkAuthorizeAndWait is what a GET /authorize costs now: the sealed
// request and its redirect, the first showing of the wait page (which
// creates the bridge request at the built-in relay, in memory) and the
// page it redirects to, rendered. It reports store writes per sign-in
// page (0: an anonymous /authorize writes nothing).
func BenchmarkAuthorizeAndWait(b *testing.B) {
	e := newBridgeEnv(b, ratelimit.Rate{Burst: -1})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			br, w := e.start(b, "192.0.2.1:1")
			if w.Code != http.StatusSeeOther {
				b.Errorf("first showing: %d", w.Code)
				return
			}
			if w := e.do(br, http.MethodGet, w.Header().Get("Location"), nil, "192.0.2.1:1"); w.Code != http.StatusOK {
				b.Errorf("wait page: %d", w.Code)
				return
			}
		}
	})
	b.ReportMetric(float64(e.store.writes())/float64(b.N), "writes/op")
}
