package field

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

const (
	prefix = "0x"
	// hexDigits is the length of a full-width FE in hex (32 bytes).
	hexDigits = 2 * fr.Bytes
	// maxDecimalDigits is the length of p in decimal; 10^77 − 1 < 2^256, so
	// any string this long fits in four 64-bit limbs.
	maxDecimalDigits = 77
)

var errNotBelowP = errors.New("field: value is not less than the field modulus p")

// Format returns x as "0x" followed by 64 lowercase hex digits (doc/crypto.md §a).
func Format(x *fr.Element) string {
	b := x.Bytes()
	return prefix + hex.EncodeToString(b[:])
}

// FormatDecimal returns x as a canonical decimal string in [0, p). It does
// not use fr.Element.Text, which writes large values as negative numbers.
func FormatDecimal(x *fr.Element) string {
	return x.BigInt(new(big.Int)).String()
}

// ParseStrict parses "0x" followed by exactly 64 hex digits of either case,
// with value < p (doc/crypto.md §a "Strict parse").
func ParseStrict(s string) (fr.Element, error) {
	digits, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return fr.Element{}, errors.New(`field: strict FE must start with "0x"`)
	}
	if len(digits) != hexDigits {
		return fr.Element{}, fmt.Errorf("field: strict FE must have exactly %d hex digits, got %d", hexDigits, len(digits))
	}
	return hexToElement(digits)
}

// ParsePrefixedHex parses "0x" followed by 1 to 64 hex digits of either case,
// with value < p (doc/crypto.md §a, refresh form field "sub").
func ParsePrefixedHex(s string) (fr.Element, error) {
	digits, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return fr.Element{}, errors.New(`field: PrefixedHex must start with "0x"`)
	}
	return hexToElement(digits)
}

// ParseIDCommitment parses PrefixedHex when s starts with "0x" and a
// canonical decimal otherwise (doc/crypto.md §a, refresh query "idComm").
func ParseIDCommitment(s string) (fr.Element, error) {
	if strings.HasPrefix(s, prefix) {
		return ParsePrefixedHex(s)
	}
	return ParseDecimal(s)
}

// ParseDecimal parses a canonical decimal: 1 to 77 ASCII digits, no sign, no
// leading zero except "0" itself, value < p (doc/crypto.md §a "Canonical decimal").
func ParseDecimal(s string) (fr.Element, error) {
	switch {
	case s == "":
		return fr.Element{}, errors.New("field: decimal is empty")
	case len(s) > maxDecimalDigits:
		return fr.Element{}, fmt.Errorf("field: decimal has more than %d digits", maxDecimalDigits)
	case len(s) > 1 && s[0] == '0':
		return fr.Element{}, errors.New("field: decimal has a leading zero")
	}
	var limbs [4]uint64 // little-endian
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return fr.Element{}, fmt.Errorf("field: invalid decimal digit %q at offset %d", c, i)
		}
		mulAdd10(&limbs, uint64(c-'0'))
	}
	var b [fr.Bytes]byte
	for i, l := range limbs {
		binary.BigEndian.PutUint64(b[fr.Bytes-8*(i+1):], l)
	}
	return canonical(b)
}

// ParseVerifyHex decodes a World ID 3.0 verify request hex field as the
// upstream portal does (doc/crypto.md §a "VerifyHex"): trim surrounding
// whitespace, lowercase, remove one optional "0x", then 1 to 64 hex digits,
// left-padded to 32 bytes. The uint256 is not range-checked: the verifier
// rejects values ≥ p (doc/crypto.md §g).
func ParseVerifyHex(s string) ([32]byte, error) {
	digits := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), prefix)
	return hexToBytes(digits)
}

// hexToElement decodes 1 to 64 hex digits and requires the value < p.
func hexToElement(digits string) (fr.Element, error) {
	b, err := hexToBytes(digits)
	if err != nil {
		return fr.Element{}, err
	}
	return canonical(b)
}

// hexToBytes decodes 1 to 64 hex digits of either case into a left-padded
// 32-byte big-endian integer.
func hexToBytes(digits string) ([32]byte, error) {
	var b [32]byte
	n := len(digits)
	if n == 0 || n > hexDigits {
		return b, fmt.Errorf("field: want 1 to %d hex digits, got %d", hexDigits, n)
	}
	for i := 0; i < n; i++ {
		v, ok := nibble(digits[i])
		if !ok {
			return b, fmt.Errorf("field: invalid hex digit %q at offset %d", digits[i], i)
		}
		pos := hexDigits - n + i // nibble index in the 64-digit number
		b[pos/2] |= v << (4 * (1 - pos%2))
	}
	return b, nil
}

func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// canonical converts a big-endian integer to an FE, rejecting values ≥ p
// instead of reducing them (doc/crypto.md §a).
func canonical(b [32]byte) (fr.Element, error) {
	var x fr.Element
	if err := x.SetBytesCanonical(b[:]); err != nil {
		return fr.Element{}, errNotBelowP
	}
	return x, nil
}

// mulAdd10 sets x = 10·x + d. The caller bounds the digit count so that x
// never exceeds 2^256.
func mulAdd10(x *[4]uint64, d uint64) {
	carry := d
	for i := range x {
		hi, lo := bits.Mul64(x[i], 10)
		var c uint64
		x[i], c = bits.Add64(lo, carry, 0)
		carry = hi + c
	}
}
