package oprfproof

import (
	"errors"
	"math/big"
	"strings"
	"testing"
)

// FuzzParseWord: ParseWord agrees with math/big on every string it
// accepts, and accepts only decimal or 0x-hex below 2^256.
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
		if strings.HasPrefix(s, "0x") {
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

// FuzzSessionCommitment: accepted ids yield a field element; the
// session_ form and the plain number agree.
func FuzzSessionCommitment(f *testing.F) {
	f.Add("session_" + strings.Repeat("0a", 64))
	f.Add("0x2018a266d26fbc1cd41743cc3126321302b8f0af39c367fe5718eeafb341d494")
	f.Add("12345")
	f.Add("session_")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := SessionCommitment(s)
		if err != nil {
			return
		}
		if rest, ok := strings.CutPrefix(s, "session_"); ok {
			plain, err := SessionCommitment("0x" + rest[:64])
			if err != nil || plain != c {
				t.Fatalf("%q: session form %v, plain %v %v", s, c, plain, err)
			}
		}
	})
}
