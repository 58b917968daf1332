package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"worldid/admin"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// TestPrivateKeyJWTThroughTheBinary: an app on the current profile that
// authenticates with private_key_jwt redeems a code with a client
// assertion; go-oidc verifies the ID token, whose acr, amr and auth_time
// are the current profile's; the same assertion presented again (for
// another code) is refused.
func TestPrivateKeyJWTThroughTheBinary(t *testing.T) {
	ctx := parallelEndToEnd(t, "end-to-end suite builds and runs the binary")
	p := startProc(t, hardenedDataDir(t))
	key, jwks := newClientKey(t)
	app, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "pkjwt RP", RedirectURIs: []string{e2eRedirect},
		SigninSettings: admin.SigninSettings{Profile: "current", TokenEndpointAuthMethod: "private_key_jwt", JWKS: jwks}})
	if err != nil {
		t.Fatal(err)
	}
	rp := connectRelyingParty(t, ctx, p, app)
	w := newWallet(t, ctx, p, [2]string{"orb", "production"})
	signIn := func() (code, verifier string) {
		verifier = oauth2.GenerateVerifier()
		res, err := w.SignIn(ctx, rp.oauth.AuthCodeURL("s", oidc.Nonce("n"), oauth2.S256ChallengeOption(verifier)), "orb")
		if err != nil {
			t.Fatal(err)
		}
		return res.Params.Get("code"), verifier
	}
	assertion := clientAssertion(t, key, app.AppID, rp.provider.Endpoint().TokenURL)

	code, verifier := signIn()
	status, body := redeemWithAssertion(t, rp, code, verifier, assertion)
	if status != http.StatusOK {
		t.Fatalf("token with a client assertion: %d %s", status, body)
	}
	var tok struct {
		IDToken string `json:"id_token"`
	}
	json.Unmarshal(body, &tok)
	idt, err := rp.verifier.Verify(ctx, tok.IDToken)
	if err != nil {
		t.Fatalf("go-oidc rejects the ID token: %v", err)
	}
	var c struct {
		ACR      string   `json:"acr"`
		AMR      []string `json:"amr"`
		AuthTime int64    `json:"auth_time"`
	}
	if err := idt.Claims(&c); err != nil || c.ACR != "https://world.org/oidc/acr/orb-v3" || len(c.AMR) != 1 || c.AMR[0] != "pop" ||
		c.AuthTime == 0 || idt.Expiry.Sub(idt.IssuedAt) != 5*time.Minute {
		t.Fatalf("current-profile claims %+v (%v), lifetime %v", c, err, idt.Expiry.Sub(idt.IssuedAt))
	}

	code, verifier = signIn()
	if status, body := redeemWithAssertion(t, rp, code, verifier, assertion); status != http.StatusUnauthorized || !strings.Contains(string(body), "invalid_client") {
		t.Fatalf("replayed assertion: %d %s", status, body)
	}
	if status, body := redeemWithAssertion(t, rp, code, verifier, clientAssertion(t, key, app.AppID, rp.provider.Endpoint().TokenURL)); status != http.StatusOK {
		t.Fatalf("a fresh assertion after the refused replay: %d %s", status, body)
	}
}

// newClientKey is a P-256 key and its public JWKS.
func newClientKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "kid": "rp-1",
		"x": enc.EncodeToString(raw[1:33]), "y": enc.EncodeToString(raw[33:])}}})
	return key, string(jwks)
}

// clientAssertion is an RFC 7523 client assertion signed ES256.
func clientAssertion(t *testing.T, key *ecdsa.PrivateKey, clientID, aud string) string {
	enc := base64.RawURLEncoding
	now := time.Now()
	claims, _ := json.Marshal(map[string]any{"iss": clientID, "sub": clientID, "aud": aud, "jti": rand.Text(),
		"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix()})
	in := enc.EncodeToString([]byte(`{"alg":"ES256","kid":"rp-1","typ":"JWT"}`)) + "." + enc.EncodeToString(claims)
	digest := sha256.Sum256([]byte(in))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return in + "." + enc.EncodeToString(sig)
}

func redeemWithAssertion(t *testing.T, rp *relyingParty, code, verifier, assertion string) (int, []byte) {
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {e2eRedirect}, "code_verifier": {verifier},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion}}
	resp, err := http.PostForm(rp.provider.Endpoint().TokenURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
