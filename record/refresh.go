package record

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors of the credential-refresh store operations.
var (
	// ErrSubMismatch: the identity commitment is pinned to another sub
	// (doc/interfaces.md §7.2 SUB_MISMATCH).
	ErrSubMismatch = errors.New("record: sub differs from the one pinned to the identity commitment")
	// ErrPCPReused: the hashes.json already served another identity
	// commitment (doc/design.md §7: one hashes.json never serves two identities).
	ErrPCPReused = errors.New("record: PCP already used by another identity commitment")
)

// Signup is an enrollment record imported by the operator
// (`worldid signup import`, JSON lines {id_commitment, signup_id, verified_at}).
type Signup struct {
	// IDCommitment is the canonical "0x" + 64 lowercase hex form of the
	// identity commitment (doc/crypto.md §a); importers canonicalize first.
	IDCommitment string `json:"id_commitment"`
	// SignupID is the enrollment's signup_id; a PCP refresh must carry
	// the same value (doc/crypto.md §h step 9).
	SignupID string `json:"signup_id"`
	// VerifiedAt is the enrollment time. The credential's
	// genesis_issued_at is not taken from it but from the first issuance
	// (refresh/issue.go), so a re-imported record cannot move it.
	VerifiedAt time.Time `json:"verified_at"`
}

// maxSignupID bounds the signup_id of an imported record.
const maxSignupID = 256

// Validate checks the shape of a signup record before it is stored.
func (s Signup) Validate() error {
	if !IsCanonicalHex(s.IDCommitment) {
		return fmt.Errorf("record: id_commitment %q is not 0x + 64 lowercase hex digits", s.IDCommitment)
	}
	if s.SignupID == "" || len(s.SignupID) > maxSignupID {
		return fmt.Errorf("record: signup_id must have 1 to %d bytes", maxSignupID)
	}
	if s.VerifiedAt.Unix() < 0 {
		return errors.New("record: verified_at must not be before 1970")
	}
	return nil
}

// Refresh is one successful credential refresh. Recording it pins Sub to
// IDCommitment (first refresh) and binds PCPDigest to IDCommitment.
type Refresh struct {
	IDCommitment string `json:"id_commitment"` // canonical 0x + 64 lowercase hex
	Sub          string `json:"sub"`           // canonical 0x + 64 lowercase hex
	// At is the issuance time (whole seconds). For a credential-only
	// refresh it is the ts of claims[0] = S(CLAIMS_HASH_V1, idComm‖sub‖ts)
	// (doc/crypto.md §h), so the claim can be recomputed from this record.
	At time.Time `json:"at"`
	// PCPDigest is the lowercase hex SHA-256 of the uploaded hashes.json,
	// or "" for a credential-only refresh.
	PCPDigest    string `json:"pcp_digest,omitempty"`
	CredentialID uint64 `json:"credential_id"`
	// Credential is the issued credential's v0.3.0 JSON, which a repeat
	// refresh returns unchanged; "" in records written before it was kept.
	Credential string `json:"credential,omitempty"`
	// ProofKey, when set, is remembered as by UseProofOnce, until
	// ProofExpiresAt, in the transaction that records the refresh: the
	// x-zkp-proof is spent only by the success it authorizes. It is not
	// part of the stored refresh.
	ProofKey       string    `json:"-"`
	ProofExpiresAt time.Time `json:"-"`
}

// IsCanonicalHex reports whether s is "0x" followed by exactly 64 lowercase
// hex digits: the form in which field elements are stored and compared.
// It does not check that the value is below the field modulus.
func IsCanonicalHex(s string) bool {
	digits, ok := strings.CutPrefix(s, "0x")
	return ok && len(digits) == 64 && IsLowerHex(digits)
}

// RefreshProof is the JSON object carried, base64-encoded (standard
// alphabet, padded), in the x-zkp-proof header of POST /api/v1/refresh
// (doc/design.md §7; the format is this server's design). Field elements are
// "0x" + 64 hex digits; Proof is any proof encoding of doc/crypto.md §g.
type RefreshProof struct {
	IDCommitment  string `json:"id_commitment"`
	Sub           string `json:"sub"`
	Timestamp     int64  `json:"timestamp"` // unix seconds
	MerkleRoot    string `json:"merkle_root"`
	NullifierHash string `json:"nullifier_hash"`
	Proof         string `json:"proof"`
	// PCPDigest is the lowercase hex SHA-256 of hashes.json for a PCP
	// refresh, absent for a credential-only one. It is the signal's last
	// part, sent in the header so that the proof is verified before the
	// multipart body is read.
	PCPDigest string `json:"pcp_digest,omitempty"`
}

// Refresh proof statement constants: the Semaphore external nullifier is
// ExternalNullifier(RefreshProofAppID, RefreshProofAction) (doc/crypto.md §g).
const (
	RefreshProofAppID  = "app_worldid_refresh"
	RefreshProofAction = "refresh"
)

// RefreshSignal returns the signal that an x-zkp-proof binds, as UTF-8:
//
//	refresh:<sub>:<timestamp>                  credential-only refresh
//	refresh:<sub>:<timestamp>:<pcpDigest>      the request carries hashes.json
//
// sub is the canonical 0x + 64 lowercase hex form, timestamp the decimal
// unix seconds of RefreshProof.Timestamp, and pcpDigest the lowercase hex
// SHA-256 of the hashes.json bytes. The signal hash is hashToField of these
// bytes (doc/crypto.md §g).
func RefreshSignal(sub string, timestamp int64, pcpDigest string) string {
	s := "refresh:" + sub + ":" + strconv.FormatInt(timestamp, 10)
	if pcpDigest != "" {
		s += ":" + pcpDigest
	}
	return s
}

// maxCredential bounds a stored credential (its JSON is about 3 KB).
const maxCredential = 16 << 10

// Validate checks the shape of a refresh record before it is stored; both
// store backends call it so that they accept the same records.
func (r Refresh) Validate() error {
	if !IsCanonicalHex(r.IDCommitment) || !IsCanonicalHex(r.Sub) {
		return errors.New("record: refresh id_commitment and sub must be 0x + 64 lowercase hex digits")
	}
	if r.PCPDigest != "" && !IsCanonicalHex("0x"+r.PCPDigest) {
		return errors.New("record: refresh pcp_digest must be 64 lowercase hex digits")
	}
	if r.At.Unix() < 0 {
		return errors.New("record: refresh time must not be before 1970")
	}
	if len(r.Credential) > maxCredential {
		return fmt.Errorf("record: refresh credential must have at most %d bytes", maxCredential)
	}
	return nil
}
