package oidc

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"worldid/internal/httpapi"
	"worldid/record"
)

// wantError checks a JSON error response.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, code, oauth string) map[string]string {
	t.Helper()
	var body map[string]string
	if err := decodeJSON(w.Body, &body); err != nil {
		t.Fatalf("error body is not JSON: %v (%s)", err, describe(w))
	}
	if w.Code != status || body["code"] != code || body["error"] != oauth {
		t.Fatalf("got %d code=%q error=%q, want %d %q %q (%v)", w.Code, body["code"], body["error"], status, code, oauth, body)
	}
	members := []string{"code", "detail", "attribute", "error", "error_description"}
	if oauth == "" { // RFC 6750 §3.1: no error information without credentials
		members = members[:3]
		if _, ok := body["error"]; ok || len(body) != 3 {
			t.Fatalf("error body of a request without credentials: %v", body)
		}
	}
	for _, k := range members {
		if _, ok := body[k]; !ok {
			t.Fatalf("error body lacks %q: %v", k, body)
		}
	}
	if w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("error headers: %v", w.Header())
	}
	return body
}

// wantPage checks a local HTML error page: never a redirect.
func wantPage(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status || w.Header().Get("Location") != "" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("want page %d, got %s", status, describe(w))
	}
	if !strings.Contains(w.Body.String(), "<code>"+code+"</code>") {
		t.Fatalf("page lacks code %q: %s", code, w.Body)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("page CSP %q", csp)
	}
}

// wantRedirectError checks a redirected authorization error.
func wantRedirectError(t *testing.T, w *httptest.ResponseRecorder, mode, oauth, state string) {
	t.Helper()
	v := responseParams(t, w, mode)
	if v.Get("error") != oauth || v.Get("error_description") == "" || v.Get("state") != state || v.Has("code") {
		t.Fatalf("redirected error %v, want error=%s state=%q", v, oauth, state)
	}
	if loc := w.Header().Get("Location"); !strings.HasPrefix(loc, testRedirect) {
		t.Fatalf("redirected to %q", loc)
	}
}

