package credential

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
)

func testKey(t testing.TB, b byte) *babyjub.PrivateKey {
	t.Helper()
	priv, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{b}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func randomFE(rng *rand.Rand) fr.Element {
	var x fr.Element
	x.SetUint64(rng.Uint64())
	var y fr.Element
	y.SetUint64(rng.Uint64())
	x.Mul(&x, &y).Square(&x)
	return x
}

// randomCredential fills every field; claims[15] stays zero (issuable).
func randomCredential(rng *rand.Rand) *Credential {
	c := &Credential{
		ID:                 rng.Uint64(),
		IssuerSchemaID:     rng.Uint64(),
		Sub:                randomFE(rng),
		GenesisIssuedAt:    rng.Uint64(),
		ExpiresAt:          rng.Uint64(),
		AssociatedDataHash: randomFE(rng),
	}
	for i := range MaxClaims - 1 {
		c.Claims[i] = randomFE(rng)
	}
	return c
}

// TestSignVerifyRoundTrip: sign, serialize, parse, verify; any single
// changed field makes verification fail.
func TestSignVerifyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	priv, other := testKey(t, 7), testKey(t, 8)
	for range 20 {
		c := randomCredential(rng)
		if err := c.Sign(priv); err != nil {
			t.Fatal(err)
		}
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(back, c) || !back.Verify(priv.Public()) {
			t.Fatal("round trip failed")
		}
		if back.Verify(other.Public()) {
			t.Fatal("verified against another issuer")
		}
		for _, tamper := range tamperings() {
			d := *back
			d.Signature = bytes.Clone(back.Signature)
			tamper(&d)
			if d.Verify(priv.Public()) {
				t.Fatal("tampered credential verifies")
			}
		}
	}
}

func tamperings() []func(*Credential) {
	var one fr.Element
	one.SetOne()
	return []func(*Credential){
		func(c *Credential) { c.ID++ },
		func(c *Credential) { c.IssuerSchemaID++ },
		func(c *Credential) { c.Sub.Add(&c.Sub, &one) },
		func(c *Credential) { c.GenesisIssuedAt++ },
		func(c *Credential) { c.ExpiresAt++ },
		func(c *Credential) { c.Claims[0].Add(&c.Claims[0], &one) },
		func(c *Credential) { c.Claims[14].Add(&c.Claims[14], &one) },
		func(c *Credential) { c.AssociatedDataHash.Add(&c.AssociatedDataHash, &one) },
		func(c *Credential) { c.Signature[40] ^= 1 },
		func(c *Credential) { c.Signature = nil },
	}
}

func TestVerifyNeedsIssuer(t *testing.T) {
	c := randomCredential(rand.New(rand.NewPCG(3, 4)))
	if c.Verify(testKey(t, 1).Public()) {
		t.Error("unsigned credential verifies")
	}
	priv := testKey(t, 1)
	if err := c.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if c.Verify(nil) {
		t.Error("verified against a nil issuer")
	}
	c.Issuer = nil
	if c.Verify(priv.Public()) {
		t.Error("credential with identity issuer verifies")
	}
}

func TestSignatureLengthOnMarshal(t *testing.T) {
	c := &Credential{Signature: make([]byte, 63)}
	if _, err := c.MarshalJSON(); err == nil {
		t.Error("MarshalJSON accepted a 63-byte signature")
	}
	if _, err := c.MarshalHEAD(); err == nil {
		t.Error("MarshalHEAD accepted a 63-byte signature")
	}
}

