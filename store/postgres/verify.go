package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

const (
	// createActionSQL creates the action unless it exists; the NOT EXISTS
	// spares the identity sequence on the common path.
	createActionSQL = `INSERT INTO actions (rp_id, environment, action, max_verifications, created_ns)
		SELECT $1::text, $2::text, $3::bytea, 0, $4::bigint
		WHERE NOT EXISTS (SELECT 1 FROM actions WHERE rp_id = $1 AND environment = $2 AND action = $3)
		ON CONFLICT (rp_id, environment, action) DO NOTHING`

	// recordVerificationSQL counts one verification. On conflict the
	// nullifier's row is locked and the limit checked on its newest
	// version, so concurrent verifications queue and the limit holds.
	recordVerificationSQL = `INSERT INTO nullifiers AS n (action_id, nullifier, count, created_ns)
		SELECT id, $4::text, 1, $5::bigint FROM actions WHERE rp_id = $1 AND environment = $2 AND action = $3
		ON CONFLICT (action_id, nullifier) DO UPDATE SET count = n.count + 1
		WHERE NOT EXISTS (SELECT 1 FROM actions a WHERE a.id = n.action_id AND a.max_verifications > 0 AND n.count >= a.max_verifications)
		RETURNING created_ns, count`
)

// RecordVerification records one verification of nullifier for the action
// (rpID, action, environment), creating the action at now on first use. If
// the action's MaxVerifications is positive and the nullifier has reached
// it, nothing is written and the error wraps record.ErrLimitReached. A
// reuse reports the nullifier's original CreatedAt.
//
// Both statements go in one batch, which PostgreSQL runs as one implicit
// transaction: one round trip.
func (db *DB) RecordVerification(ctx context.Context, rpID, action, environment, nullifier string, now time.Time) (record.Verification, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if err := validUTF8(rpID, environment, action, nullifier); err != nil {
		return record.Verification{}, err
	}
	var (
		b       pgx.Batch
		created unixNano
		count   int
	)
	b.Queue(createActionSQL, rpID, environment, []byte(action), unixNano(now))
	b.Queue(recordVerificationSQL, rpID, environment, []byte(action), nullifier, unixNano(now)).
		QueryRow(func(row pgx.Row) error { return row.Scan(&created, &count) })
	err := db.pool.SendBatch(ctx, &b).Close()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// The action existed with a limit: the first statement wrote nothing.
		return record.Verification{}, fmt.Errorf("store: nullifier %s for action %q of %s (%s): %w", nullifier, action, rpID, environment, record.ErrLimitReached)
	case err != nil:
		return record.Verification{}, db.fail(ctx, err)
	}
	return record.Verification{CreatedAt: time.Time(created), Count: count, Reused: count > 1}, nil
}

// SetActionLimit sets the action's max_verifications (0: unlimited),
// creating the action at now if it does not exist yet.
func (db *DB) SetActionLimit(ctx context.Context, rpID, action, environment string, maxVerifications int, now time.Time) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if maxVerifications < 0 {
		return fmt.Errorf("store: max_verifications %d is negative", maxVerifications)
	}
	if err := validUTF8(rpID, environment, action); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO actions (rp_id, environment, action, max_verifications, created_ns)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (rp_id, environment, action) DO UPDATE SET max_verifications = EXCLUDED.max_verifications`,
		rpID, environment, []byte(action), maxVerifications, unixNano(now))
	return db.fail(ctx, err)
}

// Action returns the action or an error wrapping record.ErrNotFound.
func (db *DB) Action(ctx context.Context, rpID, action, environment string) (record.Action, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if err := validUTF8(rpID, environment, action); err != nil {
		return record.Action{}, err
	}
	rows := db.query(ctx, `SELECT rp_id, action, environment, max_verifications, created_ns
		FROM actions WHERE rp_id = $1 AND environment = $2 AND action = $3`, rpID, environment, []byte(action))
	a, err := pgx.CollectOneRow(rows, func(row pgx.CollectableRow) (a record.Action, err error) {
		var action []byte
		err = row.Scan(&a.RPID, &action, &a.Environment, &a.MaxVerifications, (*unixNano)(&a.CreatedAt))
		a.Action = string(action)
		return a, err
	})
	if err != nil {
		return record.Action{}, db.failRead(ctx, fmt.Sprintf("action %q of %s (%s)", action, rpID, environment), err)
	}
	return a, nil
}

// NullifierCount is the number of nullifiers recorded, over all actions:
// SELECT count(*), a scan of the table's index, for the metrics.
func (db *DB) NullifierCount(ctx context.Context) (int, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM nullifiers`).Scan(&n); err != nil {
		return 0, db.fail(ctx, err)
	}
	return n, nil
}

// validUTF8 refuses invalid UTF-8 as the JSON store does, so that both
// backends accept the same inputs (bytea would hold it).
func validUTF8(parts ...string) error {
	for _, p := range parts {
		if !utf8.ValidString(p) {
			return fmt.Errorf("store: %q is not valid UTF-8", p)
		}
	}
	return nil
}
