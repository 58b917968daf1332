package oprfproof

import (
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/semaphore"
)

// NPublic is the number of public inputs of the OPRF-nullifier circuit.
const NPublic = 15

// TreeDepth is the depth of the World ID 4.0 registry tree, a public input
// (WorldIDRegistry.getTreeDepth; world-id-protocol
// contracts/script/core/config/production.json "treeDepth": 30).
const TreeDepth = 30

// vkeyJSON is the snarkjs key of the circuit (doc.go has its provenance).
//
//go:embed oprfnullifierproof_vkey.json
var vkeyJSON []byte

// Key returns the circuit's verifying key; the same pointer on every call.
var Key = sync.OnceValues(func() (*semaphore.VerifyingKey, error) {
	return semaphore.ParseGroth16Key(vkeyJSON, NPublic)
})

// Point is a BabyJubJub public key in affine coordinates, as the
// CredentialSchemaIssuerRegistry and OprfKeyRegistry return it.
type Point struct{ X, Y fr.Element }

// Statement is what a 4.0 proof is checked against: the request's values
// and the trust anchors the contract would read from chain.
type Statement struct {
	Nullifier          fr.Element
	IssuerSchemaID     uint64
	IssuerKey          Point
	ExpiresAtMin       uint64
	GenesisIssuedAtMin fr.Element
	Root               fr.Element
	RPID               uint64
	Action             fr.Element
	OPRFKey            Point
	SignalHash, Nonce  fr.Element
	SessionID          fr.Element // zero for a uniqueness proof
}

// Inputs returns the 15 public inputs in the order WorldIDVerifier
// assembles them (doc.go), with the tree depth fixed at TreeDepth.
func (s *Statement) Inputs() []fr.Element {
	in := make([]fr.Element, NPublic)
	in[0] = s.Nullifier
	in[1].SetUint64(s.IssuerSchemaID)
	in[2], in[3] = s.IssuerKey.X, s.IssuerKey.Y
	in[4].SetUint64(s.ExpiresAtMin)
	in[5] = s.GenesisIssuedAtMin
	in[6] = s.Root
	in[7].SetUint64(TreeDepth)
	in[8].SetUint64(s.RPID)
	in[9] = s.Action
	in[10], in[11] = s.OPRFKey.X, s.OPRFKey.Y
	in[12] = s.SignalHash
	in[13] = s.Nonce
	in[14] = s.SessionID
	return in
}

// Proof is a decoded 4.0 proof: the Groth16 points, checked, and the
// Merkle root its fifth word names.
type Proof struct {
	groth16 *semaphore.Proof
	Root    fr.Element
}

// ErrProofFormat: the words do not encode a proof (a word ≥ 2^256 or
// malformed, a root ≥ r). ErrProofPoints: a compressed word is not a valid
// curve point (Verifier.sol reverts with ProofInvalid for both kinds of
// point failure; so does Verify here).
var (
	ErrProofFormat = errors.New("oprfproof: malformed proof")
	ErrProofPoints = errors.New("oprfproof: proof points are invalid")
)

// ParseProof decodes the five words of a 4.0 proof.
func ParseProof(words [5][32]byte) (*Proof, error) {
	var root fr.Element
	if root.SetBytesCanonical(words[4][:]) != nil {
		return nil, fmt.Errorf("%w: the Merkle root is not below the BN254 scalar field modulus", ErrProofFormat)
	}
	g, err := semaphore.DecompressProof([4][32]byte(words[:4]))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProofPoints, err)
	}
	return &Proof{groth16: g, Root: root}, nil
}

