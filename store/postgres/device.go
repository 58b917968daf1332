package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// Device authorization grants (migration 12).

// deviceColumns are the columns of a record.DeviceGrant, in scanDevice's
// and deviceArgs' order.
const deviceColumns = "id, user_code, client_id, scope, state, subject, verification_level, auth_ns, interval_s, polled_ns, expires_ns, retain_ns"

const insertDevice = "INSERT INTO device_grants (" + deviceColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"

func scanDevice(row pgx.CollectableRow) (g record.DeviceGrant, err error) {
	err = row.Scan(&g.ID, &g.UserCode, &g.ClientID, &g.Scope, &g.State, &g.Subject, &g.VerificationLevel,
		(*unixNano)(&g.AuthTime), &g.Interval, (*unixNano)(&g.PolledAt), (*unixNano)(&g.ExpiresAt), (*unixNano)(&g.RetainUntil))
	return g, err
}

func deviceArgs(g record.DeviceGrant) []any {
	return []any{g.ID, g.UserCode, g.ClientID, g.Scope, g.State, g.Subject, g.VerificationLevel,
		unixNano(g.AuthTime), g.Interval, unixNano(g.PolledAt), unixNano(g.ExpiresAt), unixNano(g.RetainUntil)}
}

// SaveDeviceGrant stores a new device grant; an ID or UserCode already
// stored wraps record.ErrExists (both are unique).
func (db *DB) SaveDeviceGrant(ctx context.Context, g record.DeviceGrant) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, insertDevice, deviceArgs(g)...)
	return db.fail(ctx, err)
}

// DeviceGrantByUserCode returns the grant whose user code hashes to
// userCode, in whatever state, or an error wrapping record.ErrNotFound.
func (db *DB) DeviceGrantByUserCode(ctx context.Context, userCode string) (record.DeviceGrant, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT "+deviceColumns+" FROM device_grants WHERE user_code = $1", userCode)
	g, err := pgx.CollectOneRow(rows, scanDevice)
	return g, db.failRead(ctx, "device grant", err)
}

// UpdateDeviceGrant calls update with the grant id, locked (SELECT … FOR
// UPDATE), and, if it reports a change, writes the changed grant in the
// same transaction; it returns the grant as update left it. Concurrent
// updates of one grant (two replicas answering polls) run one after the
// other. An unknown id wraps record.ErrNotFound.
func (db *DB) UpdateDeviceGrant(ctx context.Context, id string, update func(*record.DeviceGrant) bool) (g record.DeviceGrant, err error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT "+deviceColumns+" FROM device_grants WHERE id = $1 FOR UPDATE", id)
		var err error
		if g, err = pgx.CollectOneRow(rows, scanDevice); err != nil {
			return err
		}
		if write, err := g.Apply(update); !write {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE device_grants SET client_id = $3, scope = $4, state = $5, subject = $6, verification_level = $7,
			auth_ns = $8, interval_s = $9, polled_ns = $10, expires_ns = $11, retain_ns = $12 WHERE id = $1 AND user_code = $2`, deviceArgs(g)...)
		return err
	})
	return g, db.failRead(ctx, fmt.Sprintf("device grant %q", id), err)
}
