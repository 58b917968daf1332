package record

import "time"

// ClaimV4 is one World ID 4.0 proof presented at /api/v4/verify, as the
// request parser read it (doc/interfaces.md §2.6; World's WorldIDVerifier
// contract defines the statement, package oprfproof checks it). Values are
// big-endian uint256 as sent: the checker refuses those ≥ the BN254 scalar
// field modulus, in the contract's order of checks.
type ClaimV4 struct {
	Identifier     string // as sent (IDKit 4: proof_of_human, selfie, passport, mnc); echoed only
	Environment    string // production or staging: whose roots are valid
	RPID           uint64 // the relying party's rp_id as a number
	IssuerSchemaID uint64
	Nullifier      [32]byte // session proofs: session_nullifier[0]
	Action         [32]byte // uniqueness: hashSignal(action); session: session_nullifier[1]
	Nonce          [32]byte
	SignalHash     [32]byte
	ExpiresAtMin   uint64
	GenesisMin     [32]byte    // credential_genesis_issued_at_min, default 0
	SessionID      [32]byte    // the session commitment; zero for uniqueness proofs
	Proof          [5][32]byte // compressed A, B (two words), C, then the Merkle root
}

// World ID 4.0 per-result codes: those World's portal maps the verifier
// contract's reverts to (developer-portal web/api/helpers/temporal-rpc.ts).
const (
	CodeInvalidRoot             = "invalid_root"              // InvalidMerkleRoot: the root is not valid for the environment
	CodeInvalidCredentialIssuer = "invalid_credential_issuer" // UnregisteredIssuerSchemaId: no issuer key for the schema id
	CodeInvalidPublicInput      = "invalid_public_input"      // PublicInputNotInField: a value is not below the field modulus
	CodeVerificationFailed      = "verification_failed"       // any other revert: expiry too old, no OPRF key for the rp_id, InvalidAction
	// CodeEnvironmentMismatch is IDKit 4's name for a proof of the other
	// environment: the root is not valid in the request's environment but
	// is in the other one (a bare invalid_root would hide why).
	CodeEnvironmentMismatch = "environment_mismatch"
	// CodeFeatureUnavailable (IDKit 4's feature_unavailable): this server
	// has no World ID 4.0 verification configured.
	CodeFeatureUnavailable = "feature_unavailable"
)

// TrustAnchor is a public key a World ID 4.0 proof is checked against,
// configured by the operator where World's contracts read it from chain:
// the credential issuer's key of an issuer_schema_id
// (CredentialSchemaIssuerRegistry) or the OPRF key of an rp_id
// (OprfKeyRegistry). Adding an anchor of the same kind and id replaces it.
type TrustAnchor struct {
	Kind string    `json:"kind"` // AnchorIssuerKey or AnchorOPRFKey
	ID   string    `json:"id"`   // issuer_schema_id in decimal, or the rp_id ("rp_" + 16 hex)
	X    string    `json:"x"`    // BabyJubJub affine coordinates, canonical 0x + 64 lowercase hex
	Y    string    `json:"y"`
	At   time.Time `json:"at"` // when it was configured
}

// Trust anchor kinds.
const (
	AnchorIssuerKey = "issuer_key"
	AnchorOPRFKey   = "oprf_key"
)

// V4RootTree is the ExternalRoot tree name of World ID 4.0 registry roots
// of an environment.
func V4RootTree(environment string) string { return "world_id_4/" + environment }

// V4AnchorSet names where a root source reads the trust anchors of a
// kind (AnchorIssuerKey, AnchorOPRFKey) for an environment:
// "issuer_key/production", "oprf_key/staging", ….
func V4AnchorSet(kind, environment string) string { return kind + "/" + environment }
