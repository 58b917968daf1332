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
