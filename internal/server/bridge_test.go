package server

import (
	"net"
	"strings"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/internal/leaf/ratelimit"
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

func TestParseRate(t *testing.T) {
	for in, want := range map[string]ratelimit.Rate{
		"20/3s":  {Burst: 20, Every: 3 * time.Second},
		"1/10ms": {Burst: 1, Every: 10 * time.Millisecond},
		"off":    {Burst: -1},
		"":       {},
	} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"20", "20/", "/3s", "0/3s", "-1/3s", "20/0s", "20/-1s", "20/3", "OFF", "x/3s", "20/3s/1"} {
		if _, err := parseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
