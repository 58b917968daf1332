package refresh

import (
	"bytes"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"
	"github.com/consensys/gnark-crypto/ecc/secp256k1/fp"
	"github.com/consensys/gnark-crypto/ecc/secp256k1/fr"
)

// Object identifiers of an secp256k1 SubjectPublicKeyInfo (RFC 5480, SEC 2).
var (
	oidECPublicKey = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidSecp256k1   = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
)

// uncompressedPointLen is 0x04 ‖ BE32(x) ‖ BE32(y) (SEC 1 §2.3.3).
const uncompressedPointLen = 1 + 2*fp.Bytes

type subjectPublicKeyInfo struct {
	Algorithm struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.ObjectIdentifier
	}
	PublicKey asn1.BitString
}

// ParseOrbKeyPEM parses a trusted Orb key: one PEM block "PUBLIC KEY"
// holding a DER SubjectPublicKeyInfo with algorithm id-ecPublicKey and
// curve secp256k1 (OID 1.3.132.0.10, doc/crypto.md §h step 8), the point
// uncompressed, on the curve and not the identity. crypto/x509 does not
// know secp256k1, hence this parser.
func ParseOrbKeyPEM(text []byte) (*ecdsa.PublicKey, error) {
	block, rest := pem.Decode(text)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("orb key: no PEM block of type PUBLIC KEY")
	}
	if len(block.Headers) != 0 {
		return nil, errors.New("orb key: PEM headers are not allowed")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("orb key: data after the PEM block")
	}
	var spki subjectPublicKeyInfo
	if tail, err := asn1.Unmarshal(block.Bytes, &spki); err != nil || len(tail) != 0 {
		return nil, errors.New("orb key: not a DER SubjectPublicKeyInfo")
	}
	if !spki.Algorithm.Algorithm.Equal(oidECPublicKey) || !spki.Algorithm.Parameters.Equal(oidSecp256k1) {
		return nil, errors.New("orb key: not an id-ecPublicKey on secp256k1 (OID 1.3.132.0.10)")
	}
	return parseUncompressedPoint(spki.PublicKey)
}

func parseUncompressedPoint(bits asn1.BitString) (*ecdsa.PublicKey, error) {
	b := bits.Bytes
	if bits.BitLength != 8*uncompressedPointLen || len(b) != uncompressedPointLen || b[0] != 4 {
		return nil, errors.New("orb key: the point must be uncompressed (0x04 ‖ x ‖ y)")
	}
	var pub ecdsa.PublicKey
	if pub.A.X.SetBytesCanonical(b[1:33]) != nil || pub.A.Y.SetBytesCanonical(b[33:]) != nil {
		return nil, errors.New("orb key: coordinate not below the field prime")
	}
	if pub.A.IsInfinity() || !pub.A.IsOnCurve() {
		return nil, errors.New("orb key: point not on secp256k1")
	}
	return &pub, nil
}

// derSignature is ECDSA-Sig-Value (RFC 3279 §2.2.3).
type derSignature struct{ R, S *big.Int }

// parseDERSignature accepts exactly SEQUENCE { INTEGER r, INTEGER s } in
// DER, with nothing after it and r, s in [1, n−1] (doc/crypto.md §h step 8).
// encoding/asn1 rejects non-minimal lengths and integers but ignores
// SEQUENCE elements its struct has no field for, so the value must also
// re-encode to exactly the uploaded bytes. It returns
// r ‖ s with s replaced by n − s when s > n/2: the Orb's Secure Element
// does not normalize s, high-S MUST be accepted, and gnark-crypto's
// verifier accepts only low-S.
func parseDERSignature(der []byte) ([]byte, error) {
	var sig derSignature
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil {
		return nil, errors.New("hashes.sign is not a DER SEQUENCE of two INTEGERs")
	}
	if len(rest) != 0 {
		return nil, errors.New("hashes.sign has bytes after the DER signature")
	}
	if canon, err := asn1.Marshal(sig); err != nil || !bytes.Equal(canon, der) {
		return nil, errors.New("hashes.sign is not exactly DER SEQUENCE { INTEGER r, INTEGER s }")
	}
	n := fr.Modulus()
	for _, v := range []*big.Int{sig.R, sig.S} {
		if v.Sign() <= 0 || v.Cmp(n) >= 0 {
			return nil, errors.New("hashes.sign: r or s outside [1, n−1]")
		}
	}
	if sig.S.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
		sig.S.Sub(n, sig.S)
	}
	raw := make([]byte, 2*fr.Bytes)
	sig.R.FillBytes(raw[:fr.Bytes])
	sig.S.FillBytes(raw[fr.Bytes:])
	return raw, nil
}

// verifyDigest reports whether rs (from parseDERSignature) is an ECDSA
// signature of the 32-byte digest under pub. The digest is not hashed again
// (doc/crypto.md §h: the signer signs SHA-256(hashes.json) itself).
func verifyDigest(pub *ecdsa.PublicKey, rs, digest []byte) bool {
	ok, err := pub.Verify(rs, digest, nil)
	return err == nil && ok
}