func TestAuthorizeLocalErrors(t *testing.T) {
	f := newFixture(t)
	with := func(edit func(url.Values)) string {
		q := authorizeQuery()
		edit(q)
		return "/authorize?" + q.Encode()
	}
	for _, tc := range []struct {
		name, target, code string
		status             int
	}{
		{"no client_id", with(func(q url.Values) { q.Del("client_id") }), "required", 400},
		{"empty client_id", with(func(q url.Values) { q.Set("client_id", "") }), "required", 400},
		{"two client_id", with(func(q url.Values) { q.Add("client_id", testClientID) }), "invalid_request", 400},
		{"no redirect_uri", with(func(q url.Values) { q.Del("redirect_uri") }), "required", 400},
		{"two redirect_uri", with(func(q url.Values) { q.Add("redirect_uri", testRedirect) }), "invalid_request", 400},
		{"unknown client", with(func(q url.Values) { q.Set("client_id", "app_ffffffffffffffffffffffffffffffff") }), "invalid_client", 400},
		{"redirect trailing slash", with(func(q url.Values) { q.Set("redirect_uri", testRedirect+"/") }), "invalid_redirect_uri", 400},
		{"redirect case", with(func(q url.Values) { q.Set("redirect_uri", "https://rp.example/callbacK") }), "invalid_redirect_uri", 400},
		{"redirect one char short", with(func(q url.Values) { q.Set("redirect_uri", testRedirect[:len(testRedirect)-1]) }), "invalid_redirect_uri", 400},
		{"redirect empty query", with(func(q url.Values) { q.Set("redirect_uri", testRedirect+"?") }), "invalid_redirect_uri", 400},
		{"redirect http", with(func(q url.Values) { q.Set("redirect_uri", "http://rp.example/callback") }), "invalid_redirect_uri", 400},
		{"bad encoding", "/authorize?client_id=%zz", "invalid_request", 400},
		{"semicolon", "/authorize?client_id=a;b=c", "invalid_request", 400},
		// Errors that would otherwise be redirected stay local when the
		// redirect URI is not validated.
		{"bad type and redirect", with(func(q url.Values) { q.Set("response_type", "token"); q.Set("redirect_uri", "https://evil.example/") }), "invalid_redirect_uri", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantPage(t, f.do(http.MethodGet, tc.target, nil, nil), tc.status, tc.code)
		})
	}
	t.Run("unusable registered redirect", func(t *testing.T) {
		bad := f.app
		bad.ID, bad.RPID = "app_33333333333333333333333333333333", "rp_3333333333333333"
		bad.RedirectURIs = []string{"javascript:alert(1)", "https://rp.example/cb#frag", "/relative"}
		f.store.putApp(bad)
		for _, uri := range bad.RedirectURIs {
			q := authorizeQuery()
			q.Set("client_id", bad.ID)
			q.Set("redirect_uri", uri)
			q.Set("response_type", "token") // would be a redirected error
			wantPage(t, f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil), 400, "invalid_redirect_uri")
		}
	})
	t.Run("method", func(t *testing.T) {
		w := f.do(http.MethodPut, "/authorize", nil, nil)
		wantPage(t, w, 405, "method_not_allowed")
		if w.Header().Get("Allow") != "GET, HEAD, POST" {
			t.Fatalf("Allow %q", w.Header().Get("Allow"))
		}
	})
	t.Run("post content type", func(t *testing.T) {
		w := f.do(http.MethodPost, "/authorize", strings.NewReader(authorizeQuery().Encode()), map[string]string{"Content-Type": "text/plain"})
		wantPage(t, w, 415, "invalid_content_type")
	})
	t.Run("post oversize", func(t *testing.T) {
		q := authorizeQuery()
		q.Set("pad", strings.Repeat("a", maxBody))
		wantPage(t, f.postForm("/authorize", q, nil), 413, "request_too_large")
	})
	t.Run("store down", func(t *testing.T) {
		f.store.setFail(record.ErrUnavailable)
		defer f.store.setFail(nil)
		wantPage(t, f.do(http.MethodGet, with(func(url.Values) {}), nil, nil), 503, "unavailable")
	})
	t.Run("client gone", func(t *testing.T) {
		f.store.setFail(fmt.Errorf("read: %w", context.Canceled))
		defer f.store.setFail(nil)
		wantPage(t, f.do(http.MethodGet, with(func(url.Values) {}), nil, nil), httpapi.StatusClientClosed, "client_closed")
	})
}

// failingReader is a broken randomness source.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestRandomnessFailure(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Rand = failingReader{} })
	lsn := f.store.lsn()
	w := f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil)
	if w.Code != http.StatusInternalServerError || f.store.lsn() != lsn || w.Header().Get("Set-Cookie") != "" {
		t.Fatal(describe(w))
	}
}

func TestAuthorizeRedirectedErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name  string
		edit  func(url.Values)
		mode  string
		oauth string
		state string
	}{
		{"two state", func(q url.Values) { q.Add("state", "x") }, modeQuery, "invalid_request", ""},
		{"two scope", func(q url.Values) { q.Add("scope", "openid") }, modeQuery, "invalid_request", "st-1"},
		{"two response_type", func(q url.Values) { q.Add("response_type", "code") }, modeQuery, "invalid_request", "st-1"},
		{"request object", func(q url.Values) { q.Set("request", "eyJ.e30.") }, modeQuery, "request_not_supported", "st-1"},
		{"request_uri", func(q url.Values) { q.Set("request_uri", "https://x/") }, modeQuery, "request_uri_not_supported", "st-1"},
		{"registration", func(q url.Values) { q.Set("registration", "{}") }, modeQuery, "registration_not_supported", "st-1"},
		{"no response_type", func(q url.Values) { q.Del("response_type") }, modeQuery, "invalid_request", "st-1"},
		{"token alone", func(q url.Values) { q.Set("response_type", "token") }, modeQuery, "unsupported_response_type", "st-1"},
		{"repeated code", func(q url.Values) { q.Set("response_type", "code code") }, modeQuery, "unsupported_response_type", "st-1"},
		{"double space", func(q url.Values) { q.Set("response_type", "code  id_token") }, modeQuery, "unsupported_response_type", "st-1"},
		{"unknown type", func(q url.Values) { q.Set("response_type", "none") }, modeQuery, "unsupported_response_type", "st-1"},
		{"query for tokens", func(q url.Values) { q.Set("response_type", "id_token"); q.Set("response_mode", "query") }, modeFragment, "invalid_request", "st-1"},
		{"unknown mode", func(q url.Values) { q.Set("response_mode", "web_message") }, modeQuery, "invalid_request", "st-1"},
		{"form_post error", func(q url.Values) { q.Set("response_mode", "form_post"); q.Del("scope") }, modeFormPost, "invalid_request", "st-1"},
		{"fragment error", func(q url.Values) { q.Set("response_type", "id_token"); q.Del("scope") }, modeFragment, "invalid_request", "st-1"},
		{"no scope", func(q url.Values) { q.Del("scope") }, modeQuery, "invalid_request", "st-1"},
		{"no openid", func(q url.Values) { q.Set("scope", "email profile") }, modeQuery, "invalid_scope", "st-1"},
		{"scope double space", func(q url.Values) { q.Set("scope", "openid  email") }, modeQuery, "invalid_scope", "st-1"},
		{"scope quote", func(q url.Values) { q.Set("scope", `openid "x"`) }, modeQuery, "invalid_scope", "st-1"},
		{"state too long", func(q url.Values) { q.Set("state", strings.Repeat("s", 513)) }, modeQuery, "invalid_request", ""},
		{"state control", func(q url.Values) { q.Set("state", "a\nb") }, modeQuery, "invalid_request", ""},
		{"implicit without nonce", func(q url.Values) { q.Set("response_type", "id_token"); q.Del("nonce") }, modeFragment, "invalid_request", "st-1"},
		{"hybrid without nonce", func(q url.Values) { q.Set("response_type", "code id_token"); q.Del("nonce") }, modeFragment, "invalid_request", "st-1"},
		{"request object's state and mode", func(q url.Values) {
			q.Del("state")
			q.Set("request", unsecuredJWT(`{"state":"st-obj","response_mode":"fragment"}`))
		}, modeFragment, "request_not_supported", "st-obj"},
		{"request object's response type", func(q url.Values) {
			q.Set("request", unsecuredJWT(`{"response_type":"id_token","state":"st-obj"}`))
		}, modeFragment, "request_not_supported", "st-obj"},
		{"request object's form_post", func(q url.Values) {
			q.Set("request", unsecuredJWT(`{"state":"st-obj","response_mode":"form_post"}`))
		}, modeFormPost, "request_not_supported", "st-obj"},
		{"request object undecodable", func(q url.Values) { q.Set("request", "x.!!.") }, modeQuery, "request_not_supported", "st-1"},
		{"nonce too long", func(q url.Values) { q.Set("nonce", strings.Repeat("n", 513)) }, modeQuery, "invalid_request", "st-1"},
		{"nonce non-ASCII", func(q url.Values) { q.Set("nonce", "né") }, modeQuery, "invalid_request", "st-1"},
		{"pkce plain default", func(q url.Values) { q.Set("code_challenge", s256Challenge(testVerifier)) }, modeQuery, "invalid_request", "st-1"},
		{"pkce plain", func(q url.Values) {
			q.Set("code_challenge", s256Challenge(testVerifier))
			q.Set("code_challenge_method", "plain")
		}, modeQuery, "invalid_request", "st-1"},
		{"pkce method only", func(q url.Values) { q.Set("code_challenge_method", "S256") }, modeQuery, "invalid_request", "st-1"},
		{"pkce short", func(q url.Values) { q.Set("code_challenge", "abc"); q.Set("code_challenge_method", "S256") }, modeQuery, "invalid_request", "st-1"},
		{"pkce padded", func(q url.Values) {
			q.Set("code_challenge", s256Challenge(testVerifier)[:42]+"=")
			q.Set("code_challenge_method", "S256")
		}, modeQuery, "invalid_request", "st-1"},
		{"prompt none", func(q url.Values) { q.Set("prompt", "none") }, modeQuery, "login_required", "st-1"},
		{"prompt none login", func(q url.Values) { q.Set("prompt", "none login") }, modeQuery, "invalid_request", "st-1"},
		{"prompt unknown", func(q url.Values) { q.Set("prompt", "later") }, modeQuery, "invalid_request", "st-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := authorizeQuery()
			tc.edit(q)
			w := f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, nil)
			if tc.mode == modeFormPost {
				if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `name="error" value="`+tc.oauth+`"`) ||
					!strings.Contains(body, `name="state" value="`+tc.state+`"`) {
					t.Fatalf("form_post error: %s", describe(w))
				}
				return
			}
			wantRedirectError(t, w, tc.mode, tc.oauth, tc.state)
		})
	}
}

