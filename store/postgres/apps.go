package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"worldid/record"
)

// appColumns are the columns scanApp reads, in its order.
const appColumns = "id, rp_id, name, secret_hash, redirect_uris, created_ns, staging, disabled, updated_ns, profile, post_logout_redirect_uris, token_endpoint_auth_method, jwks, pkce_required, response_types, jwks_uri, rp_signing_key, sector_identifier_uri, sector_app_id"

// CreateApp registers a. It returns an error wrapping record.ErrExists if
// a.ID or a.RPID is taken (primary key, unique rp_id); the one INSERT
// either claims both or neither.
func (db *DB) CreateApp(ctx context.Context, a record.App) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	_, err := db.pool.Exec(ctx, insertApp, appArgs(a)...)
	return db.fail(ctx, err)
}

const insertApp = "INSERT INTO apps (" + appColumns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"

// appArgs are a's values in appColumns order.
func appArgs(a record.App) []any {
	uris, logoutURIs := a.RedirectURIs, a.PostLogoutRedirectURIs
	if uris == nil {
		uris = []string{} // pgx sends nil as NULL
	}
	if logoutURIs == nil {
		logoutURIs = []string{}
	}
	responseTypes := a.ResponseTypes
	if responseTypes == nil {
		responseTypes = []string{}
	}
	return []any{a.ID, a.RPID, a.Name, a.SecretHash, uris, unixNano(a.CreatedAt), a.Staging, a.Disabled, unixNano(a.UpdatedAt), a.Profile, logoutURIs, a.TokenEndpointAuthMethod, a.JWKS, a.PKCERequired, responseTypes, a.JWKSURI, a.RPSigningKey, a.SectorIdentifierURI, a.SectorAppID}
}

// ImportApps stores apps in one transaction, in order: each is created or,
// with replace, replaces the app of its ID. An app_id (without replace) or
// rp_id taken by a stored app or an earlier one of apps refuses the batch
// with a *record.ItemError naming the app and wrapping record.ErrExists;
// then nothing is written. A replacing app keeps the stored
// app's CreatedAt, and its UpdatedAt becomes the replacement's CreatedAt
// (the time of the import).
func (db *DB) ImportApps(ctx context.Context, apps []record.App, replace bool) error {
	ctx, cancel := db.deadline(ctx, batchTimeout(len(apps)))
	defer cancel()
	sql := insertApp
	if replace {
		sql += ` ON CONFLICT (id) DO UPDATE SET rp_id = $2, name = $3, secret_hash = $4, redirect_uris = $5,
			staging = $7, disabled = $8, updated_ns = $6, profile = $10, post_logout_redirect_uris = $11,
			token_endpoint_auth_method = $12, jwks = $13, pkce_required = $14, response_types = $15, jwks_uri = $16, rp_signing_key = $17, sector_identifier_uri = $18, sector_app_id = $19`
	}
	return db.fail(ctx, pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, a := range apps {
			b.Queue(sql, appArgs(a)...)
		}
		results := tx.SendBatch(ctx, &b)
		defer results.Close()
		for i := range apps {
			if _, err := results.Exec(); err != nil {
				// A taken id is the item's fault; anything else, the database's.
				if err := classify(ctx, err); errors.Is(err, record.ErrExists) {
					return &record.ItemError{Index: i, Err: err}
				}
				return err
			}
		}
		return results.Close()
	}))
}

// UpdateApp applies change to the app with the given ID under its row lock
// and returns the result; an unknown ID wraps record.ErrNotFound. change
// may not alter the ID or the rp_id. If change returns an error, nothing
// is written.
func (db *DB) UpdateApp(ctx context.Context, id string, change func(*record.App) error) (a record.App, err error) {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT "+appColumns+" FROM apps WHERE id = $1 FOR UPDATE", id)
		if a, err = pgx.CollectOneRow(rows, scanApp); err != nil {
			return err
		}
		rpID := a.RPID
		if err := change(&a); err != nil {
			return err
		}
		if a.ID != id || a.RPID != rpID {
			return fmt.Errorf("store: UpdateApp may not change the ids of %q", id)
		}
		_, err := tx.Exec(ctx, "UPDATE apps SET rp_id = $2, name = $3, secret_hash = $4, redirect_uris = $5, created_ns = $6, staging = $7, disabled = $8, updated_ns = $9, profile = $10, post_logout_redirect_uris = $11, token_endpoint_auth_method = $12, jwks = $13, pkce_required = $14, response_types = $15, jwks_uri = $16, rp_signing_key = $17, sector_identifier_uri = $18, sector_app_id = $19 WHERE id = $1", appArgs(a)...)
		return err
	})
	if err != nil {
		return record.App{}, db.failRead(ctx, fmt.Sprintf("app %q", id), err)
	}
	return a, nil
}

// DeleteApp removes the app; an unknown ID wraps record.ErrNotFound. Its
// actions and nullifiers stay (see the JSON store's DeleteApp).
func (db *DB) DeleteApp(ctx context.Context, id string) error {
	ctx, cancel := db.deadline(ctx, callTimeout)
	defer cancel()
	tag, err := db.pool.Exec(ctx, "DELETE FROM apps WHERE id = $1", id)
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return db.failRead(ctx, fmt.Sprintf("app %q", id), err)
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
	err = row.Scan(&a.ID, &a.RPID, &a.Name, &a.SecretHash, &a.RedirectURIs, (*unixNano)(&a.CreatedAt),
		&a.Staging, &a.Disabled, (*unixNano)(&a.UpdatedAt), &a.Profile, &a.PostLogoutRedirectURIs,
		&a.TokenEndpointAuthMethod, &a.JWKS, &a.PKCERequired, &a.ResponseTypes, &a.JWKSURI, &a.RPSigningKey, &a.SectorIdentifierURI, &a.SectorAppID)
	if len(a.PostLogoutRedirectURIs) == 0 {
		a.PostLogoutRedirectURIs = nil // as the file store reads an omitted list
	}
	if len(a.ResponseTypes) == 0 {
		a.ResponseTypes = nil
	}
	return a, err
}
