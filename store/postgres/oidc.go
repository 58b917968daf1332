package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// SigningKeys returns every signing key, sorted by ID.
func (db *DB) SigningKeys(ctx context.Context) ([]record.SigningKey, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT id, private_key, created_ns, activate_ns FROM signing_keys ORDER BY id")
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (k record.SigningKey, err error) {
		err = row.Scan(&k.ID, &k.PrivateKey, (*unixNano)(&k.CreatedAt), (*unixNano)(&k.ActivateAt))
		return k, err
	})
	return keys, db.fail(ctx, err)
}

// AddSigningKey stores k unless a stored key activates after pendingAfter;
// then it returns an error wrapping record.ErrExists. The table lock (which
// lets reads through) serializes the check with concurrent adds: no
// constraint can express "at most one key after a moving bound".
func (db *DB) AddSigningKey(ctx context.Context, k record.SigningKey, pendingAfter time.Time) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	if k.PrivateKey == nil {
		k.PrivateKey = []byte{} // pgx sends nil as NULL
	}
	return db.fail(ctx, pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO signing_keys (id, private_key, created_ns, activate_ns)
			SELECT $1::text, $2::bytea, $3::bigint, $4::bigint
			WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE activate_ns > $5)`,
			k.ID, k.PrivateKey, unixNano(k.CreatedAt), unixNano(k.ActivateAt), bound(pendingAfter))
		if err == nil && tag.RowsAffected() == 0 {
			err = fmt.Errorf("store: a signing key activates after %v: %w", pendingAfter, record.ErrExists)
		}
		return err
	}))
}

// DeleteSigningKey removes a key or returns an error wrapping
// record.ErrNotFound.
func (db *DB) DeleteSigningKey(ctx context.Context, id string) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	tag, err := db.pool.Exec(ctx, "DELETE FROM signing_keys WHERE id = $1", id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return db.failRead(ctx, fmt.Sprintf("signing key %q", id), err)
}

// RevokedKeys returns the record of every revoked signing key, sorted by
// ID.
func (db *DB) RevokedKeys(ctx context.Context) ([]record.RevokedKey, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT id, revoked_ns FROM revoked_keys ORDER BY id")
	keys, err := pgx.CollectRows(rows, scanRevokedKey)
	return keys, db.fail(ctx, err)
}

func scanRevokedKey(row pgx.CollectableRow) (k record.RevokedKey, err error) {
	err = row.Scan(&k.ID, (*unixNano)(&k.RevokedAt))
	return k, err
}

// RevokeSigningKey deletes the key r.ID, records r and, if replacement is
// not nil, stores it, in one transaction. A revoked ID wraps
// record.ErrKeyRevoked, another unknown ID record.ErrNotFound; either
// changes nothing. One statement deletes and records: a concurrent
// revocation of the same key waits for the row lock, then deletes
// nothing and, in its next statement, sees the record.
func (db *DB) RevokeSigningKey(ctx context.Context, r record.RevokedKey, replacement *record.SigningKey) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `WITH gone AS (DELETE FROM signing_keys WHERE id = $1 RETURNING id)
			INSERT INTO revoked_keys (id, revoked_ns) SELECT id, $2 FROM gone`, r.ID, unixNano(r.RevokedAt))
		if err == nil && tag.RowsAffected() == 0 {
			return revokedOrMissing(ctx, tx, r.ID)
		}
		if err != nil || replacement == nil {
			return err
		}
		k := *replacement
		_, err = tx.Exec(ctx, "INSERT INTO signing_keys (id, private_key, created_ns, activate_ns) VALUES ($1, $2, $3, $4)",
			k.ID, k.PrivateKey, unixNano(k.CreatedAt), unixNano(k.ActivateAt))
		return err
	})
	return db.failRead(ctx, fmt.Sprintf("signing key %q", r.ID), err)
}

// revokedOrMissing is the error for a signing key id that is not stored:
// record.ErrKeyRevoked if it was revoked, else pgx.ErrNoRows.
func revokedOrMissing(ctx context.Context, tx pgx.Tx, id string) error {
	var revoked bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM revoked_keys WHERE id = $1)", id).Scan(&revoked); err != nil || !revoked {
		return cmp.Or(err, pgx.ErrNoRows)
	}
	return fmt.Errorf("store: signing key %q: %w", id, record.ErrKeyRevoked)
}

// progressColumns are the columns scanProgress reads, in its order.
const progressColumns = "id, state, subject, verification_level, auth_ns, expires_ns"

func scanProgress(row pgx.CollectableRow) (p record.SigninProgress, err error) {
	err = row.Scan(&p.ID, &p.State, &p.Subject, &p.VerificationLevel, (*unixNano)(&p.AuthTime), (*unixNano)(&p.ExpiresAt))
	return p, err
}

// SigninProgress returns the progress of a sign-in request; else a
// scanned progress if MarkScanned marked it; else an error wrapping
// record.ErrNotFound. One query: the recorded row sorts first.
func (db *DB) SigninProgress(ctx context.Context, id string) (record.SigninProgress, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, "SELECT "+progressColumns+" FROM ("+
		"SELECT 0 AS o, "+progressColumns+" FROM signin_progress WHERE id = $1 UNION ALL "+
		"SELECT 1, id, $2, '', '', $3, expires_ns FROM signin_scans WHERE id = $1) p ORDER BY o LIMIT 1",
		id, record.SigninScanned, unixNano{})
	p, err := pgx.CollectOneRow(rows, scanProgress)
	return p, db.failRead(ctx, fmt.Sprintf("sign-in %q", id), err)
}

// MarkScanned marks a request scanned in the UNLOGGED signin_scans
// (migration 7): every replica sees it, and it writes no WAL.
func (db *DB) MarkScanned(ctx context.Context, id string, expiresAt time.Time) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, "INSERT INTO signin_scans (id, expires_ns) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", id, unixNano(expiresAt))
	return db.fail(ctx, err)
}

// AdvanceSignin stores p if the request's current state ("" when nothing
// is recorded) is one of from, and returns the previous progress;
// otherwise it stores nothing and returns the current progress with an
// error wrapping record.ErrExists. The placeholder row (state "") makes
// the row exist so that FOR UPDATE serializes concurrent transitions; ON
// CONFLICT DO NOTHING waits for a concurrent insert of the same id.
func (db *DB) AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (prev record.SigninProgress, err error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO signin_progress (`+progressColumns+`) VALUES ($1, '', '', '', $2, $3)
			ON CONFLICT (id) DO NOTHING`, p.ID, unixNano{}, unixNano(p.ExpiresAt))
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, "SELECT "+progressColumns+" FROM signin_progress WHERE id = $1 FOR UPDATE", p.ID)
		prev, err = pgx.CollectOneRow(rows, scanProgress)
		if err != nil {
			return err
		}
		if !slices.Contains(from, prev.State) {
			return fmt.Errorf("store: sign-in %q is %q: %w", p.ID, prev.State, record.ErrExists)
		}
		_, err = tx.Exec(ctx, `UPDATE signin_progress SET state = $2, subject = $3, verification_level = $4, auth_ns = $5, expires_ns = $6 WHERE id = $1`,
			p.ID, p.State, p.Subject, p.VerificationLevel, unixNano(p.AuthTime), unixNano(p.ExpiresAt))
		return err
	})
	if errors.Is(err, record.ErrExists) {
		return prev, err
	}
	return prev, db.fail(ctx, err)
}

