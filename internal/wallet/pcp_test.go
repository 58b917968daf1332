package wallet

import (
	"crypto/sha256"
	"encoding/asn1"
	"encoding/json"
	"maps"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"

	"worldid/internal/vectors"
	"worldid/refresh"
)

// TestOrbKeyPEMMatchesVectors: the vector private keys give exactly the
// vector PEMs, and FormatOrbKey/ParseOrbKey round-trip.
func TestOrbKeyPEMMatchesVectors(t *testing.T) {
	var f struct {
		Keys map[string]struct {
			PrivateKeyHex string `json:"private_key_hex"`
			PublicKeyPEM  string `json:"public_key_pem"`
		} `json:"keys"`
	}
	vectors.Load(t, "pcp_v2_3.json", &f)
	n := vectors.NewCounter(t, "pcp_v2_3.json")
	for name, k := range f.Keys {
		priv, err := ParseOrbKey(k.PrivateKeyHex)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(OrbKeyPEM(&priv.PublicKey)); got != k.PublicKeyPEM {
			t.Errorf("%s: PEM\n%s\nwant\n%s", name, got, k.PublicKeyPEM)
		}
		if FormatOrbKey(priv) != k.PrivateKeyHex {
			t.Errorf("%s: FormatOrbKey does not round-trip", name)
		}
		n.Inc()
	}
	for _, bad := range []string{"", "00", strings.Repeat("0", 64), strings.Repeat("f", 64), strings.Repeat("g", 64)} {
		if _, err := ParseOrbKey(bad); err == nil {
			t.Errorf("ParseOrbKey(%q) accepted", bad)
		}
	}
}

var (
	hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// TestBuildTestPCP checks the package against doc/crypto.md §h by hand.
func TestBuildTestPCP(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{7})
	key, err := GenerateOrbKey(rng)
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildTestPCP(rng, key, "orb-1", "signup-1", time.Unix(1_750_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	var hashes map[string]string
	if err := json.Unmarshal(p.HashesJSON, &hashes); err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 42 || hashes["version"] != "2.3" {
		t.Fatalf("%d keys, version %q", len(hashes), hashes["version"])
	}
	if again, _ := json.Marshal(hashes); string(again) != string(p.HashesJSON) {
		t.Error("hashes.json is not sorted compact JSON")
	}
	for k, v := range hashes {
		if k != "version" && !hex64.MatchString(v) {
			t.Errorf("%s = %q", k, v)
		}
	}
	for _, f := range pcpSaltedFields {
		salt := p.Fields[f+"_salt"]
		if !hex32.MatchString(salt) || sha256Hex([]byte(p.Fields[f]+salt)) != hashes[f] {
			t.Errorf("salted field %s does not check", f)
		}
	}
	if _, sent := p.Fields["qr_code"]; sent || hashes["qr_code"] == "" {
		t.Error("qr_code must be committed but not sent")
	}
	for _, s := range []string{"iris_code_shares_0", "iris_code_shares_1", "iris_code_shares_2"} {
		if sha256Hex([]byte(p.Fields[s])) != hashes[s+".json"] {
			t.Errorf("%s hash", s)
		}
	}
	if len(p.Fields) != 17 || p.Fields["signup_id"] != "signup-1" || p.Fields["orb_id"] != "orb-1" ||
		p.Fields["signup_reason"] != "NORMAL" || p.Fields["timestamp"] != "1750000000" {
		t.Errorf("fields %v", slices.Sorted(maps.Keys(p.Fields)))
	}
	checkSignature(t, p, key)
	tampered := *p
	tampered.HashesJSON = append([]byte{' '}, p.HashesJSON...)
	digest := sha256.Sum256(tampered.HashesJSON)
	if ok, _ := key.PublicKey.Verify(derToRS(t, p.HashesSign), digest[:], nil); ok {
		t.Error("signature verifies over other bytes")
	}
}

// checkSignature verifies hashes.sign: strict DER, ECDSA over
// SHA-256(hashes.json) under the Orb key.
func checkSignature(t *testing.T, p *TestPCP, key *ecdsa.PrivateKey) {
	t.Helper()
	digest := sha256.Sum256(p.HashesJSON)
	ok, err := key.PublicKey.Verify(derToRS(t, p.HashesSign), digest[:], nil)
	if err != nil || !ok {
		t.Errorf("hashes.sign does not verify: %v", err)
	}
}

func TestOrbKeyPEMParsesOnIssuer(t *testing.T) {
	key, err := GenerateOrbKey(rand.NewChaCha8([32]byte{8}))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := refresh.ParseOrbKeyPEM(OrbKeyPEM(&key.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if !pub.A.Equal(&key.PublicKey.A) {
		t.Error("issuer parsed another point")
	}
}

// derToRS checks strict DER and returns r ‖ s.
func derToRS(t *testing.T, der []byte) []byte {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) != 0 {
		t.Fatalf("hashes.sign is not DER: %v", err)
	}
	rs := make([]byte, 64)
	sig.R.FillBytes(rs[:32])
	sig.S.FillBytes(rs[32:])
	return rs
}
