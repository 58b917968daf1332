package record

import (
	"errors"
	"time"
)

// ErrLimitReached: recording one more verification would exceed the
// action's max_verifications (doc/design.md §5). Nothing was recorded.
var ErrLimitReached = errors.New("record: max verifications reached")

// Action is a verification action of a relying party in one environment
// (doc/design.md §5): created on its first successful verification, or by the
// operator when setting its limit.
type Action struct {
	RPID        string `json:"rp_id"`
	Action      string `json:"action"`
	Environment string `json:"environment"` // production or staging
	// MaxVerifications bounds how often one nullifier may verify for the
	// action; 0 means unlimited (the v4-compatible default).
	MaxVerifications int       `json:"max_verifications"`
	CreatedAt        time.Time `json:"created_at"`
}

// Verification is the outcome of recording a verified nullifier for an action.
type Verification struct {
	// CreatedAt is when the nullifier was first recorded for the action;
	// a reuse reports the original time.
	CreatedAt time.Time
	// Count is how many verifications of the nullifier the action has
	// recorded, this one included.
	Count int
	// Reused is true when the nullifier had been recorded before.
	Reused bool
}