// unsecuredJWT is an unsecured JWT (RFC 7519 §6.1) with the given claims.
func unsecuredJWT(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
}

const testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" // RFC 7636 Appendix B

// TestUnbound: a refused code's error names the first binding the request
// broke, in the order of doc/interfaces.md §7.1: client, redirect_uri, PKCE.
func TestUnbound(t *testing.T) {
	c := record.AuthCode{ClientID: testClientID, RedirectURI: testRedirect, CodeChallenge: s256Challenge(testVerifier)}
	for _, tc := range []struct {
		clientID, redirectURI, verifier, want string
	}{
		{"app_other", testRedirect + "/", "", "the authorization code was issued to another client"},
		{testClientID, testRedirect + "/", "", "redirect_uri differs from the authorization request"},
		{testClientID, testRedirect, "", "code_verifier is required for this code"},
		{testClientID, testRedirect, testVerifier[:42] + "Y", "code_verifier does not match code_challenge"},
	} {
		e := unbound(c, tc.clientID, tokenRequest{redirectURI: tc.redirectURI, verifier: tc.verifier})
		if e.Code != "invalid_grant" || e.Detail != tc.want {
			t.Errorf("%+v: %v, want %q", tc, e, tc.want)
		}
	}
	c.CodeChallenge = ""
	if e := unbound(c, testClientID, tokenRequest{redirectURI: testRedirect, verifier: testVerifier}); e.Detail != "code_verifier given but the authorization request had no code_challenge" {
		t.Errorf("verifier without challenge: %v", e)
	}
}

func TestPKCEAppendixB(t *testing.T) {
	// RFC 7636 Appendix B gives the challenge of this verifier.
	if got := s256Challenge(testVerifier); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatal(got)
	}
	if checkPKCE("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", testVerifier) != nil {
		t.Fatal("RFC 7636 Appendix B verifier rejected")
	}
}

func TestAuthorizeScopeAndRedirectForms(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("scope", "offline_access profile openid")
	q.Set("redirect_uri", "https://rp.example/cb?x=1")
	q.Set("prompt", "login consent")
	w := f.signIn(q, "orb")
	loc := must(url.Parse(w.Header().Get("Location")))
	v := loc.Query()
	if loc.Path != "/cb" || v.Get("x") != "1" || v.Get("code") == "" || v.Get("state") != "st-1" {
		t.Fatalf("redirect %s", loc)
	}
	c := f.storedCode(v.Get("code"))
	if c.Scope != "openid profile" || c.RedirectURI != "https://rp.example/cb?x=1" || c.Subject != testNullifier {
		t.Fatalf("code %+v", c)
	}

	q = authorizeQuery()
	q.Set("redirect_uri", "com.example.app:/cb")
	q.Set("response_mode", modeFragment)
	if v := responseParams(t, f.signIn(q, "orb"), modeFragment); v.Get("code") == "" {
		t.Fatalf("custom scheme: %v", v)
	}
}

// codeFor signs in with q and returns the code.
func (f *fixture) codeFor(q url.Values) string {
	f.t.Helper()
	return responseParams(f.t, f.signIn(q, "orb"), modeQuery).Get("code")
}

func tokenForm(code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}}
}

