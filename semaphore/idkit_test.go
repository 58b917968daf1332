package semaphore

import (
	"strings"
	"testing"

	"worldid/internal/vectors"
)

// loadIDKit reads idkit.json, failing t if a list the parity tests need is
// empty.
func loadIDKit(t *testing.T) vectors.IDKit {
	var f vectors.IDKit
	vectors.Load(t, "idkit.json", &f)
	if len(f.HashSignal) == 0 || len(f.ExternalNullifier) == 0 {
		t.Fatal("idkit.json: hash_signal and external_nullifier must be non-empty")
	}
	return f
}

// TestHashSignalIDKit4: HashSignal is idkit-core 4.3.0's hashSignal for
// every input of the file, "0x" and odd-length hex included.
func TestHashSignalIDKit4(t *testing.T) {
	f := loadIDKit(t)
	c := vectors.NewCounter(t, "idkit.json")
	for signal, want := range f.HashSignal {
		assertFE(t, "HashSignal("+signal+")", HashSignal(signal), want)
		c.Inc()
	}
	// The 2.x outputs differ exactly where the file says they do.
	for signal, v2 := range f.SignalV2 {
		if got := HashSignal(signal); (vectors.Element(t, v2) == got) != (v2 == f.HashSignal[signal]) {
			t.Errorf("HashSignal(%q) vs idkit-core 2.x: unexpected (dis)agreement", signal)
		}
	}
}

// TestExternalNullifierIDKit: ExternalNullifier is the protocol-3.0
// generateExternalNullifier(app_id, action) for every "app_id|action" key.
func TestExternalNullifierIDKit(t *testing.T) {
	f := loadIDKit(t)
	c := vectors.NewCounter(t, "idkit.json")
	for key, want := range f.ExternalNullifier {
		appID, action, ok := strings.Cut(key, "|")
		if !ok {
			t.Fatalf("external_nullifier key %q is not app_id|action", key)
		}
		assertFE(t, "ExternalNullifier("+key+")", ExternalNullifier(appID, action), want)
		c.Inc()
	}
}
