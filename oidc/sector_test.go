package oidc

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCheckSectorIdentifier: the document is fetched over TLS and must
// list every redirect URI of the app; what is wrong is named. The guarded
// default client refuses a document on an address that is not public.
func TestCheckSectorIdentifier(t *testing.T) {
	var doc atomic.Value
	var status atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(doc.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	f := newFixture(t, func(o *Options) { o.JWKSClient = srv.Client() })
	uris := []string{"https://a.example/cb", "https://b.example/cb?x=1", "com.example.app:/cb"}
	for _, tc := range []struct {
		name, doc string
		status    int
		want      string // "" accepted, else a substring of the error
	}{
		{"lists all", `["https://a.example/cb","https://b.example/cb?x=1","com.example.app:/cb","https://c.example/other"]`, 200, ""},
		{"one missing", `["https://a.example/cb","com.example.app:/cb"]`, 200, `"https://b.example/cb?x=1"`},
		{"a prefix is not the URI", `["https://a.example/cb","https://b.example/cb","com.example.app:/cb"]`, 200, "does not list"},
		{"object", `{"redirect_uris":["https://a.example/cb"]}`, 200, "not a JSON array"},
		{"empty", `[]`, 200, "lists no redirect URI"},
		{"not a string", `["https://a.example/cb",7]`, 200, "not a string"},
		{"relative", `["/cb"]`, 200, "not an absolute URI"},
		{"fragment", `["https://a.example/cb#"]`, 200, "without a fragment"},
		{"not JSON", `["https://a.example/cb",]`, 200, "not JSON"},
		{"trailing data", `["https://a.example/cb"] []`, 200, "not JSON"},
		{"not found", `[]`, 404, "answered 404"},
		{"too large", `["` + strings.Repeat("a", maxJWKSBody) + `"]`, 200, "over 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc.Store(tc.doc)
			status.Store(int32(tc.status))
			err := f.p.CheckSectorIdentifier(t.Context(), srv.URL+"/sector.json", uris)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if err := f.p.CheckSectorIdentifier(t.Context(), "http://a.example/sector.json", uris); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("http sector_identifier_uri: %v", err)
	}
	guarded := newFixture(t)
	doc.Store(`["https://a.example/cb"]`)
	status.Store(200)
	if err := guarded.p.CheckSectorIdentifier(t.Context(), srv.URL+"/sector.json", uris[:1]); !errors.Is(err, errForbiddenAddress) {
		t.Fatalf("the guarded client fetched a loopback sector document: %v", err)
	}
}

// nullifierFor stands for the wallet's nullifier hash for one identity and
// the app_id it proves for (World ID 3.0: it depends on the app_id and the
// action, here always ""), canonical and below the field modulus.
func nullifierFor(appID string) string {
	sum := sha256.Sum256([]byte("one identity|" + appID))
	sum[0] = 0
	return "0x" + hex.EncodeToString(sum[:])
}

// sectorSignIn signs in to clientID through redirect with an ID token
// response, the wallet proving for whatever app_id the bridge request
// names; it returns the ID token's sub, that app_id and the session
// cookie.
func (f *fixture) sectorSignIn(clientID, redirect string) (sub, provedFor, cookie string) {
	f.t.Helper()
	q := authorizeQuery()
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirect)
	q.Set("response_type", "id_token")
	b := f.authorize(q)
	req := f.fetch(b.conn)
	answer := proofAnswer(f.t, req, "orb")
	answer.NullifierHash = nullifierFor(req.AppID)
	f.answer(b.conn, answer)
	if s := f.status(b); s != "done" {
		f.t.Fatalf("%s: status after the wallet's answer %q", clientID, s)
	}
	if c := f.checker.last(); c.AppID != req.AppID || "0x"+hex.EncodeToString(c.NullifierHash[:]) != answer.NullifierHash {
		f.t.Fatalf("%s: the proof was checked for %s, the bridge asked for %s", clientID, c.AppID, req.AppID)
	}
	w := f.open(b)
	for _, c := range w.Result().Cookies() {
		if strings.HasSuffix(c.Name, sessionCookie) {
			cookie = c.Name + "=" + c.Value
		}
	}
	claims := idTokenClaimsOf(f.t, responseParams(f.t, w, modeFragment).Get("id_token"))
	return claims["sub"].(string), req.AppID, cookie
}

// TestSectorSubjects: an app without a sector proves for its own app_id,
// so its sub is today's; the first app of a sector too, with the same sub
// through each of its redirect hosts; a later app of the sector proves for
// the first's app_id and so gets the same sub; an app outside the sector
// another. A login session still re-authenticates to its own app only.
func TestSectorSubjects(t *testing.T) {
	f := newFixture(t)
	web := f.app
	web.RedirectURIs = []string{testRedirect, "https://m.rp.example/callback"}
	web.SectorIdentifierURI = "https://rp.example/sector.json"
	f.store.putApp(web)
	mobile := f.app
	mobile.ID, mobile.RPID, mobile.RedirectURIs = "app_22222222222222222222222222222222", "rp_2222222222222222", []string{"https://app.example/callback"}
	mobile.SectorIdentifierURI, mobile.SectorAppID = "https://rp.example/other-sector.json", web.ID
	f.store.putApp(mobile)
	other := f.app
	other.ID, other.RPID, other.RedirectURIs = "app_33333333333333333333333333333333", "rp_3333333333333333", []string{"https://app.example/callback"}
	f.store.putApp(other)

	webSub, webProved, cookie := f.sectorSignIn(web.ID, testRedirect)
	if webProved != web.ID || webSub != nullifierFor(web.ID) {
		t.Fatalf("the sector's first app proved for %s, sub %s", webProved, webSub)
	}
	if sub, _, _ := f.sectorSignIn(web.ID, "https://m.rp.example/callback"); sub != webSub {
		t.Fatalf("sub through the second host %s, through the first %s", sub, webSub)
	}
	if sub, proved, _ := f.sectorSignIn(mobile.ID, "https://app.example/callback"); proved != web.ID || sub != webSub {
		t.Fatalf("the sector's second app proved for %s, sub %s; want %s, %s", proved, sub, web.ID, webSub)
	}
	if sub, proved, _ := f.sectorSignIn(other.ID, "https://app.example/callback"); proved != other.ID || sub == webSub {
		t.Fatalf("an app outside the sector proved for %s, sub %s", proved, sub)
	}
	params := f.silent(cookie, func(q url.Values) {
		q.Set("client_id", mobile.ID)
		q.Set("redirect_uri", "https://app.example/callback")
	})
	if params.Get("error") != "login_required" {
		t.Fatalf("prompt=none for another app of the sector: %v", params)
	}
}

// TestSubjectUnchangedWithoutSector: the regression vector of the v1
// contract. A fixed nullifier hash proven for an app without a sector is
// that app's sub, as it was before sectors existed, in the ID token, at
// /userinfo and at /introspect.
func TestSubjectUnchangedWithoutSector(t *testing.T) {
	f := newFixture(t)
	b := f.authorize(authorizeQuery())
	req := f.fetch(b.conn)
	if req.AppID != testClientID {
		t.Fatalf("the bridge request asks for %s", req.AppID)
	}
	f.answer(b.conn, proofAnswer(t, req, "orb"))
	if s := f.status(b); s != "done" {
		t.Fatalf("status %q", s)
	}
	code := responseParams(t, f.open(b), modeQuery).Get("code")
	w := f.postForm("/token", tokenForm(code), basicAuth(testClientID, testSecret))
	var tr tokenResponse
	if w.Code != http.StatusOK || decodeJSON(w.Body, &tr) != nil {
		t.Fatalf("token: %s", describe(w))
	}
	const want = "0x0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9" // testNullifier, spelled out
	if sub := idTokenClaimsOf(t, tr.IDToken)["sub"]; sub != want {
		t.Fatalf("ID token sub %v", sub)
	}
	info := f.do(http.MethodGet, "/userinfo", nil, map[string]string{"Authorization": "Bearer " + tr.AccessToken})
	in := f.postForm("/introspect", url.Values{"token": {tr.AccessToken}}, basicAuth(testClientID, testSecret))
	if !strings.Contains(info.Body.String(), `"sub":"`+want+`"`) || !strings.Contains(in.Body.String(), `"sub":"`+want+`"`) {
		t.Fatalf("userinfo %s, introspect %s", info.Body, in.Body)
	}
}
