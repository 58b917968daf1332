package postgres

import (
	"context"
	"testing"

	"worldid/store/postgres/pgtest"
)

func mustOpen(t testing.TB, dsn string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

// openFresh opens a store on a fresh schema, closed when t ends. reopen
// closes the pool and opens a new one on the same schema.
func openFresh(t testing.TB) (db *DB, reopen func() *DB) {
	t.Helper()
	dsn := pgtest.FreshSchema(t)
	db = mustOpen(t, dsn)
	t.Cleanup(func() { db.Close() })
	return db, func() *DB {
		db.Close()
		db = mustOpen(t, dsn)
		return db
	}
}
