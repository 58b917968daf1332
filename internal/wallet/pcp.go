package wallet

import (
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"
	secpfr "github.com/consensys/gnark-crypto/ecc/secp256k1/fr"
)

// TestPCP is a synthetic Personal Custody Package v2.3 in the shape the Orb
// builds (doc/crypto.md §h): the refresh form fields, hashes.json and its
// signature. It is test data for the development wallet, never real
// biometric data.
type TestPCP struct {
	// Fields are the multipart text fields of a PCP refresh: the seven
	// salted fields, their <name>_salt, and iris_code_shares_0..2.
	Fields map[string]string
	// HashesJSON is the exact hashes.json file: 42 keys, sorted, compact.
	HashesJSON []byte
	// HashesSign is the hashes.sign file: DER ECDSA over SHA-256(HashesJSON).
	HashesSign []byte
}

// pcpSaltedFields are the salted fields the form carries; qr_code is
// committed in hashes.json but never sent (doc/crypto.md §h).
var pcpSaltedFields = [...]string{"signup_id", "orb_id", "operator_id", "signup_reason", "timestamp", "software_version", "orb_country"}

// pcpFileKeys are the hashes.json keys of files the test PCP does not
// carry; their hashes are random.
var pcpFileKeys = func() []string {
	keys := []string{"left_ir.png", "right_ir.png", "thumbnail.png", "backend_keys.json", "face_embeddings.json", "iris_codes.json"}
	for _, side := range []string{"left", "right"} {
		for _, kind := range []string{"image", "mask"} {
			for _, extra := range []string{"", "_commitment", "_blinding_factors"} {
				for _, size := range []string{"", "_resized"} {
					keys = append(keys, side+"_normalized_"+kind+extra+size+".bin")
				}
			}
		}
	}
	return keys
}()

// BuildTestPCP builds a test PCP for an enrollment with signupID at the
// Orb orbID, at time now, signed by orbKey. Salts, identifiers, file hashes
// and iris shares are drawn from rand. The ECDSA nonce comes from
// gnark-crypto's signer (hedged with crypto/rand), so signatures differ
// between runs even for the same rand; the signature is low-S.
func BuildTestPCP(rand io.Reader, orbKey *ecdsa.PrivateKey, orbID, signupID string, now time.Time) (*TestPCP, error) {
	if orbID == "" || signupID == "" {
		return nil, errors.New("wallet: test PCP needs an orb_id and a signup_id")
	}
	operator, err := randomHex(rand, 20)
	if err != nil {
		return nil, err
	}
	qrCode, err := randomHex(rand, 16)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		"signup_id":        signupID,
		"orb_id":           orbID,
		"operator_id":      "0x" + operator,
		"signup_reason":    "NORMAL",
		"timestamp":        strconv.FormatInt(now.Unix(), 10),
		"software_version": "worldid-test-pcp",
		"orb_country":      "XX",
		"qr_code":          qrCode,
	}
	p := &TestPCP{Fields: map[string]string{}}
	hashes := map[string]string{"version": "2.3"}
	for name, value := range values {
		salt, err := randomHex(rand, 16)
		if err != nil {
			return nil, err
		}
		hashes[name] = sha256Hex([]byte(value + salt))
		if name != "qr_code" {
			p.Fields[name], p.Fields[name+"_salt"] = value, salt
		}
	}
	for i := range 3 {
		share, err := irisShareJSON(rand)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("iris_code_shares_%d", i)
		p.Fields[name] = share
		hashes[name+".json"] = sha256Hex([]byte(share))
	}
	for _, k := range pcpFileKeys {
		h, err := randomHex(rand, sha256.Size)
		if err != nil {
			return nil, err
		}
		hashes[k] = h
	}
	// encoding/json writes map keys sorted byte-wise, compactly.
	if p.HashesJSON, err = json.Marshal(hashes); err != nil {
		return nil, err
	}
	if p.HashesSign, err = signDER(orbKey, p.HashesJSON); err != nil {
		return nil, err
	}
	return p, nil
}

