package rpsig

import (
	"testing"
)

// FuzzParsePrivateKey: an accepted key signs, and its signature recovers
// its address.
func FuzzParsePrivateKey(f *testing.F) {
	f.Add("0xabababababababababababababababababababababababababababababababab")
	f.Add("0x00")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParsePrivateKey(s)
		if err != nil {
			return
		}
		d := Digest([]byte(s))
		if a, err := RecoverAddress(d, k.Sign(d)); err != nil || a != k.Address() {
			t.Fatalf("%q: signature does not recover (%v)", s, err)
		}
	})
}
