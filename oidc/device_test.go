package oidc

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"worldid/internal/leaf/ratelimit"
	"worldid/record"
)

func TestUserCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c := must(newUserCode(bytes.NewReader(randomBytes(t, 64))))
		if len(c) != userCodeLen || strings.Trim(c, userCodeAlphabet) != "" {
			t.Fatalf("user code %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 199 {
		t.Fatalf("%d distinct codes of 200", len(seen))
	}
	// Bytes 240..255 are drawn again (no modulo bias): 16 of them, then 0..7.
	biased := append(bytes.Repeat([]byte{255}, 16), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
	if c := must(newUserCode(bytes.NewReader(biased))); c != "BCDFGHJK" {
		t.Fatalf("code from rejected then accepted bytes: %q", c)
	}
	for in, want := range map[string]string{
		"BCDF-GHJK": "BCDFGHJK", "bcdfghjk": "BCDFGHJK", " bcdf ghjk ": "BCDFGHJK", "bCdF-gHjK": "BCDFGHJK", "--BCDFGHJK": "BCDFGHJK",
	} {
		if got, ok := parseUserCode(in); !ok || got != want {
			t.Errorf("parseUserCode(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-EFGH", "BCDF_GHJK", "BCDF-GHJ0", "BCDF\tGHJK", "ＢCDF-GHJK",
		"BCDF" + strings.Repeat(" ", 40) + "GHJK"} {
		if got, ok := parseUserCode(in); ok {
			t.Errorf("parseUserCode(%q) accepted: %q", in, got)
		}
	}
	if formatUserCode("BCDFGHJK") != "BCDF-GHJK" {
		t.Fatal(formatUserCode("BCDFGHJK"))
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	must(rand.Read(b))
	return b
}

func TestPollDevice(t *testing.T) {
	at := testStart
	pending := record.DeviceGrant{ClientID: testClientID, State: record.DevicePending, Interval: 5, ExpiresAt: at.Add(10 * time.Minute)}
	polled := pending
	polled.PolledAt = at
	approved := polled
	approved.State = record.DeviceApproved
	for _, tc := range []struct {
		name     string
		g        record.DeviceGrant
		client   string
		now      time.Time
		write    bool
		code     string
		interval int
	}{
		{"first poll", pending, testClientID, at, true, "authorization_pending", 5},
		{"after the interval", polled, testClientID, at.Add(5 * time.Second), true, "authorization_pending", 5},
		{"within the slack", polled, testClientID, at.Add(4 * time.Second), true, "authorization_pending", 5},
		{"too fast", polled, testClientID, at.Add(3 * time.Second), true, "slow_down", 10},
		{"another client", polled, "app_other", at.Add(time.Minute), false, "invalid_grant", 5},
		{"expired", polled, testClientID, at.Add(10 * time.Minute), false, "expired_token", 5},
		{"approved", approved, testClientID, at.Add(time.Second), true, "", 5},
		{"approved but expired", approved, testClientID, at.Add(10 * time.Minute), false, "expired_token", 5},
		{"denied", func() record.DeviceGrant { g := polled; g.State = record.DeviceDenied; return g }(), testClientID, at.Add(time.Minute), false, "access_denied", 5},
		{"redeemed", func() record.DeviceGrant { g := polled; g.State = record.DeviceRedeemed; return g }(), testClientID, at.Add(time.Minute), false, "invalid_grant", 5},
	} {
		g := tc.g
		write, e := pollDevice(&g, tc.client, tc.now)
		code := ""
		if e != nil {
			code = e.OAuth
			if e.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d", tc.name, e.Status)
			}
		}
		if write != tc.write || code != tc.code || g.Interval != tc.interval {
			t.Errorf("%s: write %v, error %q, interval %d", tc.name, write, code, g.Interval)
		}
		if write && !g.PolledAt.Equal(tc.now) || tc.code == "" && g.State != record.DeviceRedeemed {
			t.Errorf("%s: left %+v", tc.name, g)
		}
	}
}

// deviceAuth runs the device authorization request of the fixture's app.
func (f *fixture) deviceAuth(t *testing.T) deviceAuthResponse {
	t.Helper()
	w := f.postForm("/device_authorization", url.Values{"scope": {"openid email"}}, basicAuth(testClientID, testSecret))
	var resp deviceAuthResponse
	if w.Code != http.StatusOK || decodeJSON(w.Body, &resp) != nil {
		t.Fatalf("device authorization: %s", describe(w))
	}
	return resp
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// enterCode opens the device page at target as a browser and submits
// the form with userCode.
func (f *fixture) enterCode(t *testing.T, target, userCode string) *httptest.ResponseRecorder {
	t.Helper()
	page := f.do(http.MethodGet, target, nil, nil)
	m := csrfField.FindStringSubmatch(page.Body.String())
	cookies := page.Result().Cookies()
	if page.Code != http.StatusOK || m == nil || len(cookies) != 1 || cookies[0].SameSite != http.SameSiteStrictMode || !cookies[0].HttpOnly {
		t.Fatalf("device page: %s %v", describe(page), page.Header()["Set-Cookie"])
	}
	return f.postForm("/device", url.Values{"csrf": {html.UnescapeString(m[1])}, "user_code": {userCode}},
		map[string]string{"Cookie": cookies[0].Name + "=" + cookies[0].Value})
}

func (f *fixture) pollDevice(deviceCode, id, secret string) *httptest.ResponseRecorder {
	return f.postForm("/token", url.Values{"grant_type": {grantDeviceCode}, "device_code": {deviceCode}}, basicAuth(id, secret))
}

func TestDeviceFlow(t *testing.T) {
	var events []string // the handlers run on the test's goroutine (fixture.do)
	f := newFixture(t, func(o *Options) { o.ObserveDevice = func(e string) { events = append(events, e) } })
	resp := f.deviceAuth(t)
	if len(resp.DeviceCode) != 43 || !regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`).MatchString(resp.UserCode) ||
		resp.VerificationURI != f.issuer+"/device" || resp.VerificationURIComplete != f.issuer+"/device?user_code="+resp.UserCode ||
		resp.ExpiresIn != 600 || resp.Interval != 5 {
		t.Fatalf("device authorization response %+v", resp)
	}
	// Only hashes are stored.
	g, err := f.store.DeviceGrantByUserCode(t.Context(), hashOf(strings.ReplaceAll(resp.UserCode, "-", "")))
	if err != nil || g.ID != hashOf(resp.DeviceCode) || g.State != record.DevicePending || g.Scope != "openid email" {
		t.Fatalf("stored grant %+v, %v", g, err)
	}

	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "authorization_pending", "authorization_pending")
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "slow_down", "slow_down")
	f.clock.Advance(10 * time.Second)
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "authorization_pending", "authorization_pending")
	f.clock.Advance(5 * time.Second) // the interval is 10 s now
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "slow_down", "slow_down")

	page := f.do(http.MethodGet, "/device?user_code="+url.QueryEscape(strings.ToLower(resp.UserCode)), nil, nil)
	if !strings.Contains(page.Body.String(), `<strong id="user-code-shown">`+resp.UserCode+`</strong>`) ||
		!strings.Contains(page.Header().Get("Content-Security-Policy"), "form-action 'self'") {
		t.Fatalf("verification_uri_complete page: %s", describe(page))
	}
	b := f.startedBrowser(f.enterCode(t, resp.VerificationURIComplete, strings.ToLower(strings.ReplaceAll(resp.UserCode, "-", " "))))
	if !strings.Contains(f.waitPage(b), "Test &lt;RP&gt;") {
		t.Fatal("the wait page does not name the app")
	}
	f.clock.Advance(time.Second) // the page's load asked the relay
	f.approve(b, "orb")
	done := f.open(b)
	if done.Code != http.StatusOK || !strings.Contains(done.Body.String(), "You are signed in on your device") || done.Header().Get("Location") != "" {
		t.Fatalf("finish: %s", describe(done))
	}
	f.clock.Advance(15 * time.Second)
	w := f.pollDevice(resp.DeviceCode, testClientID, testSecret)
	var tok tokenResponse
	if w.Code != http.StatusOK || decodeJSON(w.Body, &tok) != nil || tok.AccessToken == "" || tok.Scope != "openid email" {
		t.Fatalf("token: %s", describe(w))
	}
	claims := idTokenClaimsOf(t, tok.IDToken)
	checkIdentity(t, f, claims, "orb", "email")
	if _, ok := claims["nonce"]; ok || claims["auth_time"] == nil {
		t.Fatalf("ID token claims %v", claims)
	}
	f.clock.Advance(15 * time.Second)
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "invalid_grant", "invalid_grant")
	// The user code is spent too.
	again := f.enterCode(t, "/device", resp.UserCode)
	if again.Code != http.StatusBadRequest || !strings.Contains(again.Body.String(), "No device is waiting for that code") {
		t.Fatalf("spent user code: %s", describe(again))
	}
	if got := strings.Join(events, ","); got != "started,slow_down,slow_down,approved,redeemed,bad_code" {
		t.Fatalf("device events %s", got)
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestDeviceDenied(t *testing.T) {
	f := newFixture(t)
	resp := f.deviceAuth(t)
	b := f.startedBrowser(f.enterCode(t, "/device", resp.UserCode))
	w := f.postForm("/authorize/cancel", url.Values{"r": {waitToken(b)}}, map[string]string{"Cookie": b.cookie})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Sign-in refused") {
		t.Fatalf("cancel: %s", describe(w))
	}
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "access_denied", "access_denied")
	// A later approval of another browser's sign-in for the same code
	// changes nothing.
	wantPageStatus(t, f.enterCode(t, "/device", resp.UserCode), http.StatusBadRequest)
}

func wantPageStatus(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("want page %d, got %s", status, describe(w))
	}
}

func TestDeviceExpired(t *testing.T) {
	f := newFixture(t)
	resp := f.deviceAuth(t)
	b := f.startedBrowser(f.enterCode(t, "/device", resp.UserCode))
	// The wallet approves in the last second; the browser finishes (within
	// the sign-in's grace) once the grant expired.
	f.clock.Advance(deviceLifetime - time.Second)
	f.approve(b, "device")
	f.clock.Advance(time.Second)
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "expired_token", "expired_token")
	if w := f.open(b); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "This device code expired") {
		t.Fatalf("approval after the grant expired: %s", describe(w))
	}
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "expired_token", "expired_token")
	if w := f.enterCode(t, "/device", resp.UserCode); w.Code != http.StatusBadRequest {
		t.Fatalf("expired user code: %s", describe(w))
	}
	// Once the retention ended the grant is gone.
	if err := f.store.PruneExpired(t.Context(), f.clock.Now().Add(deviceRetention)); err != nil {
		t.Fatal(err)
	}
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "invalid_grant", "invalid_grant")
}

func TestDeviceClients(t *testing.T) {
	f := newFixture(t)
	const otherID, otherSecret = "app_fedcba9876543210fedcba9876543210", "other-secret-0123456789abcdef0123"
	sum := sha256.Sum256([]byte(otherSecret))
	f.store.putApp(record.App{ID: otherID, RPID: "rp_fedcba9876543210", Name: "Other", SecretHash: hex.EncodeToString(sum[:]),
		RedirectURIs: []string{testRedirect}})
	wantError(t, f.postForm("/device_authorization", url.Values{"scope": {"openid"}}, basicAuth(testClientID, "wrong")),
		http.StatusUnauthorized, "unauthenticated", "invalid_client")
	wantError(t, f.postForm("/device_authorization", url.Values{"scope": {"email"}}, basicAuth(testClientID, testSecret)),
		http.StatusBadRequest, "invalid_scope", "invalid_scope")
	resp := f.deviceAuth(t)
	wantError(t, f.pollDevice(resp.DeviceCode, otherID, otherSecret), http.StatusBadRequest, "invalid_grant", "invalid_grant")
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, "wrong"), http.StatusUnauthorized, "unauthenticated", "invalid_client")
	wantError(t, f.pollDevice("not-a-device-code", testClientID, testSecret), http.StatusBadRequest, "invalid_grant", "invalid_grant")
	wantError(t, f.postForm("/token", url.Values{"grant_type": {grantDeviceCode}}, basicAuth(testClientID, testSecret)),
		http.StatusBadRequest, "required", "invalid_request")
	// The other client's failed poll left the grant pending for its own.
	wantError(t, f.pollDevice(resp.DeviceCode, testClientID, testSecret), http.StatusBadRequest, "authorization_pending", "authorization_pending")
	// A disabled app can neither start nor finish.
	f.store.changeApp(testClientID, func(a *record.App) { a.Disabled = true })
	wantError(t, f.postForm("/device_authorization", url.Values{"scope": {"openid"}}, basicAuth(testClientID, testSecret)),
		http.StatusBadRequest, "client_disabled", "unauthorized_client")
	wantPage(t, f.enterCode(t, "/device", resp.UserCode), http.StatusBadRequest, "client_disabled")
}

func TestDeviceEntryForm(t *testing.T) {
	f := newFixture(t)
	resp := f.deviceAuth(t)
	page := f.do(http.MethodGet, "/device", nil, nil)
	token := html.UnescapeString(csrfField.FindStringSubmatch(page.Body.String())[1])
	cookie := page.Result().Cookies()[0]
	// Without the cookie, or with another form's, the post is refused.
	for _, c := range []string{"", cookie.Name + "=other"} {
		h := map[string]string{}
		if c != "" {
			h["Cookie"] = c
		}
		wantPage(t, f.postForm("/device", url.Values{"csrf": {token}, "user_code": {resp.UserCode}}, h), http.StatusForbidden, "form_expired")
	}
	if w := f.enterCode(t, "/device", "ABCD-EFGH"); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "it has 8 letters") ||
		!strings.Contains(w.Body.String(), `value="ABCD-EFGH"`) {
		t.Fatalf("malformed code: %s", describe(w))
	}
	if w := f.do(http.MethodGet, "/device?user_code=nonsense", nil, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "it has 8 letters") {
		t.Fatalf("malformed code in verification_uri_complete: %s", describe(w))
	}
	if w := f.do(http.MethodGet, "/device?user_code=a&user_code=b", nil, nil); w.Code != http.StatusBadRequest {
		t.Fatalf("repeated user_code: %s", describe(w))
	}
}

func TestDeviceEntryRate(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.DeviceEntryRate = ratelimit.Rate{Burst: 3, Every: time.Minute} })
	resp := f.deviceAuth(t)
	for range 3 {
		if w := f.enterCode(t, "/device", "BBBB-BBBB"); w.Code != http.StatusBadRequest {
			t.Fatalf("guess: %s", describe(w))
		}
	}
	// Past the rate even the right code waits.
	w := f.enterCode(t, "/device", resp.UserCode)
	wantPage(t, w, http.StatusTooManyRequests, "too_many_requests")
	f.clock.Advance(time.Minute)
	f.startedBrowser(f.enterCode(t, "/device", resp.UserCode))
}

func TestDeviceFormCookieHTTPS(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Issuer = "https://id.example" })
	w := f.do(http.MethodGet, "/device", nil, nil)
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "__Host-worldid-device" || !c[0].Secure || c[0].Path != "/" || c[0].Domain != "" ||
		!strings.Contains(w.Body.String(), `action="https://id.example/device"`) {
		t.Fatalf("device page over https: %v %s", w.Header()["Set-Cookie"], describe(w))
	}
}
