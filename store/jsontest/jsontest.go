package jsontest

import (
	"log/slog"
	"testing"

	"worldid/store"
)

// Open opens an empty JSON store for t; its log is discarded.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
