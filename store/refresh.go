package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"worldid/record"
	"worldid/store/engine"
)

// Credential refresh (doc/design.md §7): signup records, trusted Orb keys, the
// on/off switch, and the refreshes with their two unique constraints (sub
// pinned per identity commitment, PCP digest bound to one commitment).
// Spent x-zkp-proofs use UseProofOnce (oidc.go) with "refresh:" keys.
const (
	tableSettings   = "settings"        // setting name → value
	tableSignups    = "refresh_signups" // id commitment → record.Signup
	tableOrbKeys    = "refresh_orbkeys" // orb_id → []string (PEM keys, in order added)
	tablePinnedSubs = "refresh_subs"    // id commitment → sub
	tablePCPs       = "refresh_pcps"    // hashes.json SHA-256 hex → id commitment
	tableRefreshes  = "refresh_log"     // refreshKey(record.Refresh) → record.Refresh

	settingRefreshEnabled = "refresh_enabled" // bool; absent means enabled
)

// SetRefreshEnabled turns the refresh endpoint on or off.
func (db *DB) SetRefreshEnabled(ctx context.Context, on bool) error {
	return db.Update(ctx, func(tx *engine.Tx) error { return tx.Put(tableSettings, settingRefreshEnabled, on) })
}

// RefreshEnabled reports whether refresh is on; it is until turned off.
func (db *DB) RefreshEnabled(_ context.Context) (on bool, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		err := getJSON(tx, tableSettings, settingRefreshEnabled, &on)
		if errors.Is(err, record.ErrNotFound) {
			on = true
			return nil
		}
		return err
	})
	return on, err
}

// PutSignup stores one signup record (see PutSignups).
func (db *DB) PutSignup(ctx context.Context, s record.Signup) error {
	return db.PutSignups(ctx, []record.Signup{s})
}

// PutSignups stores every record in one Update, or none if one fails
// record.Signup.Validate. A record replaces the one of the same identity
// commitment, so that re-importing a file is idempotent.
func (db *DB) PutSignups(ctx context.Context, ss []record.Signup) error {
	for i, s := range ss {
		if err := s.Validate(); err != nil {
			return fmt.Errorf("store: signup %d: %w", i, err)
		}
	}
	return db.Update(ctx, func(tx *engine.Tx) error {
		for _, s := range ss {
			s.VerifiedAt = s.VerifiedAt.UTC()
			if err := tx.Put(tableSignups, s.IDCommitment, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// Signup returns the signup record of idComm or an error wrapping
// record.ErrNotFound.
func (db *DB) Signup(_ context.Context, idComm string) (s record.Signup, err error) {
	err = db.View(func(tx *engine.ReadTx) error { return getJSON(tx, tableSignups, idComm, &s) })
	return s, err
}

// AddOrbKey trusts pem for orbID. The PEM is stored as given; the caller
// validates it (refresh.ParseOrbKeyPEM). Adding a key the orb already has
// returns an error wrapping record.ErrExists.
func (db *DB) AddOrbKey(ctx context.Context, orbID, pem string) error {
	if orbID == "" || pem == "" {
		return errors.New("store: orb_id and key must not be empty")
	}
	return db.Update(ctx, func(tx *engine.Tx) error {
		var keys []string
		if err := getJSON(tx, tableOrbKeys, orbID, &keys); err != nil && !errors.Is(err, record.ErrNotFound) {
			return err
		}
		if slices.Contains(keys, pem) {
			return fmt.Errorf("store: orb %q key: %w", orbID, record.ErrExists)
		}
		return tx.Put(tableOrbKeys, orbID, append(keys, pem))
	})
}

// OrbKeys returns the PEM keys trusted for orbID, in the order added; an
// unknown orb has none.
func (db *DB) OrbKeys(_ context.Context, orbID string) (keys []string, err error) {
	keys = []string{}
	err = db.View(func(tx *engine.ReadTx) error {
		err := getJSON(tx, tableOrbKeys, orbID, &keys)
		if errors.Is(err, record.ErrNotFound) {
			return nil
		}
		return err
	})
	return keys, err
}

// PinnedSub returns the sub the first refresh of idComm pinned, or an
// error wrapping record.ErrNotFound.
func (db *DB) PinnedSub(_ context.Context, idComm string) (sub string, err error) {
	err = db.View(func(tx *engine.ReadTx) error { return getJSON(tx, tablePinnedSubs, idComm, &sub) })
	return sub, err
}

// RecordRefresh stores r in one Update: it pins r.Sub to r.IDCommitment if
// nothing is pinned (else the pinned sub must equal r.Sub, or the error
// wraps record.ErrSubMismatch), binds r.PCPDigest, when set, to
// r.IDCommitment (bound to another: record.ErrPCPReused), remembers
// r.ProofKey, when set, as UseProofOnce does (used before:
// record.ErrExists), and appends r to the commitment's refreshes. A
// failure writes nothing.
// SQL: INSERT INTO subs … ON CONFLICT DO NOTHING, then SELECT sub; the
// same for pcps; INSERT INTO proofs; INSERT INTO refreshes; one
// transaction.
func (db *DB) RecordRefresh(ctx context.Context, r record.Refresh) error {
	if err := r.Validate(); err != nil {
		return err
	}
	r.At = r.At.UTC()
	return db.Update(ctx, func(tx *engine.Tx) error {
		if r.ProofKey != "" {
			if err := tx.Insert(tableProofs, r.ProofKey, r.ProofExpiresAt); err != nil {
				return err
			}
		}
		if err := bindOnce(tx, tablePinnedSubs, r.IDCommitment, r.Sub, record.ErrSubMismatch); err != nil {
			return err
		}
		if r.PCPDigest != "" {
			if err := bindOnce(tx, tablePCPs, r.PCPDigest, r.IDCommitment, record.ErrPCPReused); err != nil {
				return err
			}
		}
		return tx.Insert(tableRefreshes, refreshKey(r), r)
	})
}

// bindOnce sets table/key to value if absent; a different stored value
// is an error wrapping conflict.
func bindOnce(tx *engine.Tx, table, key, value string, conflict error) error {
	var stored string
	err := getJSON(tx, table, key, &stored)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return tx.Insert(table, key, value)
	case err != nil:
		return err
	case stored != value:
		return fmt.Errorf("store: %s %q: %w", table, key, conflict)
	}
	return nil
}

// refreshKey orders a commitment's refreshes by time, then credential id.
func refreshKey(r record.Refresh) string {
	return fmt.Sprintf("%s/%020d/%016x", r.IDCommitment, r.At.Unix(), r.CredentialID)
}

// Refreshes returns the refreshes of idComm, oldest first.
func (db *DB) Refreshes(_ context.Context, idComm string) (rs []record.Refresh, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		rs, err = scanJSON[record.Refresh](tx, tableRefreshes, idComm+"/")
		return err
	})
	return rs, err
}
