// Package server is worldid's start-up and wiring: the serve configuration
// (flags with WORLDID_* fallbacks, validated in one place), the data
// directory (admin token, key files, first-start setup), the storage backend
// (the JSON store or PostgreSQL), every handler given the store it declares,
// both listeners with all timeouts set, and the bounded shutdown; and the
// offline operations that open a backend themselves: Restore (a backup into
// an empty data dir or database) and Migrate (a stopped JSON-store data dir
// into an empty PostgreSQL database, verified table by table).
//
// It is the only package besides main that imports both handlers and
// storage backends (imports_test.go). It implements no protocol and parses
// no request.
package server
