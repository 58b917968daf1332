package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"worldid/internal/leaf/metrics"
	"worldid/record"
)

func TestHealthz(t *testing.T) {
	var fail error
	m := metrics.NewRegistry()
	h := newStoreHealth(func(context.Context) error { return fail }, m, slog.New(slog.DiscardHandler))
	get := func() (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(b)
	}
	exported := func() string {
		var b strings.Builder
		m.WriteTo(&b)
		return b.String()
	}
	if code, body := get(); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("healthy: %d %q", code, body)
	}
	fail = fmt.Errorf("store: writes disabled: %w: write journal: no space left on device", record.ErrUnavailable)
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "no space left on device") {
		t.Fatalf("failing store: %d %q", code, body)
	}
	if out := exported(); !strings.Contains(out, "worldid_store_healthy 0\n") || !strings.Contains(out, "worldid_store_health_failures_total 1\n") {
		t.Fatalf("metrics of a failing store:\n%s", out)
	}
	fail = nil
	h.update(context.Background())
	if code, _ := get(); code != http.StatusOK {
		t.Fatalf("recovered: %d", code)
	}
	if out := exported(); !strings.Contains(out, "worldid_store_healthy 1\n") || !strings.Contains(out, "worldid_store_health_failures_total 1\n") {
		t.Fatalf("metrics after recovery:\n%s", out)
	}
}

// A /healthz that finds a check under way waits for its result rather
// than starting another: one ping at a time, and no stale answer.
func TestHealthzJoinsTheCheckUnderWay(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	hung := fmt.Errorf("no answer: %w", record.ErrUnavailable)
	var calls atomic.Int32
	h := newStoreHealth(func(context.Context) error {
		if calls.Add(1) == 2 {
			close(started)
			<-release
			return hung
		}
		return nil
	}, metrics.NewRegistry(), slog.New(slog.DiscardHandler))
	joined := make(chan struct{})
	h.joined = func() { close(joined) }
	h.update(context.Background())
	go h.update(context.Background())
	<-started
	answered := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		answered <- w.Code
	}()
	<-joined
	close(release)
	if code := <-answered; code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz during a check that fails: %d, want 503", code)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d checks, want 2", n)
	}
}

func TestAcceptDataLossOnlyForTheJSONStore(t *testing.T) {
	c := Config{DataDir: "d", Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:1", LogLevel: "info", Sunset: "2026-01-31",
		KeyRotation: 720 * 60 * 60 * 1e9, AcceptDataLoss: true, Store: "postgres://h/db",
		MaxConns: 1, MaxConnsPerIP: 1, Metrics: "auto", DemoApp: "auto", ShutdownTimeout: 1e9}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "accept-data-loss") {
		t.Fatalf("Validate: %v", err)
	}
	c.Store = ""
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate with the JSON store: %v", err)
	}
}
