package oidc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"worldid/backup"
	"worldid/bridge"
	"worldid/internal/leaf/qr"
	"worldid/record"
)

func TestAuthorizeStoresNothing(t *testing.T) {
	f := newFixture(t)
	lsn := f.store.lsn()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		var w *httptest.ResponseRecorder
		if method == http.MethodGet {
			w = f.do(method, "/authorize?"+authorizeQuery().Encode(), nil, nil)
		} else {
			w = f.postForm("/authorize", authorizeQuery(), nil)
		}
		if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), f.issuer+"/authorize/wait?r=") {
			t.Fatalf("%s: %s", method, describe(w))
		}
		c := w.Result().Cookies()
		if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteLaxMode || c[0].MaxAge != int((signinLifetime+finishGrace).Seconds()) || c[0].Secure ||
			!strings.HasPrefix(c[0].Name, "worldid-signin-") {
			t.Fatalf("cookie %v", w.Header()["Set-Cookie"])
		}
	}
	if f.store.lsn() != lsn {
		t.Fatal("an authorization request stored a record")
	}
}

func TestBindingCookieHTTPS(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Issuer = "https://id.example" })
	w := f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil)
	c := w.Result().Cookies()
	if len(c) != 1 || !strings.HasPrefix(c[0].Name, "__Host-worldid-signin-") || !c[0].Secure || c[0].Path != "/" || c[0].Domain != "" {
		t.Fatalf("cookie %v", w.Header()["Set-Cookie"])
	}
}

var nonceRE = regexp.MustCompile(`script-src 'nonce-([^']+)'`)

func TestWaitPage(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	w := f.open(b)
	body := w.Body.String()
	h := w.Header()
	if w.Code != 200 || h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" || h.Get("Deprecation") == "" {
		t.Fatal(describe(w))
	}
	csp := h.Get("Content-Security-Policy")
	m := nonceRE.FindStringSubmatch(csp)
	if m == nil || !strings.HasPrefix(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe") ||
		strings.Count(body, "<script") != 1 || !strings.Contains(body, `<script nonce="`+m[1]+`">`) {
		t.Fatalf("CSP %q does not match the page", csp)
	}
	for _, want := range []string{
		"Test &lt;RP&gt;", `<strong id="return-host">rp.example</strong>`, `<meta http-equiv="refresh" content="2">`,
		"Never scan a sign-in code that someone sent you", `action="` + f.issuer + `/authorize/cancel"`,
		"Scan this code", "visibilitychange",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("wait page lacks %q", want)
		}
	}
	// The button is the connect URL of the page's bridge request, returning
	// to this page; the QR code is the same without return_to (it is read
	// on another device), drawn server-side.
	conn := walletConnect(t, body)
	if conn.ReturnTo != f.issuer+b.waitURL || conn.Base != bridge.ProductionVerify {
		t.Fatalf("connect URL %+v", conn)
	}
	scanned := conn
	scanned.ReturnTo = ""
	raw := scanned.String()
	q := must(qr.Encode([]byte(raw)))
	if !strings.Contains(body, q.SVG("qr", "QR code of the sign-in request")) {
		t.Fatal("the page's QR code is not the connect URL's")
	}
	if q.Version() > 10 {
		t.Errorf("QR code version %d for a %d-byte connect URL", q.Version(), len(raw))
	}
	// Reloading after the wallet read the request shows the same request,
	// now scanned.
	f.scan(body)
	f.clock.Advance(time.Second)
	again := f.waitPage(b)
	if !strings.Contains(again, "Confirm the sign-in in World App.") {
		t.Fatal("reloaded page is not the scanned request")
	}
	if walletConnect(t, again) != conn {
		t.Fatal("reload started another request")
	}
}

// TestWaitPageHasNoSunsetNotice: the sunset is the operator's business
// (Deprecation and Sunset headers): the page a person signs in on never
// mentions it, before or after the date.
func TestWaitPageHasNoSunsetNotice(t *testing.T) {
	for _, sunset := range []time.Time{testStart.Add(-24 * time.Hour), testStart.Add(24 * time.Hour)} {
		f := newFixture(t, func(o *Options) { o.SunsetDate = sunset })
		page := f.waitPage(f.authorize(authorizeQuery()))
		if strings.Contains(page, "deprecated") || strings.Contains(page, "shut") {
			t.Fatalf("sunset %s: the wait page tells the user: %s", sunset, page)
		}
	}
}

