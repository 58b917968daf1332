package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// JWS parameters (RFC 7515, RFC 7518 §3.3, §3.4). ID tokens are RS256,
// access tokens ES256. verifyJWT accepts only the exact headers
// encodeHeader writes for the expected token type, so "none", HS* and
// every other algorithm are rejected, and the type pins the algorithm.
const (
	algRS256       = "RS256"
	algES256       = "ES256"
	typIDToken     = "JWT"    // OIDC Core §2 ID tokens
	typAccessToken = "at+jwt" // RFC 9068 §2.1 access tokens
	// maxJWTBytes bounds a token before any parsing; ours are < 2 KiB.
	maxJWTBytes = 8 << 10
)

// encodeHeader is the base64url protected header of every token a key
// signs with the given typ; it is computed once per key.
func encodeHeader(alg, kid, typ string) string {
	b, _ := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{alg, kid, typ}) // three strings always encode
	return base64.RawURLEncoding.EncodeToString(b)
}

// es256Size is the length of an ES256 signature: R ‖ S, 32 bytes each
// (RFC 7518 §3.4).
const es256Size = 64

// signJWT returns the compact serialization of claims signed by k.
func signJWT(k *signingKey, typ string, claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oidc: encode claims: %w", err)
	}
	enc := base64.RawURLEncoding
	header := k.headers[typ]
	buf := make([]byte, 0, len(header)+1+enc.EncodedLen(len(payload))+1+enc.EncodedLen(k.priv.Size()))
	buf = append(buf, header...)
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, payload)
	digest := sha256.Sum256(buf)
	sig, err := sign(k, typ, digest[:])
	if err != nil {
		return "", fmt.Errorf("oidc: sign: %w", err)
	}
	buf = append(buf, '.')
	buf = enc.AppendEncode(buf, sig)
	return string(buf), nil
}

// sign makes the signature of a token type: ES256 with the derived key
// for access tokens, RS256 for ID tokens.
func sign(k *signingKey, typ string, digest []byte) ([]byte, error) {
	if typ != typAccessToken {
		return rsa.SignPKCS1v15(nil, k.priv, crypto.SHA256, digest)
	}
	r, s, err := ecdsa.Sign(rand.Reader, k.ec, digest)
	if err != nil {
		return nil, err
	}
	s = lowS(s)
	sig := make([]byte, es256Size)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig, nil
}

// verifySignature checks a signature of a token type.
func verifySignature(k *signingKey, typ string, digest, sig []byte) error {
	if typ != typAccessToken {
		pub := &k.priv.PublicKey
		if len(sig) != pub.Size() {
			return errors.New("jwt: signature length differs from the key size")
		}
		if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest, sig) != nil {
			return errors.New("jwt: signature does not verify")
		}
		return nil
	}
	if len(sig) != es256Size {
		return errors.New("jwt: an ES256 signature is 64 bytes")
	}
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if s.Cmp(halfOrderP256) > 0 {
		return errors.New("jwt: an ES256 signature must have a low S (S ≤ n/2)")
	}
	if !ecdsa.Verify(&k.ec.PublicKey, digest, r, s) {
		return errors.New("jwt: signature does not verify")
	}
	return nil
}

// halfOrderP256 is ⌊n/2⌋ for the order n of P-256 (SEC 2 §2.4.2). (r,
// n−s) verifies whenever (r, s) does; accepting only S ≤ n/2 makes every
// access token's signature unique, so a copy with the other S is not a
// second valid token.
var halfOrderP256 = new(big.Int).Rsh(elliptic.P256().Params().N, 1)

// lowS is s or n−s, whichever is at most n/2.
func lowS(s *big.Int) *big.Int {
	if s.Cmp(halfOrderP256) > 0 {
		return new(big.Int).Sub(elliptic.P256().Params().N, s)
	}
	return s
}

// verifyJWT checks token's structure and signature (RS256 or ES256, as
// typ says) against the published keys and returns the payload bytes. Claims are checked by the
// caller. Every check runs before the bytes it guards are interpreted:
//  1. length ≤ maxJWTBytes, then exactly two dots, before splitting;
//  2. the header segment is, byte for byte, the base64url header a
//     published key writes for typ (encodeHeader): it is looked up, never
//     decoded or parsed. So alg is the one of typ (RS256 for ID tokens,
//     ES256 for access tokens), typ the expected one (RFC 8725 §3.1,
//     §3.11), the kid names the key, and no other header parameter —
//     crit, jku, jwk, x5u, b64 (RFC 7515 §4.1) — nor a second copy of one,
//     other spacing, member order or escaping can reach a verifier;
//  3. the other segments are canonical unpadded base64url (RFC 7515 §2);
//  4. the signature has the exact length (the modulus size for RS256, 64
//     bytes for ES256), an ES256 S is low (S ≤ n/2), and it verifies.
func verifyJWT(token, typ string, byHeader map[string]*signingKey) ([]byte, error) {
	if len(token) > maxJWTBytes {
		return nil, errors.New("jwt: token too long")
	}
	if strings.Count(token, ".") != 2 {
		return nil, errors.New("jwt: want exactly three dot-separated segments")
	}
	rawHeader, rest, _ := strings.Cut(token, ".")
	rawPayload, rawSig, _ := strings.Cut(rest, ".")
	k, ok := byHeader[rawHeader]
	if !ok || k.headers[typ] != rawHeader {
		return nil, fmt.Errorf("jwt: header is not one a published key writes for typ %q", typ)
	}
	sig, err := decodeSegment(rawSig)
	if err != nil {
		return nil, fmt.Errorf("jwt: signature: %w", err)
	}
	digest := sha256.Sum256([]byte(token[:len(rawHeader)+1+len(rawPayload)]))
	if err := verifySignature(k, typ, digest[:], sig); err != nil {
		return nil, err
	}
	payload, err := decodeSegment(rawPayload)
	if err != nil {
		return nil, fmt.Errorf("jwt: payload: %w", err)
	}
	return payload, nil
}

// decodeSegment decodes canonical unpadded base64url: only the 64 alphabet
// characters (the decoder would skip CR and LF), no padding, zero
// trailing bits, not empty.
func decodeSegment(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty segment")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return nil, fmt.Errorf("byte %q at offset %d is not base64url", c, i)
		}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("non-canonical base64url: %w", err)
	}
	return b, nil
}
