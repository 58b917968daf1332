package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"worldid/internal/metrics"
)

// healthInterval is how often the store's health is checked: /healthz and
// worldid_store_healthy are at most this old.
const healthInterval = time.Second

// storeHealth checks the backend every healthInterval, for the metrics,
// and on each /healthz request, but never twice at once: a request that
// finds a check under way answers from the newest result instead of
// waiting for it, so a flood of /healthz costs the database at most one
// ping at a time (PostgreSQL's check has its own 2 s deadline).
type storeHealth struct {
	check    func(context.Context) error
	log      *slog.Logger
	healthy  *metrics.Gauge
	failures *metrics.Counter
	last     atomic.Pointer[error] // nil error: healthy
	checking atomic.Bool
}

func newStoreHealth(check func(context.Context) error, m *metrics.Registry, log *slog.Logger) *storeHealth {
	return &storeHealth{
		check:    check,
		log:      log,
		healthy:  m.NewGauge("worldid_store_healthy", "1 if the store accepts writes (PostgreSQL: answers), else 0; checked every second."),
		failures: m.NewCounter("worldid_store_health_failures_total", "Store health checks (one a second) that found the store unable to accept writes."),
	}
}

// update checks once, unless a check is under way, and publishes the
// result, logging changes.
func (h *storeHealth) update(ctx context.Context) {
	if !h.checking.CompareAndSwap(false, true) {
		return
	}
	defer h.checking.Store(false)
	err := h.check(ctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	prev := h.last.Swap(&err)
	wasHealthy := prev == nil || *prev == nil
	if err != nil {
		h.failures.Inc()
		h.healthy.Set(0)
		if wasHealthy {
			h.log.Error("store unhealthy: /healthz answers 503", "err", err)
		}
		return
	}
	h.healthy.Set(1)
	if !wasHealthy {
		h.log.Info("store healthy again")
	}
}

// run checks every healthInterval until ctx is done.
func (h *storeHealth) run(ctx context.Context) {
	t := time.NewTicker(healthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.update(ctx)
		}
	}
}

// ServeHTTP is /healthz: 200 "ok", or 503 with the reason the store cannot
// accept writes.
func (h *storeHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.update(r.Context())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if p := h.last.Load(); p != nil && *p != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "unavailable: "+(*p).Error()+"\n")
		return
	}
	io.WriteString(w, "ok\n")
}
