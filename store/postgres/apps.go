package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// appColumns are the columns scanApp reads, in its order.
const appColumns = "id, rp_id, name, secret_hash, redirect_uris, created_ns"

// CreateApp registers a. It returns an error wrapping record.ErrExists if
// a.ID or a.RPID is taken (primary key, unique rp_id); the one INSERT
// either claims both or neither.
func (db *DB) CreateApp(ctx context.Context, a record.App) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	uris := a.RedirectURIs
	if uris == nil {
		uris = []string{} // pgx sends nil as NULL
	}
	_, err := db.pool.Exec(ctx, "INSERT INTO apps ("+appColumns+") VALUES ($1, $2, $3, $4, $5, $6)",
		a.ID, a.RPID, a.Name, a.SecretHash, uris, unixNano(a.CreatedAt))
	return db.fail(ctx, err)
}

// App returns the app with the given ID or an error wrapping
// record.ErrNotFound.
func (db *DB) App(ctx context.Context, id string) (record.App, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	a, err := pgx.CollectOneRow(db.query(ctx, "SELECT "+appColumns+" FROM apps WHERE id = $1", id), scanApp)
	if err != nil {
		return record.App{}, db.failRead(ctx, fmt.Sprintf("app %q", id), err)
	}
	return a, nil
}

// AppByRP returns the app with the given rp_id or an error wrapping
// record.ErrNotFound.
func (db *DB) AppByRP(ctx context.Context, rpID string) (record.App, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	a, err := pgx.CollectOneRow(db.query(ctx, "SELECT "+appColumns+" FROM apps WHERE rp_id = $1", rpID), scanApp)
	if err != nil {
		return record.App{}, db.failRead(ctx, fmt.Sprintf("app with rp_id %q", rpID), err)
	}
	return a, nil
}

// Apps returns every app, sorted by ID.
func (db *DB) Apps(ctx context.Context) ([]record.App, error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	apps, err := pgx.CollectRows(db.query(ctx, "SELECT "+appColumns+" FROM apps ORDER BY id"), scanApp)
	return apps, db.fail(ctx, err)
}

func scanApp(row pgx.CollectableRow) (a record.App, err error) {
	err = row.Scan(&a.ID, &a.RPID, &a.Name, &a.SecretHash, &a.RedirectURIs, (*unixNano)(&a.CreatedAt))
	return a, err
}
