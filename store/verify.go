package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"worldid/record"
	"worldid/store/engine"
)

// Verification actions and their nullifiers (doc/design.md §5).
const (
	tableActions    = "actions"    // verifyKey(rp_id, environment, action) → record.Action
	tableNullifiers = "nullifiers" // verifyKey(rp_id, environment, action, nullifier) → nullifierRecord
)

// nullifierRecord is one nullifier's verifications for one action.
type nullifierRecord struct {
	CreatedAt time.Time `json:"created_at"` // first verification
	Count     int       `json:"count"`
}

// verifyKey encodes its parts as a JSON array: action is caller text, so a
// separator-joined key could make two actions collide.
func verifyKey(parts ...string) (string, error) {
	for _, p := range parts {
		if !utf8.ValidString(p) {
			// encoding/json would replace the invalid bytes, merging distinct keys.
			return "", fmt.Errorf("store: %q is not valid UTF-8", p)
		}
	}
	b, _ := json.Marshal(parts) // a []string of valid UTF-8 always encodes
	return string(b), nil
}

// RecordVerification records one verification of nullifier for the action
// (rpID, action, environment), creating the action at now on first use. If
// the action's MaxVerifications is positive and the nullifier has reached
// it, nothing is written and the error wraps record.ErrLimitReached. A
// reuse reports the nullifier's original CreatedAt.
// SQL: INSERT INTO actions … ON CONFLICT DO NOTHING; then INSERT INTO
// nullifiers (k, created_at, count) VALUES ($1, $now, 1) ON CONFLICT (k) DO
// UPDATE SET count = count + 1 WHERE $limit = 0 OR count < $limit RETURNING
// created_at, count — no row → limit reached; both in one transaction.
func (db *DB) RecordVerification(ctx context.Context, rpID, action, environment, nullifier string, now time.Time) (record.Verification, error) {
	akey, err := verifyKey(rpID, environment, action)
	if err != nil {
		return record.Verification{}, err
	}
	nkey, err := verifyKey(rpID, environment, action, nullifier)
	if err != nil {
		return record.Verification{}, err
	}
	var v record.Verification
	err = db.Update(ctx, func(tx *engine.Tx) error {
		a, err := getOrCreateAction(tx, akey, rpID, action, environment, now)
		if err != nil {
			return err
		}
		n := nullifierRecord{CreatedAt: now.UTC()}
		if err := getJSON(tx, tableNullifiers, nkey, &n); err != nil && !errors.Is(err, record.ErrNotFound) {
			return err
		}
		if a.MaxVerifications > 0 && n.Count >= a.MaxVerifications {
			return fmt.Errorf("store: nullifier %s for action %s: %w", nullifier, akey, record.ErrLimitReached)
		}
		n.Count++
		v = record.Verification{CreatedAt: n.CreatedAt, Count: n.Count, Reused: n.Count > 1}
		return tx.Put(tableNullifiers, nkey, n)
	})
	if err != nil {
		return record.Verification{}, err
	}
	return v, nil
}

// SetActionLimit sets the action's max_verifications (0: unlimited),
// creating the action at now if it does not exist yet.
func (db *DB) SetActionLimit(ctx context.Context, rpID, action, environment string, maxVerifications int, now time.Time) error {
	if maxVerifications < 0 {
		return fmt.Errorf("store: max_verifications %d is negative", maxVerifications)
	}
	akey, err := verifyKey(rpID, environment, action)
	if err != nil {
		return err
	}
	return db.Update(ctx, func(tx *engine.Tx) error {
		a, err := getOrCreateAction(tx, akey, rpID, action, environment, now)
		if err != nil {
			return err
		}
		a.MaxVerifications = maxVerifications
		return tx.Put(tableActions, akey, a)
	})
}

// Action returns the action or an error wrapping record.ErrNotFound.
func (db *DB) Action(_ context.Context, rpID, action, environment string) (a record.Action, err error) {
	akey, err := verifyKey(rpID, environment, action)
	if err != nil {
		return a, err
	}
	err = db.View(func(tx *engine.ReadTx) error { return getJSON(tx, tableActions, akey, &a) })
	return a, err
}

// NullifierCount is the number of nullifiers recorded, over all actions.
func (db *DB) NullifierCount(context.Context) (n int, err error) {
	err = db.View(func(tx *engine.ReadTx) error { n = tx.Count(tableNullifiers); return nil })
	return n, err
}

func getOrCreateAction(tx *engine.Tx, akey, rpID, action, environment string, now time.Time) (record.Action, error) {
	var a record.Action
	err := getJSON(tx, tableActions, akey, &a)
	if !errors.Is(err, record.ErrNotFound) {
		return a, err
	}
	a = record.Action{RPID: rpID, Action: action, Environment: environment, CreatedAt: now.UTC()}
	return a, tx.Insert(tableActions, akey, a)
}
