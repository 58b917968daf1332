package store

import (
	"testing"

	"worldid/backup"
	"worldid/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Backend, func() storetest.Backend) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		reopen := func() storetest.Backend {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			db = mustOpen(t, dir, Options{})
			return db
		}
		return db, reopen
	})
}

func mustOpen(t testing.TB, dir string, opts Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func TestBackupConformance(t *testing.T) {
	storetest.RunBackup(t, func(t *testing.T) (storetest.BackupBackend, func(bool, func(backup.Emit) error) (storetest.BackupBackend, error)) {
		dir := t.TempDir()
		db := mustOpen(t, dir, Options{})
		t.Cleanup(func() { db.Close() })
		restore := func(force bool, load func(backup.Emit) error) (storetest.BackupBackend, error) {
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			err := Restore(dir, force, load, nil)
			db = mustOpen(t, dir, Options{})
			return db, err
		}
		return db, restore
	})
}
