package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"worldid/record"
	"worldid/store/engine"
)

// Sign-in (package oidc's Store). Bearer values (request ids, codes) arrive
// already hashed: the keys below are their SHA-256, never the values.
const (
	tableSigningKeys = "oidc_keys"         // kid → record.SigningKey
	tableRevokedKeys = "oidc_revoked_keys" // kid → record.RevokedKey
	tableSignins     = "oidc_signins"      // request id hash → record.SigninProgress
	tableProofs      = "oidc_proofs"       // proof key → expiry (time.Time)
	tableCodes       = "oidc_codes"        // code hash → storedCode
	tableRevoked     = "oidc_revoked"      // grant id → retain-until (time.Time)
)

// storedCode is an authorization code and whether it was redeemed.
type storedCode struct {
	Code     record.AuthCode `json:"code"`
	Redeemed bool            `json:"redeemed"`
}

// SigningKeys returns every signing key, sorted by ID.
func (db *DB) SigningKeys(_ context.Context) (keys []record.SigningKey, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
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
	return db.Update(ctx, func(tx *engine.Tx) error {
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
	return db.Update(ctx, func(tx *engine.Tx) error {
		if _, ok := tx.Get(tableSigningKeys, id); !ok {
			return fmt.Errorf("store: signing key %q: %w", id, record.ErrNotFound)
		}
		tx.Delete(tableSigningKeys, id)
		return nil
	})
}

// RevokedKeys returns the record of every revoked signing key, sorted by
// ID.
func (db *DB) RevokedKeys(_ context.Context) (keys []record.RevokedKey, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		keys, err = scanJSON[record.RevokedKey](tx, tableRevokedKeys, "")
		return err
	})
	return keys, err
}

// RevokeSigningKey deletes the key r.ID, records r and, if replacement is
// not nil, stores it, in one Update. A revoked ID wraps
// record.ErrKeyRevoked, another unknown ID record.ErrNotFound; either
// changes nothing.
// SQL: DELETE FROM keys WHERE id = $1; INSERT INTO revoked_keys …;
// INSERT …; one transaction.
func (db *DB) RevokeSigningKey(ctx context.Context, r record.RevokedKey, replacement *record.SigningKey) error {
	return db.Update(ctx, func(tx *engine.Tx) error {
		if _, ok := tx.Get(tableRevokedKeys, r.ID); ok {
			return fmt.Errorf("store: signing key %q: %w", r.ID, record.ErrKeyRevoked)
		}
		if _, ok := tx.Get(tableSigningKeys, r.ID); !ok {
			return fmt.Errorf("store: signing key %q: %w", r.ID, record.ErrNotFound)
		}
		tx.Delete(tableSigningKeys, r.ID)
		if err := tx.Insert(tableRevokedKeys, r.ID, r); err != nil || replacement == nil {
			return err
		}
		return tx.Insert(tableSigningKeys, replacement.ID, *replacement)
	})
}

// SigninProgress returns the progress of a sign-in request; else a
// scanned progress if MarkScanned marked it; else an error wrapping
// record.ErrNotFound.
func (db *DB) SigninProgress(_ context.Context, id string) (p record.SigninProgress, err error) {
	err = db.View(func(tx *engine.ReadTx) error { return getJSON(tx, tableSignins, id, &p) })
	if errors.Is(err, record.ErrNotFound) {
		if exp, ok := db.scans.get(id); ok {
			return record.SigninProgress{ID: id, State: record.SigninScanned, ExpiresAt: exp}, nil
		}
	}
	return p, err
}

// maxScanMarks bounds the scan marks: about 150 bytes each.
const maxScanMarks = 4096

// scanMarks are the wallet reads of pending sign-ins (MarkScanned), a
// display hint kept in memory only, so that a read, which anyone can
// cause, costs no journal write. A restart forgets them: the wait page of
// a request pending then merely does not say "confirm in your wallet".
type scanMarks struct {
	mu sync.Mutex
	m  map[string]time.Time // request id hash → expiry
}

func (s *scanMarks) get(id string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.m[id]
	return exp, ok
}

// MarkScanned marks a request scanned in memory. When maxScanMarks are
// held, an arbitrary one (map order is random) makes room, so a flood of
// reads cannot keep genuine requests unmarked.
func (db *DB) MarkScanned(_ context.Context, id string, expiresAt time.Time) error {
	s := &db.scans
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]time.Time{}
	}
	if _, ok := s.m[id]; ok {
		return nil
	}
	if len(s.m) >= maxScanMarks {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[id] = expiresAt
	return nil
}

