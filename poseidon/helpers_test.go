package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
)

// hexFE parses a vector's 0x+64-hex value with the strict parser.
func hexFE(t testing.TB, s string) fr.Element {
	t.Helper()
	x, err := field.ParseStrict(s)
	if err != nil {
		t.Fatalf("vector value %q: %v", s, err)
	}
	return x
}

// decFE parses a vector's canonical decimal value.
func decFE(t testing.TB, s string) fr.Element {
	t.Helper()
	x, err := field.ParseDecimal(s)
	if err != nil {
		t.Fatalf("vector value %q: %v", s, err)
	}
	return x
}

func decFEs(t testing.TB, ss []string) []fr.Element {
	t.Helper()
	out := make([]fr.Element, len(ss))
	for i, s := range ss {
		out[i] = decFE(t, s)
	}
	return out
}

func hexFEs(t testing.TB, ss []string) []fr.Element {
	t.Helper()
	out := make([]fr.Element, len(ss))
	for i, s := range ss {
		out[i] = hexFE(t, s)
	}
	return out
}

// wantFE fails unless got equals the vector value want (0x-hex).
func wantFE(t testing.TB, what string, got fr.Element, want string) {
	t.Helper()
	if g := field.Format(&got); g != want {
		t.Errorf("%s = %s, want %s", what, g, want)
	}
}

// wantDec fails unless got equals the vector value want (decimal).
func wantDec(t testing.TB, what string, got fr.Element, want string) {
	t.Helper()
	if g := field.FormatDecimal(&got); g != want {
		t.Errorf("%s = %s, want %s", what, g, want)
	}
}

func randomFEs(n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		out[i].MustSetRandom()
	}
	return out
}
