package bridge

import (
	"encoding/json"
	"errors"
)

// Request is the plaintext of a bridge request (the JSON inside the
// envelope's payload). The World ID 3.0 fields are what IDKit 2 and the
// former hosted sign-in sent (idkit-js packages/core/src/bridge.ts); IDKit 4
// adds the rest (BridgeRequestPayload in idkit rust/core/src/bridge.rs).
type Request struct {
	AppID             string `json:"app_id"`
	Action            string `json:"action"` // sign-in uses the empty action
	ActionDescription string `json:"action_description,omitempty"`
	// Signal is already hashed: the 0x-hex field element of IDKit's hashSignal.
	Signal            string `json:"signal"`
	VerificationLevel string `json:"verification_level"`
	// CredentialTypes is IDKit 2's older spelling of VerificationLevel.
	CredentialTypes []string `json:"credential_types,omitempty"`

	// IDKit 4 additions.
	PackageName         string        `json:"package_name,omitempty"`
	PackageVersion      string        `json:"package_version,omitempty"`
	AllowLegacyProofs   *bool         `json:"allow_legacy_proofs,omitempty"`
	RequireUserPresence *bool         `json:"require_user_presence,omitempty"`
	Environment         string        `json:"environment,omitempty"` // production, staging or sandbox
	ReturnToURL         string        `json:"return_to_url,omitempty"`
	Timestamp           string        `json:"timestamp,omitempty"` // RFC 3339
	ProofRequest        *ProofRequest `json:"proof_request,omitempty"`
}

// ProofRequest is World ID 4.0's protocol-level request
// (world_id_primitives::ProofRequest as IDKit 4 puts it in the payload):
// the RP context (rp_id, nonce, created_at, expires_at, signature from
// bridge/rpsig) and the credentials asked for.
type ProofRequest struct {
	ID            string              `json:"id"`
	Version       int                 `json:"version"`
	ProofType     string              `json:"proof_type"` // uniqueness, create_session, session
	CreatedAt     uint64              `json:"created_at"`
	ExpiresAt     uint64              `json:"expires_at"`
	RPID          string              `json:"rp_id"`
	OPRFKeyID     string              `json:"oprf_key_id"`
	Action        *string             `json:"action"`     // 0x field element of the action, or null
	SessionID     *string             `json:"session_id"` // for session proofs, or null
	Signature     string              `json:"signature"`  // 0x r‖s‖v
	Nonce         string              `json:"nonce"`      // 0x field element
	ProofRequests []CredentialRequest `json:"proof_requests"`
	Constraints   json.RawMessage     `json:"constraints,omitempty"`
}

// CredentialRequest is one credential a ProofRequest asks for.
type CredentialRequest struct {
	Identifier     string `json:"identifier"`
	IssuerSchemaID uint64 `json:"issuer_schema_id"`
	Signal         string `json:"signal,omitempty"`
}

// Response is the plaintext of a wallet's answer: a World ID 3.0 proof, a
// 4.0 proof_response, or an error_code (IDKit's AppError codes).
type Response struct {
	ErrorCode string `json:"error_code,omitempty"`

	// World ID 3.0 (BridgeResponseV1).
	Proof             string `json:"proof,omitempty"`
	MerkleRoot        string `json:"merkle_root,omitempty"`
	NullifierHash     string `json:"nullifier_hash,omitempty"`
	VerificationLevel string `json:"verification_level,omitempty"`
	CredentialType    string `json:"credential_type,omitempty"`

	// World ID 4.0.
	ProofResponse *ProofResponse `json:"proof_response,omitempty"`
}

// ProofResponse is World ID 4.0's protocol-level answer
// (world_id_primitives::ProofResponse).
type ProofResponse struct {
	ID        string         `json:"id"`
	Version   int            `json:"version"`
	SessionID *string        `json:"session_id,omitempty"`
	Error     string         `json:"error,omitempty"`
	Responses []ResponseItem `json:"responses"`
}

// ResponseItem is one credential's proof in a ProofResponse.
type ResponseItem struct {
	Identifier       string   `json:"identifier"`
	IssuerSchemaID   uint64   `json:"issuer_schema_id"`
	Proof            []string `json:"proof"`
	Nullifier        string   `json:"nullifier,omitempty"`
	SessionNullifier []string `json:"session_nullifier,omitempty"`
	ExpiresAtMin     uint64   `json:"expires_at_min"`
}

// Error codes a wallet answers with (IDKit AppError, idkit-js AppErrorCodes).
const (
	ErrCodeVerificationRejected  = "verification_rejected"
	ErrCodeMaxVerifications      = "max_verifications_reached"
	ErrCodeCredentialUnavailable = "credential_unavailable"
	ErrCodeMalformedRequest      = "malformed_request"
	ErrCodeInvalidNetwork        = "invalid_network"
	ErrCodeInclusionProofFailed  = "inclusion_proof_failed"
	ErrCodeInclusionProofPending = "inclusion_proof_pending"
	ErrCodeUnexpectedResponse    = "unexpected_response"
	ErrCodeConnectionFailed      = "connection_failed"
	ErrCodeGenericError          = "generic_error"
)

// Kind tells which of its forms a Response takes.
type Kind int

const (
	KindError Kind = iota + 1 // ErrorCode
	KindV3                    // Proof, MerkleRoot, NullifierHash
	KindV4                    // ProofResponse
)

// ErrPayload reports a plaintext that is not a request or response.
var ErrPayload = errors.New("bridge: payload is not a bridge request or response")

// ParseRequest decodes a request's plaintext; unknown members are ignored
// (IDKit adds fields over time) but app_id, signal and a verification
// level are required.
func ParseRequest(b []byte) (Request, error) {
	var r Request
	if err := json.Unmarshal(b, &r); err != nil || r.AppID == "" || r.Signal == "" || (r.VerificationLevel == "" && len(r.CredentialTypes) == 0) {
		return Request{}, ErrPayload
	}
	return r, nil
}

// ParseResponse decodes a response's plaintext and reports its form; a
// response in none or more than one form is ErrPayload.
func ParseResponse(b []byte) (Response, Kind, error) {
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		return Response{}, 0, ErrPayload
	}
	v3 := r.Proof != "" || r.MerkleRoot != "" || r.NullifierHash != ""
	complete3 := r.Proof != "" && r.MerkleRoot != "" && r.NullifierHash != ""
	switch {
	case r.ErrorCode != "" && !v3 && r.ProofResponse == nil:
		return r, KindError, nil
	case r.ErrorCode == "" && complete3 && r.ProofResponse == nil:
		return r, KindV3, nil
	case r.ErrorCode == "" && !v3 && r.ProofResponse != nil:
		return r, KindV4, nil
	}
	return Response{}, 0, ErrPayload
}
