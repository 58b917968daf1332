package babyjub

import (
	"errors"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/poseidon"
)

const (
	// SeedSize is the length of a private key seed (doc/crypto.md §e).
	SeedSize = 32
	// SignatureSize is the length of a signature: compressed(R) ‖ LE32(s).
	SignatureSize = 64
)

// challengeTag is the Poseidon2 hash-mode domain separator of the EdDSA
// challenge (doc/crypto.md §b table, §e signing step 2).
const challengeTag = "EdDSA Signature"

var (
	errSignatureLength  = errors.New("signature is not 64 bytes")      // doc/crypto.md §e step 3
	errPublicIdentity   = errors.New("public key is the identity")     // doc/crypto.md §e step 2
	errPublicNotOnCurve = errors.New("public key is not on the curve") // doc/crypto.md §e step 1
)

// PrivateKey is an EdDSA-Poseidon2 private key: the 32-byte seed and the
// values expanded from it.
type PrivateKey struct {
	seed        [SeedSize]byte
	sk          scalar // secret scalar
	nonceSecret scalar
	pub         PublicKey
}

// PublicKey is a public key: a point of the prime-order subgroup other than
// the identity, with the table that speeds up verification. The zero value
// is not a valid key and never verifies.
type PublicKey struct {
	a     affinePoint
	table splitTable
}

// Signature is a parsed signature: R in the prime-order subgroup and s < L.
// The zero value never verifies.
type Signature struct {
	r affinePoint
	s scalar
}

// NewPrivateKey expands a 32-byte seed (doc/crypto.md §e "Keys and signing").
func NewPrivateKey(seed []byte) (*PrivateKey, error) {
	if len(seed) != SeedSize {
		return nil, fmt.Errorf("babyjub: seed is %d bytes, want %d", len(seed), SeedSize)
	}
	k := new(PrivateKey)
	copy(k.seed[:], seed)
	// h = BLAKE3-XOF(seed)[0..64]; the next bytes of the same output blind
	// the inversion that makes A affine.
	var h [64 + blindSize]byte
	blake3XOF(h[:], k.seed[:])
	// Secret scalar: clamp h[0..32], then always reduce mod L.
	h[0] &= 0xF8
	h[31] &= 0x7F
	h[31] |= 0x40
	k.sk = scalarFromWideBytes(h[:32])
	k.nonceSecret = scalarFromWideBytes(h[32:64])
	a := scalarBaseMult(&k.sk)
	k.pub.a = a.affineBlinded((*[blindSize]byte)(h[64:]))
	a.fromAffine(&k.pub.a) // the table is built from public data only
	k.pub.table.init(&a)
	clear(h[:])
	return k, nil
}

// GenerateKey returns a private key whose seed is read from rand.
func GenerateKey(rand io.Reader) (*PrivateKey, error) {
	var seed [SeedSize]byte
	if _, err := io.ReadFull(rand, seed[:]); err != nil {
		return nil, fmt.Errorf("babyjub: reading seed: %w", err)
	}
	return NewPrivateKey(seed[:])
}

// Seed returns a copy of the 32-byte seed.
func (k *PrivateKey) Seed() []byte {
	return append([]byte(nil), k.seed[:]...)
}

// Public returns the public key A = sk·G.
func (k *PrivateKey) Public() *PublicKey {
	p := k.pub
	return &p
}

// ParsePublicKey decodes a 32-byte compressed public key with the strict
// rules of doc/crypto.md §d (canonical y, canonical sign, on the curve, in the
// subgroup) and rejects the identity (§e step 2).
func ParsePublicKey(b []byte) (*PublicKey, error) {
	a, err := decompress(b)
	if err != nil {
		return nil, fmt.Errorf("babyjub: invalid public key: %w", err)
	}
	return newPublicKey(a)
}