func (f *fixture) status(b browser) string {
	f.t.Helper()
	w := f.do(http.MethodGet, strings.Replace(b.waitURL, "/authorize/wait", "/authorize/status", 1), nil, map[string]string{"Cookie": b.cookie})
	var s struct {
		State string `json:"state"`
	}
	if w.Code != 200 || decodeJSON(w.Body, &s) != nil {
		f.t.Fatalf("status: %s", describe(w))
	}
	return s.State
}

func TestSigninLifecycle(t *testing.T) {
	f := newFixture(t)
	lsn := f.store.lsn()
	b := f.authorize(authorizeQuery())
	if s := f.status(b); s != "pending" {
		t.Fatalf("status %q", s)
	}
	conn, req := f.scan(f.waitPage(b))
	if req.AppID != testClientID || req.Action != "" || len(req.Signal) != 66 || !isLowerHex(req.Signal[2:], 64) {
		t.Fatalf("bridge request %+v", req)
	}
	if s := f.poll(b); s != "scanned" {
		t.Fatalf("status after scan %q", s)
	}
	// The read is marked (the status above) without a durable record
	// (oidc doc.go): authorize and the read stored nothing.
	if f.store.lsn() != lsn {
		t.Fatal("the wallet's read stored a record")
	}
	// A proof that does not verify is refused and consumes nothing: Try
	// again asks the wallet anew for the same sign-in.
	bad := proofAnswer(t, req, "orb")
	bad.Proof = "0x1234"
	f.answer(conn, bad)
	if s := f.poll(b); s != "refused" {
		t.Fatalf("status after a bad proof %q", s)
	}
	b = f.retry(b)
	conn, req = b.conn, f.fetch(b.conn)
	good := proofAnswer(t, req, "orb")
	f.answer(conn, good)
	if s := f.poll(b); s != "done" {
		t.Fatalf("status after approval %q", s)
	}
	approvedAt := f.clock.Now()
	if c := f.checker.last(); "0x"+hex.EncodeToString(c.SignalHash[:]) != req.Signal || c.AppID != testClientID || c.Identifier != "orb" {
		t.Fatalf("claim %+v", c)
	}
	// The same proof answered for another sign-in is refused there.
	other := f.authorize(authorizeQuery())
	otherConn, _ := f.scan(f.waitPage(other))
	f.answer(otherConn, good)
	if s := f.poll(other); s != "refused" {
		t.Fatalf("a replayed proof: status %q", s)
	}
	// Another browser: no cookie, or its own cookie for another request.
	for _, cookie := range []string{"", other.cookie, strings.SplitN(b.cookie, "=", 2)[0] + "=" + strings.SplitN(other.cookie, "=", 2)[1]} {
		wantPage(t, f.do(http.MethodGet, b.waitURL, nil, map[string]string{"Cookie": cookie}), 403, "other_browser")
	}
	if f.store.rows(backup.TableAuthCodes) != 0 {
		t.Fatal("a code was issued before the browser finished")
	}
	v := responseParams(t, f.open(b), modeQuery)
	if v.Get("state") != "st-1" || v.Get("code") == "" {
		t.Fatalf("finish: %v", v)
	}
	c := f.storedCode(v.Get("code"))
	if c.Subject != testNullifier || c.VerificationLevel != "orb" || !c.AuthTime.Equal(approvedAt) {
		t.Fatalf("code %+v", c)
	}
	// Exactly once.
	wantPage(t, f.open(b), 400, "already_completed")
	if s := f.status(b); s != "finished" {
		t.Fatalf("status after the finish %q", s)
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	conn, req := f.scan(f.waitPage(b))
	cancel := url.Values{"r": {waitToken(b)}}
	wantPage(t, f.postForm("/authorize/cancel", cancel, nil), 403, "other_browser")
	wantRedirectError(t, f.postForm("/authorize/cancel", cancel, map[string]string{"Cookie": b.cookie}), modeQuery, "access_denied", "st-1")
	// The wallet's answer after the cancel approves nothing.
	f.answer(conn, proofAnswer(t, req, "orb"))
	if s := f.poll(b); s != "cancelled" {
		t.Fatalf("status %q", s)
	}
	wantPage(t, f.postForm("/authorize/cancel", cancel, map[string]string{"Cookie": b.cookie}), 400, "already_completed")
	wantPage(t, f.open(b), 400, "already_completed")
	if f.store.rows(backup.TableAuthCodes) != 0 {
		t.Fatal("a cancelled sign-in issued a code")
	}
}

func TestExpiredRequest(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("code_challenge", s256Challenge(testVerifier))
	q.Set("code_challenge_method", "S256")
	b := f.authorize(q)
	conn, req := f.scan(f.waitPage(b))
	f.clock.Advance(signinLifetime)
	// The wallet answers too late (if the relay still takes the answer).
	_ = f.relay.client.Answer(t.Context(), conn, rand.Reader, proofAnswer(t, req, "orb"))
	w := f.open(b)
	if w.Code != http.StatusGone || !strings.Contains(w.Body.String(), "expired") {
		t.Fatal(describe(w))
	}
	m := regexp.MustCompile(`<a id="restart" class="button" href="([^"]+)">`).FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no way to start again: %s", w.Body)
	}
	restart := must(url.Parse(html.UnescapeString(m[1])))
	got := restart.Query()
	for _, name := range []string{"client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method"} {
		if got.Get(name) != q.Get(name) {
			t.Errorf("restart %s = %q, want %q", name, got.Get(name), q.Get(name))
		}
	}
	if s := f.status(b); s != "expired" {
		t.Fatalf("status %q", s)
	}
	// Starting again works and keeps the relying party's PKCE challenge.
	b2 := f.authorize(got)
	f.approve(b2, "orb")
	code := responseParams(t, f.open(b2), modeQuery).Get("code")
	v := tokenForm(code)
	v.Set("code_verifier", testVerifier)
	if w := f.postForm("/token", v, basicAuth(testClientID, testSecret)); w.Code != 200 {
		t.Fatal(describe(w))
	}
}