// irisShareJSON is a share file in the Orb's shape with random codes.
func irisShareJSON(rand io.Reader) (string, error) {
	var codes [4][32]byte
	for i := range codes {
		if _, err := io.ReadFull(rand, codes[i][:]); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(struct {
		SharesVersion string  `json:"IRIS_shares_version"`
		IrisVersion   *string `json:"IRIS_version"`
		LeftIris      string  `json:"left_iris_code_shares"`
		LeftMask      string  `json:"left_mask_code_shares"`
		RightIris     string  `json:"right_iris_code_shares"`
		RightMask     string  `json:"right_mask_code_shares"`
	}{"1.3", nil, b64(codes[0][:]), b64(codes[1][:]), b64(codes[2][:]), b64(codes[3][:])})
	return string(b), err
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func randomHex(rand io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rand, b); err != nil {
		return "", fmt.Errorf("wallet: reading randomness: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// signDER signs SHA-256(msg) — the digest itself, not hashed again — and
// encodes (r, s) as a DER SEQUENCE of two INTEGERs (doc/crypto.md §h).
func signDER(priv *ecdsa.PrivateKey, msg []byte) ([]byte, error) {
	digest := sha256.Sum256(msg)
	rs, err := priv.Sign(digest[:], nil)
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(struct{ R, S *big.Int }{
		new(big.Int).SetBytes(rs[:secpfr.Bytes]),
		new(big.Int).SetBytes(rs[secpfr.Bytes:]),
	})
}

// GenerateOrbKey draws a secp256k1 test Orb key from rand.
func GenerateOrbKey(rand io.Reader) (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(rand)
}

// ParseOrbKey reads a test Orb key written by FormatOrbKey: the private
// scalar as 64 hex digits, in [1, n−1].
func ParseOrbKey(s string) (*ecdsa.PrivateKey, error) {
	d, err := hex.DecodeString(s)
	if err != nil || len(d) != secpfr.Bytes {
		return nil, errors.New("wallet: orb key must be 64 hex digits")
	}
	k := new(big.Int).SetBytes(d)
	if k.Sign() == 0 || k.Cmp(secpfr.Modulus()) >= 0 {
		return nil, errors.New("wallet: orb key scalar not in [1, n−1]")
	}
	var priv ecdsa.PrivateKey
	priv.PublicKey.A.ScalarMultiplicationBase(k)
	pub := priv.PublicKey.A.RawBytes()
	if _, err := priv.SetBytes(append(pub[:], d...)); err != nil {
		return nil, err
	}
	return &priv, nil
}

// FormatOrbKey writes the private scalar of a test Orb key as 64 hex digits.
func FormatOrbKey(priv *ecdsa.PrivateKey) string {
	b := priv.Bytes()
	return hex.EncodeToString(b[len(b)-secpfr.Bytes:])
}

// OrbKeyPEM is the public key as the operator registers it (worldid orbkey
// add): a PEM "PUBLIC KEY" SubjectPublicKeyInfo, id-ecPublicKey on
// secp256k1 (OID 1.3.132.0.10), uncompressed point.
func OrbKeyPEM(pub *ecdsa.PublicKey) []byte {
	xy := pub.A.RawBytes()
	der, err := asn1.Marshal(struct {
		Algorithm struct{ Algorithm, Curve asn1.ObjectIdentifier }
		PublicKey asn1.BitString
	}{
		Algorithm: struct{ Algorithm, Curve asn1.ObjectIdentifier }{
			asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}, asn1.ObjectIdentifier{1, 3, 132, 0, 10},
		},
		PublicKey: asn1.BitString{Bytes: append([]byte{4}, xy[:]...), BitLength: 8 * (1 + len(xy))},
	})
	if err != nil {
		panic("wallet: encoding a SubjectPublicKeyInfo: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
