package oprfproof

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

// FuzzParseWord: ParseWord agrees with math/big on every string it
// accepts, and accepts only decimal or 0x/0X-hex below 2^256.
func FuzzParseWord(f *testing.F) {
	for _, s := range []string{"0", "1", "0x0", "0xff", "0XFF", "", "0x", "-1", "1e3", " 1",
		"115792089237316195423570985008687907853269984665640564039457584007913129639935",
		"115792089237316195423570985008687907853269984665640564039457584007913129639936", "0x" + strings.Repeat("f", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWord(s)
		if err != nil {
			return
		}
		n, ok := new(big.Int).SetString(s, 0)
		if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
			n, ok = new(big.Int).SetString(s[2:], 16)
		} else if strings.TrimLeft(s, "0") != s && len(s) > 1 {
			n, ok = new(big.Int).SetString(s, 10) // SetString base 0 reads a leading 0 as octal
		}
		if !ok || n.Sign() < 0 || n.BitLen() > 256 || new(big.Int).SetBytes(w[:]).Cmp(n) != 0 {
			t.Fatalf("%q parsed as %x", s, w)
		}
	})
}

// FuzzParseProof: any five words either decode or fail with one of the
// two documented errors, never a panic.
func FuzzParseProof(f *testing.F) {
	f.Add(make([]byte, 160))
	seed := make([]byte, 160)
	for i := range seed {
		seed[i] = byte(i * 7)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 160 {
			return
		}
		var w [5][32]byte
		for i := range w {
			copy(w[i][:], b[32*i:])
		}
		p, err := ParseProof(w)
		if err != nil && !errors.Is(err, ErrProofFormat) && !errors.Is(err, ErrProofPoints) {
			t.Fatalf("undocumented error %v", err)
		}
		if err == nil && p.Root.Bytes() != w[4] {
			t.Fatal("root changed")
		}
	})
}

// FuzzSessionCommitment: an accepted id is IDKit's session_ form, and
// its commitment is the first 64 hex digits, non-zero.
func FuzzSessionCommitment(f *testing.F) {
	f.Add("session_" + strings.Repeat("0a", 32) + "01" + strings.Repeat("0a", 31))
	f.Add("session_2018a266d26fbc1cd41743cc3126321302b8f0af39c367fe5718eeafb341d494" + strings.Repeat("01", 32))
	f.Add("0x2018a266d26fbc1cd41743cc3126321302b8f0af39c367fe5718eeafb341d494")
	f.Add("session_")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := SessionCommitment(s)
		if err != nil {
			return
		}
		rest, ok := strings.CutPrefix(s, "session_")
		if !ok || len(rest) != 128 || c.IsZero() {
			t.Fatalf("%q accepted", s)
		}
		w, err := ParseWord("0x" + rest[:64])
		if err != nil || c.Bytes() != w {
			t.Fatalf("%q: commitment %v, first half %x %v", s, c, w, err)
		}
	})
}
