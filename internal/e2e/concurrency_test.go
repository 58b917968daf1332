package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"worldid/admin"
	"worldid/babyjub"
	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/bridge/relay"
	"worldid/field"
	"worldid/internal/leaf/ratelimit"
	"worldid/internal/wallet"
	worldoidc "worldid/oidc"
	"worldid/record"
	"worldid/refresh"
	"worldid/semaphore"
	"worldid/semaphore/prover"
	"worldid/signin"
	"worldid/store"
	"worldid/verify"

	goidc "github.com/coreos/go-oidc/v3/oidc"
)

// Races on the single-use and uniqueness rules, in process so that the
// race detector sees both sides: the handlers run on the real store, and
// only the Groth16 check of sign-in and verification is replaced (by
// acceptingChecker) where the cryptography is not the point. Run with
// go test -race -run Concurrent.

// acceptingChecker accepts every proof.
type acceptingChecker struct{}

func (acceptingChecker) CheckClaim(context.Context, record.Claim) error { return nil }

// together runs fn(0..n-1) on n goroutines released at the same moment.
func together(n int, fn func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// testClock is a settable clock, safe for concurrent use.
type testClock struct{ ns atomic.Int64 }

func newTestClock(t time.Time) *testClock {
	c := &testClock{}
	c.Set(t)
	return c
}

func (c *testClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

func (c *testClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

func (c *testClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// openStore opens a store in a fresh directory, closed at cleanup.
func openStore(t *testing.T) (*store.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func createApp(t *testing.T, db *store.DB, now time.Time) (record.App, string) {
	t.Helper()
	app, secret, err := admin.NewApp(rand.Reader, now, admin.CreateAppRequest{Name: "race RP", RedirectURIs: []string{e2eRedirect}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateApp(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return app, secret
}

// randomFE is a random canonical field element (below 2^248 < p), as a
// nullifier or sub.
func randomFE() string {
	var b [31]byte
	rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	return fmt.Sprintf("0x00%x", b)
}

// ---- Verification: nullifier uniqueness and max_verifications ----

type verifyOutcome struct {
	status    int
	Code      string `json:"code"`
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
}

func TestConcurrentNullifierLimit(t *testing.T) {
	ctx := context.Background()
	db, dir := openStore(t)
	app, _ := createApp(t, db, time.Now())
	h, err := verify.New(verify.Options{Store: db, Checker: acceptingChecker{}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	const limit, n = 3, 32
	if err := db.SetActionLimit(ctx, app.RPID, "limited", "production", limit, time.Now()); err != nil {
		t.Fatal(err)
	}
	nullifier := randomFE()
	post := func(action string) []verifyOutcome {
		body := verifyRequest(action, `{"identifier":"orb","merkle_root":"0x01","nullifier":"`+nullifier+`","proof":"0x00"}`)
		out := make([]verifyOutcome, n)
		together(n, func(i int) {
			req := httptest.NewRequest(http.MethodPost, "/api/v4/verify/"+app.RPID, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, req)
			out[i].status = w.Code
			json.Unmarshal(w.Body.Bytes(), &out[i])
		})
		return out
	}
	t.Run("limited", func(t *testing.T) {
		counts := tally(post("limited"))
		if counts["200 first"] != 1 || counts["200 reuse"] != limit-1 || counts["400 max_verifications_reached"] != n-limit || len(counts) != 3 {
			t.Errorf("outcomes %v: want 1 first use, %d reuses and %d refusals", counts, limit-1, n-limit)
		}
	})
	t.Run("unlimited", func(t *testing.T) {
		counts := tally(post("unlimited"))
		if counts["200 first"] != 1 || counts["200 reuse"] != n-1 || len(counts) != 2 {
			t.Errorf("outcomes %v: want 1 first use and %d reuses", counts, n-1)
		}
	})
	t.Run("persisted", func(t *testing.T) {
		db.Close()
		again, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if _, err := again.RecordVerification(ctx, app.RPID, "limited", "production", nullifier, time.Now()); !errors.Is(err, record.ErrLimitReached) {
			t.Errorf("after reopening, a verification beyond the limit: %v", err)
		}
		if v, err := again.RecordVerification(ctx, app.RPID, "unlimited", "production", nullifier, time.Now()); err != nil || v.Count != n+1 {
			t.Errorf("after reopening, the unlimited count is %d (%v), want %d", v.Count, err, n+1)
		}
	})
}

// tally counts outcomes as "status first|reuse" for successes and
// "status code" otherwise; every success must share one created_at.
func tally(out []verifyOutcome) map[string]int {
	counts := map[string]int{}
	created := map[string]bool{}
	for _, o := range out {
		switch {
		case o.status == http.StatusOK && strings.HasSuffix(o.Message, "(nullifier reuse)"):
			counts["200 reuse"]++
			created[o.CreatedAt] = true
		case o.status == http.StatusOK:
			counts["200 first"]++
			created[o.CreatedAt] = true
		default:
			counts[fmt.Sprint(o.status, " ", o.Code)]++
		}
	}
	if len(created) > 1 {
		counts["differing created_at"] = len(created)
	}
	return counts
}

// ---- Sign-in: an in-process provider on a real store ----

// signinHarness is an OpenID provider and its sign-in flow on a real store with a settable
// clock and a checker that accepts every proof; the built-in Wallet Bridge
// relay (in memory) is served on the same listener, as -bridge-url self does.
type signinHarness struct {
	srv    *httptest.Server
	db     *store.DB
	p      *worldoidc.Provider
	app    record.App
	secret string
	clock  *testClock
}

func newSigninHarness(t *testing.T) *signinHarness {
	t.Helper()
	db, _ := openStore(t)
	h := &signinHarness{db: db, clock: newTestClock(time.Now())}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	var err error
	h.p, err = worldoidc.New(worldoidc.Options{Issuer: h.srv.URL, Store: h.db, Rand: rand.Reader, Now: h.clock.Now,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := relay.New(relay.Options{Store: relay.NewMemory(1<<12, 1<<26), Now: h.clock.Now, Rand: rand.Reader, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rl.Register(mux, "")
	flow, err := signin.New(signin.Options{Issuer: h.srv.URL, Store: h.db, Checker: acceptingChecker{}, Provider: h.p, Rand: rand.Reader, Now: h.clock.Now,
		BridgeURL: h.srv.URL, Bridge: &client.Client{}, CreateRate: ratelimit.Rate{Burst: -1}})
	if err != nil {
		t.Fatal(err)
	}
	h.p.Register(mux, flow)
	flow.Register(mux)
	h.app, h.secret = createApp(t, h.db, h.clock.Now())
	return h
}

func (h *signinHarness) authorizeURL() string {
	v := url.Values{"response_type": {"code"}, "client_id": {h.app.ID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}, "state": {"st"}}
	return h.srv.URL + "/authorize?" + v.Encode()
}

// answer is the wallet's answer to the page's bridge request, through the
// relay; the proof fields are placeholders the accepting checker takes.
func (h *signinHarness) answer(ctx context.Context, b pendingBrowser, nullifier string) error {
	conn, err := bridge.ParseConnect(b.connect)
	if err != nil {
		return err
	}
	var wc client.Client
	if _, err := wc.Fetch(ctx, conn); err != nil {
		return err
	}
	return wc.Answer(ctx, conn, rand.Reader, bridge.Response{Proof: "0x00", MerkleRoot: "0x01", NullifierHash: nullifier, VerificationLevel: "orb"})
}

// codeOf is the code of a successful redirect, or "".
func codeOf(r reply) string {
	if r.status != http.StatusSeeOther {
		return ""
	}
	u, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		return ""
	}
	return u.Query().Get("code")
}

// signIn runs one code flow without PKCE, as browser and wallet, and
// returns the code; safe on any goroutine.
func (h *signinHarness) signIn(nullifier string) (string, error) {
	b, err := openPending(h.authorizeURL())
	if err != nil {
		return "", err
	}
	if err := h.answer(context.Background(), b, nullifier); err != nil {
		return "", err
	}
	// The flow asks the relay at most once a second per sign-in.
	h.clock.Add(time.Second)
	r, err := b.finishWhenDone()
	if err != nil {
		return "", err
	}
	if code := codeOf(r); code != "" {
		return code, nil
	}
	return "", fmt.Errorf("finish: %d %s", r.status, r.header.Get("Location"))
}

type tokens struct {
	AccessToken string `json:"access_token"`
	IDToken     string `json:"id_token"`
}

// exchange redeems code at /token; safe on any goroutine.
func (h *signinHarness) exchange(code string) (reply, tokens, error) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e2eRedirect}}
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return reply{}, tokens{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(h.app.ID, h.secret)
	r, err := roundTrip(req)
	var tok tokens
	if err == nil && r.status == http.StatusOK {
		err = json.Unmarshal(r.body, &tok)
	}
	return r, tok, err
}

// issue signs in and redeems the code: one complete token issuance; safe
// on any goroutine.
func (h *signinHarness) issue() (tokens, error) {
	code, err := h.signIn(randomFE())
	if err != nil {
		return tokens{}, err
	}
	r, tok, err := h.exchange(code)
	if err == nil && r.status != http.StatusOK {
		err = fmt.Errorf("token: %d %s", r.status, r.body)
	}
	return tok, err
}

func (h *signinHarness) userinfo(t *testing.T, accessToken string) reply {
	return call(http.MethodGet, h.srv.URL+"/userinfo", "", "", "Authorization", "Bearer "+accessToken)(t)
}

func (h *signinHarness) introspect(t *testing.T, token string) reply {
	return call(http.MethodPost, h.srv.URL+"/introspect", "application/x-www-form-urlencoded", url.Values{"token": {token}}.Encode(),
		"Authorization", basicAuth(h.app.ID, h.secret))(t)
}

func TestConcurrentSingleUseCodes(t *testing.T) {
	h := newSigninHarness(t)
	const n = 24
	t.Run("one code, many redemptions", func(t *testing.T) {
		code, err := h.signIn(randomFE())
		if err != nil {
			t.Fatal(err)
		}
		replies := make([]reply, n)
		granted := make([]tokens, n)
		together(n, func(i int) { replies[i], granted[i], _ = h.exchange(code) })
		var winner *tokens
		for i, r := range replies {
			switch {
			case r.status == http.StatusOK && winner == nil:
				winner = &granted[i]
			case r.status == http.StatusBadRequest && r.errorCode() == "invalid_grant":
			default:
				t.Errorf("redemption %d: %d %s", i, r.status, r.body)
			}
		}
		if winner == nil {
			t.Fatal("no redemption succeeded")
		}
		// The other redemptions were replays: they revoked the grant.
		if r := h.userinfo(t, winner.AccessToken); r.status != http.StatusUnauthorized {
			t.Errorf("userinfo with the tokens of a replayed code: %d", r.status)
		}
	})
	t.Run("one sign-in request, many answers, polls and finishes", func(t *testing.T) {
		pending := pendingSignin(t, h.authorizeURL())
		replies := make([]reply, n)
		conn, err := bridge.ParseConnect(pending.connect)
		if err != nil {
			t.Fatal(err)
		}
		var wc client.Client
		if _, err := wc.Fetch(t.Context(), conn); err != nil {
			t.Fatal(err)
		}
		answers := make([]error, n)
		together(n, func(i int) {
			answers[i] = wc.Answer(t.Context(), conn, rand.Reader, bridge.Response{Proof: "0x00", MerkleRoot: "0x01", NullifierHash: randomFE(), VerificationLevel: "orb"})
		})
		accepted := 0
		for i, err := range answers {
			var se *client.StatusError
			switch {
			case err == nil:
				accepted++
			case errors.As(err, &se) && se.Status == http.StatusConflict:
			default:
				t.Errorf("answer %d: %v", i, err)
			}
		}
		if accepted != 1 {
			t.Fatalf("%d answers accepted, want 1", accepted)
		}
		h.clock.Add(time.Second)
		states := make([]string, n)
		together(n, func(i int) { states[i], _ = pending.state() })
		for i, s := range states {
			if s != "pending" && s != "done" {
				t.Errorf("poll %d: %q", i, s)
			}
		}
		if s, err := pending.awaitState(); s != "done" || err != nil {
			t.Fatalf("after the polls: %q %v", s, err)
		}
		together(n, func(i int) { replies[i], _ = pending.finish() })
		var codes []string
		for i, r := range replies {
			switch code := codeOf(r); {
			case code != "":
				codes = append(codes, code)
			case r.status == http.StatusBadRequest && r.errorCode() == "already_completed":
			default:
				t.Errorf("finish %d: %d %s", i, r.status, r.body)
			}
		}
		if len(codes) != 1 {
			t.Fatalf("%d finishes issued a code, want 1", len(codes))
		}
		if r, _, err := h.exchange(codes[0]); err != nil || r.status != http.StatusOK {
			t.Errorf("the one code does not redeem: %v %d", err, r.status)
		}
	})
}

// ---- Credential refresh: single-use proofs and sub pinning ----

// refreshHarness is the credential issuer on a real store with the local
// proving key and no rate limits.
type refreshHarness struct {
	db  *store.DB
	mux *http.ServeMux
	pk  *prover.ProvingKey
}

func newRefreshHarness(t *testing.T) *refreshHarness {
	t.Helper()
	db, _ := openStore(t)
	h := &refreshHarness{db: db, mux: http.NewServeMux(), pk: sharedProvingKey(t)}
	issuer, err := babyjub.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	off := refresh.Rate{Burst: -1}
	handler, err := refresh.New(refresh.Options{Store: h.db, VerifyingKey: h.pk.VerifyingKey(), IssuerKey: issuer, PerIP: off, PerIDComm: off,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	handler.Register(h.mux)
	return h
}

// enroll makes an identity with a signup record and returns its
// commitment's canonical form.
func (h *refreshHarness) enroll(t *testing.T) (semaphore.Identity, string) {
	t.Helper()
	id, err := semaphore.NewIdentity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	idComm := field.Format(&c)
	if err := h.db.PutSignup(context.Background(), record.Signup{IDCommitment: idComm, SignupID: "s", VerifiedAt: time.Unix(1_700_000_000, 0)}); err != nil {
		t.Fatal(err)
	}
	return id, idComm
}

// request proves a refresh for sub (about a second).
func (h *refreshHarness) request(t *testing.T, id semaphore.Identity, sub string, now time.Time) *http.Request {
	t.Helper()
	req, err := wallet.NewRefreshHTTPRequest(context.Background(), &wallet.RefreshRequest{IssuerURL: "http://issuer.test", Identity: id, ProvingKey: h.pk, Sub: sub, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// serve answers a copy of req; safe on any goroutine.
func (h *refreshHarness) serve(req *http.Request) (int, string) {
	r := req.Clone(context.Background())
	r.Body, _ = req.GetBody()
	w := httptest.NewRecorder()
	h.mux.ServeHTTP(w, r)
	var body struct{ Error string }
	json.Unmarshal(w.Body.Bytes(), &body)
	return w.Code, body.Error
}

func TestConcurrentSingleUseProofs(t *testing.T) {
	t.Run("store", func(t *testing.T) {
		db, _ := openStore(t)
		const n = 64
		errs := make([]error, n)
		together(n, func(i int) { errs[i] = db.UseProofOnce(context.Background(), "proof-key", time.Now().Add(time.Hour)) })
		if ok, exists := countErrs(errs, record.ErrExists); ok != 1 || exists != n-1 {
			t.Errorf("%d uses accepted, %d refused as replays; want 1 and %d", ok, exists, n-1)
		}
	})
	t.Run("refresh x-zkp-proof", func(t *testing.T) {
		h := newRefreshHarness(t)
		id, _ := h.enroll(t)
		req := h.request(t, id, "0x5", time.Now())
		const n = 16
		statuses, codes := make([]int, n), make([]string, n)
		together(n, func(i int) { statuses[i], codes[i] = h.serve(req) })
		accepted := 0
		for i := range n {
			switch {
			case statuses[i] == http.StatusOK:
				accepted++
			case statuses[i] != http.StatusUnauthorized || codes[i] != refresh.CodeInvalidProof:
				t.Errorf("send %d: %d %s", i, statuses[i], codes[i])
			}
		}
		if accepted != 1 {
			t.Errorf("%d sends of one proof were accepted, want 1", accepted)
		}
	})
}

// countErrs counts nil errors and errors wrapping target; any other error
// is counted in neither.
func countErrs(errs []error, target error) (ok, matched int) {
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, target):
			matched++
		}
	}
	return ok, matched
}

func TestConcurrentSubPinning(t *testing.T) {
	ctx := context.Background()
	t.Run("store", func(t *testing.T) {
		db, _ := openStore(t)
		const n = 64
		idComm, digest := randomFE(), strings.Repeat("ab", 32)
		errs := make([]error, n)
		together(n, func(i int) {
			errs[i] = db.RecordRefresh(ctx, record.Refresh{IDCommitment: idComm, Sub: fmt.Sprintf("0x%064x", i+1), At: time.Now(), CredentialID: uint64(i)})
		})
		if ok, mismatched := countErrs(errs, record.ErrSubMismatch); ok != 1 || mismatched != n-1 {
			t.Errorf("%d refreshes pinned, %d refused; want 1 and %d", ok, mismatched, n-1)
		}
		together(n, func(i int) {
			errs[i] = db.RecordRefresh(ctx, record.Refresh{IDCommitment: fmt.Sprintf("0x%064x", i+1), Sub: idComm, At: time.Now(), PCPDigest: digest})
		})
		if ok, reused := countErrs(errs, record.ErrPCPReused); ok != 1 || reused != n-1 {
			t.Errorf("one hashes.json served %d identities (%d refused); want 1", ok, reused)
		}
	})
	t.Run("refresh", func(t *testing.T) {
		h := newRefreshHarness(t)
		id, idComm := h.enroll(t)
		subs := []string{"0x1", "0x2", "0x3"}
		reqs := make([]*http.Request, len(subs))
		for i, sub := range subs {
			reqs[i] = h.request(t, id, sub, time.Now())
		}
		statuses, codes := make([]int, len(subs)), make([]string, len(subs))
		together(len(subs), func(i int) { statuses[i], codes[i] = h.serve(reqs[i]) })
		winner := -1
		for i := range subs {
			switch {
			case statuses[i] == http.StatusOK && winner < 0:
				winner = i
			case statuses[i] != http.StatusBadRequest || codes[i] != refresh.CodeSubMismatch:
				t.Errorf("sub %s: %d %s", subs[i], statuses[i], codes[i])
			}
		}
		if winner < 0 {
			t.Fatal("no refresh succeeded")
		}
		pinned, err := h.db.PinnedSub(ctx, idComm)
		want := fmt.Sprintf("0x%064s", strings.TrimPrefix(subs[winner], "0x"))
		if err != nil || pinned != want {
			t.Errorf("pinned sub %q (%v), want the winner's %s", pinned, err, want)
		}
		if rs, err := h.db.Refreshes(ctx, idComm); err != nil || len(rs) != 1 || rs[0].Sub != want {
			t.Errorf("refreshes recorded: %+v (%v), want one for %s", rs, err, want)
		}
	})
}

// ---- Key rotation during token issuance ----

// TestConcurrentKeyRotation issues tokens while rotations are requested
// concurrently and while the successor key becomes the signer: exactly one
// successor is scheduled per rotation, and every token issued verifies
// against the published keys (go-oidc as an independent verifier) and is
// accepted at /userinfo after the switch.
func TestConcurrentKeyRotation(t *testing.T) {
	h := newSigninHarness(t)
	ctx := context.Background()
	keySet := goidc.NewRemoteKeySet(ctx, h.srv.URL+"/jwks")
	const issuers, rounds, rotators = 3, 3, 2
	var mu sync.Mutex
	var issued []tokens
	issuedOne := make(chan struct{}, 1) // a token was issued since the last receive
	issueAll := func(t *testing.T, during func()) {
		together(issuers+1, func(i int) {
			if i == issuers {
				during()
				return
			}
			for range rounds {
				tok, err := h.issue()
				if err != nil {
					t.Errorf("issuer %d: %v", i, err)
					return
				}
				mu.Lock()
				issued = append(issued, tok)
				mu.Unlock()
				select {
				case issuedOne <- struct{}{}:
				default:
				}
			}
		})
	}
	rotate := func(t *testing.T) func() {
		return func() {
			together(rotators, func(int) {
				if err := h.p.RotateKeys(ctx); err != nil {
					t.Errorf("rotate: %v", err)
				}
			})
		}
	}
	signingKeys := func(t *testing.T) []record.SigningKey {
		keys, err := h.db.SigningKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}

	// Rotations requested while tokens are issued schedule one successor.
	issueAll(t, rotate(t))
	keys := signingKeys(t)
	if len(keys) != 2 {
		t.Fatalf("%d signing keys after concurrent rotations, want the first and one successor", len(keys))
	}
	successor := keys[0]
	if keys[1].ActivateAt.After(successor.ActivateAt) {
		successor = keys[1]
	}
	// The successor starts signing while tokens are issued. The clock
	// moves less than a code's lifetime, so no flow expires midway, and
	// the old key's tokens stay valid: it stays published.
	h.clock.Set(successor.ActivateAt.Add(-2 * time.Minute))
	issued = nil
	select {
	case <-issuedOne:
	default:
	}
	issueAll(t, func() {
		<-issuedOne
		h.clock.Set(successor.ActivateAt.Add(2 * time.Minute))
	})
	// And rotating again, while the successor signs, schedules a third key.
	issueAll(t, rotate(t))
	if keys := signingKeys(t); len(keys) != 3 {
		t.Errorf("%d signing keys after the second rotation, want 3", len(keys))
	}
	kids := map[string]int{}
	for _, tok := range issued {
		if _, err := keySet.VerifySignature(ctx, tok.IDToken); err != nil {
			t.Errorf("an ID token does not verify against /jwks: %v", err)
		}
		if r := h.userinfo(t, tok.AccessToken); r.status != http.StatusOK {
			t.Errorf("userinfo after the switch: %d %s", r.status, r.body)
		}
		kids[tokenKid(t, tok.IDToken)]++
	}
	if kids[successor.ID] == 0 || len(kids) != 2 {
		t.Errorf("tokens by key %v, want both the old key and the successor %s", kids, successor.ID)
	}
}

func tokenKid(t *testing.T, jwt string) string {
	t.Helper()
	header, _, _ := strings.Cut(jwt, ".")
	b, err := base64.RawURLEncoding.DecodeString(header)
	var h struct{ Kid string }
	if err != nil || json.Unmarshal(b, &h) != nil {
		t.Fatalf("token header %q", header)
	}
	return h.Kid
}
