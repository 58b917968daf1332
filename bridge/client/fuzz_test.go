package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"worldid/bridge"
)

// FuzzPoll: whatever a relay answers, Poll returns a status it knows or an
// error, and never panics.
func FuzzPoll(f *testing.F) {
	f.Add(200, []byte(`{"status":"initialized","response":null}`))
	f.Add(200, []byte(`{"status":"completed","response":{"iv":"AAAAAAAAAAAAAAAA","payload":"AAAA"}}`))
	f.Add(404, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			return
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			w.Write(body)
		}))
		defer srv.Close()
		var c Client
		p, err := c.Poll(context.Background(), srv.URL, "0123456789abcdef", bridge.Key{})
		if err == nil && p.Status != bridge.StatusInitialized && p.Status != bridge.StatusRetrieved && p.Status != bridge.StatusCompleted {
			t.Fatalf("status %q", p.Status)
		}
	})
}
