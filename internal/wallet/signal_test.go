package wallet

import (
	"testing"

	"worldid/field"
	"worldid/internal/vectors"
)

// TestSignalHashIDKit4: `worldid wallet prove -signal S` binds what IDKit 4
// sends as signal_hash for S (vectors/idkit.json, idkit-core 4.3.0).
func TestSignalHashIDKit4(t *testing.T) {
	var f struct {
		HashSignal map[string]string `json:"hash_signal"`
	}
	vectors.Load(t, "idkit.json", &f)
	c := vectors.NewCounter(t, "idkit.json")
	for signal, want := range f.HashSignal {
		h := SignalHash(signal)
		if got := field.Format(&h); got != want {
			t.Errorf("SignalHash(%q) = %s, want %s", signal, got, want)
		}
		c.Inc()
	}
}
