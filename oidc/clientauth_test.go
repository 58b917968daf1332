package oidc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"worldid/record"
)

// assertionClient is an app registered for private_key_jwt with one P-256
// key.
type assertionClient struct {
	f   *fixture
	key *ecdsa.PrivateKey
	kid string
}

func newAssertionClient(f *fixture) *assertionClient {
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	c := &assertionClient{f: f, key: key, kid: "k1"}
	pub := key.PublicKey
	raw := must(pub.Bytes()) // 0x04 ‖ X ‖ Y
	jwks := must(json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": c.kid, "use": "sig", "alg": "ES256",
		"x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:]),
	}}}))
	f.app.TokenEndpointAuthMethod = record.AuthPrivateKeyJWT
	f.app.JWKS = string(jwks)
	f.store.putApp(f.app)
	return c
}

// assertion is a client assertion with the claims edited by edit.
func (c *assertionClient) assertion(edit func(map[string]any)) string {
	now := c.f.clock.Now()
	claims := map[string]any{"iss": testClientID, "sub": testClientID, "aud": c.f.issuer + "/token",
		"exp": now.Add(time.Minute).Unix(), "iat": now.Unix(), "jti": rand.Text()}
	if edit != nil {
		edit(claims)
	}
	return signES(c.key, `{"alg":"ES256","kid":"`+c.kid+`","typ":"JWT"}`, string(must(json.Marshal(claims))))
}

// token posts a code grant with the given authentication fields.
func (f *fixture) token(code string, auth url.Values, header map[string]string) (int, string) {
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect}}
	for k, vals := range auth {
		v[k] = vals
	}
	w := f.postForm("/token", v, header)
	var e struct {
		Error string `json:"error"`
	}
	decodeJSON(w.Body, &e)
	return w.Code, e.Error
}

func (f *fixture) newCode() string {
	f.t.Helper()
	return responseParams(f.t, f.signIn(authorizeQuery(), "orb"), modeQuery).Get("code")
}

func assertionForm(a string) url.Values {
	return url.Values{"client_assertion_type": {assertionType}, "client_assertion": {a}}
}

func TestPrivateKeyJWT(t *testing.T) {
	f := newFixture(t)
	c := newAssertionClient(f)
	a := c.assertion(nil)
	if status, _ := f.token(f.newCode(), assertionForm(a), nil); status != http.StatusOK {
		t.Fatalf("private_key_jwt: %d", status)
	}
	// The same assertion again (another code): its jti is spent.
	code := f.newCode()
	if status, oauthErr := f.token(code, assertionForm(a), nil); status != http.StatusUnauthorized || oauthErr != "invalid_client" {
		t.Fatalf("replayed assertion: %d %s", status, oauthErr)
	}
	now := f.clock.Now()
	other := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	for name, auth := range map[string]url.Values{
		"issuer as aud": assertionForm(c.assertion(func(m map[string]any) { m["aud"] = f.issuer })),
		"aud array":     assertionForm(c.assertion(func(m map[string]any) { m["aud"] = []string{"x", f.issuer + "/token"} })),
	} {
		if status, _ := f.token(f.newCode(), auth, nil); status != http.StatusOK {
			t.Errorf("%s: %d", name, status)
		}
	}
	for name, auth := range map[string]url.Values{
		"wrong aud":       assertionForm(c.assertion(func(m map[string]any) { m["aud"] = "https://elsewhere/token" })),
		"expired":         assertionForm(c.assertion(func(m map[string]any) { m["exp"] = now.Unix() })),
		"exp too far":     assertionForm(c.assertion(func(m map[string]any) { m["exp"] = now.Add(time.Hour).Unix() })),
		"no exp":          assertionForm(c.assertion(func(m map[string]any) { delete(m, "exp") })),
		"no jti":          assertionForm(c.assertion(func(m map[string]any) { delete(m, "jti") })),
		"sub differs":     assertionForm(c.assertion(func(m map[string]any) { m["sub"] = "app_x" })),
		"iat in future":   assertionForm(c.assertion(func(m map[string]any) { m["iat"] = now.Add(time.Hour).Unix() })),
		"other key":       assertionForm(signES(other, `{"alg":"ES256","kid":"k1"}`, `{"iss":"`+testClientID+`","sub":"`+testClientID+`","aud":"`+f.issuer+`/token","exp":`+fmt.Sprint(now.Add(time.Minute).Unix())+`,"jti":"o"}`)),
		"alg none":        assertionForm(unsecuredJWT(`{"iss":"` + testClientID + `","sub":"` + testClientID + `","aud":"` + f.issuer + `/token","exp":` + fmt.Sprint(now.Add(time.Minute).Unix()) + `,"jti":"n"}`)),
		"wrong type":      {"client_assertion_type": {"urn:x"}, "client_assertion": {c.assertion(nil)}},
		"client secret":   {"client_id": {testClientID}, "client_secret": {testSecret}},
		"client_id other": {"client_id": {"app_fedcba9876543210fedcba9876543210"}, "client_assertion_type": {assertionType}, "client_assertion": {c.assertion(nil)}},
	} {
		if status, _ := f.token(code, auth, nil); status != http.StatusUnauthorized && status != http.StatusBadRequest {
			t.Errorf("%s: %d", name, status)
		}
	}
	if status, _ := f.token(code, nil, basicAuth(testClientID, testSecret)); status != http.StatusUnauthorized {
		t.Errorf("Basic for a private_key_jwt app: %d", status)
	}
}