func TestTokenErrors(t *testing.T) {
	f := newFixture(t)
	other := f.app
	other.ID, other.RPID = "app_11111111111111111111111111111111", "rp_1111111111111111"
	f.store.putApp(other)
	auth := basicAuth(testClientID, testSecret)
	for _, tc := range []struct {
		name        string
		form        func(code string) url.Values
		header      map[string]string
		status      int
		code, oauth string
	}{
		{"no auth", tokenForm, nil, 401, "unauthenticated", "invalid_client"},
		{"wrong secret", tokenForm, basicAuth(testClientID, testSecret+"x"), 401, "unauthenticated", "invalid_client"},
		{"unknown client", tokenForm, basicAuth("app_ffffffffffffffffffffffffffffffff", testSecret), 401, "unauthenticated", "invalid_client"},
		{"bearer scheme", tokenForm, map[string]string{"Authorization": "Bearer x"}, 401, "unauthenticated", "invalid_client"},
		{"basic garbage", tokenForm, map[string]string{"Authorization": "Basic !!!"}, 401, "unauthenticated", "invalid_client"},
		{"basic no colon", tokenForm, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(testClientID))}, 401, "unauthenticated", "invalid_client"},
		{"two methods", func(c string) url.Values {
			v := tokenForm(c)
			v.Set("client_secret", testSecret)
			return v
		}, auth, 400, "invalid_request", "invalid_request"},
		{"post secret only", func(c string) url.Values {
			v := tokenForm(c)
			v.Set("client_secret", testSecret)
			return v
		}, nil, 401, "unauthenticated", "invalid_client"},
		{"post wrong secret", func(c string) url.Values {
			v := tokenForm(c)
			v.Set("client_id", testClientID)
			v.Set("client_secret", "nope")
			return v
		}, nil, 401, "unauthenticated", "invalid_client"},
		{"no grant_type", func(c string) url.Values { v := tokenForm(c); v.Del("grant_type"); return v }, auth, 400, "required", "invalid_request"},
		{"refresh grant", func(c string) url.Values { v := tokenForm(c); v.Set("grant_type", "refresh_token"); return v }, auth, 400, "invalid_grant_type", "unsupported_grant_type"},
		{"no code", func(c string) url.Values { v := tokenForm(c); v.Del("code"); return v }, auth, 400, "required", "invalid_request"},
		{"no redirect_uri", func(c string) url.Values { v := tokenForm(c); v.Del("redirect_uri"); return v }, auth, 400, "required", "invalid_request"},
		{"two codes", func(c string) url.Values { v := tokenForm(c); v.Add("code", c); return v }, auth, 400, "invalid_request", "invalid_request"},
		{"forged code", func(string) url.Values { return tokenForm(strings.Repeat("A", 43)) }, auth, 400, "invalid_grant", "invalid_grant"},
		{"redirect differs", func(c string) url.Values { v := tokenForm(c); v.Set("redirect_uri", testRedirect+"/"); return v }, auth, 400, "invalid_grant", "invalid_grant"},
		{"other client", tokenForm, basicAuth(other.ID, testSecret), 400, "invalid_grant", "invalid_grant"},
		{"bad verifier syntax", func(c string) url.Values { v := tokenForm(c); v.Set("code_verifier", "short"); return v }, auth, 400, "invalid_request", "invalid_request"},
		{"verifier without challenge", func(c string) url.Values { v := tokenForm(c); v.Set("code_verifier", testVerifier); return v }, auth, 400, "invalid_grant", "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := f.codeFor(authorizeQuery())
			w := f.postForm("/token", tc.form(code), tc.header)
			wantError(t, w, tc.status, tc.code, tc.oauth)
			if tc.status == 401 && w.Header().Get("WWW-Authenticate") != `Basic realm="worldid"` {
				t.Fatalf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
			}
			// A failed call consumes nothing: the client's correct call
			// still gets tokens, and nothing was revoked.
			ok := f.postForm("/token", tokenForm(code), auth)
			var tr tokenResponse
			if ok.Code != 200 || decodeJSON(ok.Body, &tr) != nil {
				t.Fatalf("the code did not survive a failed call: %s", describe(ok))
			}
			if w := f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tr.AccessToken}); w.Code != 200 {
				t.Fatalf("userinfo after a failed call: %s", describe(w))
			}
		})
	}
	t.Run("method", func(t *testing.T) {
		w := f.do(http.MethodGet, "/token", nil, nil)
		wantError(t, w, 405, "method_not_allowed", "invalid_request")
		if w.Header().Get("Allow") != "OPTIONS, POST" {
			t.Fatalf("Allow %q", w.Header().Get("Allow"))
		}
	})
	t.Run("content type", func(t *testing.T) {
		for _, ct := range []string{"", "application/json", "multipart/form-data; boundary=x", "application/x-www-form-urlencoded; charset=latin1", "application/x-www-form-urlencoded; x=1"} {
			w := f.do(http.MethodPost, "/token", strings.NewReader(tokenForm("x").Encode()), map[string]string{"Content-Type": ct})
			wantError(t, w, 415, "invalid_content_type", "invalid_request")
		}
	})
	t.Run("oversize", func(t *testing.T) {
		v := tokenForm("x")
		v.Set("pad", strings.Repeat("a", maxBody))
		wantError(t, f.postForm("/token", v, auth), 413, "request_too_large", "invalid_request")
	})
	t.Run("expired code", func(t *testing.T) {
		code := f.codeFor(authorizeQuery())
		f.clock.Advance(codeLifetime)
		defer f.clock.Advance(-codeLifetime)
		wantError(t, f.postForm("/token", tokenForm(code), auth), 400, "invalid_grant", "invalid_grant")
	})
	t.Run("pkce", func(t *testing.T) {
		q := authorizeQuery()
		q.Set("code_challenge", s256Challenge(testVerifier))
		q.Set("code_challenge_method", "S256")
		code := f.codeFor(q)
		wantError(t, f.postForm("/token", tokenForm(code), auth), 400, "invalid_grant", "invalid_grant")
		v := tokenForm(code)
		v.Set("code_verifier", testVerifier[:42]+"Y")
		wantError(t, f.postForm("/token", v, auth), 400, "invalid_grant", "invalid_grant")
		// Neither failure consumed the code.
		v.Set("code_verifier", testVerifier)
		w := f.postForm("/token", v, auth)
		var tr tokenResponse
		if w.Code != 200 || decodeJSON(w.Body, &tr) != nil {
			t.Fatal(describe(w))
		}
		// A replay by another client neither succeeds nor revokes; the
		// client's own replay revokes.
		bearer := map[string]string{"Authorization": "Bearer " + tr.AccessToken}
		wantError(t, f.postForm("/token", v, basicAuth(other.ID, testSecret)), 400, "invalid_grant", "invalid_grant")
		if w := f.do(http.MethodGet, "/userinfo", nil, bearer); w.Code != 200 {
			t.Fatalf("another client's replay revoked the grant: %s", describe(w))
		}
		wantError(t, f.postForm("/token", tokenForm(code), auth), 400, "invalid_grant", "invalid_grant")
		if w := f.do(http.MethodGet, "/userinfo", nil, bearer); w.Code != 401 {
			t.Fatalf("the client's replay did not revoke the grant: %s", describe(w))
		}
	})
	t.Run("store down", func(t *testing.T) {
		code := f.codeFor(authorizeQuery())
		f.store.setFail(errors.New("boom"))
		defer f.store.setFail(nil)
		wantError(t, f.postForm("/token", tokenForm(code), auth), 500, "internal", "server_error")
	})
	t.Run("success headers", func(t *testing.T) {
		w := f.postForm("/token", tokenForm(f.codeFor(authorizeQuery())), auth)
		h := w.Header()
		if w.Code != 200 || h.Get("Cache-Control") != "no-store" || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Content-Type") != "application/json" {
			t.Fatal(describe(w))
		}
	})
	t.Run("basic url-encoded", func(t *testing.T) {
		// RFC 6749 §2.3.1: the id and secret are form-encoded before Basic.
		h := map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(testClientID)+":"+url.QueryEscape(testSecret)))}
		if w := f.postForm("/token", tokenForm(f.codeFor(authorizeQuery())), h); w.Code != 200 {
			t.Fatal(describe(w))
		}
	})
}

