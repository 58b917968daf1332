package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Defaults: wallet-bridge's EXPIRE_AFTER_SECONDS, and a body bound well
// above IDKit's payloads (a few KiB).
const (
	DefaultTTL     = 900 * time.Second
	DefaultMaxBody = 64 << 10
)

// Options configure a Relay.
type Options struct {
	Store   Store
	TTL     time.Duration // lifetime of an id after each write; 0: DefaultTTL
	MaxBody int64         // bytes of a request body; 0: DefaultMaxBody
	Now     func() time.Time
	Rand    io.Reader // request ids (UUID v4)
	Log     *slog.Logger
}

// Relay serves the bridge routes.
type Relay struct {
	store   Store
	ttl     time.Duration
	maxBody int64
	now     func() time.Time
	rand    io.Reader
	log     *slog.Logger
}

// New checks o and returns a Relay.
func New(o Options) (*Relay, error) {
	if o.Store == nil || o.Now == nil || o.Rand == nil || o.Log == nil {
		return nil, errors.New("relay: Store, Now, Rand and Log are required")
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.TTL < time.Second || o.MaxBody < 0 {
		return nil, errors.New("relay: TTL under a second or negative MaxBody")
	}
	return &Relay{store: o.Store, ttl: o.TTL, maxBody: o.MaxBody, now: o.Now, rand: o.Rand, log: o.Log}, nil
}

// methods maps an HTTP method to its handler on one path.
type methods map[string]func(context.Context, *http.Request) (int, any, error)

// Register serves the routes under prefix ("" for the root, as World's
// bridge; else e.g. "/bridge") on mux.
func (rl *Relay) Register(mux *http.ServeMux, prefix string) {
	mux.Handle(prefix+"/request", rl.route(methods{http.MethodPost: rl.create}))
	mux.Handle(prefix+"/request/{id}", rl.route(methods{http.MethodGet: rl.getRequest, http.MethodHead: rl.headRequest}))
	mux.Handle(prefix+"/response/{id}", rl.route(methods{http.MethodPut: rl.putResponse, http.MethodGet: rl.getResponse}))
}

// route adds CORS, answers preflights and unknown methods, and writes what
// the method's handler returns: a status and a JSON body (nil: none), or
// an error.
func (rl *Relay) route(ms methods) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setCORS(w.Header())
		if r.Method == http.MethodOptions {
			writePreflight(w)
			return
		}
		fn, ok := ms[r.Method]
		if !ok {
			writeError(w, rl.log, r, &Error{Status: http.StatusMethodNotAllowed, Reason: "method " + r.Method})
			return
		}
		status, body, err := fn(r.Context(), r)
		if err != nil {
			writeError(w, rl.log, r, err)
			return
		}
		writeJSON(w, status, body)
	})
}
