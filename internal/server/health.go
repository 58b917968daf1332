package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"worldid/internal/leaf/metrics"
)

// healthInterval is how often the store's health is checked: /healthz and
// worldid_store_healthy are at most this old.
const healthInterval = time.Second

// storeHealth checks the backend every healthInterval, for the metrics,
// and on each /healthz request, but never twice at once: a request that
// finds a check under way waits for its result instead of starting
// another, so a flood of /healthz costs the database at most one ping at
// a time, and each answer comes from a check that ended after the request
// arrived (PostgreSQL's check has its own 2 s deadline).
type storeHealth struct {
	check    func(context.Context) error
	log      *slog.Logger
	healthy  *metrics.Gauge
	failures *metrics.Counter

	mu       sync.Mutex
	last     error         // the newest result
	inflight chan struct{} // closed when the check under way ends; nil if none

	joined func() // a test's hook: called when a caller starts waiting for the check under way
}

func newStoreHealth(check func(context.Context) error, m *metrics.Registry, log *slog.Logger) *storeHealth {
	return &storeHealth{
		check:    check,
		log:      log,
		healthy:  m.NewGauge("worldid_store_healthy", "1 if the store accepts writes (PostgreSQL: answers), else 0; checked every second."),
		failures: m.NewCounter("worldid_store_health_failures_total", "Store health checks that found the store unable to accept writes."),
	}
}

// update returns the result of a check that ends after it was called: the
// one under way, or a new one, which it publishes, logging changes.
func (h *storeHealth) update(ctx context.Context) error {
	h.mu.Lock()
	if ch := h.inflight; ch != nil {
		h.mu.Unlock()
		if h.joined != nil {
			h.joined()
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.last
	}
	ch := make(chan struct{})
	h.inflight = ch
	h.mu.Unlock()

	err := h.check(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inflight = nil
	close(ch)
	if ctx.Err() != nil {
		return h.last // shutting down, or the requester left
	}
	wasHealthy := h.last == nil
	h.last = err
	if err != nil {
		h.failures.Inc()
		h.healthy.Set(0)
		if wasHealthy {
			h.log.Error("store unhealthy: /healthz answers 503", "err", err)
		}
		return err
	}
	h.healthy.Set(1)
	if !wasHealthy {
		h.log.Info("store healthy again")
	}
	return nil
}

// ServeHTTP is /healthz: 200 "ok", or 503 with the reason the store cannot
// accept writes.
func (h *storeHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Not canceled with the request: the others waiting for it need its result.
	err := h.update(context.WithoutCancel(r.Context()))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "unavailable: "+err.Error()+"\n")
		return
	}
	io.WriteString(w, "ok\n")
}