// tokensFor runs the code flow and returns the token response.
func (f *fixture) tokensFor(q url.Values) tokenResponse {
	f.t.Helper()
	w := f.postForm("/token", tokenForm(f.codeFor(q)), basicAuth(testClientID, testSecret))
	var tr tokenResponse
	if w.Code != 200 || decodeJSON(w.Body, &tr) != nil {
		f.t.Fatalf("token: %s", describe(w))
	}
	return tr
}

// flipSignatureChar changes one signature character that carries only data
// bits, so the result is always a different, canonically encoded token.
func flipSignatureChar(token string) string {
	i := len(token) - 3
	c := byte('A')
	if token[i] == c {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}

func TestIntrospect(t *testing.T) {
	f := newFixture(t)
	auth := basicAuth(testClientID, testSecret)
	tr := f.tokensFor(authorizeQuery())
	introspect := func(token string, header map[string]string) map[string]any {
		w := f.postForm("/introspect", url.Values{"token": {token}}, header)
		var out map[string]any
		if w.Code != 200 || decodeJSON(w.Body, &out) != nil || w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("introspect: %s", describe(w))
		}
		return out
	}
	in := introspect(tr.AccessToken, auth)
	if in["active"] != true || in["client_id"] != testClientID || in["sub"] != testNullifier || in["scope"] != "openid email profile" || in["token_type"] != "Bearer" || in["iss"] != f.issuer {
		t.Fatalf("active token: %v", in)
	}
	other := f.app
	other.ID, other.RPID = "app_22222222222222222222222222222222", "rp_2222222222222222"
	f.store.putApp(other)
	for name, tc := range map[string]struct {
		token  string
		header map[string]string
	}{
		"garbage":      {"not-a-token", auth},
		"id token":     {tr.IDToken, auth},
		"foreign":      {tr.AccessToken, basicAuth(other.ID, testSecret)},
		"flipped":      {flipSignatureChar(tr.AccessToken), auth},
		"post auth ok": {"x.y.z", nil},
	} {
		t.Run(name, func(t *testing.T) {
			form := url.Values{"token": {tc.token}}
			if tc.header == nil {
				form.Set("client_id", testClientID)
				form.Set("client_secret", testSecret)
			}
			w := f.postForm("/introspect", form, tc.header)
			if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"active":false}` {
				t.Fatal(describe(w))
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		f.clock.Advance(tokenLifetime)
		defer f.clock.Advance(-tokenLifetime)
		if in := introspect(tr.AccessToken, auth); in["active"] != false {
			t.Fatal(in)
		}
	})
	t.Run("errors", func(t *testing.T) {
		w := f.do(http.MethodGet, "/introspect", nil, nil)
		wantError(t, w, 405, "method_not_allowed", "invalid_request")
		if w.Header().Get("Allow") != "POST" || w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("headers %v", w.Header())
		}
		wantError(t, f.do(http.MethodOptions, "/introspect", nil, nil), 405, "method_not_allowed", "invalid_request")
		wantError(t, f.do(http.MethodPost, "/introspect", strings.NewReader("token=x"), map[string]string{"Content-Type": "text/plain"}), 415, "invalid_content_type", "invalid_request")
		wantError(t, f.postForm("/introspect", url.Values{"token": {"x"}}, nil), 401, "unauthenticated", "invalid_client")
		wantError(t, f.postForm("/introspect", url.Values{}, auth), 400, "required", "invalid_request")
		wantError(t, f.postForm("/introspect", url.Values{"token": {"a", "b"}}, auth), 400, "invalid_request", "invalid_request")
	})
}

func TestUserinfo(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("scope", "openid")
	tr := f.tokensFor(q)
	bearer := map[string]string{"Authorization": "Bearer " + tr.AccessToken}
	check := func(w *httptest.ResponseRecorder) {
		t.Helper()
		var claims map[string]any
		if w.Code != 200 || decodeJSON(w.Body, &claims) != nil || w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("userinfo: %s", describe(w))
		}
		checkIdentity(t, f, claims, "orb")
		if len(claims) != 3 {
			t.Fatalf("claims beyond scope openid: %v", claims)
		}
	}
	check(f.do(http.MethodGet, "/userinfo", nil, bearer))
	check(f.do(http.MethodPost, "/userinfo", nil, map[string]string{"Authorization": "bearer " + tr.AccessToken}))
	check(f.postForm("/userinfo", url.Values{"access_token": {tr.AccessToken}}, nil))

	wantInvalid := func(w *httptest.ResponseRecorder) {
		t.Helper()
		wantError(t, w, 401, "invalid_token", "invalid_token")
		if !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), `Bearer realm="worldid", error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
		}
	}
	wantInvalid(f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tr.IDToken}))
	wantInvalid(f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer a b"}))
	wantInvalid(f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tr.AccessToken + "x"}))

	for _, w := range []*httptest.ResponseRecorder{
		f.do(http.MethodGet, "/userinfo?access_token="+tr.AccessToken, nil, nil),
		f.do(http.MethodGet, "/userinfo", nil, nil),
		f.do(http.MethodPost, "/userinfo", nil, nil),
		f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Basic eDp5"}),
	} {
		wantError(t, w, 401, "unauthenticated", "")
		if w.Header().Get("WWW-Authenticate") != `Bearer realm="worldid"` {
			t.Fatalf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
		}
	}
	wantError(t, f.postForm("/userinfo", url.Values{"access_token": {tr.AccessToken}}, bearer), 400, "invalid_request", "invalid_request")
	wantError(t, f.do(http.MethodPost, "/userinfo", strings.NewReader("{}"), map[string]string{"Content-Type": "application/json", "Authorization": bearer["Authorization"]}), 415, "invalid_content_type", "invalid_request")
	w := f.do(http.MethodDelete, "/userinfo", nil, bearer)
	wantError(t, w, 405, "method_not_allowed", "invalid_request")
	if w.Header().Get("Allow") != "GET, HEAD, OPTIONS, POST" {
		t.Fatalf("Allow %q", w.Header().Get("Allow"))
	}
	f.clock.Advance(tokenLifetime)
	wantInvalid(f.do(http.MethodGet, "/userinfo", nil, bearer))
}

