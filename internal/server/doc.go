// Package server is worldid's start-up and wiring: the serve configuration
// (flags with WORLDID_* fallbacks, validated in one place), the data
// directory (admin token, key files, first-start setup), the storage backend
// (the JSON store or PostgreSQL), every handler given the store it declares,
// both listeners with all timeouts set, and the bounded shutdown; and the
// offline operations that open a backend themselves: Restore (a backup into
// an empty data dir or database) and Migrate (a stopped JSON-store data dir
// into an empty PostgreSQL database, verified table by table).
//
// Store health: the backend's Health is checked every second and on each
// GET /healthz (never two checks at once), which answers 503 with the
// reason while the store cannot accept writes; worldid_store_healthy (1/0)
// and worldid_store_health_failures_total export it. A JSON store that
// failed repairs itself (package store, "Failure"), PostgreSQL reconnects:
// the process keeps running and serving reads, so a supervisor restart is
// needed only when the start itself fails (exit status 1). A JSON store
// whose files hold less than it had acknowledged stops the start with the
// recovery command (-accept-data-loss): checked against the store's own
// mark and, once the first start has completed, against its witness in
// first-start.done (the store's identity and newest acknowledged LSN), so
// that deleting the store's files together with the mark is caught too.
// A restore resets the witness to the restored store.
//
// First start: the admin token, keys and store are each created only if
// absent, and first-start.done is written after the demo app, so a first
// start that was killed midway is completed by the next one. The demo app's
// id is recorded before the app is stored, so a start killed before its
// secret was printed is followed by one that prints it with a new secret.
//
// It is the only package besides main that imports both handlers and
// storage backends (imports_test.go). It implements no protocol and parses
// no request.
package server
