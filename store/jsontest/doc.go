// Package jsontest gives other packages' tests the JSON store to work on,
// as store/postgres/pgtest gives them a PostgreSQL database: a fresh, empty
// store in the test's temporary directory, closed when the test ends. A
// handler's tests use it instead of an in-memory fake, so the storage they
// run on is the one store/storetest holds to the conformance suite both
// backends pass.
package jsontest
