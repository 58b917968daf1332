package record

import (
	"slices"
	"time"
)

// Claim is one World ID 3.0 proof presented for an app and action, as
// parsed at an HTTP boundary (verify request item, sign-in submission).
// The identity registry checks it: root known and fresh for the
// identifier's tree in the environment, then Groth16 with the public
// inputs [MerkleRoot, NullifierHash, SignalHash, ExternalNullifier(AppID, Action)].
type Claim struct {
	Identifier  string // credential type: orb, device, document, secure_document, face, selfie
	Environment string // production or staging
	AppID       string // the app_… id the external nullifier derives from (never the rp_ id)
	Action      string
	// Big-endian uint256 values as received; the parser has already
	// rejected values ≥ the BN254 scalar field modulus.
	MerkleRoot, NullifierHash, SignalHash [32]byte
	Proof                                 string        // any proof encoding of doc/crypto.md §g
	MaxAge                                time.Duration // root max age; 0 means the default (7 days)
}

// Proof check outcome codes (the per-result `code` of the verify interface).
const (
	CodeInvalidFormat     = "invalid_format"      // the proof string cannot be decoded
	CodeInvalidMerkleRoot = "invalid_merkle_root" // root unknown for the identifier and environment
	CodeRootTooOld        = "root_too_old"        // root known but older than max age
	CodeInvalidProof      = "invalid_proof"       // decoded, but points invalid or pairing check failed
)

// ProofError is why a Claim did not verify.
type ProofError struct {
	Code   string // one of the Code* constants
	Detail string // human-readable, safe to return to the caller
}

func (e *ProofError) Error() string { return e.Code + ": " + e.Detail }

// identifiers are the credential types World ID 3.0 proofs are made for,
// each with its own identity trees.
var identifiers = [...]string{"orb", "device", "document", "secure_document", "face", "selfie"}

// Identifiers returns the credential types, in a fresh slice.
func Identifiers() []string { return append([]string(nil), identifiers[:]...) }

// ValidIdentifier reports whether s is a credential type.
func ValidIdentifier(s string) bool { return slices.Contains(identifiers[:], s) }

// CredentialType is the credential type an identifier names: "selfie" is
// IDKit 4's name for the face credential (its native transport renames
// "face" to "selfie"), and World's portal keeps one tree for both, so both
// names are the type "face". Every other identifier is its own type.
func CredentialType(identifier string) string {
	if identifier == "selfie" {
		return "face"
	}
	return identifier
}

// Environments are the deployment environments, each with its own trees.
func Environments() []string { return []string{"production", "staging"} }

// ValidEnvironment reports whether s is production or staging.
func ValidEnvironment(s string) bool { return s == "production" || s == "staging" }
