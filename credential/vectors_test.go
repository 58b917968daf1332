package credential

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/field"
	"worldid/internal/vectors"
)

// credentialFile mirrors credential.json (vectors/README.md).
type credentialFile struct {
	Vectors    []credentialVector `json:"vectors"`
	VerifyOnly []verifyOnlyVector `json:"verify_only"`
	Negative   []negativeVector   `json:"negative"`
}

type credentialVector struct {
	Name   string `json:"name"`
	Inputs struct {
		ID              string   `json:"id"`
		IssuerSchemaID  string   `json:"issuer_schema_id"`
		Sub             *string  `json:"sub"`
		LeafIndex       *string  `json:"leaf_index"`
		BlindingFactor  *string  `json:"blinding_factor"`
		GenesisIssuedAt string   `json:"genesis_issued_at"`
		ExpiresAt       string   `json:"expires_at"`
		Claims          []string `json:"claims"`
		AssociatedData  string   `json:"associated_data_hash_or_commitment"`
		SeedHex         *string  `json:"seed_hex"`
		IssuerVersion   *string  `json:"issuer_version"`
	} `json:"inputs"`
	Sub                   string          `json:"sub"`
	ClaimsHash            string          `json:"claims_hash"`
	CredentialHash        string          `json:"credential_hash"`
	SignatureHex          *string         `json:"signature_hex"`
	IssuerPK              *[2]string      `json:"issuer_pk"`
	IssuerPKCompressedHex *string         `json:"issuer_pk_compressed_hex"`
	Verifies              json.RawMessage `json:"verifies"`
	JSONV030              *string         `json:"json_v0_3_0"`
	JSONV030Unsigned      *string         `json:"json_v0_3_0_unsigned"`
	JSONHead              *string         `json:"json_head"`
}

type verifyOnlyVector struct {
	Name   string `json:"name"`
	Fields struct {
		ID              string `json:"id"`
		IssuerSchemaID  string `json:"issuer_schema_id"`
		LeafIndex       string `json:"leaf_index"`
		BlindingFactor  string `json:"blinding_factor"`
		GenesisIssuedAt string `json:"genesis_issued_at"`
		ExpiresAt       string `json:"expires_at"`
		AssociatedData  string `json:"associated_data_hash"`
	} `json:"fields"`
	Sub                   string          `json:"sub"`
	ClaimsHash            string          `json:"claims_hash"`
	CredentialHash        string          `json:"credential_hash"`
	IssuerPK              [2]string       `json:"issuer_pk"`
	IssuerPKCompressedHex string          `json:"issuer_pk_compressed_hex"`
	R                     [2]string       `json:"R"`
	S                     string          `json:"s"`
	SignatureHex          string          `json:"signature_hex"`
	Verifies              json.RawMessage `json:"verifies"`
	JSONV030              string          `json:"json_v0_3_0"`
}

type negativeVector struct {
	Name     string `json:"name"`
	JSONV030 string `json:"json_v0_3_0"`
	Expected string `json:"expected"`
	Stage    string `json:"stage"`
}

func loadCredentialFile(t testing.TB) credentialFile {
	var f credentialFile
	vectors.Load(t, "credential.json", &f)
	return f
}

// strictBool decodes a closed-vocabulary outcome: the JSON literals true or
// false; anything else (a string, null, a missing member) fails the test.
func strictBool(t testing.TB, name string, raw json.RawMessage) bool {
	t.Helper()
	switch string(raw) {
	case "true":
		return true
	case "false":
		return false
	}
	t.Fatalf("%s: outcome %q is not a JSON boolean", name, raw)
	return false
}

func dec(t testing.TB, s string) fr.Element {
	t.Helper()
	x, err := field.ParseDecimal(s)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return x
}

func u64dec(t testing.TB, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("u64 %q: %v", s, err)
	}
	return v
}

func checkFE(t testing.TB, what string, got fr.Element, want string) {
	t.Helper()
	if g := field.Format(&got); g != want {
		t.Errorf("%s = %s, want %s", what, g, want)
	}
}

// build makes the unsigned credential of a vector's inputs.
func (v *credentialVector) build(t *testing.T) *Credential {
	in := &v.Inputs
	if len(in.Claims) > MaxClaims {
		t.Fatalf("%d claims", len(in.Claims))
	}
	c := &Credential{
		ID:                 u64dec(t, in.ID),
		IssuerSchemaID:     u64dec(t, in.IssuerSchemaID),
		GenesisIssuedAt:    u64dec(t, in.GenesisIssuedAt),
		ExpiresAt:          u64dec(t, in.ExpiresAt),
		AssociatedDataHash: dec(t, in.AssociatedData),
	}
	switch {
	case in.Sub != nil:
		c.Sub = dec(t, *in.Sub)
	case in.LeafIndex != nil && in.BlindingFactor != nil:
		c.Sub = BlindedSub(dec(t, *in.LeafIndex), dec(t, *in.BlindingFactor))
	default:
		t.Fatal("inputs give neither sub nor leaf_index + blinding_factor")
	}
	for i, s := range in.Claims {
		c.Claims[i] = dec(t, s)
	}
	return c
}

