// Package cli holds worldid's commands other than serve: the operator
// commands that call the admin API through its client (app, identity,
// roots, action, keys, signup, orbkey, refresh, backup), the offline
// restore and migrate commands, the development wallet (wallet), the load
// generator (bench) and the guided tour (demo), with the shared flag
// handling (every flag falls back to WORLDID_<FLAG>).
//
// Commands talk to a server over HTTP; bench and demo start one in-process
// through internal/server when no -server is given, except `bench abuse`,
// which starts `worldid serve` as a child process (rate limits on) so that
// the server's memory is its own; restore and migrate (which run with the
// server stopped) go through internal/server's Restore and Migrate. Nothing
// here writes a store directly; bench abuse reads the JSON store's files to
// report what junk added.
package cli
