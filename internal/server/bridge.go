package server

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"worldid/bridge"
	"worldid/bridge/relay"
)

// Bounds of the built-in relay's memory when the store is the JSON one:
// each live bridge request costs at most relay.DefaultMaxBody twice, and
// in practice a few KiB, so the byte budget binds first under a flood.
const (
	relayMaxEntries = 100_000
	relayMaxBytes   = 64 << 20
)

// serveRelay mounts the built-in Wallet Bridge relay at the root of the
// public mux (its /request and /response paths are free): on PostgreSQL
// its requests live in the shared database, so every replica serves every
// request; otherwise in this process's bounded memory. It returns the
// relay's routes alone, for the sign-in pages' own calls.
func (s *Server) serveRelay(public *http.ServeMux) (http.Handler, error) {
	store, shared := s.db.(relay.Store)
	if !shared {
		store = relay.NewMemory(relayMaxEntries, relayMaxBytes)
	}
	rl, err := relay.New(relay.Options{Store: store, Now: time.Now, Rand: rand.Reader, Log: s.log})
	if err != nil {
		return nil, err
	}
	rl.Register(public, "")
	own := http.NewServeMux()
	rl.Register(own, "")
	return own, nil
}

// inProcess serves the sign-in pages' calls to the built-in relay in this
// process (the same store as over HTTP, without a loopback connection or
// the reverse proxy in the way).
type inProcess struct{ relay http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.relay.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}

// printBridge announces which relay sign-in uses and what that means for
// the World App.
func printBridge(stdout io.Writer, cfg Config) {
	switch {
	case cfg.BridgeURL == bridgeSelf:
		fmt.Fprintf(stdout, "worldid: wallet bridge    %s (built-in; our wallet and the simulator use it, the World App only accepts %s)\n", cfg.relayURL(), bridge.DefaultURL)
	default:
		fmt.Fprintf(stdout, "worldid: wallet bridge    %s\n", cfg.relayURL())
	}
}