func TestCredentialVectors(t *testing.T) {
	f := loadCredentialFile(t)
	n := vectors.NewCounter(t, "credential.json")
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			c := v.build(t)
			checkFE(t, "sub", c.Sub, v.Sub)
			checkFE(t, "claims_hash", c.ClaimsHash(), v.ClaimsHash)
			if v.Inputs.IssuerVersion != nil {
				checkHeadRule(t, &v, c)
			} else {
				checkV030(t, &v, c)
			}
			n.Inc()
		})
	}
}

// checkHeadRule: a vector with issuer_version tests the HEAD hash only.
func checkHeadRule(t *testing.T, v *credentialVector, c *Credential) {
	iv, err := strconv.ParseUint(*v.Inputs.IssuerVersion, 10, 8)
	if err != nil {
		t.Fatalf("issuer_version: %v", err)
	}
	h, err := c.HeadHash(uint8(iv))
	if err != nil {
		t.Fatal(err)
	}
	checkFE(t, "HEAD credential_hash", h, v.CredentialHash)
}

func checkV030(t *testing.T, v *credentialVector, c *Credential) {
	checkFE(t, "credential_hash", c.Hash(), v.CredentialHash)
	if h, err := c.HeadHash(0); err == nil && h != c.Hash() {
		t.Error("HeadHash(0) differs from Hash with claims[15] = 0")
	}
	if v.JSONV030Unsigned != nil {
		checkJSON(t, "json_v0_3_0_unsigned", c, *v.JSONV030Unsigned)
	}
	if !c.Claims[MaxClaims-1].IsZero() {
		checkRefusedIssuance(t, c)
		return
	}
	if v.Inputs.SeedHex == nil {
		return
	}
	priv, err := babyjub.NewPrivateKey(vectors.Hex(t, *v.Inputs.SeedHex))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Sign(priv); err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(c.Signature) != *v.SignatureHex {
		t.Errorf("signature = %x, want %s", c.Signature, *v.SignatureHex)
	}
	x, y := c.Issuer.Coordinates()
	if [2]string{x, y} != *v.IssuerPK {
		t.Errorf("issuer_pk = [%s %s], want %v", x, y, *v.IssuerPK)
	}
	if got := hex.EncodeToString(c.Issuer.Bytes()); got != *v.IssuerPKCompressedHex {
		t.Errorf("issuer_pk_compressed = %s, want %s", got, *v.IssuerPKCompressedHex)
	}
	if c.Verify(priv.Public()) != strictBool(t, "verifies", v.Verifies) {
		t.Error("Verify disagrees with verifies")
	}
	checkJSON(t, "json_v0_3_0", c, *v.JSONV030)
	head, err := c.MarshalHEAD()
	if err != nil {
		t.Fatal(err)
	}
	if string(head) != *v.JSONHead {
		t.Errorf("json_head:\n got %s\nwant %s", head, *v.JSONHead)
	}
}

// checkJSON asserts the exact bytes and that Parse reads them back.
func checkJSON(t *testing.T, what string, c *Credential, want string) {
	t.Helper()
	got, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
	back, err := Parse([]byte(want))
	if err != nil {
		t.Fatalf("%s: Parse: %v", what, err)
	}
	if !equal(back, c) {
		t.Errorf("%s: Parse(MarshalJSON) differs from the credential", what)
	}
}

