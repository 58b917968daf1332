package credential

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/field"
	"worldid/internal/leaf/strictjson"
)

// headClaims is the number of claims the HEAD serializer writes.
const headClaims = MaxClaims - 1

// The identity point's JSON coordinates and compressed encoding: the
// issuer of a credential that was never signed (doc/crypto.md §e).
const (
	identityX          = "0"
	identityY          = "1"
	identityCompressed = "0100000000000000000000000000000000000000000000000000000000000000"
)

// MarshalJSON returns the byte-exact v0.3.0 serialization (doc/crypto.md §f):
// compact, members in fixed order, 16 claims, lowercase hex, and
// "signature":null when unsigned.
func (c *Credential) MarshalJSON() ([]byte, error) {
	if err := c.checkSignatureLength(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 1700)
	b = c.appendHead(b, false)
	b = appendClaims(b, c.Claims[:])
	b = append(b, `,"associated_data_hash":`...)
	b = appendFE(b, &c.AssociatedDataHash)
	b = c.appendSignature(b)
	x, y := identityX, identityY
	if c.Issuer != nil {
		x, y = c.Issuer.Coordinates()
	}
	b = append(b, `,"issuer":{"pk":["`...)
	b = append(b, x...)
	b = append(b, `","`...)
	b = append(b, y...)
	return append(b, `"]}}`...), nil
}

// MarshalHEAD returns the serialization of upstream main (doc/crypto.md §f
// "HEAD variant") with issuer_version 0: 15 claims, associated data under
// "associated_data_commitment", and the issuer as its compressed key in
// hex. It fails when claims[15] ≠ 0, which HEAD cannot represent.
func (c *Credential) MarshalHEAD() ([]byte, error) {
	if !c.Claims[MaxClaims-1].IsZero() {
		return nil, errors.New("credential: claims[15] ≠ 0 has no HEAD form")
	}
	if err := c.checkSignatureLength(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 1600)
	b = c.appendHead(b, true)
	b = appendClaims(b, c.Claims[:headClaims])
	b = append(b, `,"associated_data_commitment":`...)
	b = appendFE(b, &c.AssociatedDataHash)
	b = c.appendSignature(b)
	issuer := identityCompressed
	if c.Issuer != nil {
		issuer = hex.EncodeToString(c.Issuer.Bytes())
	}
	b = append(b, `,"issuer":"`...)
	b = append(b, issuer...)
	return append(b, `"}`...), nil
}

func (c *Credential) checkSignatureLength() error {
	if c.Signature != nil && len(c.Signature) != babyjub.SignatureSize {
		return fmt.Errorf("credential: signature has %d bytes, not %d", len(c.Signature), babyjub.SignatureSize)
	}
	return nil
}

// appendHead writes the members from "id" to "expires_at".
func (c *Credential) appendHead(b []byte, issuerVersion bool) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, c.ID, 10)
	b = append(b, `,"version":"`+Version+`"`...)
	if issuerVersion {
		b = append(b, `,"issuer_version":0`...)
	}
	b = append(b, `,"issuer_schema_id":`...)
	b = strconv.AppendUint(b, c.IssuerSchemaID, 10)
	b = append(b, `,"sub":`...)
	b = appendFE(b, &c.Sub)
	b = append(b, `,"genesis_issued_at":`...)
	b = strconv.AppendUint(b, c.GenesisIssuedAt, 10)
	b = append(b, `,"expires_at":`...)
	return strconv.AppendUint(b, c.ExpiresAt, 10)
}

func appendClaims(b []byte, claims []fr.Element) []byte {
	b = append(b, `,"claims":[`...)
	for i := range claims {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFE(b, &claims[i])
	}
	return append(b, ']')
}

func (c *Credential) appendSignature(b []byte) []byte {
	b = append(b, `,"signature":`...)
	if c.Signature == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = hex.AppendEncode(b, c.Signature)
	return append(b, '"')
}

func appendFE(b []byte, x *fr.Element) []byte {
	b = append(b, '"')
	b = append(b, field.Format(x)...)
	return append(b, '"')
}

// Members of the v0.3.0 JSON that Parse requires.
var requiredMembers = [...]string{"id", "version", "issuer_schema_id", "sub", "genesis_issued_at",
	"expires_at", "claims", "associated_data_hash", "issuer"}

