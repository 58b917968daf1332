// Package cli holds worldid's commands other than serve: the operator
// commands that call the admin API through its client (app, identity,
// roots, action, keys, signup, orbkey, refresh, backup), the offline
// restore and migrate commands, the development wallet (wallet) and the
// guided tour (demo), with the shared flag handling (every flag falls back
// to WORLDID_<FLAG>), which the load tools (internal/bench) use too.
//
// Commands talk to a server over HTTP; demo starts one in-process through
// internal/server when no -server is given; restore and migrate (which run
// with the server stopped) go through internal/server's Restore and
// Migrate. Nothing here writes a store directly.
package cli
