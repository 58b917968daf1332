package server

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
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
// request; otherwise in this process's bounded memory.
func (s *Server) serveRelay(public *http.ServeMux) error {
	store, shared := s.db.(relay.Store)
	if !shared {
		store = relay.NewMemory(relayMaxEntries, relayMaxBytes)
	}
	rl, err := relay.New(relay.Options{Store: store, Now: time.Now, Rand: rand.Reader, Log: s.log})
	if err != nil {
		return err
	}
	rl.Register(public, "")
	return nil
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
