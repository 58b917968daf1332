package store

import (
	"testing"

	"worldid/store/storetest"
)

func TestVerifyConformance(t *testing.T) {
	storetest.RunVerify(t, func(t *testing.T) (storetest.VerifyBackend, func() storetest.VerifyBackend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.VerifyBackend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}