// UseProofOnce records key; a key recorded before wraps record.ErrExists
// (primary key).
func (db *DB) UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, "INSERT INTO spent_proofs (key, expires_ns) VALUES ($1, $2)", key, unixNano(expiresAt))
	return db.fail(ctx, err)
}

// codeColumns are the columns of a record.AuthCode, in scanCode's order.
const codeColumns = "id, grant_id, client_id, redirect_uri, scope, nonce, code_challenge, subject, verification_level, auth_ns, expires_ns, retain_ns"

// scanCode reads a row of codeColumns preceded by the columns lead points
// to.
func scanCode(row pgx.CollectableRow, lead ...any) (c record.AuthCode, err error) {
	err = row.Scan(append(lead, &c.ID, &c.GrantID, &c.ClientID, &c.RedirectURI, &c.Scope, &c.Nonce, &c.CodeChallenge, &c.Subject,
		&c.VerificationLevel, (*unixNano)(&c.AuthTime), (*unixNano)(&c.ExpiresAt), (*unixNano)(&c.RetainUntil))...)
	return c, err
}

// SaveCode stores a new code; an existing ID wraps record.ErrExists.
func (db *DB) SaveCode(ctx context.Context, c record.AuthCode) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, "INSERT INTO auth_codes ("+codeColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
		c.ID, c.GrantID, c.ClientID, c.RedirectURI, c.Scope, c.Nonce, c.CodeChallenge, c.Subject, c.VerificationLevel,
		unixNano(c.AuthTime), unixNano(c.ExpiresAt), unixNano(c.RetainUntil))
	return db.fail(ctx, err)
}

