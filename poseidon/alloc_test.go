package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// TestZeroAllocations pins the no-allocation property of the hot paths
// (permutations, Hash, HashV1 for the Merkle tree, the sponge).
func TestZeroAllocations(t *testing.T) {
	in := randomFEs(15)
	var s8 [8]fr.Element
	var s16 [16]fr.Element
	data := make([]byte, 1024)
	for name, f := range map[string]func(){
		"Permute8":   func() { Permute8(&s8) },
		"Permute16":  func() { Permute16(&s16) },
		"Hash":       func() { in[0] = Hash("EdDSA Signature", in[:5]...) },
		"HashV1(x)":  func() { in[0] = HashV1(in[0]) },
		"HashV1(xy)": func() { in[0] = HashV1(in[0], in[1]) },
		"Compress":   func() { in[0] = Compress(in[0], in[1]) },
		"HashBytes": func() {
			if _, err := HashBytes("CLAIMS_HASH_V1", data); err != nil {
				t.Fatal(err)
			}
		},
	} {
		if n := testing.AllocsPerRun(20, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}