// Parse reads a v0.3.0 credential strictly (doc/crypto.md §f "Parsing"):
// JSON under internal/leaf/strictjson (no duplicate member names at any depth,
// no invalid UTF-8, nothing after the object), the required members
// present, unknown members ignored, u64 values as bare JSON integers
// < 2^64, version "V1", 0–16 claims (padded with zeros), field elements in
// the strict form, issuer.pk two canonical decimals forming a subgroup
// point (the identity gives a nil Issuer), and signature missing, null, or
// 128 hex digits. Parse does not verify the signature.
func Parse(data []byte) (*Credential, error) {
	root, err := strictjson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("credential: %w", err)
	}
	m, err := members(root, "the credential")
	if err != nil {
		return nil, err
	}
	for _, name := range requiredMembers {
		if _, ok := m[name]; !ok {
			return nil, fmt.Errorf("credential: member %q is missing", name)
		}
	}
	if v, err := parseString(m["version"], "version"); err != nil {
		return nil, err
	} else if v != Version {
		return nil, fmt.Errorf("credential: version %q is not %q", v, Version)
	}
	c := new(Credential)
	for _, u := range []struct {
		name string
		dst  *uint64
	}{{"id", &c.ID}, {"issuer_schema_id", &c.IssuerSchemaID}, {"genesis_issued_at", &c.GenesisIssuedAt}, {"expires_at", &c.ExpiresAt}} {
		if *u.dst, err = parseU64(m[u.name], u.name); err != nil {
			return nil, err
		}
	}
	if c.Sub, err = parseFE(m["sub"], "sub"); err != nil {
		return nil, err
	}
	if c.AssociatedDataHash, err = parseFE(m["associated_data_hash"], "associated_data_hash"); err != nil {
		return nil, err
	}
	if err = parseClaims(m["claims"], &c.Claims); err != nil {
		return nil, err
	}
	if c.Signature, err = parseSignature(m["signature"]); err != nil {
		return nil, err
	}
	if c.Issuer, err = parseIssuer(m["issuer"]); err != nil {
		return nil, err
	}
	return c, nil
}

// members maps the member names of the object v to their values.
func members(v strictjson.Value, name string) (map[string]strictjson.Value, error) {
	if v.Kind() != strictjson.Object {
		return nil, fmt.Errorf("credential: %s is not a JSON object", name)
	}
	m := map[string]strictjson.Value{}
	for name, value := range v.Members() {
		m[name] = value
	}
	return m, nil
}

// parseU64 accepts a bare JSON integer in [0, 2^64−1]: no quotes, sign,
// fraction or exponent (doc/crypto.md §a "u64 in JSON"), never via float64.
func parseU64(v strictjson.Value, name string) (uint64, error) {
	if v.Kind() != strictjson.Number || bytes.ContainsAny(v.Bytes(), "-.eE") {
		return 0, fmt.Errorf("credential: %s is not a JSON integer literal", name)
	}
	n, err := strconv.ParseUint(string(v.Bytes()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("credential: %s is not a u64", name)
	}
	return n, nil
}

// parseString accepts a JSON string only (not null).
func parseString(v strictjson.Value, name string) (string, error) {
	s, ok := v.Unquote()
	if !ok {
		return "", fmt.Errorf("credential: %s is not a JSON string", name)
	}
	return s, nil
}

func parseFE(v strictjson.Value, name string) (fr.Element, error) {
	s, err := parseString(v, name)
	if err != nil {
		return fr.Element{}, err
	}
	x, err := field.ParseStrict(s)
	if err != nil {
		return fr.Element{}, fmt.Errorf("credential: %s: %w", name, err)
	}
	return x, nil
}

func parseClaims(v strictjson.Value, dst *[MaxClaims]fr.Element) error {
	if v.Kind() != strictjson.Array {
		return errors.New("credential: claims is not a JSON array")
	}
	i := 0
	for item := range v.Elements() {
		if i == MaxClaims {
			return fmt.Errorf("credential: more than %d claims", MaxClaims)
		}
		x, err := parseFE(item, fmt.Sprintf("claims[%d]", i))
		if err != nil {
			return err
		}
		dst[i] = x
		i++
	}
	return nil
}

// parseSignature accepts a missing or null signature (unsigned) or
// exactly 128 hex digits of either case (doc/crypto.md §e "Signature bytes").
func parseSignature(v strictjson.Value) ([]byte, error) {
	if k := v.Kind(); k == strictjson.Invalid || k == strictjson.Null {
		return nil, nil
	}
	s, err := parseString(v, "signature")
	if err != nil {
		return nil, err
	}
	if len(s) != 2*babyjub.SignatureSize {
		return nil, fmt.Errorf("credential: signature has %d hex digits, not %d", len(s), 2*babyjub.SignatureSize)
	}
	sig, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("credential: signature is not hex")
	}
	return sig, nil
}

// parseIssuer reads {"pk":["<x>","<y>"]}. The identity point is accepted
// as a subgroup point and returned as nil: it can never verify (§e step 2).
func parseIssuer(v strictjson.Value) (*babyjub.PublicKey, error) {
	m, err := members(v, "issuer")
	if err != nil {
		return nil, err
	}
	var pk []strictjson.Value
	for coordinate := range m["pk"].Elements() {
		pk = append(pk, coordinate)
	}
	if m["pk"].Kind() != strictjson.Array || len(pk) != 2 {
		return nil, errors.New("credential: issuer.pk is not an array of two coordinates")
	}
	x, err := parseString(pk[0], "issuer.pk[0]")
	if err != nil {
		return nil, err
	}
	y, err := parseString(pk[1], "issuer.pk[1]")
	if err != nil {
		return nil, err
	}
	if x == identityX && y == identityY {
		return nil, nil
	}
	pub, err := babyjub.ParsePublicKeyCoordinates(x, y)
	if err != nil {
		return nil, fmt.Errorf("credential: issuer.pk: %w", err)
	}
	return pub, nil
}
