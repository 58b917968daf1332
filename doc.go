// Command worldid serves the World ID service family — Sign in with World ID
// (OpenID Connect), the proof-of-human credential issuer and proof
// verification — from one binary with a crash-safe file-backed store.
//
// main.go is wiring only: flags and environment → Config.Validate → store
// → keys → handlers → http.Server. The other files of this package are the
// subcommands: config.go (flags, environment, validation), datadir.go and
// localkeys.go (the data directory's files), cmd_admin.go (operator
// commands through the admin API), cmd_wallet.go (the development wallet),
// demo.go (`worldid demo`) and cmd_bench.go (`worldid bench`).
//
// It does not implement any protocol itself: every interface lives in its
// own package (oidc, refresh, verify, registry, admin), each given its
// storage by this package. See README.md.
package main