func TestRequestTokensBadInput(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	browserToken := waitToken(b)
	flip := func(s string) string {
		i := len(s) - 3
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	for name, token := range map[string]string{"garbage": "x", "tampered": flip(browserToken), "no dot": strings.ReplaceAll(browserToken, ".", ""),
		"other kid": "ZZZZZZZZ" + browserToken[8:], "padded": browserToken + "="} {
		t.Run("browser "+name, func(t *testing.T) {
			wantPage(t, f.do(http.MethodGet, "/authorize/wait?r="+url.QueryEscape(token), nil, map[string]string{"Cookie": b.cookie}), 400, "invalid_request")
		})
	}
	wantPage(t, f.do(http.MethodGet, "/authorize/wait", nil, nil), 400, "required")
	wantPage(t, f.do(http.MethodGet, b.waitURL+"&r=x", nil, map[string]string{"Cookie": b.cookie}), 400, "invalid_request")
	// None of that consumed anything.
	f.approve(b, "orb")
	responseParams(t, f.open(b), modeQuery)
}

// TestAnswerErrors: a malformed or refused wallet answer is refused and
// consumes nothing (Try again then signs in); a checker that cannot decide
// keeps the answer, which approves once the checker is back.
func TestAnswerErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		edit func(*bridge.Response)
	}{
		{"no proof", func(r *bridge.Response) { r.Proof = "" }},
		{"no merkle_root", func(r *bridge.Response) { r.MerkleRoot = "" }},
		{"no nullifier_hash", func(r *bridge.Response) { r.NullifierHash = "" }},
		{"no verification_level", func(r *bridge.Response) { r.VerificationLevel = "" }},
		{"nullifier = p", func(r *bridge.Response) {
			r.NullifierHash = "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
		}},
		{"nullifier not hex", func(r *bridge.Response) { r.NullifierHash = "0xzz" }},
		{"root too long", func(r *bridge.Response) { r.MerkleRoot = "0x" + strings.Repeat("0", 65) }},
		{"level document", func(r *bridge.Response) { r.VerificationLevel = "document" }},
		{"proof oversize", func(r *bridge.Response) { r.Proof = strings.Repeat("0", 4096+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := f.authorize(authorizeQuery())
			conn, req := f.scan(f.waitPage(b))
			resp := proofAnswer(t, req, "orb")
			tc.edit(&resp)
			f.answer(conn, resp)
			if s := f.poll(b); s != "refused" {
				t.Fatalf("status %q", s)
			}
			f.approve(f.retry(b), "orb")
		})
	}
	for _, err := range []error{errors.New("disk on fire"), record.ErrUnavailable} {
		t.Run("checker "+err.Error(), func(t *testing.T) {
			b := f.authorize(authorizeQuery())
			conn, req := f.scan(f.waitPage(b))
			f.checker.err = err
			f.answer(conn, proofAnswer(t, req, "orb"))
			if s := f.poll(b); s != "unavailable" {
				t.Fatalf("status while the checker is down %q", s)
			}
			f.checker.err = nil
			if s := f.poll(b); s != "done" {
				t.Fatalf("status once the checker is back %q", s)
			}
		})
	}
}

