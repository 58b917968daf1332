package oidc

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/oidc")

const goldenDiscovery = "../testdata/oidc/discovery.json"

// TestDiscoveryGolden compares the document for the default issuer
// http://127.0.0.1:8080 with the golden file (go test -update rewrites it).
func TestDiscoveryGolden(t *testing.T) {
	store := newTestStore(t)
	store.addKey(sharedKey())
	p, err := New(Options{Issuer: "http://127.0.0.1:8080", Store: store, Rand: rand.Reader, Now: (&fakeClock{t: testStart}).Now})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	register(t, p, store, &fakeChecker{}, mux, newTestRelay(t, time.Now))
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(method, "/.well-known/openid-configuration", nil))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s discovery: %d %v", method, w.Code, w.Header())
		}
		if method == http.MethodHead {
			continue
		}
		got := w.Body.Bytes()
		if *update {
			if err := os.WriteFile(goldenDiscovery, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(goldenDiscovery)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("discovery differs from %s:\n%s", goldenDiscovery, got)
		}
		var doc map[string]any
		if err := json.Unmarshal(got, &doc); err != nil || doc["issuer"] != "http://127.0.0.1:8080" {
			t.Fatalf("discovery is not the issuer's JSON: %v", err)
		}
	}
}

func TestJWKSServed(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/jwks", "/jwks.json"} {
		w := f.do(http.MethodGet, path, nil, nil)
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), f.p.keySet().jwks) || w.Header().Get("Cache-Control") != "public, max-age=3600" {
			t.Fatalf("%s: %s", path, describe(w))
		}
	}
	var doc struct{ Keys []map[string]string }
	ec := must(accessTokenKey(sharedKey().PrivateKey))
	if err := json.Unmarshal(f.p.keySet().jwks, &doc); err != nil || len(doc.Keys) != 2 || len(doc.Keys[0]) != 6 || doc.Keys[0]["kid"] != sharedKey().ID ||
		len(doc.Keys[1]) != 7 || doc.Keys[1]["kid"] != ecJWK(&ec.PublicKey).Kid || doc.Keys[1]["alg"] != "ES256" {
		t.Fatalf("JWKS %s", f.p.keySet().jwks)
	}
}
