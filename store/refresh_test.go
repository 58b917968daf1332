package store

import (
	"testing"

	"worldid/store/storetest"
)

func TestRefreshConformance(t *testing.T) {
	storetest.RunRefresh(t, func(t *testing.T) (storetest.RefreshBackend, func() storetest.RefreshBackend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.RefreshBackend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}
