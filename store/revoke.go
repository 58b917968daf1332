package store

import (
	"context"
	"time"

	"worldid/store/engine"
)

// RevokeGrant marks grantID revoked until retainUntil (kept at the later
// retention when it was revoked before): an access token revoked at
// /revoke, or a login session ended by logout, whose id lives in the same
// revocation list as grants revoked by a code replay. PruneExpired forgets
// it after retainUntil.
func (db *DB) RevokeGrant(ctx context.Context, grantID string, retainUntil time.Time) error {
	return db.Update(ctx, func(tx *engine.Tx) error {
		if v, ok := tx.Get(tableRevoked, grantID); ok {
			if old, err := decodeTime(v); err == nil && old.After(retainUntil) {
				return nil
			}
		}
		return tx.Put(tableRevoked, grantID, retainUntil)
	})
}
