package store

import (
	"testing"

	"worldid/store/storetest"
)

func TestRegistryConformance(t *testing.T) {
	storetest.RunRegistry(t, func(t *testing.T) (storetest.RegistryBackend, func() storetest.RegistryBackend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.RegistryBackend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}
