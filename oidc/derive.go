package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/sha256"
	"math/big"
)

// Everything derived from a signing key, in one place (doc.go "Keys").
// Each RSA signing key (PKCS #8 DER, stored so that every replica shares
// it) is the input keying material of two HKDF-SHA256 derivations (RFC
// 5869, no salt), told apart by their info strings:
//
//	sealInfo        → 32 bytes: the AES-256-GCM key that seals pending
//	                  sign-in requests (Seal, Open; the browser sign-in's
//	                  tokens)
//	accessTokenInfo → 48 bytes reduced to a P-256 scalar: the ES256 key
//	                  that signs access tokens, published in the JWKS
//
// Neither derived key is stored; both rotate with the RSA key, are the
// same on every replica, and are gone when the RSA key is deleted (so
// revoking a key also invalidates its pending sign-ins and access tokens).
// Changing an info string changes every derived key: tokens sealed or
// signed under the old one stop verifying.
const (
	sealInfo        = "worldid oidc sign-in request seal v1"
	accessTokenInfo = "worldid oidc access token ES256 key v1"
)

// newSealer derives a signing key's sealing AEAD. The key never leaves
// the process; a retired key still opens tokens while it is published
// (24 h, far beyond the 10-minute request lifetime).
func newSealer(der []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, der, nil, sealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// accessTokenKey derives the P-256 key that signs access tokens from the
// RSA key's PKCS #8 encoding: HKDF-SHA256 to 48 bytes, reduced to
// [1, n−1] (FIPS 186-5 A.2.1, "extra random bits"). It is stored nowhere,
// rotates with the RSA key and is the same on every replica. ES256 costs
// a few tens of microseconds where RS256 costs about a millisecond, so
// /token makes one RSA signature: the ID token's (doc.go "Tokens").
func accessTokenKey(der []byte) (*ecdsa.PrivateKey, error) {
	seed, err := hkdf.Key(sha256.New, der, nil, accessTokenInfo, 48)
	if err != nil {
		return nil, err
	}
	n := elliptic.P256().Params().N
	d := new(big.Int).SetBytes(seed)
	d.Mod(d, new(big.Int).Sub(n, big.NewInt(1)))
	d.Add(d, big.NewInt(1))
	return ecdsa.ParseRawPrivateKey(elliptic.P256(), d.FillBytes(make([]byte, 32)))
}
