package signin

import (
	"crypto/rand"
	"testing"
	"time"

	"worldid/bridge/client"
)

// TestOptions: the flow refuses to start without what it needs.
func TestOptions(t *testing.T) {
	base := Options{Issuer: "https://id.example", Store: nil, Checker: nil, Provider: plainSealer{}, Rand: rand.Reader, Now: time.Now}
	if _, err := New(base); err == nil {
		t.Error("missing store and checker accepted")
	}
	base.Store, base.Checker = struct{ Store }{}, struct{ Checker }{}
	if _, err := New(base); err == nil {
		t.Error("a flow without a bridge accepted")
	}
	base.BridgeURL = testBridge
	if _, err := New(base); err == nil {
		t.Error("a bridge URL without its client accepted")
	}
	base.Bridge = &client.Client{}
	if _, err := New(base); err != nil {
		t.Fatal(err)
	}
	base.SimulatorPath = "/simulator"
	if _, err := New(base); err == nil {
		t.Error("a simulator path without its client check accepted")
	}
}
