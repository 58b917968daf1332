package record

import (
	"errors"
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

// App is a relying party registered by the operator: an OIDC client and a
// verification relying party at once.
type App struct {
	// ID is the client_id / app_id: "app_" + 32 lowercase hex digits.
	ID string `json:"id"`
	// RPID is the relying-party id: "rp_" + 16 lowercase hex digits.
	RPID string `json:"rp_id"`
	Name string `json:"name"`
	// SecretHash is the lowercase hex SHA-256 of the client secret. The
	// secret has 256 bits of entropy, so a fast hash suffices.
	SecretHash   string    `json:"secret_hash"`
	RedirectURIs []string  `json:"redirect_uris"`
	CreatedAt    time.Time `json:"created_at"`
}
