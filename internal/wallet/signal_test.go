package wallet

import (
	"testing"

	"worldid/field"
	"worldid/internal/vectors"
)

// TestSignalHashIDKit4: `worldid wallet prove -signal S` binds what IDKit 4
// sends as signal_hash for S (vectors/idkit.json, idkit-core 4.3.0).
func TestSignalHashIDKit4(t *testing.T) {
	vectors.CheckHashSignal(t, "SignalHash", func(signal string) string {
		h := SignalHash(signal)
		return field.Format(&h)
	})
}
