package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
)

// Request is a validated authorization request (OIDC Core §3.1.2.1), as
// the provider hands it to the browser sign-in and takes it back to
// answer: the client and its registered redirect URI, the canonical
// response type ("code", "id_token", "id_token token", …), the response
// mode, the granted scopes and the values echoed to the client. The JSON
// names are short because the request travels sealed in the wait page's
// URL.
type Request struct {
	ClientID      string `json:"c"`
	RedirectURI   string `json:"r"`
	ResponseType  string `json:"t"`
	Mode          string `json:"m"`
	Scope         string `json:"s"`
	State         string `json:"st,omitempty"`
	Nonce         string `json:"n,omitempty"`
	CodeChallenge string `json:"p,omitempty"`
	// ACR is the weakest verification level the request's acr_values
	// accept ("" when it named none the provider knows).
	ACR string `json:"a,omitempty"`
	// Device, when set, makes this the sign-in of a device grant (RFC
	// 8628; oidc/deviceverify.go): the grant's ID, which the approval
	// decides; the browser is shown the outcome instead of being
	// redirected.
	Device string `json:"d,omitempty"`
}

// Response is an authorization response ready for the request's redirect
// URI: the parameters it carries (RFC 6749 §4.1.2, or an error by
// ErrorParams) and, for a completed sign-in, the sealed login session
// that the provider sets in the browser as a cookie and never sends
// ("" for none; opaque to everyone but the provider).
type Response struct {
	Params  url.Values
	Session string
	// Device is, for a device grant's sign-in (Request.Device), the
	// outcome the provider shows the browser instead of redirecting.
	Device string
}

// Verification levels: the identifiers whose proofs can sign in (the
// verification_level claim).
const (
	LevelOrb    = "orb"
	LevelDevice = "device"
)

// HashHex is the lowercase hex SHA-256 under which the store keeps a
// bearer value (authorization codes, sign-in request ids).
func HashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
