package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"worldid/record"
)

// Sign-in (package oidc's Store). Bearer values (request ids, codes) arrive
// already hashed: the keys below are their SHA-256, never the values.
const (
	tableSigningKeys = "oidc_keys"    // kid → record.SigningKey
	tableSignins     = "oidc_signins" // request id hash → record.SigninRequest
	tableProofs      = "oidc_proofs"  // proof key → expiry (time.Time)
	tableCodes       = "oidc_codes"   // code hash → storedCode
	tableRevoked     = "oidc_revoked" // grant id → retain-until (time.Time)
)

// storedCode is an authorization code and whether it was redeemed.
type storedCode struct {
	Code     record.AuthCode `json:"code"`
	Redeemed bool            `json:"redeemed"`
}

// SigningKeys returns every signing key, sorted by ID.
func (db *DB) SigningKeys(_ context.Context) (keys []record.SigningKey, err error) {
	err = db.View(func(tx *ReadTx) error {
		keys, err = scanJSON[record.SigningKey](tx, tableSigningKeys, "")
		return err
	})
	return keys, err
}

// AddSigningKey stores k unless a stored key activates after pendingAfter;
// then it returns an error wrapping record.ErrExists.
// SQL: INSERT … SELECT … WHERE NOT EXISTS (SELECT 1 FROM keys WHERE
// activate_at > $pendingAfter).
func (db *DB) AddSigningKey(ctx context.Context, k record.SigningKey, pendingAfter time.Time) error {
	return db.Update(ctx, func(tx *Tx) error {
		keys, err := scanJSON[record.SigningKey](tx, tableSigningKeys, "")
		if err != nil {
			return err
		}
		for _, old := range keys {
			if old.ActivateAt.After(pendingAfter) {
				return fmt.Errorf("store: signing key %q activates after %v: %w", old.ID, pendingAfter, record.ErrExists)
			}
		}
		return tx.Insert(tableSigningKeys, k.ID, k)
	})
}

// DeleteSigningKey removes a key or returns an error wrapping
// record.ErrNotFound.
func (db *DB) DeleteSigningKey(ctx context.Context, id string) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, ok := tx.Get(tableSigningKeys, id); !ok {
			return fmt.Errorf("store: signing key %q: %w", id, record.ErrNotFound)
		}
		tx.Delete(tableSigningKeys, id)
		return nil
	})
}

// RevokeSigningKey deletes the key with the given ID and, if replacement
// is not nil, stores it, in one Update; an unknown ID wraps
// record.ErrNotFound and changes nothing.
// SQL: DELETE FROM keys WHERE id = $1; INSERT …; one transaction.
func (db *DB) RevokeSigningKey(ctx context.Context, id string, replacement *record.SigningKey) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, ok := tx.Get(tableSigningKeys, id); !ok {
			return fmt.Errorf("store: signing key %q: %w", id, record.ErrNotFound)
		}
		tx.Delete(tableSigningKeys, id)
		if replacement == nil {
			return nil
		}
		return tx.Insert(tableSigningKeys, replacement.ID, *replacement)
	})
}

// CreateSigninRequest stores r; an existing ID wraps record.ErrExists.
func (db *DB) CreateSigninRequest(ctx context.Context, r record.SigninRequest) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.Insert(tableSignins, r.ID, r) })
}

// ConsumeSigninRequest deletes the request and returns it if it has not
// expired at now; an unknown or expired request wraps record.ErrNotFound
// (an expired one is deleted all the same).
// SQL: DELETE FROM signins WHERE id = $1 RETURNING * — then the expiry check.
func (db *DB) ConsumeSigninRequest(ctx context.Context, id string, now time.Time) (record.SigninRequest, error) {
	var r record.SigninRequest
	found := false
	err := db.Update(ctx, func(tx *Tx) error {
		err := getJSON(tx, tableSignins, id, &r)
		if err != nil {
			return err
		}
		tx.Delete(tableSignins, id)
		found = true
		return nil
	})
	switch {
	case err != nil:
		return record.SigninRequest{}, err
	case !found || !now.Before(r.ExpiresAt):
		return record.SigninRequest{}, fmt.Errorf("store: sign-in request %q expired: %w", id, record.ErrNotFound)
	}
	return r, nil
}

