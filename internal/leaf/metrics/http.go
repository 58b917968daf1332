package metrics

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTP instruments a handler tree (normally an http.ServeMux).
type HTTP struct {
	requests *Counter
	latency  *Histogram
	log      *slog.Logger
	ids      *RequestIDs
}

// NewHTTP registers the request metrics. Requests are logged to log at Info
// level with the request id, client address, method, route, status and
// duration only: never the query string, headers or body, which may carry
// codes, tokens or secrets.
func NewHTTP(r *Registry, log *slog.Logger, ids *RequestIDs) *HTTP {
	return &HTTP{
		requests: r.NewCounter("worldid_http_requests_total", "HTTP requests served, by listener, route and status.", "server", "route", "code"),
		latency:  r.NewHistogram("worldid_http_request_duration_seconds", "HTTP request latency, by listener and route.", DefaultLatencyBuckets(), "server", "route"),
		log:      log,
		ids:      ids,
	}
}

// Wrap returns h instrumented, labelled with the listener name server
// (e.g. "public" or "admin").
func (m *HTTP) Wrap(server string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := m.ids.Next()
		w.Header().Set(RequestIDHeader, id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		route := routeLabel(r.Pattern)
		elapsed := time.Since(start)
		m.requests.Inc(server, route, strconv.Itoa(sw.status))
		m.latency.Observe(elapsed.Seconds(), server, route)
		// Background: the id is named here, not added by LogHandler.
		m.log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("request_id", id),
			slog.String("server", server), slog.String("client", clientHost(r.RemoteAddr)),
			slog.String("method", r.Method), slog.String("route", route),
			slog.Int("status", sw.status), slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000))
	})
}

// routeLabel is the path of the ServeMux pattern that matched a request
// ("[METHOD ][HOST]/path"), so every route label has one style whether
// or not its handler was registered with a method; "unmatched" when none
// matched.
func routeLabel(pattern string) string {
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:]
	}
	return "unmatched"
}

// clientHost is the client's address without the port: the peer, or the
// address internal/leaf/forwarded found behind trusted proxies.
func clientHost(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
