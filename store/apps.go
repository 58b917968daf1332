package store

import (
	"context"
	"errors"
	"fmt"

	"worldid/record"
	"worldid/store/engine"
)

// Apps. This file is the pattern for every domain: table names as constants,
// writes as one Update built from the atomic helpers, reads as one View
// through getJSON/scanJSON, record sentinels as errors.
const (
	tableApps = "apps"    // app ID → record.App
	tableRPs  = "apps_rp" // rp_id → app ID: the unique index on RPID
)

// CreateApp registers a. It returns an error wrapping record.ErrExists if
// a.ID or a.RPID is taken; both constraints are checked in one Update, so a
// failed create leaves nothing behind.
func (db *DB) CreateApp(ctx context.Context, a record.App) error {
	return db.Update(ctx, func(tx *engine.Tx) error { return putApp(tx, a, false) })
}

// ImportApps stores apps in one Update, in order: each is created or, with
// replace, replaces the app of its ID (whose rp_id is then released). An
// app_id (without replace) or rp_id taken by a stored app or an earlier
// one of apps refuses the batch with a *record.ItemError naming the app and
// wrapping record.ErrExists; then nothing is written. A replacing app keeps the stored
// app's CreatedAt, and its UpdatedAt becomes the replacement's CreatedAt
// (the time of the import).
func (db *DB) ImportApps(ctx context.Context, apps []record.App, replace bool) error {
	return db.Update(ctx, func(tx *engine.Tx) error {
		for i, a := range apps {
			if err := putApp(tx, a, replace); err != nil {
				return &record.ItemError{Index: i, Err: err}
			}
		}
		return nil
	})
}

// putApp is CreateApp or, with replace, ImportApps of a within tx.
func putApp(tx *engine.Tx, a record.App, replace bool) error {
	if !replace {
		if err := tx.Insert(tableApps, a.ID, a); err != nil {
			return err
		}
		return tx.Insert(tableRPs, a.RPID, a.ID)
	}
	var old record.App
	switch err := getJSON(tx, tableApps, a.ID, &old); {
	case err == nil:
		tx.Delete(tableRPs, old.RPID)
		a.CreatedAt, a.UpdatedAt = old.CreatedAt, a.CreatedAt
	case !errors.Is(err, record.ErrNotFound):
		return err
	}
	if err := tx.Insert(tableRPs, a.RPID, a.ID); err != nil {
		return err
	}
	return tx.Put(tableApps, a.ID, a)
}

// App returns the app with the given ID or an error wrapping
// record.ErrNotFound. Reads never wait for I/O, so ctx is unused.
func (db *DB) App(_ context.Context, id string) (a record.App, err error) {
	err = db.View(func(tx *engine.ReadTx) error { return getJSON(tx, tableApps, id, &a) })
	return a, err
}

// AppByRP returns the app with the given rp_id or an error wrapping
// record.ErrNotFound.
func (db *DB) AppByRP(_ context.Context, rpID string) (a record.App, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		var id string
		if err := getJSON(tx, tableRPs, rpID, &id); err != nil {
			return err
		}
		return getJSON(tx, tableApps, id, &a)
	})
	return a, err
}

// Apps returns every app, sorted by ID.
func (db *DB) Apps(_ context.Context) (apps []record.App, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		apps, err = scanJSON[record.App](tx, tableApps, "")
		return err
	})
	return apps, err
}

// UpdateApp applies change to the app with the given ID in one Update and
// returns the result; an unknown ID wraps record.ErrNotFound. change may
// not alter the ID or the rp_id. If change returns an error, nothing is
// written.
// SQL: SELECT … FOR UPDATE; UPDATE apps SET … WHERE id = $1; one transaction.
func (db *DB) UpdateApp(ctx context.Context, id string, change func(*record.App) error) (a record.App, err error) {
	err = db.Update(ctx, func(tx *engine.Tx) error {
		if err := getJSON(tx, tableApps, id, &a); err != nil {
			return err
		}
		rpID := a.RPID
		if err := change(&a); err != nil {
			return err
		}
		if a.ID != id || a.RPID != rpID {
			return fmt.Errorf("store: UpdateApp may not change the ids of %q", id)
		}
		return tx.Put(tableApps, id, a)
	})
	return a, err
}

// DeleteApp removes the app and releases its rp_id; an unknown ID wraps
// record.ErrNotFound. The app's actions and nullifiers stay, so that
// importing it again does not make spent nullifiers fresh.
func (db *DB) DeleteApp(ctx context.Context, id string) error {
	return db.Update(ctx, func(tx *engine.Tx) error {
		var a record.App
		if err := getJSON(tx, tableApps, id, &a); err != nil {
			return err
		}
		tx.Delete(tableApps, id)
		tx.Delete(tableRPs, a.RPID)
		return nil
	})
}