// TestAcrossProviders: a second provider on the same store (a replica, or
// this one after a restart) serves every step of a request another one
// started, and a key rotation does not strand pending requests.
func TestAcrossProviders(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	page := f.waitPage(b)
	replica := must(New(Options{Issuer: f.issuer, Store: f.store, Rand: rand.Reader, Now: f.clock.Now}))
	mux := http.NewServeMux()
	register(t, replica, f.store, f.checker, mux, f.relay)
	do := func(method, target string, body url.Values, cookie string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body.Encode()))
		if body != nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		r.Header.Set("Cookie", cookie)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	conn, req := f.scan(page)
	// The stored key rotates: the next key signs from now on, the old one
	// stays published.
	next := must(newSigningKey(testStart, testStart.Add(time.Minute)))
	f.store.addKey(next)
	f.clock.Advance(2 * time.Minute)
	for _, p := range []*Provider{f.p, replica} {
		if err := p.loadKeys(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if replica.keySet().signer.rec.ID != next.ID {
		t.Fatal("the new key does not sign")
	}
	// The replica's poll sees the wallet's answer and records the approval.
	f.answer(conn, proofAnswer(t, req, "device"))
	status := strings.Replace(b.waitURL, "/authorize/wait", "/authorize/status", 1)
	if w := do(http.MethodGet, status, nil, b.cookie); w.Code != 200 || !strings.Contains(w.Body.String(), `"state":"done"`) {
		t.Fatal(describe(w))
	}
	v := responseParams(t, f.open(b), modeQuery)
	if c := f.storedCode(v.Get("code")); c.VerificationLevel != "device" {
		t.Fatalf("code %+v", c)
	}
}

func TestEmailDomain(t *testing.T) {
	for domain, ok := range map[string]bool{"id.example": true, "localhost": true, "127.0.0.1": false, "::1": false,
		"[::1]": false, "a..b": false, "-a.b": false, "a_b.c": false, "": false} {
		if err := CheckEmailDomain(domain); (err == nil) != ok {
			t.Errorf("CheckEmailDomain(%q) = %v", domain, err)
		}
	}
	f := newFixture(t, func(o *Options) { o.EmailDomain = "users.example" })
	q := authorizeQuery()
	q.Set("scope", "openid email")
	tr := f.tokensFor(q)
	w := f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tr.AccessToken})
	if !strings.Contains(w.Body.String(), `"email":"`+testNullifier+`@users.example"`) {
		t.Fatal(describe(w))
	}
	if _, err := New(Options{Issuer: "http://127.0.0.1:1", Store: newTestStore(t), Rand: rand.Reader,
		Now: time.Now, EmailDomain: "10.0.0.1"}); err == nil {
		t.Fatal("an IP email domain was accepted")
	}
}

