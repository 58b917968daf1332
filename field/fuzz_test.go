package field

import (
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

// Reference model for the fuzz targets: the rules of doc/crypto.md §a written
// with regular expressions and math/big, independently of the parsers.
var (
	reStrict   = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)
	rePrefixed = regexp.MustCompile(`^0x[0-9a-fA-F]{1,64}$`)
	reDecimal  = regexp.MustCompile(`^(0|[1-9][0-9]{0,76})$`)
	reVerify   = regexp.MustCompile(`^(0x)?[0-9a-f]{1,64}$`)
)

// refValue returns the integer of a digit string (after an optional "0x"
// for hex) if it is below p.
func refValue(digits string, base int) (*big.Int, bool) {
	v, ok := new(big.Int).SetString(strings.TrimPrefix(digits, "0x"), base)
	return v, ok && v.Cmp(fr.Modulus()) < 0
}

// checkAgainstRef fails if the parser's verdict or value differs from the
// reference model.
func checkAgainstRef(t *testing.T, s string, got fr.Element, err error, want *big.Int, accept bool) {
	t.Helper()
	if accept != (err == nil) {
		t.Fatalf("parse(%q): err = %v, reference accept = %v", s, err, accept)
	}
	if accept && got.BigInt(new(big.Int)).Cmp(want) != 0 {
		t.Fatalf("parse(%q) = %s, want %s", s, got.String(), want)
	}
}

func seedFuzz(f *testing.F, list func(*fieldElementFile) []encodingVector) {
	var v fieldElementFile
	vectors.Load(f, "field_element.json", &v)
	for _, e := range list(&v) {
		f.Add(e.Input)
	}
	f.Add("0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000000")
	f.Add(pMinus1)
}

func FuzzParseStrict(f *testing.F) {
	seedFuzz(f, func(v *fieldElementFile) []encodingVector { return v.Strict })
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseStrict(s)
		want, below := refValue(s, 16)
		checkAgainstRef(t, s, x, err, want, reStrict.MatchString(s) && below)
		if err == nil && Format(&x) != strings.ToLower(s) {
			t.Fatalf("Format(ParseStrict(%q)) = %s", s, Format(&x))
		}
	})
}

func FuzzParsePrefixedHex(f *testing.F) {
	seedFuzz(f, func(v *fieldElementFile) []encodingVector { return v.PrefixedHex })
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParsePrefixedHex(s)
		want, below := refValue(s, 16)
		checkAgainstRef(t, s, x, err, want, rePrefixed.MatchString(s) && below)
	})
}

func FuzzParseDecimal(f *testing.F) {
	seedFuzz(f, func(v *fieldElementFile) []encodingVector { return v.IDCommitment })
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseDecimal(s)
		want, below := refValue(s, 10)
		checkAgainstRef(t, s, x, err, want, reDecimal.MatchString(s) && below)
		if err == nil && FormatDecimal(&x) != s {
			t.Fatalf("FormatDecimal(ParseDecimal(%q)) = %s", s, FormatDecimal(&x))
		}
	})
}

func FuzzParseIDCommitment(f *testing.F) {
	seedFuzz(f, func(v *fieldElementFile) []encodingVector { return v.IDCommitment })
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseIDCommitment(s)
		var want *big.Int
		var accept bool
		if strings.HasPrefix(s, "0x") {
			want, accept = refValue(s, 16)
			accept = accept && rePrefixed.MatchString(s)
		} else {
			want, accept = refValue(s, 10)
			accept = accept && reDecimal.MatchString(s)
		}
		checkAgainstRef(t, s, x, err, want, accept)
	})
}

func FuzzParseVerifyHex(f *testing.F) {
	seedFuzz(f, func(v *fieldElementFile) []encodingVector { return v.VerifyHex })
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseVerifyHex(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		if accept := reVerify.MatchString(norm); accept != (err == nil) {
			t.Fatalf("ParseVerifyHex(%q): err = %v, reference accept = %v", s, err, accept)
		}
		if err != nil {
			return
		}
		want, _ := new(big.Int).SetString(strings.TrimPrefix(norm, "0x"), 16)
		if new(big.Int).SetBytes(got[:]).Cmp(want) != 0 {
			t.Fatalf("ParseVerifyHex(%q) = %x, want %x", s, got, want)
		}
	})
}

// FuzzParsePath: an accepted name is exactly the path's String.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"auto", "scalar", "vector", "", "Vector", "ifma"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err == nil && p.String() != s {
			t.Fatalf("ParsePath(%q) = %v", s, p)
		}
	})
}

func FuzzAdd(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add([]byte("\x30\x64\x4e\x72\xe1\x31\xa0\x29\xb8\x50\x45\xb6\x81\x81\x58\x5d\x28\x33\xe8\x48\x79\xb9\x70\x91\x43\xe1\xf5\x93\xf0\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 64 {
			return
		}
		var x, y fr.Element
		x.SetBytes(b[:32])
		y.SetBytes(b[32:64])
		checkAdd(t, x, y)
	})
}