// TestAuthMethodEnforced: an app registered for one secret method cannot
// use the other, and a secret app cannot present an assertion.
func TestAuthMethodEnforced(t *testing.T) {
	f := newFixture(t)
	f.app.TokenEndpointAuthMethod = record.AuthClientSecretBasic
	f.store.putApp(f.app)
	code := f.newCode()
	if status, _ := f.token(code, url.Values{"client_id": {testClientID}, "client_secret": {testSecret}}, nil); status != http.StatusUnauthorized {
		t.Fatalf("client_secret_post for a basic app: %d", status)
	}
	c := &assertionClient{f: f, key: must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)), kid: "k1"}
	if status, _ := f.token(code, assertionForm(c.assertion(nil)), nil); status != http.StatusUnauthorized {
		t.Fatalf("assertion for a basic app: %d", status)
	}
	if status, _ := f.token(code, nil, basicAuth(testClientID, testSecret)); status != http.StatusOK {
		t.Fatalf("basic for a basic app: %d", status)
	}
}

// TestBasicFormDecoding: RFC 6749 §2.3.1 form-encodes id and secret
// before Basic, so "+" is a space and %XX an octet.
func TestBasicFormDecoding(t *testing.T) {
	creds, e := parseClientCredentials("Basic "+base64.StdEncoding.EncodeToString([]byte("app%5Fx:a+b%2Bc")), map[string]string{})
	if e != nil || creds.id != "app_x" || creds.secret != "a b+c" || creds.method != record.AuthClientSecretBasic {
		t.Fatalf("%+v %v", creds, e)
	}
}

// TestJWKSURI: an app's keys are read from its jwks_uri; the default
// client refuses an address that is not public (here loopback), so a
// registered URI cannot probe the server's network.
func TestJWKSURI(t *testing.T) {
	var jwks string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(jwks))
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name   string
		client *http.Client
		status int
	}{{"reachable", srv.Client(), http.StatusOK}, {"loopback refused", nil, http.StatusUnauthorized}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.JWKSClient = tc.client })
			c := newAssertionClient(f)
			jwks, f.app.JWKS, f.app.JWKSURI = f.app.JWKS, "", srv.URL+"/jwks"
			f.store.putApp(f.app)
			if status, _ := f.token(f.newCode(), assertionForm(c.assertion(nil)), nil); status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if _, err := f.p.fetchJWKS(t.Context(), srv.URL); tc.client == nil && !errors.Is(err, errForbiddenAddress) {
				t.Fatalf("the guarded client dialed loopback: %v", err)
			}
		})
	}
}

func TestPublicAddress(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.215.14": true, "2606:2800:21f:cb07:6820:80da:af6b:8b2c": true,
		"127.0.0.1": false, "10.1.2.3": false, "192.168.1.1": false, "172.16.0.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "0.0.0.0": false, "::1": false, "fc00::1": false, "fe80::1": false, "224.0.0.1": false,
		"::ffff:127.0.0.1": false,
	} {
		if got := publicAddress(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddress(%s) = %v", addr, got)
		}
	}
}
