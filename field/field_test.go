package field

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/vectors"
)

type encodingVector struct {
	Name     string `json:"name"`
	Input    string `json:"input"`
	Expected string `json:"expected"`
	ValueHex string `json:"value_hex"`
}

type fieldElementFile struct {
	Strict       []encodingVector `json:"strict"`
	PrefixedHex  []encodingVector `json:"prefixed_hex"`
	IDCommitment []encodingVector `json:"id_commitment"`
	VerifyHex    []encodingVector `json:"verify_hex"`
}

// asBytes adapts an FE parser to the [32]byte shape of ParseVerifyHex.
func asBytes(parse func(string) (fr.Element, error)) func(string) ([32]byte, error) {
	return func(s string) ([32]byte, error) {
		x, err := parse(s)
		return x.Bytes(), err
	}
}

func TestVectors(t *testing.T) {
	var f fieldElementFile
	vectors.Load(t, "field_element.json", &f)
	c := vectors.NewCounter(t, "field_element.json")
	lists := []struct {
		name  string
		list  []encodingVector
		parse func(string) ([32]byte, error)
	}{
		{"strict", f.Strict, asBytes(ParseStrict)},
		{"prefixed_hex", f.PrefixedHex, asBytes(ParsePrefixedHex)},
		{"id_commitment", f.IDCommitment, asBytes(ParseIDCommitment)},
		{"verify_hex", f.VerifyHex, ParseVerifyHex},
	}
	for _, l := range lists {
		for _, v := range l.list {
			t.Run(l.name+"/"+v.Name, func(t *testing.T) {
				c.Inc()
				got, err := l.parse(v.Input)
				switch v.Expected {
				case "accept":
					if err != nil {
						t.Fatalf("parse(%q): %v", v.Input, err)
					}
					if v.ValueHex == "" {
						t.Fatal("accepted vector has no value_hex")
					}
					if s := "0x" + hex.EncodeToString(got[:]); s != v.ValueHex {
						t.Fatalf("parse(%q) = %s, want %s", v.Input, s, v.ValueHex)
					}
				case "reject":
					if err == nil {
						t.Fatalf("parse(%q) accepted, want reject", v.Input)
					}
				default:
					t.Fatalf("unexpected expected value %q", v.Expected)
				}
			})
		}
	}
}

var pMinus1 = "21888242871839275222246405745257275088548364400416034343698204186575808495616"

func TestFormat(t *testing.T) {
	var zero, pm1 fr.Element
	if _, err := pm1.SetString(pMinus1); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		x       *fr.Element
		hex, dc string
	}{
		{&zero, "0x0000000000000000000000000000000000000000000000000000000000000000", "0"},
		{&pm1, "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000000", pMinus1},
	}
	for _, tc := range cases {
		if got := Format(tc.x); got != tc.hex {
			t.Errorf("Format = %s, want %s", got, tc.hex)
		}
		if got := FormatDecimal(tc.x); got != tc.dc {
			t.Errorf("FormatDecimal = %s, want %s", got, tc.dc)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for range 200 {
		var x fr.Element
		x.MustSetRandom()
		for name, parse := range map[string]func(string) (fr.Element, error){
			"strict":   ParseStrict,
			"prefixed": ParsePrefixedHex,
			"idcomm":   ParseIDCommitment,
		} {
			if y, err := parse(Format(&x)); err != nil || !y.Equal(&x) {
				t.Fatalf("%s(Format(x)) = %v, %v", name, y.String(), err)
			}
		}
		for name, parse := range map[string]func(string) (fr.Element, error){
			"decimal": ParseDecimal,
			"idcomm":  ParseIDCommitment,
		} {
			if y, err := parse(FormatDecimal(&x)); err != nil || !y.Equal(&x) {
				t.Fatalf("%s(FormatDecimal(x)) = %v, %v", name, y.String(), err)
			}
		}
	}
}

// TestErrorsNameTheRule checks that each rejection says which rule failed.
func TestErrorsNameTheRule(t *testing.T) {
	full := strings.Repeat("0", 64)
	cases := []struct {
		parse func(string) (fr.Element, error)
		in    string
		want  string
	}{
		{ParseStrict, full, `start with "0x"`},
		{ParseStrict, "0X" + full, `start with "0x"`},
		{ParseStrict, "0x" + full[1:], "exactly 64 hex digits, got 63"},
		{ParseStrict, "0x" + full + "0", "exactly 64 hex digits, got 65"},
		{ParseStrict, "0x" + full[1:] + "g", "invalid hex digit 'g'"},
		{ParseStrict, "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", "not less than the field modulus"},
		{ParsePrefixedHex, "0x", "want 1 to 64 hex digits, got 0"},
		{ParsePrefixedHex, "1", `start with "0x"`},
		{ParsePrefixedHex, " 0x1", `start with "0x"`},
		{ParsePrefixedHex, "0x-1", "invalid hex digit '-'"},
		{ParseDecimal, "", "empty"},
		{ParseDecimal, "00", "leading zero"},
		{ParseDecimal, "+1", "invalid decimal digit '+'"},
		{ParseDecimal, "1 ", "invalid decimal digit ' '"},
		{ParseDecimal, strings.Repeat("9", 78), "more than 77 digits"},
		{ParseDecimal, strings.Repeat("9", 77), "not less than the field modulus"},
		{ParseIDCommitment, "0X1", "leading zero"},
		{ParseIDCommitment, "x1", "invalid decimal digit 'x'"},
	}
	for _, tc := range cases {
		_, err := tc.parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) error = %v, want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func TestParseVerifyHex(t *testing.T) {
	cases := []struct {
		in, want string // want "" means reject
	}{
		{"123", "0x0000000000000000000000000000000000000000000000000000000000000123"},
		{"0X0A", "0x000000000000000000000000000000000000000000000000000000000000000a"},
		{"\t0xAbC\n", "0x0000000000000000000000000000000000000000000000000000000000000abc"},
		{"0x0x1", ""},
		{"0x", ""},
		{"   ", ""},
		{"0x 1", ""},
		{"-1", ""},
	}
	for _, tc := range cases {
		got, err := ParseVerifyHex(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseVerifyHex(%q) accepted", tc.in)
		case tc.want != "" && err != nil:
			t.Errorf("ParseVerifyHex(%q): %v", tc.in, err)
		case tc.want != "" && "0x"+hex.EncodeToString(got[:]) != tc.want:
			t.Errorf("ParseVerifyHex(%q) = %x, want %s", tc.in, got, tc.want)
		}
	}
}
