package oidc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A staging app signs in on the staging trees and says so in the wallet
// link; a production app's link is unchanged.
func TestStagingAppSignIn(t *testing.T) {
	f := newFixture(t)
	page := f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil)
	if walletParams(t, page.Body.String()).Has("environment") {
		t.Error("a production app's wallet link names an environment")
	}
	f.app.Staging = true
	f.store.apps[f.app.ID] = f.app
	page = f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil)
	if env := walletParams(t, page.Body.String()).Get("environment"); env != "staging" {
		t.Errorf("staging app's wallet link: environment %q", env)
	}
	// (The fake checker accepts production claims only; what matters is
	// the claim it was asked to check.)
	f.signIn(authorizeQuery(), "orb")
	if c := f.checker.last(); c.Environment != "staging" || c.AppID != testClientID {
		t.Errorf("proof checked as %s for %s", c.Environment, c.AppID)
	}
}

// A disabled app cannot sign in or redeem a code, and its tokens are
// inactive until it is enabled again.
func TestDisabledApp(t *testing.T) {
	f := newFixture(t)
	code := responseParams(t, f.signIn(authorizeQuery(), "orb"), modeQuery).Get("code")
	tokenForm := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}}
	auth := basicAuth(testClientID, testSecret)
	var tok tokenResponse
	if w := f.postForm("/token", tokenForm, auth); w.Code != 200 || decodeJSON(w.Body, &tok) != nil {
		t.Fatalf("token: %s", describe(w))
	}
	// Between authorize and the wallet's submission.
	page := f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil)
	setDisabled(f, true)
	_, form := walletSubmission(t, page.Body.String(), "orb")
	if w := f.postForm("/authorize/complete", form, nil); responseParams(t, w, modeQuery).Get("error") != "access_denied" {
		t.Errorf("completing a sign-in of a disabled app: %s", describe(w))
	}
	if w := f.do(http.MethodGet, "/authorize?"+authorizeQuery().Encode(), nil, nil); w.Code != 400 || !strings.Contains(w.Body.String(), "client_disabled") {
		t.Errorf("authorize for a disabled app: %s", describe(w))
	}
	if w := f.postForm("/token", tokenForm, auth); w.Code != 400 || !strings.Contains(w.Body.String(), "client_disabled") {
		t.Errorf("token for a disabled app: %s", describe(w))
	}
	userinfo := func() int {
		return f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tok.AccessToken}).Code
	}
	introspect := func() string {
		return f.postForm("/introspect", url.Values{"token": {tok.AccessToken}}, auth).Body.String()
	}
	if s, body := userinfo(), introspect(); s != 401 || !strings.Contains(body, `"active":false`) {
		t.Errorf("a disabled app's token: userinfo %d, introspect %s", s, body)
	}
	setDisabled(f, false)
	if s, body := userinfo(), introspect(); s != 200 || !strings.Contains(body, `"active":true`) {
		t.Errorf("after enabling: userinfo %d, introspect %s", s, body)
	}
	delete(f.store.apps, testClientID)
	if s := userinfo(); s != 401 {
		t.Errorf("a deleted app's token: userinfo %d", s)
	}
}

func setDisabled(f *fixture, disabled bool) {
	defer f.store.lock()()
	a := f.store.apps[testClientID]
	a.Disabled = disabled
	f.store.apps[testClientID] = a
}
