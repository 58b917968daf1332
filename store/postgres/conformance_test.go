package postgres

import (
	"context"
	"testing"

	"worldid/admin"
	"worldid/backup"
	"worldid/oidc"
	"worldid/refresh"
	"worldid/registry"
	"worldid/store/storetest"
	"worldid/verify"
)

// The store serves every handler's storage interface.
var (
	_ verify.Store   = (*DB)(nil)
	_ oidc.Store     = (*DB)(nil)
	_ registry.Store = (*DB)(nil)
	_ admin.Store    = (*DB)(nil)
	_ refresh.Store  = (*DB)(nil)
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Backend, func() storetest.Backend) {
		db, reopen := openFresh(t)
		return db, func() storetest.Backend { return reopen() }
	})
}

func TestVerifyConformance(t *testing.T) {
	storetest.RunVerify(t, func(t *testing.T) (storetest.VerifyBackend, func() storetest.VerifyBackend) {
		db, reopen := openFresh(t)
		return db, func() storetest.VerifyBackend { return reopen() }
	})
}

func TestOIDCConformance(t *testing.T) {
	storetest.RunOIDC(t, func(t *testing.T) (storetest.OIDCBackend, func() storetest.OIDCBackend) {
		db, reopen := openFresh(t)
		return db, func() storetest.OIDCBackend { return reopen() }
	})
}

func TestRefreshConformance(t *testing.T) {
	storetest.RunRefresh(t, func(t *testing.T) (storetest.RefreshBackend, func() storetest.RefreshBackend) {
		db, reopen := openFresh(t)
		return db, func() storetest.RefreshBackend { return reopen() }
	})
}

func TestRegistryConformance(t *testing.T) {
	storetest.RunRegistry(t, func(t *testing.T) (storetest.RegistryBackend, func() storetest.RegistryBackend) {
		db, reopen := openFresh(t)
		return db, func() storetest.RegistryBackend { return reopen() }
	})
}

func TestBackupConformance(t *testing.T) {
	storetest.RunBackup(t, func(t *testing.T) (storetest.BackupBackend, func(bool, func(backup.Emit) error) (storetest.BackupBackend, error)) {
		db, _ := openFresh(t)
		return db, func(force bool, load func(backup.Emit) error) (storetest.BackupBackend, error) {
			return db, db.Restore(context.Background(), force, load, nil)
		}
	})
}
