package store

import (
	"testing"

	"worldid/store/storetest"
)

var _ storetest.OIDCBackend = (*DB)(nil)

func TestOIDCConformance(t *testing.T) {
	storetest.RunOIDC(t, func(t *testing.T) (storetest.OIDCBackend, func() storetest.OIDCBackend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.OIDCBackend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}
