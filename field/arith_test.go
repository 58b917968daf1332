package field

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

func TestModulus(t *testing.T) {
	var b [32]byte
	for i, l := range modulus {
		for k := range 8 {
			b[31-8*i-k] = byte(l >> (8 * k))
		}
	}
	if new(big.Int).SetBytes(b[:]).Cmp(fr.Modulus()) != 0 {
		t.Fatal("modulus limbs differ from fr.Modulus()")
	}
}

// checkAdd compares Add with fr.Element.Add, including the aliasing form
// the permutations use.
func checkAdd(t *testing.T, x, y fr.Element) {
	t.Helper()
	var want, got fr.Element
	want.Add(&x, &y)
	Add(&got, &x, &y)
	if !got.Equal(&want) {
		t.Fatalf("Add(%s, %s) = %s, want %s", x.String(), y.String(), got.String(), want.String())
	}
	got = x
	Add(&got, &got, &y)
	if !got.Equal(&want) {
		t.Fatalf("in-place Add(%s, %s) = %s", x.String(), y.String(), got.String())
	}
}

func TestAddEdges(t *testing.T) {
	var zero, one, pm1 fr.Element
	one.SetOne()
	pm1.Neg(&one)
	for _, x := range []fr.Element{zero, one, pm1} {
		for _, y := range []fr.Element{zero, one, pm1} {
			checkAdd(t, x, y)
		}
	}
	for range 1000 {
		var x, y fr.Element
		x.MustSetRandom()
		y.MustSetRandom()
		checkAdd(t, x, y)
	}
}
