package metrics

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
)

// RequestIDHeader carries a request's id in every response, so that an
// operator can find the log lines of a request a user reports.
const RequestIDHeader = "X-Request-Id"

// RequestIDs numbers requests: a random prefix per process (so that ids of
// replicas and restarts do not collide) and a counter. An id names a
// request in logs; it is not a secret and authorizes nothing.
type RequestIDs struct {
	prefix string
	n      atomic.Uint64
}

// NewRequestIDs draws the process's prefix from rand.
func NewRequestIDs(rand io.Reader) (*RequestIDs, error) {
	var b [6]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return nil, err
	}
	return &RequestIDs{prefix: hex.EncodeToString(b[:]) + "-"}, nil
}

// Next returns a new id.
func (g *RequestIDs) Next() string { return g.prefix + strconv.FormatUint(g.n.Add(1), 10) }

type requestIDKey struct{}

// RequestID returns the id Wrap gave the request of ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// LogHandler adds request_id to every record logged with the context of a
// request (slog's *Context methods), so that a handler's error line and the
// request line share it.
func LogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
