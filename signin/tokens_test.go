package signin

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"
)

func TestMatchCode(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		id := make([]byte, requestIDBytes)
		id[0], id[1] = byte(i), byte(i>>8)
		c := matchCode(id)
		if len(c) != 5 || strings.Trim(c, matchAlphabet) != "" {
			t.Fatalf("match code %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 195 {
		t.Fatalf("%d distinct codes of 200", len(seen))
	}
}

// TestOptions: the flow refuses to start without what it needs.
func TestOptions(t *testing.T) {
	base := Options{Issuer: "https://id.example", Store: nil, Checker: nil, Provider: plainSealer{}, Rand: rand.Reader, Now: time.Now}
	if _, err := New(base); err == nil {
		t.Error("missing store and checker accepted")
	}
	base.Store, base.Checker = struct{ Store }{}, struct{ Checker }{}
	if _, err := New(base); err != nil {
		t.Fatal(err)
	}
	base.SimulatorPath = "/simulator"
	if _, err := New(base); err == nil {
		t.Error("a simulator path without its client check accepted")
	}
}
