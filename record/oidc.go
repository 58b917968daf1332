package record

import (
	"errors"
	"time"
)

// ErrCodeReused is returned when an authorization code that was already
// redeemed is presented again. The backend has then marked the code's
// grant revoked (RFC 6749 §4.1.2, doc/design.md §4).
var ErrCodeReused = errors.New("record: authorization code already redeemed")

// ErrCodeBinding is returned when an authorization code is presented by
// another client, with another redirect URI or with a PKCE challenge other
// than the one it was issued with (CodeBinding). Nothing is redeemed or
// revoked.
var ErrCodeBinding = errors.New("record: authorization code presented with other bindings than it was issued for")

// ErrKeyRevoked is returned when a signing key that was already revoked is
// revoked again.
var ErrKeyRevoked = errors.New("record: signing key already revoked")

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

// RevokedKey is what remains of a revoked signing key: its ID and when it
// was revoked. The private key is deleted by the revocation.
type RevokedKey struct {
	ID        string    `json:"id"`
	RevokedAt time.Time `json:"revoked_at"`
}

// KeyInfo describes a stored or revoked signing key for the operator
// (worldid keys list).
type KeyInfo struct {
	KID   string `json:"kid"`
	State string `json:"state"` // pending, active, retiring or revoked
	// CreatedAt and ActivatesAt (when it starts or started signing) are
	// zero for a revoked key: only its kid and RevokedAt are kept.
	CreatedAt   time.Time `json:"created_at,omitzero"`
	ActivatesAt time.Time `json:"activates_at,omitzero"`
	// RetiresAt is when it leaves the JWKS; zero while no successor is
	// scheduled.
	RetiresAt time.Time `json:"retires_at,omitzero"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Sign-in progress states. A pending request is not stored at all (the
// browser and the wallet carry it as sealed tokens); a record appears when
// the wallet or the browser acts on it.
const (
	SigninScanned   = "scanned"   // the wallet fetched the request's details (a mark, not a durable record)
	SigninApproved  = "approved"  // the wallet's proof verified; the browser may finish
	SigninCancelled = "cancelled" // the user cancelled in the browser
	SigninFinished  = "finished"  // the browser received the authorization response
)

// SigninProgress is what has happened to one pending sign-in request.
type SigninProgress struct {
	// ID is the lowercase hex SHA-256 of the request id; the store never
	// holds the bearer value itself.
	ID    string `json:"id"`
	State string `json:"state"` // one of the Signin* states
	// Subject, VerificationLevel and AuthTime are set from approval on:
	// who the wallet proved to be, and when.
	Subject           string    `json:"sub,omitempty"`
	VerificationLevel string    `json:"verification_level,omitempty"`
	AuthTime          time.Time `json:"auth_time,omitzero"`
	ExpiresAt         time.Time `json:"expires_at"` // the backend may forget the record from here on
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

// CodeBinding is what a redemption presents of what the code is bound to
// (RFC 6749 §4.1.3, RFC 7636 §4.6): the authenticated client, the
// redirect_uri and the S256 challenge of the code_verifier ("" when none
// was presented). The comparison need not be constant-time: every value is
// public (the challenge travelled in the authorization request's URL; the
// verifier it comes from is not compared).
type CodeBinding struct {
	ClientID      string
	RedirectURI   string
	CodeChallenge string
}

// BoundTo reports whether the code was issued for exactly b.
func (c AuthCode) BoundTo(b CodeBinding) bool {
	return c.ClientID == b.ClientID && c.RedirectURI == b.RedirectURI && c.CodeChallenge == b.CodeChallenge
}
