package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"worldid/bridge/rpsig"
	"worldid/store/jsontest"
)

// testRPKey is the signing key of IDKit's published sign_request vector
// (bridge/rpsig/testdata/rp_signature.json).
const testRPKey = "abababababababababababababababababababababababababababababababab"

// TestRPSigningKey: the operator sets and removes an app's RP signing key;
// the store keeps it in canonical hex, the admin API answers only its
// address, and neither an answer nor the log ever holds the key.
func TestRPSigningKey(t *testing.T) {
	st := jsontest.Open(t)
	var logs bytes.Buffer
	h := newHandler(t, Options{Token: testToken, Store: st, Rand: rand.Reader,
		Now: func() time.Time { return time.Unix(1700000000, 0) }, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	created, err := c.CreateApp(t.Context(), CreateAppRequest{Name: "Four", RedirectURIs: []string{"https://rp.example/cb"}})
	if err != nil || created.RPSigner != "" {
		t.Fatalf("created %+v %v", created, err)
	}
	key, _ := rpsig.ParsePrivateKey(testRPKey)
	addr := key.Address()
	signer := "0x" + hex.EncodeToString(addr[:])

	path := "/admin/apps/" + created.AppID + "/rp-signing-key"
	set := do(t, srv, "PUT", path, testToken, "application/json", `{"rp_signing_key":"0x`+strings.ToUpper(testRPKey)+`"}`)
	list := do(t, srv, "GET", "/admin/apps", testToken, "", "")
	for name, r := range map[string]response{"set": set, "list": list} {
		if r.status != 200 || !strings.Contains(r.body, `"rp_signer":"`+signer+`"`) || strings.Contains(strings.ToLower(r.body), testRPKey) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	stored, err := st.App(t.Context(), created.AppID)
	if err != nil || stored.RPSigningKey != testRPKey {
		t.Fatalf("stored key %q %v", stored.RPSigningKey, err)
	}
	for _, bad := range []string{`{"rp_signing_key":"abab"}`, `{"rp_signing_key":"` + strings.Repeat("0", 64) + `"}`, `{}`} {
		if r := do(t, srv, "PUT", path, testToken, "application/json", bad); r.status != 400 {
			t.Errorf("%s: %d %s", bad, r.status, r.body)
		}
	}
	if r := do(t, srv, "PUT", "/admin/apps/app_00000000000000000000000000000009/rp-signing-key", testToken, "application/json", `{"rp_signing_key":"`+testRPKey+`"}`); r.status != 404 {
		t.Errorf("unknown app: %d", r.status)
	}
	cleared, err := c.SetRPSigningKey(t.Context(), created.AppID, "")
	if stored, _ = st.App(t.Context(), created.AppID); err != nil || cleared.RPSigner != "" || stored.RPSigningKey != "" {
		t.Fatalf("cleared %+v %v, stored %q", cleared, err, stored.RPSigningKey)
	}
	if strings.Contains(strings.ToLower(logs.String()), testRPKey) {
		t.Fatalf("the log holds the key: %s", logs.String())
	}
}
