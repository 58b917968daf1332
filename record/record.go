package record

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors every backend returns (wrapped with context where useful),
// so handlers can map them to protocol errors with errors.Is.
var (
	// ErrNotFound: the requested record does not exist.
	ErrNotFound = errors.New("record: not found")
	// ErrExists: a unique constraint would be violated.
	ErrExists = errors.New("record: already exists")
	// ErrUnavailable: the backend cannot durably accept writes (disk full,
	// read-only data directory, database gone). Handlers answer 503.
	ErrUnavailable = errors.New("record: storage unavailable")
)

// ItemError is the error of the item at Index of a batch that a backend
// refused as a whole, so that the caller can say which one.
type ItemError struct {
	Index int
	Err   error
}

func (e *ItemError) Error() string { return fmt.Sprintf("item %d: %v", e.Index, e.Err) }
func (e *ItemError) Unwrap() error { return e.Err }

// App is a relying party registered by the operator: an OIDC client and a
// verification relying party at once.
type App struct {
	// ID is the client_id / app_id: "app_" + 32 lowercase hex digits, or
	// "app_staging_" + 32 for a staging app imported from the developer
	// portal (ValidAppID).
	ID string `json:"id"`
	// RPID is the relying-party id: "rp_" + 16 lowercase hex digits.
	RPID string `json:"rp_id"`
	Name string `json:"name"`
	// SecretHash is the lowercase hex SHA-256 of the client secret. The
	// secret has 256 bits of entropy, so a fast hash suffices.
	SecretHash   string    `json:"secret_hash"`
	RedirectURIs []string  `json:"redirect_uris"`
	CreatedAt    time.Time `json:"created_at"`
	// Staging apps' proofs are checked against the staging trees, as the
	// developer portal does for its staging apps.
	Staging bool `json:"staging,omitempty"`
	// Disabled apps cannot sign in or verify, and the tokens issued to
	// them are inactive; the operator can enable them again.
	Disabled bool `json:"disabled,omitempty"`
	// UpdatedAt is the time of the last operator change after creation
	// (zero: none).
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Profile is the Sign in with World ID contract the app gets: "" (the
	// v1 contract, ProfileV1) or ProfileCurrent (doc/interfaces.md §2.4.1).
	Profile string `json:"profile,omitempty"`
	// PostLogoutRedirectURIs are where RP-initiated logout may return the
	// user agent (exact string match).
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris,omitempty"`
	// TokenEndpointAuthMethod is how the app authenticates at /token,
	// /introspect and /revoke: "" (client_secret_basic or
	// client_secret_post, as every app before it), or exactly one of
	// AuthClientSecretBasic, AuthClientSecretPost, AuthPrivateKeyJWT.
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// JWKS is the app's registered JSON Web Key Set (RFC 7517 §5), the
	// keys of its private_key_jwt client assertions.
	JWKS string `json:"jwks,omitempty"`
	// JWKSURI is where the app publishes that set instead (https; fetched
	// at each private_key_jwt authentication, SSRF-guarded).
	JWKSURI string `json:"jwks_uri,omitempty"`
	// PKCERequired refuses authorization requests for a code without a
	// PKCE challenge (RFC 9700 §2.1.1); apps created by the operator get
	// it by default, imported and earlier apps keep it off.
	PKCERequired bool `json:"pkce_required,omitempty"`
	// ResponseTypes are the response types the app may use (canonical
	// spelling: "code", "id_token token", …); empty allows every
	// supported one, as before the setting.
	ResponseTypes []string `json:"response_types,omitempty"`
	// RPSigningKey, when set, is the app's World ID 4.0 RP signing key:
	// a secp256k1 private key as 64 lowercase hex digits (bridge/rpsig),
	// set only by the operator. With it the sign-in's bridge requests
	// also carry a signed 4.0 proof_request. It is a secret: never
	// answered by the admin API or logged; backups carry it.
	RPSigningKey string `json:"rp_signing_key,omitempty"`
	// SectorIdentifierURI is the app's sector identifier (OIDC Core §8.1):
	// an https URL whose document lists every redirect URI of the app
	// (checked when it is set and when the redirect URIs change). Its
	// host (SectorHost) names the sector. Empty: the app is a sector of
	// its own, as every app before the setting.
	SectorIdentifierURI string `json:"sector_identifier_uri,omitempty"`
	// SectorAppID is the app of the same sector whose app_id the wallet
	// proves for when this app signs in (ProofAppID): set when the app
	// joined a sector that another app had already registered, empty
	// otherwise. Fixed at registration, like the sector.
	SectorAppID string `json:"sector_app_id,omitempty"`
}

// ProofAppID is the app_id a sign-in to the app asks the wallet to prove
// for, and so the one place its subjects come from: sub is the World ID
// nullifier hash of a proof for (ProofAppID, action ""), the same for
// every app of one sector (doc/interfaces.md §2.4.2). For every app
// without a sector, and for the first app of a sector, it is the app's
// own id, which keeps today's subjects.
func (a App) ProofAppID() string {
	if a.SectorAppID != "" {
		return a.SectorAppID
	}
	return a.ID
}

// SectorHost is the sector identifier of OIDC Core §8.1: the lowercase
// host of SectorIdentifierURI, or "" when the app registered none (or
// the URI does not parse, which validation prevents).
func (a App) SectorHost() string {
	if a.SectorIdentifierURI == "" {
		return ""
	}
	u, err := url.Parse(a.SectorIdentifierURI)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// Client authentication methods (App.TokenEndpointAuthMethod; OIDC Core
// §9).
const (
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	AuthPrivateKeyJWT     = "private_key_jwt"
)

// ValidResponseType reports whether s is a response type an app may be
// limited to (App.ResponseTypes): the canonical spellings package oidc
// supports (its tests check the two lists agree).
func ValidResponseType(s string) bool {
	switch s {
	case "code", "id_token", "id_token token", "code id_token", "code token", "code id_token token":
		return true
	}
	return false
}

// App profiles (App.Profile).
const (
	ProfileV1      = ""
	ProfileCurrent = "current"
)

// Environment is the environment whose trees the app's proofs use.
func (a App) Environment() string {
	if a.Staging {
		return "staging"
	}
	return "production"
}

// ValidAppID reports whether id has the form of an app_id: "app_" or
// "app_staging_" followed by exactly 32 lowercase hex digits.
func ValidAppID(id string) bool {
	rest, ok := strings.CutPrefix(id, "app_")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "staging_")
	return len(rest) == 32 && IsLowerHex(rest)
}

// ValidRPID reports whether id is "rp_" followed by exactly 16 lowercase
// hex digits.
func ValidRPID(id string) bool {
	rest, ok := strings.CutPrefix(id, "rp_")
	return ok && len(rest) == 16 && IsLowerHex(rest)
}

// RPIDNumber is an rp_id's 64-bit number, as World ID 4.0 proofs bind it
// (the 16 hex digits after "rp_").
func RPIDNumber(id string) (uint64, error) {
	if !ValidRPID(id) {
		return 0, fmt.Errorf("record: rp_id %q is not rp_ and 16 lowercase hex digits", id)
	}
	return strconv.ParseUint(id[len("rp_"):], 16, 64)
}

// IsLowerHex reports whether every byte of s is a lowercase hex digit
// (0-9, a-f); the empty string is. Callers check the length they need.
func IsLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
