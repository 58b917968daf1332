package oidc

import (
	"encoding/base64"
	"errors"
	"io"
	"strings"
)

// Sealed tokens: the browser sign-in keeps no pending request in the store
// or in memory; it asks the provider to seal it (AES-256-GCM under the
// current signing key's sealing key, derive.go) into the URLs it hands out.
// Any replica opens a token while the key that sealed it is published.
const (
	// sealKIDPrefix is how many characters of the kid name the sealing key.
	sealKIDPrefix = 8
	// maxTokenBytes bounds a token before it is decoded: a browser token
	// with a 512-byte state and nonce and a long redirect URI stays well
	// below it.
	maxTokenBytes = 16 << 10
)

var errBadToken = errors.New("oidc: sealed token is malformed or was not issued here")

// Seal encrypts plaintext under the current signing key's sealing key,
// bound to purpose (the additional data, so that a token of one purpose
// cannot be used as another): kid prefix, ".", base64url(nonce ‖
// ciphertext).
func (p *Provider) Seal(purpose string, plaintext []byte) (string, error) {
	k := p.keySet().signer
	nonce, err := p.random(k.seal.NonceSize())
	if err != nil {
		return "", err
	}
	sealed := k.seal.Seal(nonce, nonce, plaintext, []byte(purpose))
	return k.rec.ID[:sealKIDPrefix] + "." + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Open authenticates and decrypts a token sealed for purpose by any
// published key.
func (p *Provider) Open(purpose, token string) ([]byte, error) {
	prefix, body, ok := strings.Cut(token, ".")
	if !ok || len(prefix) != sealKIDPrefix || len(token) > maxTokenBytes {
		return nil, errBadToken
	}
	raw, err := decodeSegment(body)
	if err != nil {
		return nil, errBadToken
	}
	for kid, k := range p.keySet().published {
		if !strings.HasPrefix(kid, prefix) || len(raw) < k.seal.NonceSize() {
			continue
		}
		n := k.seal.NonceSize()
		if plain, err := k.seal.Open(nil, raw[:n], raw[n:], []byte(purpose)); err == nil {
			return plain, nil
		}
	}
	return nil, errBadToken
}

func (p *Provider) random(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(p.rand, b)
	return b, err
}
