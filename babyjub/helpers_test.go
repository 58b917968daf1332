package babyjub

import (
	"bytes"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Test-only helpers; math/big is fine here: it is the independent oracle.

var (
	bigL = mustBig("2736030358979909402780800718157159386076813972158567259200215660948447373041")
	bigP = fr.Modulus()
)

func mustBig(dec string) *big.Int {
	v, ok := new(big.Int).SetString(dec, 10)
	if !ok {
		panic("bad decimal " + dec)
	}
	return v
}

// parseBig parses a vector's decimal string, failing the test on anything
// that is not a canonical decimal.
func parseBig(t testing.TB, dec string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(dec, 10)
	if !ok || v.Sign() < 0 || v.String() != dec {
		t.Fatalf("not a canonical decimal: %q", dec)
	}
	return v
}

// parseFE parses a decimal that must be < p.
func parseFE(t testing.TB, dec string) fr.Element {
	t.Helper()
	v := parseBig(t, dec)
	if v.Cmp(bigP) >= 0 {
		t.Fatalf("field element %s ≥ p", dec)
	}
	var e fr.Element
	e.SetBigInt(v)
	return e
}

func limbsToBig(l *[4]uint64) *big.Int {
	var b [32]byte
	for i := 0; i < 4; i++ {
		for j := 0; j < 8; j++ {
			b[31-8*i-j] = byte(l[i] >> (8 * j))
		}
	}
	return new(big.Int).SetBytes(b[:])
}

func bigToLimbs(v *big.Int) [4]uint64 {
	var b [32]byte
	v.FillBytes(b[:])
	var l [4]uint64
	for i := 0; i < 4; i++ {
		for j := 0; j < 8; j++ {
			l[i] |= uint64(b[31-8*i-j]) << (8 * j)
		}
	}
	return l
}

func scalarFromBig(v *big.Int) scalar {
	return scalar(bigToLimbs(new(big.Int).Mod(v, bigL)))
}

func leBytesToBig(b []byte) *big.Int {
	be := bytes.Clone(b)
	for i, j := 0, len(be)-1; i < j; i, j = i+1, j-1 {
		be[i], be[j] = be[j], be[i]
	}
	return new(big.Int).SetBytes(be)
}

// strictBool decodes a closed-vocabulary outcome: exactly the JSON literals
// true or false; anything else (a string, null, a missing field) fails.
func strictBool(t testing.TB, name string, raw json.RawMessage) bool {
	t.Helper()
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	t.Fatalf("%s: outcome %q is not a JSON boolean", name, raw)
	return false
}

func elementString(e *fr.Element) string {
	return e.BigInt(new(big.Int)).String()
}

// scalarMultAffine returns k·G through the constant-time path.
func scalarMultAffine(k *big.Int) affinePoint {
	s := scalarFromBig(k)
	p := scalarBaseMult(&s)
	return p.affine()
}
