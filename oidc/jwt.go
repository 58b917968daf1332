package oidc

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
)

// JWS parameters (RFC 7515, RFC 7518 §3.3, §3.4). ID tokens are RS256,
// access tokens ES256; the header allowlist below rejects "none", HS* and
// every other algorithm, and a token's header must be byte-identical to
// the one its key signs its type with, which pins the algorithm too.
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
	if !ecdsa.Verify(&k.ec.PublicKey, digest, r, s) {
		return errors.New("jwt: signature does not verify")
	}
	return nil
}

// jwsHeader is the protected header after the allowlist.
type jwsHeader struct {
	alg, kid, typ string
}

// verifyJWT checks token's structure and RS256 signature against the
// published keys and returns the payload bytes. Claims are checked by the
// caller. Every check runs before the bytes it guards are interpreted:
//  1. length ≤ maxJWTBytes, then exactly two dots, before splitting;
//  2. each segment is canonical unpadded base64url (RFC 7515 §2);
//  3. the header is a JSON object of the string members alg, kid and typ
//     only, each once: "crit", "jku", "jwk", "x5u", "b64", … are rejected,
//     alg must be RS256 or ES256 and typ the expected one;
//  4. kid names a published key and the header is byte-identical to the
//     one that key signs the type with (so ES256 for access tokens under
//     the EC kid, RS256 for ID tokens under the RSA kid);
//  5. the signature has the exact length (modulus size, or 64 bytes) and
//     verifies.
func verifyJWT(token, typ string, keys map[string]*signingKey) ([]byte, error) {
	if len(token) > maxJWTBytes {
		return nil, errors.New("jwt: token too long")
	}
	if strings.Count(token, ".") != 2 {
		return nil, errors.New("jwt: want exactly three dot-separated segments")
	}
	rawHeader, rest, _ := strings.Cut(token, ".")
	rawPayload, rawSig, _ := strings.Cut(rest, ".")
	headerJSON, err := decodeSegment(rawHeader)
	if err != nil {
		return nil, fmt.Errorf("jwt: header: %w", err)
	}
	h, err := parseHeader(headerJSON)
	if err != nil {
		return nil, err
	}
	if h.alg != algRS256 && h.alg != algES256 {
		return nil, fmt.Errorf("jwt: alg %q is not allowed", h.alg)
	}
	if h.typ != typ {
		return nil, fmt.Errorf("jwt: typ %q, want %q", h.typ, typ)
	}
	k, ok := keys[h.kid]
	if !ok {
		return nil, fmt.Errorf("jwt: unknown kid %q", h.kid)
	}
	if rawHeader != k.headers[typ] {
		return nil, errors.New("jwt: header is not in canonical form")
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

// parseHeader decodes the protected header under the allowlist: one JSON
// object whose members are alg, kid and typ, each a string given once.
func parseHeader(b []byte) (jwsHeader, error) {
	var h jwsHeader
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return h, errors.New("jwt: header is not a JSON object")
	}
	fields := map[string]*string{"alg": &h.alg, "kid": &h.kid, "typ": &h.typ}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return h, fmt.Errorf("jwt: header: %w", err)
		}
		name, _ := tok.(string) // object keys are always strings
		dst, ok := fields[name]
		if !ok {
			return h, fmt.Errorf("jwt: header member %q is not allowed", name)
		}
		if seen[name] {
			return h, fmt.Errorf("jwt: header member %q is repeated", name)
		}
		seen[name] = true
		if tok, err = dec.Token(); err != nil {
			return h, fmt.Errorf("jwt: header: %w", err)
		}
		if *dst, ok = tok.(string); !ok {
			return h, fmt.Errorf("jwt: header member %q is not a string", name)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return h, fmt.Errorf("jwt: header: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return h, errors.New("jwt: data after the header object")
	}
	for name := range fields {
		if !seen[name] {
			return h, fmt.Errorf("jwt: header member %q is missing", name)
		}
	}
	return h, nil
}

// decodeStrict decodes one JSON object into v, rejecting unknown members
// and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}
