// Package backup defines worldid's logical backup format, shared by both
// storage backends, the admin API that streams a backup of a running
// server, `worldid restore`, and `worldid migrate` (which verifies a copy
// with the same per-table digests).
//
// # Format
//
// A backup is UTF-8 JSON lines. The first line is the header
//
//	{"format":"worldid-backup/1","created_at":"2026-11-24T00:00:00Z","source":"json"}
//
// (source is the backend it was taken from: json or postgres). Then one
// line per row, {"t":"<table>","r":<row>}, grouped by table in the order of
// Tables; a row is the JSON encoding of the table's Go type (see Tables).
//
// The tables hold every durable record either backend keeps: apps, actions
// and nullifiers, OIDC signing keys and the records of revoked ones (kid
// and time, no key material), sign-in progress, spent proofs,
// authorization codes and revoked grants, identity-tree leaves, external
// roots (3.0 roots of trees kept elsewhere and World ID 4.0 registry
// roots), World ID 4.0 trust anchors (issuer and OPRF keys), settings,
// signups, Orb keys, pinned subs, PCP bindings and refreshes with the
// credentials they issued. What a backend derives from those (tree sizes,
// the rp_id index, the commitment index) is rebuilt by the restore, not
// written. Each backend has a test that fails when it keeps a table that
// is neither exported nor declared derived. A file written before a table
// was added reads as that table empty; a file with a table this version
// does not know is refused.
// The last line is the trailer
//
//	{"end":{"counts":{"apps":2,…},"digests":{"apps":"<hex>",…}},"sha256":"<hex>"}
//
// where sha256 is the SHA-256 of every byte before the trailer line. A
// file that lacks the trailer (truncated), whose checksum differs
// (tampered or damaged), whose counts differ from its rows, or that has
// anything after the trailer is refused before anything is restored.
//
// Each table's digest is the SHA-256 of its rows' SHA-256 sums, sorted:
// it does not depend on the order in which a backend lists rows, so a
// JSON-store backup and a PostgreSQL backup of the same state have equal
// digests, which is how `worldid migrate` verifies its copy.
//
// The table "files" holds the files of the data directory that the
// server needs besides the store (the issuer's EdDSA seed, the local
// Semaphore proving key and, if present, its verifying key), or with
// PostgreSQL their shared copies. A backup therefore holds secrets: it is
// written with mode 0600.
//
// It does not compress or encrypt; encrypt a backup before it leaves the
// machine (age, gpg).
package backup