// ParsePublicKeyCoordinates parses the JSON form {"pk":["<x>","<y>"]}:
// canonical decimals < p (doc/crypto.md §a), on the curve, in the subgroup and
// not the identity (§e step 1-2).
func ParsePublicKeyCoordinates(x, y string) (*PublicKey, error) {
	var a affinePoint
	var err error
	if a.x, err = field.ParseDecimal(x); err != nil {
		return nil, fmt.Errorf("babyjub: invalid public key x: %w", err)
	}
	if a.y, err = field.ParseDecimal(y); err != nil {
		return nil, fmt.Errorf("babyjub: invalid public key y: %w", err)
	}
	if !a.isOnCurve() {
		return nil, fmt.Errorf("babyjub: invalid public key: %w", errPublicNotOnCurve)
	}
	return newPublicKey(a)
}

// newPublicKey finishes parsing an on-curve point: not the identity
// (§e step 2) and in the subgroup (§d rule 4, §e step 1).
func newPublicKey(a affinePoint) (*PublicKey, error) {
	if a.isIdentity() {
		return nil, fmt.Errorf("babyjub: invalid public key: %w", errPublicIdentity)
	}
	pub := &PublicKey{a: a}
	var p point
	p.fromAffine(&a)
	pub.table.init(&p)
	if !inSubgroup(&pub.table) {
		return nil, fmt.Errorf("babyjub: invalid public key: %w", errPointNotInGroup)
	}
	return pub, nil
}

// Bytes returns the 32-byte compressed encoding (doc/crypto.md §d).
func (p *PublicKey) Bytes() []byte {
	b := p.a.compress()
	return b[:]
}

// Coordinates returns x and y as canonical decimals (doc/crypto.md §a), the
// public key JSON form of world-id-primitives v0.3.0.
func (p *PublicKey) Coordinates() (x, y string) {
	return field.FormatDecimal(&p.a.x), field.FormatDecimal(&p.a.y)
}

// Equal reports whether p and q are the same point.
func (p *PublicKey) Equal(q *PublicKey) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.a.equal(&q.a)
}

// ParseSignature decodes compressed(R) ‖ LE32(s): R under the strict
// decoding of doc/crypto.md §d including the subgroup check (§e step 4), and
// s < L without reduction (§e step 5).
func ParseSignature(b []byte) (*Signature, error) {
	sig := new(Signature)
	if part, err := sig.decode(b); err != nil {
		return nil, fmt.Errorf("babyjub: invalid signature: %s%w", part, err)
	}
	var table splitTable
	var r point
	r.fromAffine(&sig.r)
	table.init(&r)
	if !inSubgroup(&table) {
		return nil, fmt.Errorf("babyjub: invalid signature: R: %w", errPointNotInGroup)
	}
	return sig, nil
}

// decode applies §e steps 3, 4 up to the subgroup check (§d rules 1–3) and
// 5. The subgroup check on R is left to the caller: ParseSignature does it
// explicitly, Verify gets it from the exact verification equation. On
// failure, part names the failing half ("R: ", "s: ") for error messages;
// nothing is allocated.
func (sig *Signature) decode(b []byte) (part string, err error) {
	if len(b) != SignatureSize {
		return "", errSignatureLength
	}
	r, err := decompress(b[:pointSize])
	if err != nil {
		return "R: ", err
	}
	if err := sig.s.setCanonicalBytes(b[pointSize:]); err != nil {
		return "s: ", err
	}
	sig.r = r
	return "", nil
}

