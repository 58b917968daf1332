package credential

import (
	"encoding/binary"
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/poseidon"
)

// MaxClaims is the number of claim slots of a Credential V1 (doc/crypto.md §f).
const MaxClaims = 16

// Version is the value of the JSON member "version".
const Version = "V1"

// Domain separators (doc/crypto.md §b "Hash mode" table and "Sponge tags").
const (
	tagCredential = "POSEIDON2+EDDSA-BJJ" // CREDENTIAL_V1
	tagSub        = "H_CS(id, r)"         // CREDENTIAL_SUB
	tagClaim      = "CLAIMS_HASH_V1"      // byte sponge for claims
)

// ErrReservedClaim is returned by Sign for a credential whose claims[15]
// is not zero: newer protocol versions reserve that slot, so an issuer
// MUST leave it 0 (doc/crypto.md §f "Claims hash").
var ErrReservedClaim = errors.New("credential: claims[15] is reserved and must be zero on issuance")

// Credential is a World ID Credential V1 (doc/crypto.md §f).
type Credential struct {
	ID              uint64 // issuer-internal reference
	IssuerSchemaID  uint64
	Sub             fr.Element // blinded subject
	GenesisIssuedAt uint64     // unix seconds
	ExpiresAt       uint64     // unix seconds
	// Claims holds all 16 slots; unused ones are zero.
	Claims             [MaxClaims]fr.Element
	AssociatedDataHash fr.Element
	// Signature is the 64-byte EdDSA signature of Hash, or nil when unsigned.
	Signature []byte
	// Issuer is the signer's public key. nil stands for the identity point,
	// the issuer of a credential that was never signed; it never verifies.
	Issuer *babyjub.PublicKey
}

// ClaimsHash is P2_16(claims)[1], with no tag (doc/crypto.md §f).
func (c *Credential) ClaimsHash() fr.Element {
	s := c.Claims
	poseidon.Permute16(&s)
	return s[1]
}

// Hash is the credential hash that the issuer signs (doc/crypto.md §f):
//
//	H("POSEIDON2+EDDSA-BJJ", issuer_schema_id, sub, genesis_issued_at,
//	  expires_at, claims_hash, associated_data_hash, id)
func (c *Credential) Hash() fr.Element {
	return c.hash(c.ClaimsHash(), u64(c.ID))
}

// HeadHash is the credential hash under the HEAD rules (doc/crypto.md §f
// "HEAD variant"): the claims hash over claims[0..15] with slot 15 forced
// to zero, and id + issuerVersion·2^64 in the last slot. It fails when
// claims[15] ≠ 0, which HEAD cannot represent. With issuerVersion 0 it
// equals Hash.
func (c *Credential) HeadHash(issuerVersion uint8) (fr.Element, error) {
	if !c.Claims[MaxClaims-1].IsZero() {
		return fr.Element{}, errors.New("credential: claims[15] ≠ 0 has no HEAD form")
	}
	var b [fr.Bytes]byte
	b[fr.Bytes-9] = issuerVersion
	binary.BigEndian.PutUint64(b[fr.Bytes-8:], c.ID)
	var last fr.Element
	last.SetBytes(b[:])
	return c.hash(c.ClaimsHash(), last), nil
}

func (c *Credential) hash(claimsHash, last fr.Element) fr.Element {
	return poseidon.Hash(tagCredential,
		u64(c.IssuerSchemaID), c.Sub, u64(c.GenesisIssuedAt), u64(c.ExpiresAt),
		claimsHash, c.AssociatedDataHash, last)
}

// Sign sets Issuer to priv's public key and Signature to the EdDSA
// signature of Hash (doc/crypto.md §f "Signing" steps 1–2). It refuses a
// credential whose claims[15] is not zero.
func (c *Credential) Sign(priv *babyjub.PrivateKey) error {
	if !c.Claims[MaxClaims-1].IsZero() {
		return ErrReservedClaim
	}
	c.Issuer = priv.Public()
	c.Signature = babyjub.Sign(priv, c.Hash())
	return nil
}

// Verify reports whether c is signed by issuer: c.Issuer is issuer and the
// signature of Hash passes the doc/crypto.md §e checklist. An unsigned
// credential never verifies.
func (c *Credential) Verify(issuer *babyjub.PublicKey) bool {
	if c.Signature == nil || c.Issuer == nil || issuer == nil || !c.Issuer.Equal(issuer) {
		return false
	}
	return babyjub.Verify(issuer, c.Hash(), c.Signature)
}

// BlindedSub is H("H_CS(id, r)", leafIndex, blindingFactor), the blinded
// subject (doc/crypto.md §f "Blinded sub").
func BlindedSub(leafIndex, blindingFactor fr.Element) fr.Element {
	return poseidon.Hash(tagSub, leafIndex, blindingFactor)
}

// ClaimFromBytes derives a claim from bytes with the byte sponge
// S("CLAIMS_HASH_V1", data) (doc/crypto.md §b, §h). data must not be empty.
func ClaimFromBytes(data []byte) (fr.Element, error) {
	return poseidon.HashBytes(tagClaim, data)
}

// RefreshClaimPreimage is BE32(idComm) ‖ BE32(sub) ‖ BE32(ts), the 96
// bytes whose claim is claims[0] of a PoH credential refreshed without a
// PCP (doc/crypto.md §h, this server's design).
func RefreshClaimPreimage(idComm, sub fr.Element, ts uint64) [96]byte {
	var b [96]byte
	idBytes, subBytes := idComm.Bytes(), sub.Bytes()
	copy(b[0:32], idBytes[:])
	copy(b[32:64], subBytes[:])
	binary.BigEndian.PutUint64(b[88:96], ts)
	return b
}

// RefreshClaim is claims[0] of a credential-only refresh:
// S("CLAIMS_HASH_V1", RefreshClaimPreimage(idComm, sub, ts)).
func RefreshClaim(idComm, sub fr.Element, ts uint64) fr.Element {
	pre := RefreshClaimPreimage(idComm, sub, ts)
	claim, err := ClaimFromBytes(pre[:])
	if err != nil {
		panic("credential: sponge rejected a 96-byte input: " + err.Error())
	}
	return claim
}

// u64 is the field element whose integer value is v (doc/crypto.md §f: each
// u64 enters the state as the integer itself).
func u64(v uint64) fr.Element {
	var e fr.Element
	e.SetUint64(v)
	return e
}
