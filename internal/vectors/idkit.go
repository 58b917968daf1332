package vectors

import "testing"

// IDKit is the structure of idkit.json: what @worldcoin/idkit-core returns
// for a set of inputs (testdata/SOURCES.md), shared by the parity tests of
// semaphore, oidc and the wallet.
type IDKit struct {
	HashSignal        map[string]string `json:"hash_signal"`
	ExternalNullifier map[string]string `json:"external_nullifier"`
	SignalV2          map[string]string `json:"signal_v2"`
}

// CheckHashSignal fails t for every hash_signal input of idkit.json whose
// hash, as 0x and 64 lowercase hex digits, is not idkit-core 4.3.0's
// hashSignal output; name is the function under test.
func CheckHashSignal(t *testing.T, name string, hash func(signal string) string) {
	t.Helper()
	var f IDKit
	Load(t, "idkit.json", &f)
	c := NewCounter(t, "idkit.json")
	for signal, want := range f.HashSignal {
		if got := hash(signal); got != want {
			t.Errorf("%s(%q) = %s, want %s", name, signal, got, want)
		}
		c.Inc()
	}
}
