package record

import (
	"errors"
	"time"
)

// ErrCodeReused is returned when an authorization code that was already
// redeemed is presented again. The backend has then marked the code's
// grant revoked (RFC 6749 §4.1.2, design.md §4).
var ErrCodeReused = errors.New("record: authorization code already redeemed")

// SigningKey is one RS256 key of the sign-in provider.
type SigningKey struct {
	// ID is the JWS "kid": the RFC 7638 JWK thumbprint of the public key.
	ID string `json:"id"`
	// PrivateKey is the PKCS #8 DER encoding of the RSA private key.
	PrivateKey []byte    `json:"private_key"`
	CreatedAt  time.Time `json:"created_at"` // published in the JWKS from here on
	// ActivateAt is when the key starts signing; it signs until the next
	// key's ActivateAt.
	ActivateAt time.Time `json:"activate_at"`
}

// KeyInfo describes a stored signing key for the operator (worldid keys
// list).
type KeyInfo struct {
	KID       string    `json:"kid"`
	State     string    `json:"state"` // pending, active or retiring
	CreatedAt time.Time `json:"created_at"`
	// ActivatesAt is when it starts (or started) signing.
	ActivatesAt time.Time `json:"activates_at"`
	// RetiresAt is when it leaves the JWKS; zero while no successor is
	// scheduled.
	RetiresAt time.Time `json:"retires_at,omitzero"`
}

// SigninRequest is a validated authorization request waiting for the
// wallet's proof.
type SigninRequest struct {
	// ID is the lowercase hex SHA-256 of the request id handed to the
	// wallet; the store never holds the bearer value itself.
	ID            string    `json:"id"`
	ClientID      string    `json:"client_id"`
	RedirectURI   string    `json:"redirect_uri"`
	ResponseType  string    `json:"response_type"` // canonical order, e.g. "code id_token"
	ResponseMode  string    `json:"response_mode"` // query, fragment or form_post
	Scope         string    `json:"scope"`         // the granted scopes, space-separated
	State         string    `json:"state,omitempty"`
	Nonce         string    `json:"nonce,omitempty"`
	CodeChallenge string    `json:"code_challenge,omitempty"` // PKCE S256
	Signal        string    `json:"signal"`                   // the proof's signal (hex text)
	ExpiresAt     time.Time `json:"expires_at"`
}

// AuthCode is an issued authorization code and the grant it carries.
type AuthCode struct {
	// ID is the lowercase hex SHA-256 of the code.
	ID                string    `json:"id"`
	GrantID           string    `json:"grant_id"` // shared with the tokens issued for this sign-in
	ClientID          string    `json:"client_id"`
	RedirectURI       string    `json:"redirect_uri"`
	Scope             string    `json:"scope"`
	Nonce             string    `json:"nonce,omitempty"`
	CodeChallenge     string    `json:"code_challenge,omitempty"`
	Subject           string    `json:"sub"`
	VerificationLevel string    `json:"verification_level"`
	AuthTime          time.Time `json:"auth_time"`
	ExpiresAt         time.Time `json:"expires_at"` // the code cannot be redeemed from here on
	// RetainUntil is how long the backend must remember the code, so
	// that a replay still revokes the tokens issued from it; it is at
	// least ExpiresAt plus the token lifetime.
	RetainUntil time.Time `json:"retain_until"`
}
