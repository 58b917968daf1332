package oidc

import (
	"encoding/json"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// sessionSignIn signs in with an ID token response and returns the
// session cookie ("name=value") and the ID token's claims.
func (f *fixture) sessionSignIn(level string) (string, map[string]any, string) {
	f.t.Helper()
	q := authorizeQuery()
	q.Set("response_type", "id_token")
	w := f.signIn(q, level)
	var cookie string
	for _, c := range w.Result().Cookies() {
		if strings.HasSuffix(c.Name, sessionCookie) {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != int(DefaultSessionLifetime.Seconds()) {
				f.t.Fatalf("session cookie %v", w.Header()["Set-Cookie"])
			}
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		f.t.Fatalf("no session cookie: %v", w.Header()["Set-Cookie"])
	}
	raw := responseParams(f.t, w, modeFragment).Get("id_token")
	return cookie, idTokenClaimsOf(f.t, raw), raw
}

// idTokenClaimsOf decodes an ID token's payload (signatures are checked
// by go-oidc in e2e_test.go).
func idTokenClaimsOf(t testing.TB, raw string) map[string]any {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("ID token %q", raw)
	}
	var c map[string]any
	if err := json.Unmarshal(must(b64.DecodeString(parts[1])), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// silent sends a prompt=none request for an ID token with the cookie.
func (f *fixture) silent(cookie string, edit func(url.Values)) url.Values {
	f.t.Helper()
	q := authorizeQuery()
	q.Set("response_type", "id_token")
	q.Set("prompt", "none")
	q.Set("nonce", "n-2")
	if edit != nil {
		edit(q)
	}
	var h map[string]string
	if cookie != "" {
		h = map[string]string{"Cookie": cookie}
	}
	w := f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, h)
	mode := modeFragment
	if q.Get("response_type") == "code" {
		mode = modeQuery
	}
	return responseParams(f.t, w, mode)
}

func TestSessionSilentReauthentication(t *testing.T) {
	f := newFixture(t)
	cookie, first, _ := f.sessionSignIn("device")
	f.clock.Advance(10 * time.Minute)
	params := f.silent(cookie, nil)
	if params.Get("id_token") == "" || params.Get("state") != "st-1" || params.Get("iss") != f.issuer {
		t.Fatalf("prompt=none with a session: %v", params)
	}
	c := idTokenClaimsOf(t, params.Get("id_token"))
	if c["sub"] != first["sub"] || c["auth_time"] != first["auth_time"] || c["nonce"] != "n-2" ||
		c["iat"] == first["iat"] || c[f.issuer+"/v1"].(map[string]any)["verification_level"] != "device" {
		t.Fatalf("silent ID token %v, first %v", c, first)
	}
	// A code from the session redeems like any other.
	params = f.silent(cookie, func(q url.Values) { q.Set("response_type", "code"); q.Del("nonce") })
	if params.Get("code") == "" {
		t.Fatalf("silent code: %v", params)
	}
}

func TestSessionLoginRequired(t *testing.T) {
	f := newFixture(t)
	other := f.app
	other.ID, other.RPID = "app_fedcba9876543210fedcba9876543210", "rp_fedcba9876543210"
	f.store.putApp(other)
	cookie, _, hint := f.sessionSignIn("device")
	// max_age=0 is never satisfied, even within the second of auth_time.
	if params := f.silent(cookie, func(q url.Values) { q.Set("max_age", "0") }); params.Get("error") != "login_required" {
		t.Fatalf("max_age=0 at once: %v", params)
	}
	forged := strings.Replace(cookie, "=", "=x", 1)
	for _, tc := range []struct {
		name, cookie string
		edit         func(url.Values)
	}{
		{"no cookie", "", nil},
		{"forged cookie", forged, nil},
		{"another app", cookie, func(q url.Values) { q.Set("client_id", other.ID) }},
		{"max_age 0", cookie, func(q url.Values) { q.Set("max_age", "0") }},
		{"max_age exceeded", cookie, func(q url.Values) { q.Set("max_age", "60") }},
		{"acr above the proven level", cookie, func(q url.Values) { q.Set("acr_values", acrOrb) }},
		{"id_token_hint not ours", cookie, func(q url.Values) { q.Set("id_token_hint", "a.b.c") }},
		{"id_token_hint of another user", cookie, func(q url.Values) {
			q.Set("id_token_hint", f.idToken(t, "0x"+strings.Repeat("ab", 32)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.clock.Advance(2 * time.Minute)
			params := f.silent(tc.cookie, tc.edit)
			if params.Get("error") != "login_required" || params.Get("state") != "st-1" || params.Get("id_token") != "" {
				t.Fatalf("params %v", params)
			}
		})
	}
	// The session's own ID token is a valid hint, expired or not.
	f.clock.Advance(2 * time.Hour)
	if params := f.silent(cookie, func(q url.Values) { q.Set("id_token_hint", hint) }); params.Get("id_token") == "" {
		t.Fatalf("own hint refused: %v", params)
	}
	// The session ends with its lifetime.
	f.clock.Advance(DefaultSessionLifetime)
	if params := f.silent(cookie, nil); params.Get("error") != "login_required" {
		t.Fatalf("expired session used: %v", params)
	}
}

// idToken is an ID token signed here for the test app with sub.
func (f *fixture) idToken(t testing.TB, sub string) string {
	t.Helper()
	g := grant{id: "g", clientID: testClientID, scope: "openid", sub: sub, level: "orb", authTime: f.clock.Now()}
	return must(f.p.signIDToken(f.p.keySet(), g, f.clock.Now(), "", ""))
}

// TestSessionWithoutPromptNone: a request without prompt=none goes to the
// wallet, unless it sends max_age (and no other prompt) and the session
// answers it as it would prompt=none: same app, young enough, the hint's
// subject, the acr level (oidcc-max-age-10000 wants the first auth_time
// back). Otherwise it is a fresh sign-in, never login_required.
func TestSessionWithoutPromptNone(t *testing.T) {
	f := newFixture(t)
	other := f.app
	other.ID, other.RPID = "app_fedcba9876543210fedcba9876543210", "rp_fedcba9876543210"
	other.RedirectURIs = []string{testRedirect}
	f.store.putApp(other)
	cookie, first, hint := f.sessionSignIn("device")
	f.clock.Advance(10 * time.Minute)
	request := func(cookie string, edit func(url.Values)) *httptest.ResponseRecorder {
		q := authorizeQuery()
		q.Set("response_type", "id_token")
		q.Set("nonce", "n-2")
		edit(q)
		return f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, map[string]string{"Cookie": cookie})
	}
	w := request(cookie, func(q url.Values) { q.Set("max_age", "3600"); q.Set("id_token_hint", hint) })
	params := responseParams(t, w, modeFragment)
	c := idTokenClaimsOf(t, params.Get("id_token"))
	if c["sub"] != first["sub"] || c["auth_time"] != first["auth_time"] || c["nonce"] != "n-2" || params.Get("state") != "st-1" {
		t.Fatalf("max_age within the session: %v, first %v", c, first)
	}
	for name, tc := range map[string]struct {
		cookie string
		edit   func(url.Values)
	}{
		"no max_age":                {cookie, func(url.Values) {}},
		"prompt=login":              {cookie, func(q url.Values) { q.Set("prompt", "login") }},
		"prompt=login with max_age": {cookie, func(q url.Values) { q.Set("prompt", "login"); q.Set("max_age", "3600") }},
		"prompt=select_account with max_age": {cookie, func(q url.Values) {
			q.Set("prompt", "select_account")
			q.Set("max_age", "3600")
		}},
		"max_age=0":             {cookie, func(q url.Values) { q.Set("max_age", "0") }},
		"max_age exceeded":      {cookie, func(q url.Values) { q.Set("max_age", "60") }},
		"no session":            {"", func(q url.Values) { q.Set("max_age", "3600") }},
		"another app":           {cookie, func(q url.Values) { q.Set("max_age", "3600"); q.Set("client_id", other.ID) }},
		"acr above the session": {cookie, func(q url.Values) { q.Set("max_age", "3600"); q.Set("acr_values", acrOrb) }},
		"hint of another user": {cookie, func(q url.Values) {
			q.Set("max_age", "3600")
			q.Set("id_token_hint", f.idToken(t, "0x"+strings.Repeat("ab", 32)))
		}},
	} {
		if w := request(tc.cookie, tc.edit); w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), f.issuer+"/authorize/wait?") {
			t.Errorf("%s: not a fresh sign-in: %s", name, describe(w))
		}
	}
}

func TestLogout(t *testing.T) {
	f := newFixture(t)
	const withQuery = "https://rp.example/bye?z=1&a=%7e;x"
	f.app.PostLogoutRedirectURIs = []string{"https://rp.example/bye", withQuery}
	f.store.putApp(f.app)
	cookie, _, hint := f.sessionSignIn("orb")
	// The registered URI's query stays as registered; state follows it.
	w := f.do(http.MethodGet, "/end_session?"+url.Values{"id_token_hint": {hint}, "post_logout_redirect_uri": {withQuery},
		"state": {"l s"}}.Encode(), nil, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != withQuery+"&state=l+s" {
		t.Fatalf("logout to a URI with a query: %s", describe(w))
	}
	w = f.do(http.MethodGet, "/end_session?"+url.Values{"id_token_hint": {hint}, "post_logout_redirect_uri": {"https://rp.example/bye"},
		"state": {"ls"}}.Encode(), nil, map[string]string{"Cookie": cookie})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "https://rp.example/bye?state=ls" {
		t.Fatalf("logout: %s", describe(w))
	}
	if c := w.Result().Cookies(); len(c) != 1 || !strings.HasSuffix(c[0].Name, sessionCookie) || c[0].MaxAge >= 0 {
		t.Fatalf("cookie not cleared: %v", w.Header()["Set-Cookie"])
	}
	// A kept copy of the cookie is revoked.
	if params := f.silent(cookie, nil); params.Get("error") != "login_required" {
		t.Fatalf("revoked session used: %v", params)
	}
	for name, v := range map[string]url.Values{
		"unregistered URI":     {"client_id": {testClientID}, "post_logout_redirect_uri": {testRedirect}},
		"URI without a client": {"post_logout_redirect_uri": {"https://rp.example/bye"}},
		"forged hint":          {"id_token_hint": {"a.b.c"}},
		"hint of another app":  {"id_token_hint": {hint}, "client_id": {"app_fedcba9876543210fedcba9876543210"}},
	} {
		if w := f.do(http.MethodGet, "/end_session?"+v.Encode(), nil, nil); w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
			t.Errorf("%s: %s", name, describe(w))
		}
	}
	if w := f.do(http.MethodGet, "/end_session", nil, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "No sign-in") ||
		len(w.Result().Cookies()) != 0 {
		t.Fatalf("logout without parameters or session: %s", describe(w))
	}
}

// TestLogoutAsks: without an ID token hint naming the session the user is
// asked (RP-Initiated Logout 1.0 §2), and only the page's own answer, a
// POST with this session's sealed id, ends it.
func TestLogoutAsks(t *testing.T) {
	f := newFixture(t)
	f.app.PostLogoutRedirectURIs = []string{"https://rp.example/bye"}
	f.store.putApp(f.app)
	cookie, _, hint := f.sessionSignIn("orb")
	other, _, _ := f.sessionSignIn("orb") // another browser's session
	withCookie := map[string]string{"Cookie": cookie}
	request := url.Values{"client_id": {testClientID}, "post_logout_redirect_uri": {"https://rp.example/bye"}, "state": {"s1"}}
	asked := func(name string, w *httptest.ResponseRecorder) url.Values {
		t.Helper()
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="signout"`) || len(w.Result().Cookies()) != 0 {
			t.Fatalf("%s: not the question: %s", name, describe(w))
		}
		if params := f.silent(cookie, nil); params.Get("id_token") == "" {
			t.Fatalf("%s ended the session: %v", name, params)
		}
		form := url.Values{}
		for _, m := range hiddenInputRE.FindAllStringSubmatch(w.Body.String(), -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		return form
	}
	form := asked("no hint", f.do(http.MethodGet, "/end_session?"+request.Encode(), nil, withCookie))
	if form.Get("confirm") == "" || form.Get("state") != "s1" || form.Get("post_logout_redirect_uri") != "https://rp.example/bye" {
		t.Fatalf("the question's form %v", form)
	}
	otherUser := maps.Clone(request)
	otherUser.Set("id_token_hint", f.idToken(t, "0x"+strings.Repeat("ab", 32)))
	asked("hint of another user", f.do(http.MethodGet, "/end_session?"+otherUser.Encode(), nil, withCookie))
	asked("answer by GET", f.do(http.MethodGet, "/end_session?"+form.Encode(), nil, withCookie))
	asked("answer for another session", f.postForm("/end_session", form, map[string]string{"Cookie": other}))
	forged := maps.Clone(form)
	forged.Set("confirm", hint)
	asked("forged answer", f.postForm("/end_session", forged, withCookie))

	w := f.postForm("/end_session", form, withCookie)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "https://rp.example/bye?state=s1" {
		t.Fatalf("the answer: %s", describe(w))
	}
	if c := w.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("cookie not cleared: %v", w.Header()["Set-Cookie"])
	}
	if params := f.silent(cookie, nil); params.Get("error") != "login_required" {
		t.Fatalf("the session survived the answer: %v", params)
	}
}

func TestRevokeAccessToken(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("response_type", "id_token token")
	at := responseParams(t, f.signIn(q, "orb"), modeFragment).Get("access_token")
	introspect := func() bool {
		w := f.postForm("/introspect", url.Values{"token": {at}}, basicAuth(testClientID, testSecret))
		var r struct{ Active bool }
		if w.Code != 200 || decodeJSON(w.Body, &r) != nil {
			t.Fatal(describe(w))
		}
		return r.Active
	}
	if !introspect() {
		t.Fatal("token inactive before revocation")
	}
	for _, tok := range []string{"not-a-token", at} {
		if w := f.postForm("/revoke", url.Values{"token": {tok}, "token_type_hint": {"access_token"}}, basicAuth(testClientID, testSecret)); w.Code != 200 {
			t.Fatalf("revoke: %s", describe(w))
		}
	}
	if introspect() {
		t.Fatal("revoked token active")
	}
	if w := f.postForm("/revoke", url.Values{"token": {at}}, basicAuth(testClientID, "wrong")); w.Code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated revoke: %s", describe(w))
	}
	if w := f.postForm("/revoke", url.Values{}, basicAuth(testClientID, testSecret)); w.Code != http.StatusBadRequest {
		t.Fatalf("revoke without token: %s", describe(w))
	}
}

// TestSessionCookieHTTPS: __Host- and Secure over https.
func TestSessionCookieHTTPS(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Issuer = "https://id.example" })
	p := f.p
	w := httptest.NewRecorder()
	p.setSessionCookie(w, "v")
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != "__Host-"+sessionCookie || !c[0].Secure || c[0].Domain != "" || c[0].Path != "/" {
		t.Fatalf("cookie %v", w.Header()["Set-Cookie"])
	}
}

// TestSessionsOff: a negative lifetime sets no cookie.
func TestSessionsOff(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.SessionLifetime = -1 })
	w := f.signIn(authorizeQuery(), "orb")
	for _, c := range w.Result().Cookies() {
		if strings.HasSuffix(c.Name, sessionCookie) {
			t.Fatalf("session cookie with sessions off: %v", c)
		}
	}
}
