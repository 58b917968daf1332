package oidc

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"worldid/bridge"
	"worldid/record"
)

// A staging app signs in on the staging trees and its connect URL opens
// the staging World App; a production app's opens the production one.
func TestStagingAppSignIn(t *testing.T) {
	f := newFixture(t)
	if conn := walletConnect(t, f.waitPage(f.authorize(authorizeQuery()))); conn.Base != bridge.ProductionVerify {
		t.Errorf("a production app's connect URL opens %q", conn.Base)
	}
	f.app.Staging = true
	f.store.putApp(f.app)
	if conn := walletConnect(t, f.waitPage(f.authorize(authorizeQuery()))); conn.Base != bridge.StagingVerify {
		t.Errorf("staging app's connect URL opens %q", conn.Base)
	}
	// (The fake checker accepts production claims only; what matters is
	// the claim it was asked to check.)
	b := f.authorize(authorizeQuery())
	conn, req := f.scan(f.waitPage(b))
	f.answer(conn, proofAnswer(t, req, "orb"))
	f.poll(b)
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
	// Disabled between authorize and the wallet's answer.
	disabled := f.authorize(authorizeQuery())
	conn, req := f.scan(f.waitPage(disabled))
	setDisabled(f, true)
	f.answer(conn, proofAnswer(t, req, "orb"))
	if s := f.poll(disabled); s != "refused" {
		t.Errorf("the wallet's answer for a disabled app: status %q", s)
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
