package babyjub

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// TestFieldOpsMatchGnark compares the branch-free helpers with gnark-crypto
// on random and boundary values (0, 1, p−1, and pairs summing to p).
func TestFieldOpsMatchGnark(t *testing.T) {
	var pMinus1, two fr.Element
	pMinus1.SetOne()
	pMinus1.Neg(&pMinus1)
	two.SetUint64(2)
	values := []fr.Element{{}, one, pMinus1, two}
	for i := 0; i < 200; i++ {
		var x, negX fr.Element
		x.MustSetRandom()
		negX.Neg(&x)
		values = append(values, x, negX)
	}
	for i := range values {
		for j := range values {
			x, y := &values[i], &values[j]
			var got, want fr.Element
			feAdd(&got, x, y)
			if want.Add(x, y); got != want {
				t.Fatalf("feAdd(%s, %s)", elementString(x), elementString(y))
			}
			feSub(&got, x, y)
			if want.Sub(x, y); got != want {
				t.Fatalf("feSub(%s, %s)", elementString(x), elementString(y))
			}
		}
		var got, want fr.Element
		feNeg(&got, &values[i])
		if want.Neg(&values[i]); got != want {
			t.Fatalf("feNeg(%s)", elementString(&values[i]))
		}
	}
}
