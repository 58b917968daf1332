package prover

import "testing"

// BenchmarkProveDepth30: the local prover at World ID's depth (wall time;
// gnark proves on every core).
func BenchmarkProveDepth30(b *testing.B) {
	pk := sharedKey(b, 30)
	fx := newProverFixture(b, 30)
	for b.Loop() {
		if _, _, err := Prove(pk, fx.member, fx.path, fx.signal, fx.ext); err != nil {
			b.Fatal(err)
		}
	}
}