// TestApprovedInTheLastSeconds: a request the wallet approves just before
// it expires is still finished during finishGrace, even after the store
// prunes expired records; after the grace the page says it expired.
func TestApprovedInTheLastSeconds(t *testing.T) {
	f := newFixture(t)
	late, later := f.authorize(authorizeQuery()), f.authorize(authorizeQuery())
	conn1, req1 := f.scan(f.waitPage(late))
	conn2, req2 := f.scan(f.waitPage(later))
	f.clock.Advance(signinLifetime - time.Second)
	f.answer(conn1, proofAnswer(t, req1, "orb"))
	f.answer(conn2, proofAnswer(t, req2, "orb"))
	for _, b := range []browser{late, later} {
		if s := f.status(b); s != "done" {
			t.Fatalf("status in the last second %q", s)
		}
	}
	f.clock.Advance(finishGrace / 2)
	if err := f.store.PruneExpired(t.Context(), f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if s := f.status(late); s != "done" {
		t.Fatalf("status in the grace %q", s)
	}
	if code := responseParams(t, f.open(late), modeQuery).Get("code"); code == "" {
		t.Fatal("no code in the grace")
	}
	f.clock.Advance(finishGrace/2 + time.Second) // expiry + finishGrace
	if s := f.status(later); s != "expired" {
		t.Fatalf("status after the grace %q", s)
	}
	if w := f.open(later); w.Code != http.StatusGone {
		t.Fatalf("after the grace: %s", describe(w))
	}
}

// TestFinishRetriedAfterStoreFailure: a store failure while the browser
// finishes (saving the code, or marking the request finished) answers 503
// and keeps the approval; reloading the page finishes the sign-in with a
// code that redeems.
func TestFinishRetriedAfterStoreFailure(t *testing.T) {
	for _, method := range []string{"SaveCode", "AdvanceSignin"} {
		t.Run(method, func(t *testing.T) {
			f := newFixture(t)
			b := f.authorize(authorizeQuery())
			f.approve(b, "orb")
			f.store.failNext(method, record.ErrUnavailable)
			w := f.open(b)
			wantPage(t, w, http.StatusServiceUnavailable, "unavailable")
			if !strings.Contains(w.Body.String(), "reload this page to try again") {
				t.Fatalf("no way to retry: %s", w.Body)
			}
			if s := f.status(b); s != "done" {
				t.Fatalf("status after the failure %q", s)
			}
			code := responseParams(t, f.open(b), modeQuery).Get("code")
			if w := f.postForm("/token", tokenForm(code), basicAuth(testClientID, testSecret)); w.Code != http.StatusOK {
				t.Fatalf("token: %s", describe(w))
			}
			wantPage(t, f.open(b), http.StatusBadRequest, "already_completed")
		})
	}
}

// TestBindingCookieCleared: finishing, cancelling and loading a request
// that is already over expire that request's cookie, with the attributes
// a __Host- cookie's removal needs.
func TestBindingCookieCleared(t *testing.T) {
	for _, issuer := range []string{"", "https://id.example"} {
		f := newFixture(t, func(o *Options) {
			if issuer != "" {
				o.Issuer = issuer
			}
		})
		if issuer != "" {
			f.issuer = issuer
		}
		cleared := func(what string, w *httptest.ResponseRecorder, b browser) {
			t.Helper()
			name, _, _ := strings.Cut(b.cookie, "=")
			// A finish also sets the login session (session_test.go).
			c := slices.DeleteFunc(w.Result().Cookies(), func(c *http.Cookie) bool { return strings.HasSuffix(c.Name, sessionCookie) })
			if len(c) != 1 || c[0].Name != name || c[0].MaxAge >= 0 || c[0].Value != "" || c[0].Path != "/" ||
				c[0].Secure != (issuer != "") || !c[0].HttpOnly {
				t.Errorf("%s %s: Set-Cookie %q, want %s expired", issuer, what, w.Header()["Set-Cookie"], name)
			}
		}
		b := f.authorize(authorizeQuery())
		f.approve(b, "orb")
		if w := f.open(b); w.Code != http.StatusSeeOther {
			t.Fatalf("finish: %s", describe(w))
		} else {
			cleared("finish", w, b)
		}
		cleared("already over", f.open(b), b)
		q := authorizeQuery()
		q.Set("response_mode", "form_post")
		b = f.authorize(q)
		f.approve(b, "device")
		cleared("form_post finish", f.open(b), b)
		b = f.authorize(authorizeQuery())
		cleared("cancel", f.postForm("/authorize/cancel", url.Values{"r": {waitToken(b)}}, map[string]string{"Cookie": b.cookie}), b)
		if w := f.open(b); len(w.Result().Cookies()) != 1 {
			t.Errorf("%s: a cancelled request's page does not expire its cookie: %q", issuer, w.Header()["Set-Cookie"])
		}
		// A page that is still waiting keeps its cookie.
		if w := f.open(f.authorize(authorizeQuery())); len(w.Result().Cookies()) != 0 {
			t.Errorf("%s: the wait page sets %q", issuer, w.Header()["Set-Cookie"])
		}
	}
}