func TestCORSAndDeprecation(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/.well-known/openid-configuration", "/jwks", "/jwks.json", "/token", "/userinfo"} {
		w := f.do(http.MethodOptions, path, nil, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
		h := w.Header()
		if w.Code != 204 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Fatalf("%s preflight: %s", path, describe(w))
		}
	}
	for _, path := range []string{"/.well-known/openid-configuration", "/jwks", "/authorize", "/authorize/status", "/token", "/introspect", "/userinfo"} {
		w := f.do(http.MethodGet, path, nil, nil)
		if w.Header().Get("Deprecation") != "@1769817600" || w.Header().Get("Sunset") != "Sat, 31 Jan 2026 00:00:00 GMT" {
			t.Fatalf("%s: %v", path, w.Header())
		}
	}
	w := f.do(http.MethodPost, "/.well-known/openid-configuration", nil, nil)
	wantError(t, w, 405, "method_not_allowed", "invalid_request")
	if w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Fatalf("Allow %q", w.Header().Get("Allow"))
	}
}

func TestSunset(t *testing.T) {
	sunset := testStart.Add(time.Hour)
	f := newFixture(t, func(o *Options) { o.SunsetDate = sunset; o.SunsetEnforce = true })
	if w := f.do(http.MethodGet, "/jwks", nil, nil); w.Code != 200 || w.Header().Get("Deprecation") != "@"+strconv.FormatInt(sunset.Unix(), 10) {
		t.Fatal(describe(w))
	}
	f.clock.Advance(time.Hour)
	wantError(t, f.do(http.MethodGet, "/jwks", nil, nil), 410, "gone", "invalid_request")
	wantPage(t, f.do(http.MethodGet, "/authorize", nil, nil), 410, "gone")

	g := newFixture(t, func(o *Options) { o.SunsetDate = sunset })
	g.clock.Advance(2 * time.Hour)
	if w := g.do(http.MethodGet, "/jwks", nil, nil); w.Code != 200 {
		t.Fatal("the sunset is only enforced on request", describe(w))
	}
}

// OIDC Core §3.3.2.1 makes nonce optional for code token: no ID token
// comes back from the authorization endpoint.
func TestCodeTokenWithoutNonce(t *testing.T) {
	f := newFixture(t)
	q := authorizeQuery()
	q.Set("response_type", "code token")
	q.Del("nonce")
	params := responseParams(t, f.signIn(q, "orb"), modeFragment)
	if params.Get("code") == "" || params.Get("access_token") == "" || params.Get("id_token") != "" || params.Get("state") != "st-1" {
		t.Fatalf("code token without nonce: %v", params)
	}
}
