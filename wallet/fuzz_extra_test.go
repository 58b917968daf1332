package wallet

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/field"
	"worldid/internal/vectors"
)

// FuzzParseRefreshResponse: whatever a (hostile) issuer answers, the
// wallet never panics, and a credential it accepts came with status 200,
// is canonical v0.3.0 JSON, is signed by the expected issuer and is for the
// requested sub. Seeds: the signed credentials of credential.json, each
// checked against its own issuer_pk and sub.
func FuzzParseRefreshResponse(f *testing.F) {
	var file struct {
		Vectors []struct {
			JSON     *string   `json:"json_v0_3_0"`
			IssuerPK [2]string `json:"issuer_pk"`
			Sub      string    `json:"sub"`
		} `json:"vectors"`
	}
	vectors.Load(f, "credential.json", &file)
	count := vectors.NewCounter(f, "credential.json")
	type expected struct {
		issuer *babyjub.PublicKey
		sub    fr.Element
	}
	var signed []expected
	for _, v := range file.Vectors {
		if v.JSON == nil || v.IssuerPK[0] == "" {
			continue // unsigned: not an issuer's answer
		}
		issuer, err := babyjub.ParsePublicKeyCoordinates(v.IssuerPK[0], v.IssuerPK[1])
		if err != nil {
			f.Fatalf("vector issuer_pk: %v", err)
		}
		sub, err := field.ParseStrict(v.Sub)
		if err != nil {
			f.Fatalf("vector sub %q: %v", v.Sub, err)
		}
		body, _ := json.Marshal(map[string]any{"success": true, "credential": base64.StdEncoding.EncodeToString([]byte(*v.JSON)), "message": "ok"})
		f.Add(uint8(len(signed)), 200, body)
		f.Add(uint8(len(signed)), 400, []byte(`{"success":false,"error":"SUB_MISMATCH","message":"m"}`))
		signed = append(signed, expected{issuer, sub})
		count.Inc()
	}
	f.Fuzz(func(t *testing.T, which uint8, status int, body []byte) {
		want := signed[int(which)%len(signed)]
		c, err := ParseRefreshResponse(status, body, want.issuer, want.sub)
		if err != nil {
			return
		}
		var answer struct{ Credential string }
		json.Unmarshal(body, &answer)
		raw, _ := base64.StdEncoding.DecodeString(answer.Credential)
		canon, err := c.MarshalJSON()
		if status != 200 || err != nil || !bytes.Equal(canon, raw) || !c.Verify(want.issuer) || c.Sub != want.sub {
			t.Fatalf("accepted status %d credential %s", status, raw)
		}
	})
}
