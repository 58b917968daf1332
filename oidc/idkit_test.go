package oidc

import (
	"encoding/hex"
	"testing"

	"worldid/internal/vectors"
)

// TestSignalHashIDKit4: the signal_hash sign-in expects for a signal is
// what IDKit 4 sends as signal_hash for it (vectors/idkit.json,
// idkit-core 4.3.0 hashSignal): "0x" and odd-length hex included.
func TestSignalHashIDKit4(t *testing.T) {
	var f struct {
		HashSignal map[string]string `json:"hash_signal"`
	}
	vectors.Load(t, "idkit.json", &f)
	c := vectors.NewCounter(t, "idkit.json")
	for signal, want := range f.HashSignal {
		h := signalHash(signal)
		if got := "0x" + hex.EncodeToString(h[:]); got != want {
			t.Errorf("signalHash(%q) = %s, want %s", signal, got, want)
		}
		c.Inc()
	}
}