// prune forgets the marks expired at now.
func (s *scanMarks) prune(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.m, func(_ string, exp time.Time) bool { return !exp.After(now) })
}

// AdvanceSignin stores p if the request's current state (""
// when nothing is recorded) is one of from, and returns the previous
// progress; otherwise it stores nothing and returns the current progress
// with an error wrapping record.ErrExists.
// SQL: INSERT … ON CONFLICT DO NOTHING, then SELECT … FOR UPDATE and UPDATE
// in one transaction.
func (db *DB) AdvanceSignin(ctx context.Context, p record.SigninProgress, from ...string) (prev record.SigninProgress, err error) {
	err = db.Update(ctx, func(tx *engine.Tx) error {
		prev = record.SigninProgress{}
		if err := getJSON(tx, tableSignins, p.ID, &prev); err != nil && !errors.Is(err, record.ErrNotFound) {
			return err
		}
		if !slices.Contains(from, prev.State) {
			return fmt.Errorf("store: sign-in %q is %q: %w", p.ID, prev.State, record.ErrExists)
		}
		return tx.Put(tableSignins, p.ID, p)
	})
	return prev, err
}

// UseProofOnce records key; a key recorded before wraps record.ErrExists.
func (db *DB) UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error {
	return db.Update(ctx, func(tx *engine.Tx) error { return tx.Insert(tableProofs, key, expiresAt) })
}

// SaveCode stores a new code; an existing ID wraps record.ErrExists.
func (db *DB) SaveCode(ctx context.Context, c record.AuthCode) error {
	return db.Update(ctx, func(tx *engine.Tx) error { return tx.Insert(tableCodes, c.ID, storedCode{Code: c}) })
}

// RedeemCode marks the code redeemed and returns it if it was never
// redeemed, now is before its ExpiresAt and it is bound to b, in one
// Update. A code bound otherwise is returned with an error wrapping
// record.ErrCodeBinding, redeemed or revoked nothing. A code redeemed before
// is returned with an error wrapping record.ErrCodeReused and, if b names
// its client, its grant is revoked in the same Update. An unknown or
// expired code wraps record.ErrNotFound.
// SQL: UPDATE codes SET redeemed = true WHERE id = $1 AND NOT redeemed AND
// expires_at > $now AND the binding matches RETURNING *; on no row, SELECT
// the code and INSERT INTO revoked its grant if redeemed by b's client.
func (db *DB) RedeemCode(ctx context.Context, id string, b record.CodeBinding, now time.Time) (record.AuthCode, error) {
	var sc storedCode
	// Patient: a /token answer costs an RS256 signature (about 0.75 ms), so
	// a moment's wait is cheap, and redemptions sharing an fsync are not.
	err := db.UpdatePatient(ctx, func(tx *engine.Tx) error {
		if err := getJSON(tx, tableCodes, id, &sc); err != nil {
			return err
		}
		switch {
		case sc.Redeemed && sc.Code.ClientID == b.ClientID:
			return tx.Put(tableRevoked, sc.Code.GrantID, sc.Code.RetainUntil)
		case sc.Redeemed, !now.Before(sc.Code.ExpiresAt), !sc.Code.BoundTo(b):
			return nil
		}
		return tx.Put(tableCodes, id, storedCode{Code: sc.Code, Redeemed: true})
	})
	switch {
	case err != nil:
		return record.AuthCode{}, err
	case sc.Redeemed:
		return sc.Code, fmt.Errorf("store: code %q: %w", id, record.ErrCodeReused)
	case !now.Before(sc.Code.ExpiresAt):
		return record.AuthCode{}, fmt.Errorf("store: code %q expired: %w", id, record.ErrNotFound)
	case !sc.Code.BoundTo(b):
		return sc.Code, fmt.Errorf("store: code %q: %w", id, record.ErrCodeBinding)
	}
	return sc.Code, nil
}

// IsGrantRevoked reports whether a code replay revoked the grant.
func (db *DB) IsGrantRevoked(_ context.Context, grantID string) (revoked bool, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		_, revoked = tx.Get(tableRevoked, grantID)
		return nil
	})
	return revoked, err
}

// PruneExpired deletes sign-in progress, scan marks and proofs expired at
// now, and codes, revocations and device grants whose retention ended. It
// scans the five tables.
func (db *DB) PruneExpired(ctx context.Context, now time.Time) error {
	db.scans.prune(now)
	return db.Update(ctx, func(tx *engine.Tx) error {
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
				var r record.SigninProgress
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
			pruneDeviceGrants(tx, now),
		)
	})
}

func decodeTime(v json.RawMessage) (time.Time, error) {
	var t time.Time
	err := json.Unmarshal(v, &t)
	return t, err
}