// checkRefusedIssuance: claims[15] ≠ 0 is valid under v0.3.0 but must
// never be issued (doc/crypto.md §f) and has no HEAD form.
func checkRefusedIssuance(t *testing.T, c *Credential) {
	priv, err := babyjub.NewPrivateKey(make([]byte, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Sign(priv); !errors.Is(err, ErrReservedClaim) {
		t.Errorf("Sign with claims[15] ≠ 0: err = %v, want ErrReservedClaim", err)
	}
	if c.Signature != nil || c.Issuer != nil {
		t.Error("refused Sign modified the credential")
	}
	if _, err := c.MarshalHEAD(); err == nil {
		t.Error("MarshalHEAD accepted claims[15] ≠ 0")
	}
	if _, err := c.HeadHash(0); err == nil {
		t.Error("HeadHash accepted claims[15] ≠ 0")
	}
}

func TestVerifyOnlyVectors(t *testing.T) {
	f := loadCredentialFile(t)
	n := vectors.NewCounter(t, "credential.json")
	for _, v := range f.VerifyOnly {
		t.Run(v.Name, func(t *testing.T) {
			c, err := Parse([]byte(v.JSONV030))
			if err != nil {
				t.Fatal(err)
			}
			fv := &v.Fields
			if c.ID != u64dec(t, fv.ID) || c.IssuerSchemaID != u64dec(t, fv.IssuerSchemaID) ||
				c.GenesisIssuedAt != u64dec(t, fv.GenesisIssuedAt) || c.ExpiresAt != u64dec(t, fv.ExpiresAt) {
				t.Error("parsed u64 fields differ from fields")
			}
			if c.AssociatedDataHash != dec(t, fv.AssociatedData) {
				t.Error("associated_data_hash differs from fields")
			}
			checkFE(t, "sub from fields", BlindedSub(dec(t, fv.LeafIndex), dec(t, fv.BlindingFactor)), v.Sub)
			checkFE(t, "sub", c.Sub, v.Sub)
			checkFE(t, "claims_hash", c.ClaimsHash(), v.ClaimsHash)
			checkFE(t, "credential_hash", c.Hash(), v.CredentialHash)
			if x, y := c.Issuer.Coordinates(); [2]string{x, y} != v.IssuerPK {
				t.Errorf("issuer_pk = [%s %s]", x, y)
			}
			if got := hex.EncodeToString(c.Issuer.Bytes()); got != v.IssuerPKCompressedHex {
				t.Errorf("issuer_pk_compressed = %s", got)
			}
			checkSignatureParts(t, c.Signature, v.R, v.S)
			if hex.EncodeToString(c.Signature) != v.SignatureHex {
				t.Errorf("signature = %x", c.Signature)
			}
			if c.Verify(c.Issuer) != strictBool(t, "verifies", v.Verifies) {
				t.Error("Verify disagrees with verifies")
			}
			checkJSON(t, "json_v0_3_0", c, v.JSONV030)
			n.Inc()
		})
	}
}

// checkSignatureParts asserts sig = compressed(R) ‖ LE32(s).
func checkSignatureParts(t *testing.T, sig []byte, r [2]string, s string) {
	t.Helper()
	rPoint, err := babyjub.ParsePublicKeyCoordinates(r[0], r[1])
	if err != nil {
		t.Fatalf("R: %v", err)
	}
	if hex.EncodeToString(sig[:32]) != hex.EncodeToString(rPoint.Bytes()) {
		t.Error("signature R differs")
	}
	sFE := dec(t, s)
	sBE := sFE.Bytes()
	for i := range 32 {
		if sig[32+i] != sBE[31-i] {
			t.Fatal("signature s differs")
		}
	}
}

func TestNegativeVectors(t *testing.T) {
	f := loadCredentialFile(t)
	n := vectors.NewCounter(t, "credential.json")
	for _, v := range f.Negative {
		t.Run(v.Name, func(t *testing.T) {
			if v.Expected != "reject" {
				t.Fatalf("expected = %q, not in the vocabulary {reject}", v.Expected)
			}
			c, err := Parse([]byte(v.JSONV030))
			if err == nil && c.Verify(c.Issuer) {
				t.Errorf("accepted (reference rejects at stage %s)", v.Stage)
			}
			n.Inc()
		})
	}
}

func TestCredentialOnlyClaims(t *testing.T) {
	var f struct {
		CredentialOnly []struct {
			Name         string `json:"name"`
			IDCommitment string `json:"id_commitment"`
			Sub          string `json:"sub"`
			Timestamp    uint64 `json:"timestamp"`
			PreimageHex  string `json:"preimage_hex"`
			Claims0      string `json:"claims0"`
		} `json:"credential_only_claims"`
		Vectors []struct {
			Name       string `json:"name"`
			HashesJSON string `json:"hashes_json"`
			Expected   string `json:"expected"`
			Claims0    string `json:"claims0"`
		} `json:"vectors"`
	}
	vectors.Load(t, "pcp_v2_3.json", &f)
	n := vectors.NewCounter(t, "pcp_v2_3.json")
	for _, v := range f.CredentialOnly {
		idComm, err := field.ParseStrict(v.IDCommitment)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := field.ParseStrict(v.Sub)
		if err != nil {
			t.Fatal(err)
		}
		pre := RefreshClaimPreimage(idComm, sub, v.Timestamp)
		if hex.EncodeToString(pre[:]) != v.PreimageHex {
			t.Errorf("%s: preimage = %x", v.Name, pre)
		}
		checkFE(t, v.Name+" claims0", RefreshClaim(idComm, sub, v.Timestamp), v.Claims0)
		n.Inc()
	}
	for _, v := range f.Vectors {
		if v.Expected != "valid" {
			t.Fatalf("%s: vectors[] expected = %q, want valid", v.Name, v.Expected)
		}
		claim, err := ClaimFromBytes([]byte(v.HashesJSON))
		if err != nil {
			t.Fatal(err)
		}
		checkFE(t, v.Name+" claims0", claim, v.Claims0)
		n.Inc()
	}
}

// equal compares every field; issuers by point.
func equal(a, b *Credential) bool {
	if a.ID != b.ID || a.IssuerSchemaID != b.IssuerSchemaID || a.Sub != b.Sub ||
		a.GenesisIssuedAt != b.GenesisIssuedAt || a.ExpiresAt != b.ExpiresAt ||
		a.Claims != b.Claims || a.AssociatedDataHash != b.AssociatedDataHash ||
		hex.EncodeToString(a.Signature) != hex.EncodeToString(b.Signature) ||
		(a.Signature == nil) != (b.Signature == nil) {
		return false
	}
	if a.Issuer == nil || b.Issuer == nil {
		return a.Issuer == nil && b.Issuer == nil
	}
	return a.Issuer.Equal(b.Issuer)
}
