package store

import (
	"context"

	"worldid/record"
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
	return db.Update(ctx, func(tx *Tx) error {
		if err := tx.Insert(tableApps, a.ID, a); err != nil {
			return err
		}
		return tx.Insert(tableRPs, a.RPID, a.ID)
	})
}

// App returns the app with the given ID or an error wrapping
// record.ErrNotFound. Reads never wait for I/O, so ctx is unused.
func (db *DB) App(_ context.Context, id string) (a record.App, err error) {
	err = db.View(func(tx *ReadTx) error { return getJSON(tx, tableApps, id, &a) })
	return a, err
}

// AppByRP returns the app with the given rp_id or an error wrapping
// record.ErrNotFound.
func (db *DB) AppByRP(_ context.Context, rpID string) (a record.App, err error) {
	err = db.View(func(tx *ReadTx) error {
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
	err = db.View(func(tx *ReadTx) error {
		apps, err = scanJSON[record.App](tx, tableApps, "")
		return err
	})
	return apps, err
}
