// Command worldid serves the World ID service family — Sign in with World ID
// (OpenID Connect), the proof-of-human credential issuer and proof
// verification — from one binary with a crash-safe file-backed store.
//
// main.go is wiring only: it dispatches the subcommand, parses flags and
// environment into internal/server.Config, validates it, starts the server
// and shuts it down on SIGINT/SIGTERM within a bound. internal/server opens
// the data directory, the store and the keys and wires the handlers;
// internal/cli holds the operator and developer commands.
//
// It implements no protocol itself: every interface lives in its own
// package (oidc, refresh, verify, registry, admin). See README.md and doc/.
package main
