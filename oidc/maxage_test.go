package oidc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestMaxAgeReusesLoginSession: an interactive request with max_age is
// answered from a login session for the same app that is young enough,
// without the wallet, keeping the sign-in's auth_time (the OpenID
// certification module oidcc-max-age-10000); an older session, max_age=0,
// prompt=login or no max_age at all ask the wallet again.
func TestMaxAgeReusesLoginSession(t *testing.T) {
	f := newFixture(t)
	other := f.app
	other.ID, other.RPID = "app_fedcba9876543210fedcba9876543210", "rp_fedcba9876543210"
	f.store.putApp(other)
	cookie, first, _ := f.sessionSignIn("device")
	f.clock.Advance(10 * time.Minute)
	request := func(edit func(url.Values)) *http.Response {
		q := authorizeQuery()
		q.Set("response_type", "id_token")
		q.Set("nonce", "n-2")
		edit(q)
		return f.do(http.MethodGet, "/authorize?"+q.Encode(), nil, map[string]string{"Cookie": cookie}).Result()
	}
	resp := request(func(q url.Values) { q.Set("max_age", "3600") })
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), testRedirect) {
		t.Fatalf("max_age=3600 with a 10-minute-old session: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	params, _ := url.ParseQuery(loc.EscapedFragment())
	c := idTokenClaimsOf(t, params.Get("id_token"))
	if c["sub"] != first["sub"] || c["auth_time"] != first["auth_time"] || c["nonce"] != "n-2" || params.Get("state") != "st-1" {
		t.Fatalf("ID token from the session %v, first %v", c, first)
	}
	for name, edit := range map[string]func(url.Values){
		"older than max_age": func(q url.Values) { q.Set("max_age", "60") },
		"max_age 0":          func(q url.Values) { q.Set("max_age", "0") },
		"prompt login":       func(q url.Values) { q.Set("max_age", "3600"); q.Set("prompt", "login") },
		"no max_age":         func(url.Values) {},
		"another app's session": func(q url.Values) {
			q.Set("max_age", "3600")
			q.Set("client_id", other.ID)
		},
	} {
		t.Run(name, func(t *testing.T) {
			resp := request(edit)
			if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, f.issuer+"/authorize/wait?") {
				t.Fatalf("the wallet was not asked: %d %q", resp.StatusCode, loc)
			}
		})
	}
}