// UseProofOnce records key; a key recorded before wraps record.ErrExists.
func (db *DB) UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.Insert(tableProofs, key, expiresAt) })
}

// SaveCode stores a new code; an existing ID wraps record.ErrExists.
func (db *DB) SaveCode(ctx context.Context, c record.AuthCode) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.Insert(tableCodes, c.ID, storedCode{Code: c}) })
}

// RedeemCode marks the code redeemed and returns it. A code redeemed
// before revokes its grant in the same Update and yields an error wrapping
// record.ErrCodeReused; an unknown or expired code wraps record.ErrNotFound.
// SQL: UPDATE codes SET redeemed = true WHERE id = $1 AND NOT redeemed AND
// expires_at > $now RETURNING *; on no row, INSERT INTO revoked … SELECT
// grant_id FROM codes WHERE id = $1 AND redeemed.
func (db *DB) RedeemCode(ctx context.Context, id string, now time.Time) (record.AuthCode, error) {
	var sc storedCode
	err := db.Update(ctx, func(tx *Tx) error {
		if err := getJSON(tx, tableCodes, id, &sc); err != nil {
			return err
		}
		if sc.Redeemed {
			return tx.Put(tableRevoked, sc.Code.GrantID, sc.Code.RetainUntil)
		}
		if !now.Before(sc.Code.ExpiresAt) {
			return nil
		}
		return tx.Put(tableCodes, id, storedCode{Code: sc.Code, Redeemed: true})
	})
	switch {
	case err != nil:
		return record.AuthCode{}, err
	case sc.Redeemed:
		return record.AuthCode{}, fmt.Errorf("store: code %q: %w", id, record.ErrCodeReused)
	case !now.Before(sc.Code.ExpiresAt):
		return record.AuthCode{}, fmt.Errorf("store: code %q expired: %w", id, record.ErrNotFound)
	}
	return sc.Code, nil
}

// IsGrantRevoked reports whether a code replay revoked the grant.
func (db *DB) IsGrantRevoked(_ context.Context, grantID string) (revoked bool, err error) {
	err = db.View(func(tx *ReadTx) error {
		_, revoked = tx.Get(tableRevoked, grantID)
		return nil
	})
	return revoked, err
}

// PruneExpired deletes sign-in requests and proofs expired at now, and
// codes and revocations whose retention ended. It scans the four tables.
func (db *DB) PruneExpired(ctx context.Context, now time.Time) error {
	return db.Update(ctx, func(tx *Tx) error {
		expired := func(table string, until func(json.RawMessage) (time.Time, error)) error {
			var keys []string
			var err error
			tx.Scan(table, "", func(key string, v json.RawMessage) bool {
				var t time.Time
				if t, err = until(v); err != nil {
					err = fmt.Errorf("store: %s %q: %w", table, key, err)
					return false
				}
				if !t.After(now) {
					keys = append(keys, key)
				}
				return true
			})
			for _, k := range keys {
				tx.Delete(table, k)
			}
			return err
		}
		return errors.Join(
			expired(tableSignins, func(v json.RawMessage) (time.Time, error) {
				var r record.SigninRequest
				err := json.Unmarshal(v, &r)
				return r.ExpiresAt, err
			}),
			expired(tableProofs, decodeTime),
			expired(tableCodes, func(v json.RawMessage) (time.Time, error) {
				var c storedCode
				err := json.Unmarshal(v, &c)
				return c.Code.RetainUntil, err
			}),
			expired(tableRevoked, decodeTime),
		)
	})
}

func decodeTime(v json.RawMessage) (time.Time, error) {
	var t time.Time
	err := json.Unmarshal(v, &t)
	return t, err
}
