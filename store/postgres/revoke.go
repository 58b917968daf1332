package postgres

import (
	"context"
	"time"
)

// RevokeGrant marks grantID revoked until retainUntil (the later retention
// wins when it was revoked before): an access token revoked at /revoke or
// a login session ended by logout, in revoked_grants beside the grants a
// code replay revoked, so every replica sees it. One upsert.
func (db *DB) RevokeGrant(ctx context.Context, grantID string, retainUntil time.Time) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, `INSERT INTO revoked_grants (grant_id, retain_ns) VALUES ($1, $2)
		ON CONFLICT (grant_id) DO UPDATE SET retain_ns = GREATEST(revoked_grants.retain_ns, EXCLUDED.retain_ns)`,
		grantID, unixNano(retainUntil))
	return db.fail(ctx, err)
}
