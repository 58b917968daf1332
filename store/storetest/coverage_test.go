package storetest_test

import (
	"reflect"
	"testing"

	"worldid/admin"
	"worldid/oidc"
	"worldid/refresh"
	"worldid/registry"
	"worldid/store"
	"worldid/store/postgres"
	"worldid/store/storetest"
	"worldid/verify"
)

// Both backends satisfy every storage interface a handler declares: a new
// method on one of them does not compile until both backends have it.
var (
	_ admin.Store    = (*store.DB)(nil)
	_ admin.Store    = (*postgres.DB)(nil)
	_ verify.Store   = (*store.DB)(nil)
	_ verify.Store   = (*postgres.DB)(nil)
	_ oidc.Store     = (*store.DB)(nil)
	_ oidc.Store     = (*postgres.DB)(nil)
	_ refresh.Store  = (*store.DB)(nil)
	_ refresh.Store  = (*postgres.DB)(nil)
	_ registry.Store = (*store.DB)(nil)
	_ registry.Store = (*postgres.DB)(nil)
)

// TestSuitesCoverHandlerStores: every method of every handler's Store is a
// method of some conformance suite's backend interface, so it cannot be
// added without a suite that exercises it on both backends.
func TestSuitesCoverHandlerStores(t *testing.T) {
	suites := []reflect.Type{
		reflect.TypeFor[storetest.Backend](),
		reflect.TypeFor[storetest.VerifyBackend](),
		reflect.TypeFor[storetest.OIDCBackend](),
		reflect.TypeFor[storetest.RefreshBackend](),
		reflect.TypeFor[storetest.RegistryBackend](),
		reflect.TypeFor[storetest.BackupBackend](),
	}
	covered := map[string]reflect.Type{}
	for _, s := range suites {
		for m := range s.Methods() {
			covered[m.Name] = m.Type
		}
	}
	for _, h := range []reflect.Type{
		reflect.TypeFor[admin.Store](),
		reflect.TypeFor[verify.Store](),
		reflect.TypeFor[oidc.Store](),
		reflect.TypeFor[refresh.Store](),
		reflect.TypeFor[registry.Store](),
	} {
		for m := range h.Methods() {
			switch typ, ok := covered[m.Name]; {
			case !ok:
				t.Errorf("%s.%s is in no conformance suite", h, m.Name)
			case typ != m.Type:
				t.Errorf("%s.%s is %v, but the suite tests %v", h, m.Name, m.Type, typ)
			}
		}
	}
}
