package forwarded

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted, err := ParsePrefixes("10.0.0.0/8, 127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		remote string
		xff    []string
		want   string // "" = not rewritten
	}{
		{"127.0.0.1:5000", []string{"203.0.113.7"}, "203.0.113.7"},
		{"127.0.0.1:5000", []string{"198.51.100.1, 203.0.113.7, 10.1.2.3"}, "203.0.113.7"}, // rightmost untrusted; the left one is forgeable
		{"127.0.0.1:5000", []string{"198.51.100.1", "203.0.113.7"}, "203.0.113.7"},
		{"203.0.113.9:5000", []string{"198.51.100.1"}, ""}, // untrusted peer: header ignored
		{"127.0.0.1:5000", nil, ""},
		{"127.0.0.1:5000", []string{"10.0.0.1"}, ""}, // only proxies
		{"127.0.0.1:5000", []string{"not-an-ip, 203.0.113.7"}, "203.0.113.7"},
		{"127.0.0.1:5000", []string{"203.0.113.7, garbage"}, ""},
		{"[::ffff:127.0.0.1]:5000", []string{"2001:db8::1"}, "2001:db8::1"},
	} {
		got, ok := ClientAddr(trusted, tc.remote, tc.xff)
		if (tc.want == "") == ok || (ok && got != netip.MustParseAddr(tc.want)) {
			t.Errorf("%s %v: got %v %v, want %q", tc.remote, tc.xff, got, ok, tc.want)
		}
	}
}

func TestParsePrefixesRejects(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "example.com", "1.2.3", "::ffff:10.0.0.0/104"} {
		if _, err := ParsePrefixes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestMiddlewareRewritesRemoteAddr(t *testing.T) {
	trusted, _ := ParsePrefixes("192.0.2.1")
	var seen string
	h := Middleware(trusted, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr }))
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	r.Header.Set("X-Forwarded-For", "203.0.113.5")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen != "203.0.113.5:0" {
		t.Fatalf("RemoteAddr %q", seen)
	}
	r.RemoteAddr = "192.0.2.1:1234"
	Middleware(nil, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.RemoteAddr })).ServeHTTP(httptest.NewRecorder(), r)
	if seen != "192.0.2.1:1234" {
		t.Fatalf("without trusted proxies RemoteAddr became %q", seen)
	}
}
