package oidc

import (
	"crypto/rand"
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
	// The QR code is the wallet link, drawn server-side.
	link := walletParams(t, body)
	raw := "worldid://signin?" + link.Encode()
	q := must(qr.Encode([]byte(raw)))
	if !strings.Contains(body, q.SVG("qr", "QR code of the sign-in request")) {
		t.Fatal("the page's QR code is not the wallet link's")
	}
	if q.Version() > 10 {
		t.Errorf("QR code version %d for a %d-byte link", q.Version(), len(raw))
	}
	d, _ := f.walletRequest(body)
	if !strings.Contains(body, `<strong id="match-code">`+d.MatchCode+`</strong>`) || len(d.MatchCode) != 5 {
		t.Fatalf("match code %q not on the page", d.MatchCode)
	}
	// Reloading shows the same request, now scanned.
	again := f.waitPage(b)
	if !strings.Contains(again, "Confirm the sign-in in World App.") || walletParams(t, again).Get("request") == "" {
		t.Fatal("reloaded page is not the scanned request")
	}
	if d2, _ := f.walletRequest(again); d2.MatchCode != d.MatchCode || d2.Signal != d.Signal {
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
	page := f.waitPage(b)
	d, form := f.walletSubmission(page, "orb")
	if d.AppID != testClientID || d.AppName != "Test <RP>" || d.ReturnHost != "rp.example" || d.Action != "" ||
		!isLowerHex(d.Signal, 64) || d.Submit != f.issuer+"/authorize/complete" || d.ExpiresAt != "2025-06-01T12:10:00Z" {
		t.Fatalf("details %+v", d)
	}
	if s := f.status(b); s != "scanned" {
		t.Fatalf("status after scan %q", s)
	}
	// The read is marked (the status above) without a durable record
	// (oidc doc.go): authorize and the read stored nothing.
	if f.store.lsn() != lsn {
		t.Fatal("the wallet's read stored a record")
	}
	// A proof that does not verify is refused and consumes nothing.
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("proof", "0x1234")
	wantError(t, f.postForm("/authorize/complete", bad, nil), 403, "access_denied", "access_denied")
	if s := f.status(b); s != "scanned" {
		t.Fatalf("status after a bad proof %q", s)
	}
	w := f.postForm("/authorize/complete", form, nil)
	if w.Code != 200 || w.Body.String() != `{"status":"approved","return_to":"rp.example"}`+"\n" || w.Header().Get("Location") != "" {
		t.Fatalf("complete: %s", describe(w))
	}
	if c := f.checker.last(); c.SignalHash != keccakHashToField([]byte(d.Signal)) || c.AppID != testClientID || c.Identifier != "orb" {
		t.Fatalf("claim %+v", c)
	}
	wantError(t, f.postForm("/authorize/complete", form, nil), 409, "already_completed", "invalid_request")
	if s := f.status(b); s != "done" {
		t.Fatalf("status after approval %q", s)
	}
	// Another browser: no cookie, or its own cookie for another request.
	other := f.authorize(authorizeQuery())
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
	if c.Subject != testNullifier || c.VerificationLevel != "orb" || !c.AuthTime.Equal(testStart) {
		t.Fatalf("code %+v", c)
	}
	// Exactly once.
	wantPage(t, f.open(b), 400, "already_completed")
	wantError(t, f.postForm("/authorize/complete", form, nil), 409, "already_completed", "invalid_request")
	if _, w := f.walletRequest(page); w.Code != 409 {
		t.Fatalf("wallet request after finish: %s", describe(w))
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	page := f.waitPage(b)
	_, form := f.walletSubmission(page, "orb")
	token := must(url.ParseQuery(must(url.Parse(b.waitURL)).RawQuery)).Get("r")
	cancel := url.Values{"r": {token}}
	wantPage(t, f.postForm("/authorize/cancel", cancel, nil), 403, "other_browser")
	wantRedirectError(t, f.postForm("/authorize/cancel", cancel, map[string]string{"Cookie": b.cookie}), modeQuery, "access_denied", "st-1")
	w := f.postForm("/authorize/complete", form, nil)
	wantError(t, w, 409, "cancelled", "access_denied")
	if _, w := f.walletRequest(page); w.Code != 409 {
		t.Fatalf("wallet request after cancel: %s", describe(w))
	}
	wantPage(t, f.postForm("/authorize/cancel", cancel, map[string]string{"Cookie": b.cookie}), 400, "already_completed")
	wantPage(t, f.open(b), 400, "already_completed")
	if s := f.status(b); s != "cancelled" {
		t.Fatalf("status %q", s)
	}
}

func TestExpiredRequest(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("code_challenge", pkceChallenge(testVerifier))
	q.Set("code_challenge_method", "S256")
	b := f.authorize(q)
	_, form := f.walletSubmission(f.waitPage(b), "orb")
	f.clock.Advance(signinLifetime)
	wantError(t, f.postForm("/authorize/complete", form, nil), 400, "expired", "invalid_request")
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
	page := f.waitPage(b)
	_, form := f.walletSubmission(page, "orb")
	browserToken := must(url.ParseQuery(must(url.Parse(b.waitURL)).RawQuery)).Get("r")
	walletToken := form.Get("request")
	flip := func(s string) string {
		i := len(s) - 3
		c := byte('A')
		if s[i] == 'A' {
			c = 'B'
		}
		return s[:i] + string(c) + s[i+1:]
	}
	for name, token := range map[string]string{
		"garbage": "x", "no dot": strings.ReplaceAll(walletToken, ".", ""), "tampered": flip(walletToken),
		"other kid": "ZZZZZZZZ" + walletToken[8:], "browser token": browserToken, "padded": walletToken + "=",
	} {
		t.Run("wallet "+name, func(t *testing.T) {
			bad := url.Values{}
			for k, v := range form {
				bad[k] = v
			}
			bad.Set("request", token)
			wantError(t, f.postForm("/authorize/complete", bad, nil), 400, "invalid_request", "invalid_request")
			w := f.do(http.MethodGet, "/authorize/request?"+url.Values{"request": {token}}.Encode(), nil, nil)
			wantError(t, w, 400, "invalid_request", "invalid_request")
		})
	}
	for name, token := range map[string]string{"garbage": "x", "tampered": flip(browserToken), "wallet token": walletToken} {
		t.Run("browser "+name, func(t *testing.T) {
			wantPage(t, f.do(http.MethodGet, "/authorize/wait?r="+url.QueryEscape(token), nil, map[string]string{"Cookie": b.cookie}), 400, "invalid_request")
		})
	}
	wantPage(t, f.do(http.MethodGet, "/authorize/wait", nil, nil), 400, "required")
	wantPage(t, f.do(http.MethodGet, b.waitURL+"&r=x", nil, map[string]string{"Cookie": b.cookie}), 400, "invalid_request")
	// None of that consumed anything.
	if w := f.postForm("/authorize/complete", form, nil); w.Code != 200 {
		t.Fatal(describe(w))
	}
	responseParams(t, f.open(b), modeQuery)
}

func TestCompleteErrors(t *testing.T) {
	f := newFixture(t)
	newSubmission := func() url.Values {
		_, form := f.walletSubmission(f.waitPage(f.authorize(authorizeQuery())), "orb")
		return form
	}
	for _, tc := range []struct {
		name   string
		edit   func(url.Values)
		status int
		code   string
	}{
		{"no request", func(v url.Values) { v.Del("request") }, 400, "required"},
		{"no proof", func(v url.Values) { v.Del("proof") }, 400, "required"},
		{"no merkle_root", func(v url.Values) { v.Del("merkle_root") }, 400, "required"},
		{"no nullifier_hash", func(v url.Values) { v.Del("nullifier_hash") }, 400, "required"},
		{"no verification_level", func(v url.Values) { v.Del("verification_level") }, 400, "required"},
		{"two proofs", func(v url.Values) { v.Add("proof", "x") }, 400, "invalid_request"},
		{"signal_hash sent", func(v url.Values) { v.Set("signal_hash", "0x01") }, 400, "invalid_request"},
		{"request oversize", func(v url.Values) { v.Set("request", strings.Repeat("a", 1024+1)) }, 400, "invalid_request"},
		{"nullifier = p", func(v url.Values) {
			v.Set("nullifier_hash", "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001")
		}, 400, "invalid_request"},
		{"nullifier not hex", func(v url.Values) { v.Set("nullifier_hash", "0xzz") }, 400, "invalid_request"},
		{"root too long", func(v url.Values) { v.Set("merkle_root", "0x"+strings.Repeat("0", 65)) }, 400, "invalid_request"},
		{"level document", func(v url.Values) { v.Set("verification_level", "document") }, 400, "invalid_request"},
		{"proof oversize", func(v url.Values) { v.Set("proof", strings.Repeat("0", 4096+1)) }, 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := newSubmission()
			good := url.Values{}
			for k, v := range form {
				good[k] = v
			}
			tc.edit(form)
			wantError(t, f.postForm("/authorize/complete", form, nil), tc.status, tc.code, "invalid_request")
			if w := f.postForm("/authorize/complete", good, nil); w.Code != 200 {
				t.Fatalf("a malformed completion consumed the request: %s", describe(w))
			}
		})
	}
	t.Run("content type", func(t *testing.T) {
		w := f.do(http.MethodPost, "/authorize/complete", strings.NewReader(newSubmission().Encode()), map[string]string{"Content-Type": "application/json"})
		wantError(t, w, 415, "invalid_content_type", "invalid_request")
	})
	t.Run("method", func(t *testing.T) {
		wantError(t, f.do(http.MethodGet, "/authorize/complete", nil, nil), 405, "method_not_allowed", "invalid_request")
	})
	t.Run("checker down", func(t *testing.T) {
		f.checker.err = errors.New("disk on fire")
		defer func() { f.checker.err = nil }()
		wantError(t, f.postForm("/authorize/complete", newSubmission(), nil), 500, "internal", "server_error")
	})
	t.Run("checker unavailable", func(t *testing.T) {
		f.checker.err = record.ErrUnavailable
		defer func() { f.checker.err = nil }()
		wantError(t, f.postForm("/authorize/complete", newSubmission(), nil), 503, "unavailable", "temporarily_unavailable")
	})
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
	register(t, replica, f.store, f.checker, mux)
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
	link := walletParams(t, page)
	if w := do(http.MethodGet, "/authorize/request?"+url.Values{"request": {link.Get("request")}}.Encode(), nil, ""); w.Code != 200 {
		t.Fatal(describe(w))
	}
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
	_, form := f.walletSubmission(page, "device")
	if w := do(http.MethodPost, "/authorize/complete", form, ""); w.Code != 200 {
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
	_, form1 := f.walletSubmission(f.waitPage(late), "orb")
	_, form2 := f.walletSubmission(f.waitPage(later), "orb")
	f.clock.Advance(signinLifetime - time.Second)
	for _, form := range []url.Values{form1, form2} {
		if w := f.postForm("/authorize/complete", form, nil); w.Code != http.StatusOK {
			t.Fatalf("complete: %s", describe(w))
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
		token := must(url.ParseQuery(must(url.Parse(b.waitURL)).RawQuery)).Get("r")
		cleared("cancel", f.postForm("/authorize/cancel", url.Values{"r": {token}}, map[string]string{"Cookie": b.cookie}), b)
		if w := f.open(b); len(w.Result().Cookies()) != 1 {
			t.Errorf("%s: a cancelled request's page does not expire its cookie: %q", issuer, w.Header()["Set-Cookie"])
		}
		// A page that is still waiting keeps its cookie.
		if w := f.open(f.authorize(authorizeQuery())); len(w.Result().Cookies()) != 0 {
			t.Errorf("%s: the wait page sets %q", issuer, w.Header()["Set-Cookie"])
		}
	}
}
