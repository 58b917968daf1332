// Package record holds the plain data types and sentinel errors shared by the
// storage backends (package store) and the packages that use storage
// (oidc, refresh, verify, admin).
//
// It exists so that handlers can declare the small storage interface they
// need without importing a backend: an interface method's parameter and result
// types must be identical in both packages, so they live here. The package has
// no behaviour beyond validation helpers and imports only the standard library.
package record
