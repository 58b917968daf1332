package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/internal/httpapi"
	"worldid/record"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestRelay(t *testing.T, prefix string) (*httptest.Server, *clock) {
	t.Helper()
	c := &clock{t: time.Unix(1.8e9, 0)}
	rl, err := New(Options{Store: NewMemory(100, 1<<20), Now: c.now, Rand: mrand.NewChaCha8([32]byte{}), Log: slog.New(slog.DiscardHandler), MaxBody: 1024})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rl.Register(mux, prefix)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, c
}

func do(t *testing.T, method, url, ctype, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

const env = `{"iv":"aXYtaXYtaXYtaXYt","payload":"cGF5bG9hZA=="}`

func TestRoutes(t *testing.T) {
	srv, clk := newTestRelay(t, "")
	code, body, h := do(t, "POST", srv.URL+"/request", "application/json", env)
	var created bridge.Created
	if code != 200 || json.Unmarshal([]byte(body), &created) != nil || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("create: %d %s %v", code, body, h)
	}
	id := created.RequestID
	if _, err := bridge.NormalizeRequestID(id); err != nil || len(id) != 36 || id[14] != '4' {
		t.Fatalf("request id %q is not a UUID v4", id)
	}
	steps := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"HEAD", "/request/" + id, "", 200, ""},
		{"GET", "/response/" + id, "", 200, `{"status":"initialized","response":null}`},
		{"GET", "/request/" + strings.ToUpper(id), "", 200, env}, // ids are lowercased
		{"GET", "/request/" + id, "", 404, ""},
		{"HEAD", "/request/" + id, "", 404, ""},
		{"GET", "/response/" + id, "", 200, `{"status":"retrieved","response":null}`},
		{"PUT", "/response/" + id, env, 201, ""},
		{"PUT", "/response/" + id, env, 409, ""},
		{"GET", "/response/" + id, "", 200, `{"status":"completed","response":` + env + `}`},
		{"GET", "/response/" + id, "", 404, ""},
		{"PUT", "/response/" + id, env, 400, ""},
		{"GET", "/request/short", "", 400, ""},
		{"GET", "/response/bad:id-is-long-enough", "", 400, ""},
		{"PUT", "/response/unknown-id-xxxxxxxx", env, 400, ""},
		{"DELETE", "/request/" + id, "", 405, ""},
		{"GET", "/request", "", 405, ""},
	}
	for _, s := range steps {
		code, body, _ := do(t, s.method, srv.URL+s.path, "application/json", s.body)
		if code != s.code || body != s.want {
			t.Errorf("%s %s: %d %s, want %d %s", s.method, s.path, code, body, s.code, s.want)
		}
	}
	// Lifetime: a request nobody reads is gone after the TTL.
	code, body, _ = do(t, "POST", srv.URL+"/request", "application/json", `{"iv":"a","payload":"b","request_id":"My-Own-Request-Id"}`)
	if code != 200 || body != `{"request_id":"my-own-request-id"}` {
		t.Fatalf("own id: %d %s", code, body)
	}
	if code, _, _ := do(t, "POST", srv.URL+"/request", "application/json", `{"iv":"a","payload":"b","request_id":"my-own-request-id"}`); code != 409 {
		t.Fatalf("collision: %d", code)
	}
	clk.t = clk.t.Add(DefaultTTL)
	if code, _, _ := do(t, "GET", srv.URL+"/response/my-own-request-id", "", ""); code != 404 {
		t.Fatalf("after TTL: %d", code)
	}
}

func TestBodies(t *testing.T) {
	srv, _ := newTestRelay(t, "/bridge")
	for _, c := range []struct {
		ctype, body string
		code        int
	}{
		{"", env, 415},
		{"text/plain", env, 415},
		{"application/json; charset=utf-8", env, 200},
		{"application/json", `{"iv":"a"`, 400},
		{"application/json", env + ` {}`, 400},
		{"application/json", `{"iv":"a"}`, 422},
		{"application/json", `{"iv":1,"payload":"b"}`, 422},
		{"application/json", `{"iv":"a","payload":"b","unknown":true}`, 200},
		{"application/json", `{"iv":"a","payload":"b","request_id":"short"}`, 400},
		{"application/json", `{"iv":"a","payload":"` + strings.Repeat("x", 1024) + `"}`, 413},
	} {
		if code, _, _ := do(t, "POST", srv.URL+"/bridge/request", c.ctype, c.body); code != c.code {
			t.Errorf("%q %.40s: %d, want %d", c.ctype, c.body, code, c.code)
		}
	}
}

func TestPreflight(t *testing.T) {
	srv, _ := newTestRelay(t, "")
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/response/00010203-0405-4607-8809-0a0b0c0d0e0f", nil)
	req.Header.Set("Origin", "https://rp.example")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Allow-Methods") != allowedMethods {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
}

func TestUUID4(t *testing.T) {
	id, err := uuid4(bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
	if err != nil || id != "ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Fatal(id, err)
	}
	if _, err := bridge.NormalizeRequestID(id); err != nil {
		t.Fatal(err)
	}
	var p bridge.Poll
	if json.Unmarshal([]byte(`{"status":"completed","response":`+env+`}`), &p) != nil || p.Response == nil {
		t.Fatal("poll does not decode")
	}
}

// failingStore answers every call with err, as a broken or full backend.
type failingStore struct {
	Store
	err error
}

func (s failingStore) CreateBridgeRequest(context.Context, string, bridge.Envelope, time.Time, time.Duration) error {
	return s.err
}

// TestStoreFailures: a store failure is triaged like every handler's
// (internal/httpapi), with an empty body as wallet-bridge answers.
func TestStoreFailures(t *testing.T) {
	for _, tc := range []struct {
		err        error
		status     int
		retryAfter string
	}{
		{record.ErrUnavailable, http.StatusServiceUnavailable, "1"},
		{fmt.Errorf("wrapped: %w", context.Canceled), httpapi.StatusClientClosed, ""},
		{errors.New("disk on fire"), http.StatusInternalServerError, ""},
	} {
		rl, err := New(Options{Store: failingStore{err: tc.err}, Now: time.Now, Rand: mrand.NewChaCha8([32]byte{}), Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		rl.Register(mux, "")
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/request", strings.NewReader(env))
		r.Header.Set("Content-Type", "application/json")
		mux.ServeHTTP(w, r)
		if w.Code != tc.status || w.Body.Len() != 0 || w.Header().Get("Retry-After") != tc.retryAfter {
			t.Errorf("%v: %d %q %v", tc.err, w.Code, w.Body, w.Header())
		}
	}
}
