package signin

import (
	"encoding/hex"
	"testing"

	"worldid/internal/vectors"
)

// TestSignalHashIDKit4: the signal_hash sign-in expects for a signal is
// what IDKit 4 sends as signal_hash for it (vectors/idkit.json,
// idkit-core 4.3.0 hashSignal): "0x" and odd-length hex included.
func TestSignalHashIDKit4(t *testing.T) {
	vectors.CheckHashSignal(t, "signalHash", func(signal string) string {
		h := signalHash(signal)
		return "0x" + hex.EncodeToString(h[:])
	})
}
