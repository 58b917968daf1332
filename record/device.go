package record

import (
	"fmt"
	"time"
)

// Device grant states (RFC 8628): pending until the user signs in at the
// verification page (approved) or refuses (denied); redeemed once the
// device's poll received the tokens.
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
	DeviceRedeemed = "redeemed"
)

// DeviceGrant is one device authorization request (RFC 8628 §3.1) and what
// became of it. The store holds neither bearer value: ID and UserCode are
// lowercase hex SHA-256 digests of the device code and of the normalized
// user code.
type DeviceGrant struct {
	ID       string `json:"id"`
	UserCode string `json:"user_code"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	State    string `json:"state"` // one of the Device* states
	// Subject, VerificationLevel and AuthTime are set from approval on.
	Subject           string    `json:"sub,omitempty"`
	VerificationLevel string    `json:"verification_level,omitempty"`
	AuthTime          time.Time `json:"auth_time,omitzero"`
	// Interval is the polling interval in seconds the device must keep
	// (RFC 8628 §3.2, raised by slow_down, §3.5); PolledAt is its last
	// poll (zero before the first).
	Interval  int       `json:"interval"`
	PolledAt  time.Time `json:"polled_at,omitzero"`
	ExpiresAt time.Time `json:"expires_at"` // the codes are void from here on
	// RetainUntil is how long the backend keeps the record, so that a
	// late poll is told expired_token and a replay is recognised.
	RetainUntil time.Time `json:"retain_until"`
}

// Apply runs update on g for a store's UpdateDeviceGrant and reports
// whether the grant is to be written: update reported a change and kept
// its codes, by which the store finds it (changing them is an error).
func (g *DeviceGrant) Apply(update func(*DeviceGrant) bool) (write bool, err error) {
	id, userCode := g.ID, g.UserCode
	if !update(g) {
		return false, nil
	}
	if g.ID != id || g.UserCode != userCode {
		return false, fmt.Errorf("store: device grant %q: the update changed its codes", id)
	}
	return true, nil
}
