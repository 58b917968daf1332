package oidc

import (
	"errors"
	"net/http"
	"net/http/httptest"
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
