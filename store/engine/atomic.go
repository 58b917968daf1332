package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"worldid/record"
)

// Errors of the atomic helpers besides the record sentinels.
var (
	// ErrConflict: CompareAndSet found a different value.
	ErrConflict = errors.New("store: value differs from the expected one")
	// ErrLimit: Increment found the counter at its limit.
	ErrLimit = errors.New("store: counter limit reached")
)

// The helpers below are the store's unique constraints. Each has a direct SQL
// equivalent, given in its comment, so that every backend can offer the same
// domain semantics.

// Insert puts v at table/key only if the key is absent, else it returns an
// error wrapping record.ErrExists.
// SQL: INSERT INTO t (k, v) VALUES ($1, $2) — primary key violation → exists.
func (tx *Tx) Insert(table, key string, v any) error {
	if _, ok := tx.Get(table, key); ok {
		return fmt.Errorf("store: %s %q: %w", table, key, record.ErrExists)
	}
	return tx.Put(table, key, v)
}

// CompareAndSet replaces the value at table/key by next only if it is
// currently old, compared as the JSON encodings encoding/json produces. It
// returns an error wrapping record.ErrNotFound if the key is absent and
// ErrConflict if the value differs.
// SQL: UPDATE t SET v = $next WHERE k = $1 AND v = $old — no row → absent or
// conflict.
func (tx *Tx) CompareAndSet(table, key string, old, next any) error {
	cur, ok := tx.Get(table, key)
	if !ok {
		return fmt.Errorf("store: %s %q: %w", table, key, record.ErrNotFound)
	}
	want, err := json.Marshal(old)
	if err != nil {
		return fmt.Errorf("store: %s %q: %w", table, key, err)
	}
	if !bytes.Equal(cur, want) {
		return fmt.Errorf("store: %s %q: %w", table, key, ErrConflict)
	}
	return tx.Put(table, key, next)
}

// Increment adds one to the counter at table/key (an absent counter is
// zero) and returns the new value, unless the counter is already at or above
// limit: then it writes nothing and returns the current value and an error
// wrapping ErrLimit. The counter is stored as a JSON integer.
// SQL: INSERT INTO t (k, n) VALUES ($1, 1) ON CONFLICT (k) DO UPDATE
// SET n = t.n + 1 WHERE t.n < $limit RETURNING n — no row → limit.
func (tx *Tx) Increment(table, key string, limit int64) (int64, error) {
	var n int64
	if cur, ok := tx.Get(table, key); ok {
		if err := json.Unmarshal(cur, &n); err != nil {
			return 0, fmt.Errorf("store: %s %q is not a counter: %w", table, key, err)
		}
	}
	if n >= limit {
		return n, fmt.Errorf("store: %s %q: %w", table, key, ErrLimit)
	}
	n++
	return n, tx.Put(table, key, n)
}