// RedeemCode marks the code redeemed and returns it if it was never
// redeemed, now is before its ExpiresAt and it is bound to b. A code bound
// otherwise is returned with an error wrapping record.ErrCodeBinding,
// redeemed or revoked nothing. A code redeemed before is returned with an
// error wrapping record.ErrCodeReused and, if b names its client, its
// grant is revoked; an unknown or expired code wraps record.ErrNotFound.
//
// The UPDATE locks the row and re-checks "not redeemed" on its newest
// version, so of concurrent redemptions exactly one gets the row; the
// others then read it redeemed and revoke the grant. Only a refused
// redemption takes the second statement, which tells why.
func (db *DB) RedeemCode(ctx context.Context, id string, b record.CodeBinding, now time.Time) (record.AuthCode, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	rows := db.query(ctx, `UPDATE auth_codes SET redeemed = true
		WHERE id = $1 AND NOT redeemed AND expires_ns > $2 AND client_id = $3 AND redirect_uri = $4 AND code_challenge = $5
		RETURNING `+codeColumns, id, bound(now), b.ClientID, b.RedirectURI, b.CodeChallenge)
	c, err := pgx.CollectOneRow(rows, func(row pgx.CollectableRow) (record.AuthCode, error) { return scanCode(row) })
	if !errors.Is(err, pgx.ErrNoRows) && !unstorable(err) { // an unstorable redirect_uri binds no code
		return c, db.failRead(ctx, fmt.Sprintf("code %q", id), err)
	}
	var redeemed bool
	rows = db.query(ctx, `WITH code AS (SELECT redeemed, `+codeColumns+` FROM auth_codes WHERE id = $1),
		revoke AS (INSERT INTO revoked_grants (grant_id, retain_ns)
			SELECT grant_id, retain_ns FROM code WHERE redeemed AND client_id = $2
			ON CONFLICT (grant_id) DO UPDATE SET retain_ns = EXCLUDED.retain_ns)
		SELECT redeemed, `+codeColumns+` FROM code`, id, b.ClientID)
	c, err = pgx.CollectOneRow(rows, func(row pgx.CollectableRow) (record.AuthCode, error) {
		return scanCode(row, &redeemed)
	})
	switch {
	case err != nil:
		return record.AuthCode{}, db.failRead(ctx, fmt.Sprintf("code %q", id), err)
	case redeemed:
		return c, fmt.Errorf("store: code %q: %w", id, record.ErrCodeReused)
	case c.ExpiresAt.UnixNano() <= bound(now):
		return record.AuthCode{}, fmt.Errorf("store: code %q expired: %w", id, record.ErrNotFound)
	}
	return c, fmt.Errorf("store: code %q: %w", id, record.ErrCodeBinding)
}

// IsGrantRevoked reports whether a code replay revoked the grant.
func (db *DB) IsGrantRevoked(ctx context.Context, grantID string) (bool, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	var revoked bool
	err := db.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = $1)", grantID).Scan(&revoked)
	return revoked, db.fail(ctx, err)
}

// PruneExpired deletes sign-in progress, scan marks and proofs expired at
// now, and codes, revocations and device grants whose retention ended, in
// one implicit transaction.
func (db *DB) PruneExpired(ctx context.Context, now time.Time) error {
	ctx, cancel := db.deadline(ctx, bulkTimeout)
	defer cancel()
	var b pgx.Batch
	for _, sql := range []string{
		"DELETE FROM signin_progress WHERE expires_ns <= $1",
		"DELETE FROM signin_scans WHERE expires_ns <= $1",
		"DELETE FROM spent_proofs WHERE expires_ns <= $1",
		"DELETE FROM auth_codes WHERE retain_ns <= $1",
		"DELETE FROM revoked_grants WHERE retain_ns <= $1",
		"DELETE FROM device_grants WHERE retain_ns <= $1",
	} {
		b.Queue(sql, bound(now))
	}
	return db.fail(ctx, db.pool.SendBatch(ctx, &b).Close())
}
