package simulator

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/bridge"
	"worldid/registry"
)

func TestAllowed(t *testing.T) {
	s, err := New("http://127.0.0.1:1", "http://dev.test:8080", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		remote string
		header [2]string
		ok     bool
	}{
		{"127.0.0.1:5000", [2]string{}, true},
		{"[::1]:5000", [2]string{}, true},
		{"127.0.0.2:5000", [2]string{}, true},
		{"10.0.0.1:5000", [2]string{}, false},
		{"192.0.2.7:5000", [2]string{}, false},
		{"[2001:db8::1]:5000", [2]string{}, false},
		{"127.0.0.1:5000", [2]string{"X-Forwarded-For", "192.0.2.7"}, false},
		{"127.0.0.1:5000", [2]string{"Forwarded", "for=192.0.2.7"}, false},
		{"127.0.0.1:5000", [2]string{"X-Real-IP", "192.0.2.7"}, false},
		{"garbage", [2]string{}, false},
	} {
		r := httptest.NewRequest(http.MethodGet, Path, nil)
		r.RemoteAddr, r.Host = tc.remote, "127.0.0.1:8080"
		if tc.header[0] != "" {
			r.Header.Set(tc.header[0], tc.header[1])
		}
		if got := s.Allowed(r); got != tc.ok {
			t.Errorf("%s %v: Allowed = %v", tc.remote, tc.header, got)
		}
	}
	// DNS rebinding: a loopback client naming another host is refused.
	for host, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true, "LOCALHOST": true,
		"app.localhost:3000": true, "dev.test:8080": true, "Dev.Test": true,
		"evil.example:8080": false, "evil.example": false, "10.0.0.1:8080": false, "": false,
		"localhost.evil.example": false, "dev.test.evil.example": false,
	} {
		r := httptest.NewRequest(http.MethodGet, Path, nil)
		r.RemoteAddr, r.Host = "127.0.0.1:5000", host
		if got := s.Allowed(r); got != ok {
			t.Errorf("Host %q: Allowed = %v, want %v", host, got, ok)
		}
	}
}

func TestGuard(t *testing.T) {
	mux := http.NewServeMux()
	s, err := New("http://127.0.0.1:1", "http://localhost:8080", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Register(mux)
	link := "https://world.org/verify?t=wld&i=0f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b&k=" + url.QueryEscape(bridge.Key{}.Base64()) + "&b=" + url.QueryEscape("http://localhost:8080")
	r := httptest.NewRequest(http.MethodGet, "http://localhost:8080"+Path+"?"+url.Values{"link": {link}}.Encode(), nil)
	r.RemoteAddr = "192.0.2.7:5000"
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound {
		t.Fatalf("a remote client got %d", w.Code)
	}
	r.RemoteAddr = "127.0.0.1:5000"
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("a loopback client got %d", w.Code)
	}
}

// TestCrossOriginPost: a post from another site's page is refused before
// the form is read; a same-origin post, or one without browser headers,
// reaches it (and is refused there for its empty form).
func TestCrossOriginPost(t *testing.T) {
	mux := http.NewServeMux()
	s, err := New("http://127.0.0.1:1", "http://localhost:8080", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Register(mux)
	for _, tc := range []struct {
		header [2]string
		status int
	}{
		{[2]string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{[2]string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{[2]string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{[2]string{"Sec-Fetch-Site", "same-origin"}, http.StatusBadRequest},
		{[2]string{"Origin", "http://127.0.0.1:8080"}, http.StatusBadRequest},
		{[2]string{}, http.StatusBadRequest},
	} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080"+Path, strings.NewReader("identity=1"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "127.0.0.1:5000"
		if tc.header[0] != "" {
			r.Header.Set(tc.header[0], tc.header[1])
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%v: %d, want %d", tc.header, w.Code, tc.status)
		}
	}
}

func TestTestIdentities(t *testing.T) {
	seen := map[string]bool{}
	for n := 1; n <= identityCount; n++ {
		a, b := TestIdentity(n).Commitment(), TestIdentity(n).Commitment()
		if !a.Equal(&b) {
			t.Fatalf("test identity %d is not deterministic", n)
		}
		seen[a.String()] = true
	}
	if len(seen) != identityCount {
		t.Fatal("test identities repeat")
	}
}

// TestTrees: the test tree holds exactly the test identities; its root is
// accepted for orb and device only, and each wallet's path leads to it.
func TestTrees(t *testing.T) {
	trees, err := NewTrees()
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= identityCount; n++ {
		w := trees.Wallet(n, "http://127.0.0.1:1", nil)
		path, err := w.Paths("orb", "production")
		if err != nil {
			t.Fatal(err)
		}
		c, root := TestIdentity(n).Commitment(), path.Root()
		if !path.Leaf.Equal(&c) || len(path.Siblings) != registry.TreeDepth {
			t.Fatalf("test identity %d: path of leaf %v at depth %d", n, path.Leaf, len(path.Siblings))
		}
		for _, env := range []string{"production", "staging"} {
			if !trees.Accepts("orb", env, root) || !trees.Accepts("device", env, root) {
				t.Fatalf("test identity %d: root not accepted in %s", n, env)
			}
		}
		if trees.Accepts("face", "production", root) || trees.Accepts("document", "production", root) {
			t.Fatal("the test root is accepted for another credential type")
		}
	}
	var other fr.Element
	other.SetUint64(7)
	if trees.Accepts("orb", "production", other) {
		t.Fatal("another root is accepted")
	}
}
