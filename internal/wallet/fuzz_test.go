package wallet

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/field"
	"worldid/internal/vectors"
	"worldid/refresh"
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

// FuzzLoadIdentity: LoadIdentity never panics on any file content, and an
// identity it accepts has the commitment the file states and is written
// back by the canonical file form to the same identity. Seeds: identity
// files made by NewIdentityFile and their near misses (uppercase, short,
// swapped secrets, extra member, trailing data).
func FuzzLoadIdentity(f *testing.F) {
	dir := f.TempDir()
	rng := rand.NewChaCha8([32]byte{'w', 'i', 'd'})
	for i := range 2 {
		path := filepath.Join(dir, string(rune('a'+i)))
		if _, err := NewIdentityFile(path, rng); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var file identityFile
		if err := json.Unmarshal(b, &file); err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(bytes.ToUpper(b))
		f.Add(bytes.Replace(b, []byte(`"0x0`), []byte(`"0x`), 1))
		swapped, _ := json.Marshal(identityFile{file.Trapdoor, file.Nullifier, file.Commitment})
		f.Add(swapped)
		f.Add(append(bytes.TrimRight(b, "}\n"), `,"extra":1}`...))
		f.Add(append(bytes.Clone(b), "{}"...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "identity.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		id, err := LoadIdentity(path)
		if err != nil {
			return
		}
		var file identityFile
		if json.Unmarshal(data, &file) != nil {
			t.Fatalf("accepted a file that is not JSON: %q", data)
		}
		c := id.Commitment()
		if field.Format(&c) != file.Commitment {
			t.Fatalf("commitment %s, file states %s", field.Format(&c), file.Commitment)
		}
		canon, _ := json.Marshal(identityFile{field.Format(&id.Nullifier), field.Format(&id.Trapdoor), field.Format(&c)})
		again := filepath.Join(t.TempDir(), "again.json")
		if err := os.WriteFile(again, canon, 0o600); err != nil {
			t.Fatal(err)
		}
		if back, err := LoadIdentity(again); err != nil || back != id {
			t.Fatalf("canonical form %s does not load back: %v", canon, err)
		}
	})
}

// FuzzParseOrbKey: ParseOrbKey never panics, and a key it accepts formats
// back to its input (case aside) and has a public key the issuer's PEM
// parser accepts as the same point. Seeds: the private keys of
// pcp_v2_3.json, uppercased and truncated, and the range ends 0, 1, n−1, n.
func FuzzParseOrbKey(f *testing.F) {
	var file struct {
		Keys map[string]struct {
			PrivateKeyHex string `json:"private_key_hex"`
		} `json:"keys"`
	}
	vectors.Load(f, "pcp_v2_3.json", &file)
	count := vectors.NewCounter(f, "pcp_v2_3.json")
	for _, k := range file.Keys {
		f.Add(k.PrivateKeyHex)
		f.Add(strings.ToUpper(k.PrivateKeyHex))
		f.Add(k.PrivateKeyHex[2:])
		count.Inc()
	}
	const n = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141" // secp256k1 group order (SEC 2 §2.4.1)
	f.Add(n)
	f.Add(n[:63] + "0")
	f.Add(strings.Repeat("0", 63) + "1")
	f.Add(strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, s string) {
		priv, err := ParseOrbKey(s)
		if err != nil {
			return
		}
		if FormatOrbKey(priv) != strings.ToLower(s) {
			t.Fatalf("ParseOrbKey(%q) formats as %s", s, FormatOrbKey(priv))
		}
		pub, err := refresh.ParseOrbKeyPEM(OrbKeyPEM(&priv.PublicKey))
		if err != nil || !pub.A.Equal(&priv.PublicKey.A) {
			t.Fatalf("public key of %q does not parse back: %v", s, err)
		}
	})
}
