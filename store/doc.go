// Package store is worldid's file-backed JSON store (doc/design.md §3): the
// domain methods that the handlers' storage interfaces are satisfied by
// (apps.go, and one file per further domain), on top of the crash-safe
// engine of package store/engine.
//
// # Layering
//
// The engine (store/engine, whose doc states the file formats and the
// crash-safety contract) is tables of string keys and JSON values with
// View and Update transactions; DB embeds it. Domain methods are thin: one
// Update or one View each, table names as constants, results and errors in
// the vocabulary of package record (record.ErrNotFound, record.ErrExists,
// record.ErrUnavailable, wrapped; test with errors.Is). Every durability
// guarantee is the engine's: an acknowledged domain write is one
// acknowledged Update. Handlers never import this package. Each atomic
// helper the domain uses documents its SQL equivalent, which store/postgres
// implements; the conformance suites in store/storetest run against both
// backends.
//
// The leaves and the nullifiers are packed (codecs.go): the engine keeps
// their canonical rows as fixed-width records, which Open reads without
// decoding JSON and Leaves decodes in one pass, and finds a packed leaf by
// its commitment (a second index over the records), which keeps a
// commitment once per tree; only a leaf the codec does not pack has a
// leaf_index row. The leaf_index rows of packed leaves, which earlier
// versions wrote, are dropped when a data dir opens. OpenContext
// stops the opening when its context is done.
//
// # What it does not do
//
// One process owns a directory at a time: several replicas use
// store/postgres. Backups are logical (backup.go, package backup): Export
// emits a copy of the durable state; ExportDir does the same for a stopped
// store without changing a file (Open would compact); Restore writes a new
// snapshot (LSN 0, no journal) into a directory whose store is empty, or
// any with force, renaming it into place only when complete. The one thing
// never journaled is MarkScanned's sign-in scan marks: a display hint
// anyone can cause, kept here, beside the engine, in a bounded map (4096)
// and lost on restart. Context arguments are checked only before an Update
// runs; reads never block on I/O.
package store
