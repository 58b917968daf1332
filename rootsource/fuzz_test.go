package rootsource

import (
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzParseContract: accepted specs round-trip through their fields.
func FuzzParseContract(f *testing.F) {
	f.Add("orb/production=ethereum:identity-manager:0xf7134CE138832c1456F2a91D64621eE90c2bddEa")
	f.Add("world_id_4/staging=worldchain:registry:0x8556d07D75025f286fe757C7EeEceC40D54FA16D")
	f.Add("issuer_key/production=worldchain:issuer-registry:0x941239840F4d9668da8be76b568e836b50685d2c")
	f.Add("oprf_key/staging=worldchain:oprf-key-registry:0xb2C02253ee7bFEDF50F5D015658857099980E91F")
	f.Add("x=y:registry:0x00")
	f.Add("=::")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseContract(s)
		if err != nil {
			return
		}
		again := c.Tree + "=" + c.Chain + ":" + string(c.Kind) + ":0x" + hex.EncodeToString(c.Address[:])
		if !strings.EqualFold(again, s) {
			t.Fatalf("%q re-encodes as %q", s, again)
		}
	})
}

// FuzzRevertData: only the key registry's UnknownId or DeletedId revert,
// selector and one word, reads as "no key"; anything else is a failure.
func FuzzRevertData(f *testing.F) {
	f.Add("0xfbf20062" + strings.Repeat("0", 64))
	f.Add("0x1b02ded7" + strings.Repeat("0", 63) + "9")
	f.Add("0x08c379a0" + strings.Repeat("0", 64))
	f.Add("0xfbf20062")
	f.Add("")
	f.Fuzz(func(t *testing.T, data string) {
		if !isNotRegistered(data) {
			return
		}
		b, err := hex.DecodeString(strings.TrimPrefix(data, "0x"))
		if err != nil || len(b) != 36 || ([4]byte(b[:4]) != selectorErrUnknownID && [4]byte(b[:4]) != selectorErrDeletedID) {
			t.Fatalf("%q read as no key", data)
		}
	})
}
