package server

import (
	"net"
	"strings"
	"testing"

	"worldid/bridge"
)

func TestBridgeURLDefaults(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for _, c := range []struct {
		base, flag, resolved, relay string
	}{
		{"", "", bridgeSelf, "http://127.0.0.1:8080"},
		{"http://localhost:9000", "", bridgeSelf, "http://localhost:9000"},
		{"http://[::1]:9000", "", bridgeSelf, "http://[::1]:9000"},
		{"https://id.example", "", bridge.DefaultURL, bridge.DefaultURL},
		{"https://id.example", "self", bridgeSelf, "https://id.example"},
		{"http://127.0.0.1:8080", "https://relay.example", "https://relay.example", "https://relay.example"},
	} {
		cfg := Config{BaseURL: c.base, BridgeURL: c.flag}.withListenerDefaults(addr)
		if cfg.BridgeURL != c.resolved || cfg.relayURL() != c.relay {
			t.Errorf("base %q flag %q: %q / %q, want %q / %q", c.base, c.flag, cfg.BridgeURL, cfg.relayURL(), c.resolved, c.relay)
		}
	}
}

func TestValidateBridgeURL(t *testing.T) {
	for _, ok := range []string{"", "self", bridge.DefaultURL, "http://127.0.0.1:8080"} {
		if err := validateBridgeURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"SELF", "bridge.worldcoin.org", "ftp://x", "https://x/path", "https://x/", "https://x?q", "https://u@x", "https://x#f"} {
		if err := validateBridgeURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPrintBridge(t *testing.T) {
	var b strings.Builder
	printBridge(&b, Config{BaseURL: "http://127.0.0.1:8080", BridgeURL: bridgeSelf})
	if !strings.Contains(b.String(), "wallet bridge    http://127.0.0.1:8080 (built-in;") {
		t.Fatal(b.String())
	}
}
