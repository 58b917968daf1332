package rpsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/secp256k1"
	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"
	"github.com/consensys/gnark-crypto/ecc/secp256k1/fr"
	"golang.org/x/crypto/sha3"
)

// Message layout constants of IDKit's signing.go (rpSignatureMsgVersion,
// ethereumMessagePrefix, defaultTTLSeconds).
const (
	messageVersion = 0x01
	eip191Prefix   = "\x19Ethereum Signed Message:\n"
	defaultTTL     = 300 * time.Second
	// v = 27 + recovery id: the legacy Ethereum encoding IDKit writes
	// (decred SignCompact, uncompressed key).
	vOffset = 27
)

// PrivateKey is an RP's secp256k1 signing key.
type PrivateKey struct {
	d   *big.Int
	pub secp256k1.G1Affine
}

// Context is a signed RP context: the fields of a 4.0 proof_request that
// the signature covers, and the signature.
type Context struct {
	Nonce     [32]byte
	CreatedAt uint64 // Unix seconds
	ExpiresAt uint64 // Unix seconds
	Signature [65]byte
}

// NonceHex and SignatureHex are the 0x-hex forms IDKit puts in rp_context.
func (c Context) NonceHex() string     { return "0x" + hex.EncodeToString(c.Nonce[:]) }
func (c Context) SignatureHex() string { return "0x" + hex.EncodeToString(c.Signature[:]) }

// ParsePrivateKey reads a key as 64 hex digits, with or without 0x; zero
// and values not below the group order are refused.
func ParsePrivateKey(s string) (*PrivateKey, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, errors.New("rpsig: a signing key is 32 bytes in hex")
	}
	d := new(big.Int).SetBytes(b)
	if d.Sign() == 0 || d.Cmp(fr.Modulus()) >= 0 {
		return nil, errors.New("rpsig: signing key out of range")
	}
	k := &PrivateKey{d: d}
	k.pub.ScalarMultiplicationBase(d)
	return k, nil
}

// Address is the key's Ethereum address: the last 20 bytes of keccak256
// of the uncompressed public key without its 0x04 prefix.
func (k *PrivateKey) Address() [20]byte { return address(&k.pub) }

func address(p *secp256k1.G1Affine) [20]byte {
	raw := p.RawBytes() // X ‖ Y, 32 bytes each, big-endian
	var a [20]byte
	copy(a[:], keccak256(raw[:])[12:])
	return a
}

// HashToField is IDKit's hash_to_field: keccak256(b) shifted right by 8
// bits, which fits every BN254 field element.
func HashToField(b []byte) [32]byte {
	var f [32]byte
	copy(f[1:], keccak256(b)[:31])
	return f
}

// Message is the byte string an RP signs.
func Message(nonce [32]byte, createdAt, expiresAt uint64, action *string) []byte {
	m := make([]byte, 0, 81)
	m = append(m, messageVersion)
	m = append(m, nonce[:]...)
	m = binary.BigEndian.AppendUint64(m, createdAt)
	m = binary.BigEndian.AppendUint64(m, expiresAt)
	if action != nil {
		h := HashToField([]byte(*action))
		m = append(m, h[:]...)
	}
	return m
}

// Digest is the EIP-191 personal-message hash of m.
func Digest(m []byte) [32]byte {
	var d [32]byte
	copy(d[:], keccak256([]byte(eip191Prefix+strconv.Itoa(len(m))), m))
	return d
}

// SignRequest draws 32 random bytes from rand for the nonce and signs a
// context created at now and valid for ttl (0: 300 s), optionally bound to
// an action.
func (k *PrivateKey) SignRequest(rand io.Reader, now time.Time, ttl time.Duration, action *string) (Context, error) {
	var random [32]byte
	if _, err := io.ReadFull(rand, random[:]); err != nil {
		return Context{}, fmt.Errorf("rpsig: drawing the nonce: %w", err)
	}
	if ttl == 0 {
		ttl = defaultTTL
	}
	if ttl < time.Second || now.Unix() < 0 {
		return Context{}, errors.New("rpsig: lifetime under a second or time before 1970")
	}
	c := Context{Nonce: HashToField(random[:]), CreatedAt: uint64(now.Unix())}
	c.ExpiresAt = c.CreatedAt + uint64(ttl/time.Second)
	c.Signature = k.Sign(Digest(Message(c.Nonce, c.CreatedAt, c.ExpiresAt, action)))
	return c, nil
}

// Sign signs a 32-byte digest: r ‖ s ‖ v with RFC 6979's k and low S.
func (k *PrivateKey) Sign(digest [32]byte) [65]byte {
	n := fr.Modulus()
	z := new(big.Int).SetBytes(digest[:]) // 256-bit digest, 256-bit order: bits2int is the identity
	for nonces := newRFC6979(k.d, z); ; {
		kk := nonces.next()
		var R secp256k1.G1Affine
		R.ScalarMultiplicationBase(kk)
		rx := R.X.BigInt(new(big.Int))
		recid := byte(R.Y.BigInt(new(big.Int)).Bit(0))
		if rx.Cmp(n) >= 0 {
			recid |= 2
		}
		r := new(big.Int).Mod(rx, n)
		s := new(big.Int).Mul(r, k.d)
		s.Add(s, z).Mul(s, new(big.Int).ModInverse(kk, n)).Mod(s, n)
		if r.Sign() == 0 || s.Sign() == 0 {
			continue
		}
		if s.Cmp(new(big.Int).Rsh(n, 1)) > 0 {
			s.Sub(n, s)
			recid ^= 1
		}
		var sig [65]byte
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:64])
		sig[64] = vOffset + recid
		return sig
	}
}

// RecoverAddress returns the address whose key made sig over digest.
func RecoverAddress(digest [32]byte, sig [65]byte) ([20]byte, error) {
	if sig[64] < vOffset || sig[64] > vOffset+3 {
		return [20]byte{}, errors.New("rpsig: v is not 27..30")
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	var pk ecdsa.PublicKey
	if r.Sign() == 0 || r.Cmp(fr.Modulus()) >= 0 {
		return [20]byte{}, errors.New("rpsig: r out of range")
	}
	if err := pk.RecoverFrom(digest[:], uint(sig[64]-vOffset), r, s); err != nil {
		return [20]byte{}, fmt.Errorf("rpsig: %w", err)
	}
	return address(&pk.A), nil
}

// rfc6979 draws the deterministic nonces of RFC 6979 §3.2 with
// HMAC-SHA-256 for secp256k1 (qlen = hlen = 256).
type rfc6979 struct{ k, v []byte }

func newRFC6979(d, z *big.Int) *rfc6979 {
	var x, h [32]byte
	d.FillBytes(x[:])
	new(big.Int).Mod(z, fr.Modulus()).FillBytes(h[:]) // bits2octets
	g := &rfc6979{k: make([]byte, 32), v: make([]byte, 32)}
	for i := range g.v {
		g.v[i] = 1
	}
	for _, sep := range []byte{0, 1} {
		g.k = g.mac(g.v, []byte{sep}, x[:], h[:])
		g.v = g.mac(g.v)
	}
	return g
}

// next returns the next candidate in [1, n).
func (g *rfc6979) next() *big.Int {
	for {
		g.v = g.mac(g.v)
		k := new(big.Int).SetBytes(g.v)
		g.k = g.mac(g.v, []byte{0})
		g.v = g.mac(g.v)
		if k.Sign() > 0 && k.Cmp(fr.Modulus()) < 0 {
			return k
		}
	}
}

func (g *rfc6979) mac(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, g.k)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func keccak256(parts ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}