// ParseWord reads one uint256 the way World's portal does (JavaScript
// BigInt of a string): decimal digits, or 0x or 0X followed by hex digits
// (BigInt("0X1f") is 31). No sign, no whitespace, no empty digits; at most
// 78 decimal or 64 hex digits after leading zeros, and below 2^256.
func ParseWord(s string) ([32]byte, error) {
	var w [32]byte
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits := strings.TrimLeft(s[2:], "0")
		if len(digits) > 64 || !isHex(s[2:]) || len(s) == 2 {
			return w, fmt.Errorf("%w: %q is not a uint256 in hex", ErrProofFormat, s)
		}
		b, _ := hex.DecodeString(strings.Repeat("0", 64-len(digits)) + digits)
		copy(w[:], b)
		return w, nil
	}
	if s == "" || strings.IndexFunc(s, func(c rune) bool { return c < '0' || c > '9' }) >= 0 {
		return w, fmt.Errorf("%w: %q is not a decimal or 0x-hex uint256", ErrProofFormat, s)
	}
	var acc [33]byte // big-endian, one spare byte to detect overflow
	for i := 0; i < len(s); i++ {
		carry := uint(s[i] - '0')
		for j := len(acc) - 1; j >= 0; j-- {
			v := uint(acc[j])*10 + carry
			acc[j], carry = byte(v), v>>8
		}
		if carry != 0 || acc[0] != 0 {
			return w, fmt.Errorf("%w: %q is 2^256 or more", ErrProofFormat, s)
		}
	}
	copy(w[:], acc[1:])
	return w, nil
}

// ParseFieldElement reads a field element given by an operator (a trust
// anchor coordinate, a 4.0 registry root): ParseWord's spellings, and
// below r.
func ParseFieldElement(s string) (fr.Element, error) {
	var e fr.Element
	w, err := ParseWord(s)
	if err != nil {
		return e, err
	}
	if e.SetBytesCanonical(w[:]) != nil {
		return e, fmt.Errorf("%w: %q is not below the BN254 scalar field modulus", ErrProofFormat, s)
	}
	return e, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Verify reports whether p proves s. s.Root must be p.Root: the contract
// takes the root from the proof's fifth word.
func Verify(p *Proof, s *Statement) bool {
	vk, err := Key()
	if err != nil || p == nil || s.Root != p.Root {
		return false
	}
	return semaphore.VerifyScalars(vk, p.groth16, s.Inputs())
}

// VerifyBatched is Verify checked together with concurrent calls through
// b (semaphore.Batcher), which may be checking 3.0 proofs at the same time.
func VerifyBatched(b *semaphore.Batcher, p *Proof, s *Statement) bool {
	vk, err := Key()
	if err != nil || p == nil || s.Root != p.Root {
		return false
	}
	return b.VerifyScalars(vk, p.groth16, s.Inputs())
}

// SessionCommitment is the session id input of a session proof, read
// from the one form IDKit 4 sends: "session_" and the 64 bytes of
// world-id-primitives' SessionId in hex — the commitment, then the OPRF
// seed, whose first byte is the session seed prefix 0x01 (crates/primitives
// src/session.rs, src/oprf.rs). Both halves must be below r, and the
// commitment must not be zero: zero is the session input of a uniqueness
// proof (WorldIDVerifier.verify), so a "session" of commitment zero would
// accept uniqueness proofs.
func SessionCommitment(sessionID string) (fr.Element, error) {
	var id, seed fr.Element
	rest, ok := strings.CutPrefix(sessionID, "session_")
	if !ok || len(rest) != 128 || !isHex(rest) {
		return id, errors.New("oprfproof: a session id is session_ followed by exactly 128 hex digits")
	}
	b, _ := hex.DecodeString(rest)
	if id.SetBytesCanonical(b[:32]) != nil || seed.SetBytesCanonical(b[32:]) != nil {
		return id, errors.New("oprfproof: a session id half is not below the BN254 scalar field modulus")
	}
	if b[32] != sessionSeedPrefix {
		return id, errors.New("oprfproof: the session id's OPRF seed lacks the session seed prefix 0x01")
	}
	if id.IsZero() {
		return id, errors.New("oprfproof: the session commitment is zero, the session input of a uniqueness proof")
	}
	return id, nil
}

// OPRF input prefixes, the first byte of an action (world-id-protocol
// crates/primitives/src/oprf.rs OprfPrefix @bc22329f; WorldIDVerifierV2
// checks the action's in verify and verifySession).
const (
	uniquenessActionPrefix = 0x00
	sessionSeedPrefix      = 0x01
	sessionActionPrefix    = 0x02
)

// ValidAction reports whether action carries the prefix byte of its proof
// type, as WorldIDVerifierV2 requires before anything else (InvalidAction):
// 0x00 for a uniqueness proof, 0x02 for a session proof's
// session_nullifier[1]. A session action without it could be a uniqueness
// action, which the relying party must have signed.
func ValidAction(action [32]byte, session bool) bool {
	if session {
		return action[0] == sessionActionPrefix
	}
	return action[0] == uniquenessActionPrefix
}