// validJSON is a signed credential's JSON for the parse negatives.
func validJSON(t *testing.T) string {
	c := randomCredential(rand.New(rand.NewPCG(5, 6)))
	if err := c.Sign(testKey(t, 2)); err != nil {
		t.Fatal(err)
	}
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseRejects: each mutation breaks exactly one parse rule.
func TestParseRejects(t *testing.T) {
	good := validJSON(t)
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatal(err)
	}
	sub := good[strings.Index(good, `"sub":`)+7 : strings.Index(good, `"sub":`)+73]
	sigStart := strings.Index(good, `"signature":"`) + 13
	mutations := map[string]string{
		"not an object":         "[]",
		"trailing data":         good + "{}",
		"duplicate id":          strings.Replace(good, `{"id":`, `{"id":1,"id":`, 1),
		"duplicate issuer pk":   strings.Replace(good, `{"pk":`, `{"pk":["0","1"],"pk":`, 1),
		"missing expires_at":    strings.Replace(good, `"expires_at":`, `"expires_at_":`, 1),
		"id float":              strings.Replace(good, `{"id":`, `{"id":1.0,"x":`, 1),
		"id exponent":           strings.Replace(good, `{"id":`, `{"id":1e3,"x":`, 1),
		"id negative":           strings.Replace(good, `{"id":`, `{"id":-1,"x":`, 1),
		"id 2^64":               strings.Replace(good, `{"id":`, `{"id":18446744073709551616,"x":`, 1),
		"id null":               strings.Replace(good, `{"id":`, `{"id":null,"x":`, 1),
		"version lowercase":     strings.Replace(good, `"V1"`, `"v1"`, 1),
		"version null":          strings.Replace(good, `"V1"`, `null`, 1),
		"sub uppercase prefix":  strings.Replace(good, `"sub":"0x`, `"sub":"0X`, 1),
		"sub ≥ p":               strings.Replace(good, sub, "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001", 1),
		"sub null":              strings.Replace(good, `"sub":"`+sub+`"`, `"sub":null`, 1),
		"claims null":           strings.Replace(good, `"claims":[`, `"claims":null,"x":[`, 1),
		"claims object":         strings.Replace(good, `"claims":[`, `"claims":{},"x":[`, 1),
		"claim null":            strings.Replace(good, `"claims":[`, `"claims":[null,`, 1),
		"signature 129 hex":     strings.Replace(good, `"signature":"`, `"signature":"0`, 1),
		"signature not hex":     good[:sigStart] + "zz" + good[sigStart+2:],
		"signature number":      strings.Replace(good, `"signature":"`, `"signature":1,"x":"`, 1),
		"issuer string":         strings.Replace(good, `"issuer":{`, `"issuer":"00","x":{`, 1),
		"issuer pk three":       strings.Replace(good, `{"pk":[`, `{"pk":["1",`, 1),
		"issuer pk numbers":     strings.Replace(strings.Replace(good, `{"pk":["`, `{"pk":[`, 1), `","`, `,"`, 1),
		"issuer pk off curve":   good[:strings.Index(good, `{"pk":`)] + `{"pk":["1","2"]}}`,
		"issuer x leading zero": strings.Replace(good, `{"pk":["`, `{"pk":["0`, 1),
		"17 claims":             strings.Replace(good, `"claims":[`, `"claims":["0x`+strings.Repeat("0", 64)+`",`, 1),
		"duplicate in unknown":  strings.Replace(good, `{"id":`, `{"extra":[{"a":1,"a":2}],"id":`, 1),
		"invalid UTF-8 unknown": strings.Replace(good, `{"id":`, "{\"extra\":\"\xff\",\"id\":", 1),
		"escaped duplicate id":  strings.Replace(good, `{"id":`, `{"\u0069d":1,"id":`, 1),
		"nested 65 deep":        strings.Replace(good, `{"id":`, `{"extra":`+strings.Repeat("[", 64)+strings.Repeat("]", 64)+`,"id":`, 1),
	}
	for name, s := range mutations {
		if s == good {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if _, err := Parse([]byte(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestParseAccepts: what the v0.3.0 reference accepts and we keep.
func TestParseAccepts(t *testing.T) {
	good := validJSON(t)
	c, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	sigStart := strings.Index(good, `"signature":"`) + 13
	variants := map[string]string{
		"unknown member":        strings.Replace(good, `{"id":`, `{"extra":[1,{"a":null}],"id":`, 1),
		"whitespace":            strings.ReplaceAll(strings.ReplaceAll(good, ",", " ,\n "), ":", " : "),
		"uppercase hex sub":     upperFE(good, `"sub":"0x`),
		"uppercase signature":   good[:sigStart] + strings.ToUpper(good[sigStart:sigStart+128]) + good[sigStart+128:],
		"issuer unknown member": strings.Replace(good, `{"pk":`, `{"kid":"x","pk":`, 1),
	}
	for name, s := range variants {
		back, err := Parse([]byte(s))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !equal(back, c) {
			t.Errorf("%s: parsed a different credential", name)
		}
	}
}

func upperFE(s, prefix string) string {
	i := strings.Index(s, prefix) + len(prefix)
	return s[:i] + strings.ToUpper(s[i:i+64]) + s[i+64:]
}

// TestParseShortClaimsAndUnsigned: fewer than 16 claims are padded; a
// missing or null signature is unsigned; re-marshalling is canonical.
func TestParseShortClaimsAndUnsigned(t *testing.T) {
	var seven fr.Element
	seven.SetUint64(7)
	c := &Credential{ID: 1}
	c.Claims[0] = seven
	full, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	short := `{"id":1,"version":"V1","issuer_schema_id":0,"sub":"0x0000000000000000000000000000000000000000000000000000000000000000","genesis_issued_at":0,"expires_at":0,"claims":["0x0000000000000000000000000000000000000000000000000000000000000007"],"associated_data_hash":"0x0000000000000000000000000000000000000000000000000000000000000000","issuer":{"pk":["0","1"]}}`
	for _, s := range []string{short, strings.Replace(short, `,"issuer"`, `,"signature":null,"issuer"`, 1)} {
		back, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if !equal(back, c) {
			t.Error("short claims not padded or signature not nil")
		}
		again, _ := back.MarshalJSON()
		if !bytes.Equal(again, full) {
			t.Errorf("re-marshal not canonical:\n%s\n%s", again, full)
		}
	}
}

func TestHeadUnsignedIssuer(t *testing.T) {
	b, err := (&Credential{}).MarshalHEAD()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), `"signature":null,"issuer":"`+identityCompressed+`"}`) {
		t.Errorf("unsigned HEAD tail: %s", b[len(b)-120:])
	}
}