// Sign signs the field element msg (doc/crypto.md §e "Signing"). Signing is
// deterministic; the scalar multiplication by the nonce and the scalar
// arithmetic run in constant time. Sign panics if msg's internal
// representation is not reduced, which only hand-built limbs can cause.
func Sign(priv *PrivateKey, msg fr.Element) []byte {
	if !isReduced(&msg) {
		panic("babyjub: message is not a reduced field element")
	}
	// Step 1: r = LE(BLAKE3-XOF(LE32(ns) ‖ LE32(M))[0..64]) mod L, R = r·G.
	// The next output bytes blind the inversion that makes R affine.
	var in [64]byte
	var h [64 + blindSize]byte
	ns := priv.nonceSecret.bytes()
	copy(in[:32], ns[:])
	fr.LittleEndian.PutElement((*[32]byte)(in[32:]), msg)
	blake3XOF(h[:], in[:])
	r := scalarFromWideBytes(h[:64])
	rPoint := scalarBaseMult(&r)
	R := rPoint.affineBlinded((*[blindSize]byte)(h[64:]))
	// Steps 2-3: c = H(R, A, M) mod L, s = r + c·sk mod L.
	c := challenge(&R, &priv.pub.a, &msg)
	s := scalarMulAdd(&r, &c, &priv.sk)

	sig := make([]byte, SignatureSize)
	rBytes := R.compress()
	sBytes := s.bytes()
	copy(sig, rBytes[:])
	copy(sig[pointSize:], sBytes[:])
	clear(in[:])
	clear(h[:])
	return sig
}

// Verify reports whether sig is a valid signature of msg by pub under the
// doc/crypto.md §e verification checklist (see the package documentation). It
// never panics and does not allocate.
func Verify(pub *PublicKey, msg fr.Element, sig []byte) bool {
	var s Signature
	if _, err := s.decode(sig); err != nil {
		return false
	}
	return verify(pub, &msg, &s)
}

// VerifySignature is Verify for a signature parsed by ParseSignature. It
// does not allocate.
func VerifySignature(pub *PublicKey, msg fr.Element, sig *Signature) bool {
	if sig == nil {
		return false
	}
	return verify(pub, &msg, sig)
}

// verify runs checklist steps 1-2 and 6-8 on a signature that passed
// steps 3-5 (R on the curve, s < L).
func verify(pub *PublicKey, msg *fr.Element, sig *Signature) bool {
	if pub == nil {
		return false
	}
	// Steps 1-2 were enforced by the public key constructors; these checks
	// make zero values fail (x = y = 0 is not on the curve).
	if !pub.a.isOnCurve() || pub.a.isIdentity() {
		return false
	}
	// Steps 3-5 likewise for a zero Signature.
	if !sig.r.isOnCurve() || !sig.s.lessThanL() {
		return false
	}
	// Step 6: M < p.
	if !isReduced(msg) {
		return false
	}
	// Step 7.
	c := challenge(&sig.r, &pub.a, msg)
	// Step 8, as the exact equation s·G − c·A = R (package doc: equivalent
	// to 8·(s·G − R − c·A) = O with R in the subgroup).
	negC := scalarNeg(&c)
	sum := vartimeMultiExp((*[4]uint64)(&negC), &pub.table, (*[4]uint64)(&sig.s))
	return sum.equalAffine(&sig.r)
}

// challenge returns c = Poseidon2("EdDSA Signature", R.x, R.y, A.x, A.y, M)
// mod L (doc/crypto.md §e signing step 2), reducing the integer value.
func challenge(R, A *affinePoint, msg *fr.Element) scalar {
	cfe := poseidon.Hash(challengeTag, R.x, R.y, A.x, A.y, *msg)
	limbs := cfe.Bits()
	return reduceWide(&limbs, &[4]uint64{})
}

// isReduced reports whether the internal representation of e is < p, as
// every fr.Element produced by gnark-crypto's API is (doc/crypto.md §e step 6).
func isReduced(e *fr.Element) bool {
	for i := 3; i >= 0; i-- {
		if e[i] != modulusP[i] {
			return e[i] < modulusP[i]
		}
	}
	return false
}

// ConstantTime reports whether signing and key derivation run in constant
// time in this build: only on amd64 and arm64 without the purego tag,
// where gnark-crypto's field arithmetic is its branch-free assembly. A
// program that signs with a long-lived key should refuse to run when it
// reports false.
func ConstantTime() bool { return constantTimeBuild }
