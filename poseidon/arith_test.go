package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

func TestSumOf(t *testing.T) {
	var pMinus1 fr.Element
	pMinus1.SetOne()
	pMinus1.Neg(&pMinus1)
	for n := 2; n <= p2MaxWidth; n++ {
		for trial := 0; trial < 50; trial++ {
			s := make([]fr.Element, n)
			for i := range s {
				switch trial {
				case 0: // the largest sum: every term p − 1
					s[i] = pMinus1
				case 1: // zero
				default:
					s[i].SetRandom()
				}
			}
			var want fr.Element
			for i := range s {
				want.Add(&want, &s[i])
			}
			if got := sumOf(s); got != want {
				t.Fatalf("n=%d trial %d: sumOf = %v, want %v", n, trial, got.String(), want.String())
			}
		}
	}
}
