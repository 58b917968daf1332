package bridge

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// AES-256-GCM with the standard 12-byte nonce and 16-byte tag, as IDKit's
// crypto.rs (generate_key: 32-byte key, 12-byte nonce) and idkit-js's
// bridge.ts (SubtleCrypto AES-GCM, 256-bit key) use it.
const (
	keySize = 32
	ivSize  = 12
	tagSize = 16
)

// Key is a requester's AES-256-GCM key. It never reaches the relay: it
// travels to the wallet inside the connect URL only.
type Key [keySize]byte

// ErrOpen reports an envelope that is not base64 of the right sizes or
// does not authenticate under the key.
var ErrOpen = errors.New("bridge: envelope does not decrypt")

// b64 is standard base64 with padding, as IDKit (base64 STANDARD) and
// idkit-js (btoa) write it; Strict rejects non-zero trailing bits, so each
// byte string has one encoding.
var b64 = base64.StdEncoding.Strict()

// NewKey draws a key from rand.
func NewKey(rand io.Reader) (Key, error) {
	var k Key
	_, err := io.ReadFull(rand, k[:])
	return k, err
}

// ParseKey decodes a key from its base64 form (the connect URL's k).
func ParseKey(s string) (Key, error) {
	var k Key
	b, err := b64.DecodeString(s)
	if err != nil || len(b) != keySize {
		return k, errors.New("bridge: key is not 32 bytes in standard base64")
	}
	copy(k[:], b)
	return k, nil
}

// Base64 is the key's standard base64 form.
func (k Key) Base64() string { return b64.EncodeToString(k[:]) }

// Seal encrypts plaintext under a fresh IV drawn from rand.
func (k Key) Seal(rand io.Reader, plaintext []byte) (Envelope, error) {
	var iv [ivSize]byte
	if _, err := io.ReadFull(rand, iv[:]); err != nil {
		return Envelope{}, fmt.Errorf("bridge: drawing an IV: %w", err)
	}
	ct := k.aead().Seal(nil, iv[:], plaintext, nil)
	return Envelope{IV: b64.EncodeToString(iv[:]), Payload: b64.EncodeToString(ct)}, nil
}

// Open decrypts an envelope sealed under k.
func (k Key) Open(e Envelope) ([]byte, error) {
	iv, err := b64.DecodeString(e.IV)
	if err != nil || len(iv) != ivSize {
		return nil, ErrOpen
	}
	ct, err := b64.DecodeString(e.Payload)
	if err != nil || len(ct) < tagSize {
		return nil, ErrOpen
	}
	pt, err := k.aead().Open(nil, iv, ct, nil)
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

func (k Key) aead() cipher.AEAD {
	block, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err) // unreachable: the key is 32 bytes
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err) // unreachable: AES has a 16-byte block
	}
	return aead
}
