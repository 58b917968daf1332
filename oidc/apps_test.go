package oidc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"worldid/record"
)

// A staging app signs in on the staging trees and its wallet request says
// so; a production app's request names no environment.
func TestStagingAppSignIn(t *testing.T) {
	f := newFixture(t)
	if d, _ := f.walletRequest(f.waitPage(f.authorize(authorizeQuery()))); d.Environment != "" {
		t.Errorf("a production app's wallet request names environment %q", d.Environment)
	}
	f.app.Staging = true
	f.store.putApp(f.app)
	if d, _ := f.walletRequest(f.waitPage(f.authorize(authorizeQuery()))); d.Environment != "staging" {
		t.Errorf("staging app's wallet request: environment %q", d.Environment)
	}
	// (The fake checker accepts production claims only; what matters is
	// the claim it was asked to check.)
	_, form := f.walletSubmission(f.waitPage(f.authorize(authorizeQuery())), "orb")
	f.postForm("/authorize/complete", form, nil)
	if c := f.checker.last(); c.Environment != "staging" || c.AppID != testClientID {
		t.Errorf("proof checked as %s for %s", c.Environment, c.AppID)
	}
}

// A disabled app cannot sign in, finish an approved sign-in or redeem a
// code, and its tokens are inactive until it is enabled again.
func TestDisabledApp(t *testing.T) {
	f := newFixture(t)
	code := responseParams(t, f.signIn(authorizeQuery(), "orb"), modeQuery).Get("code")
	tokenForm := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}}
	auth := basicAuth(testClientID, testSecret)
	var tok tokenResponse
	if w := f.postForm("/token", tokenForm, auth); w.Code != 200 || decodeJSON(w.Body, &tok) != nil {
		t.Fatalf("token: %s", describe(w))
	}
	// Disabled between authorize and the wallet's submission.
	page := f.waitPage(f.authorize(authorizeQuery()))
	setDisabled(f, true)
	_, form := f.walletSubmission(page, "orb")
	if w := f.postForm("/authorize/complete", form, nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "access_denied") {
		t.Errorf("completing a sign-in of a disabled app: %s", describe(w))
	}
	// Disabled between the wallet's approval and the browser's finish.
	setDisabled(f, false)
	b := f.authorize(authorizeQuery())
	f.approve(b, "orb")
	setDisabled(f, true)
	if got := responseParams(t, f.open(b), modeQuery); got.Get("error") != "access_denied" || got.Has("code") {
		t.Errorf("finishing a sign-in of a disabled app: %v", got)
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
	if err := f.store.DeleteApp(t.Context(), testClientID); err != nil {
		t.Fatal(err)
	}
	if s := userinfo(); s != 401 {
		t.Errorf("a deleted app's token: userinfo %d", s)
	}
}

func setDisabled(f *fixture, disabled bool) {
	f.store.changeApp(testClientID, func(a *record.App) { a.Disabled = disabled })
}
