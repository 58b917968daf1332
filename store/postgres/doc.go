// Package postgres is worldid's PostgreSQL storage backend: the
// same domain methods as the file-backed JSON store of package store, with
// the same semantics and the same record sentinel errors, for operators who
// run several replicas on one database or want its replication and backups.
// It is selected with -store postgres://… (WORLDID_STORE); the JSON store
// stays the default. Both pass the conformance suites of store/storetest.
//
// # Connecting
//
// Open takes a libpq connection string (a postgres:// URL or key=value
// pairs), as parsed by github.com/jackc/pgx/v5. Pool settings go in the
// string too (pool_max_conns, default max(4, CPUs)), and so does the
// schema: search_path=… selects where the tables live. Each connection
// attempt times out after connect_timeout, 10 s unless the string says
// otherwise.
// Every session runs at READ COMMITTED whatever the server's default, since
// the patterns below depend on it. Open pings the server and applies the
// migrations; an error names the server's host:port ("store: cannot reach
// PostgreSQL at host:port: …"), never the password.
//
// # Schema and migrations
//
// The schema is embedded (migrations/NNNN_name.sql) and applied by Open.
// The table schema_migrations (version, name, sha256, applied_at) records
// what was applied. Open takes pg_advisory_lock(0x776f726c646964) on a
// connection of its own, so that replicas starting at once migrate one
// after the other, and applies each missing migration in its own
// transaction. It refuses a database with a migration this binary does not
// know (a newer binary ran) or whose applied migration differs from the
// embedded one.
//
// Migration 1 creates, with every key column COLLATE "C" so that ORDER BY
// is byte order like the JSON store's sorted keys:
//
//	apps            id PK, rp_id UNIQUE, name, secret_hash, redirect_uris text[], created_ns
//	actions         id identity PK, UNIQUE (rp_id, environment, action bytea), max_verifications, created_ns
//	nullifiers      PK (action_id, nullifier), count, created_ns
//	signing_keys    id PK, private_key bytea, created_ns, activate_ns
//	signin_progress id PK, state, subject, verification_level, auth_ns, expires_ns (indexed)
//	spent_proofs    key PK, expires_ns (indexed)
//	auth_codes      id PK, the code's fields, auth_ns, expires_ns, retain_ns (indexed), redeemed
//	revoked_grants  grant_id PK, retain_ns (indexed)
//	trees           tree PK, size (0 to 2^30)
//	leaves          PK (tree, idx), UNIQUE (tree, commitment), at_ns; tree references trees
//	external_roots  PK (tree, root), depth, at_ns
//	switches        name PK, enabled (the refresh on/off switch)
//	signups         id_commitment PK, signup_id, verified_ns
//	orb_keys        PK (orb_id, pem), added identity (the order keys were added)
//	pinned_subs     id_commitment PK, sub
//	pcp_bindings    pcp_digest PK, id_commitment
//	refreshes       PK (id_commitment, at_s, credential_id numeric(20)), sub, at_ns, pcp_digest
//
// Migration 2 adds shared_files (name PK, content bytea, created_ns): the key
// files every replica must share, which the JSON store leaves in its data
// dir (the local proving key and the issuer seed). StoreSharedFile inserts
// with ON CONFLICT DO NOTHING and returns what is stored, so replicas that
// start together all adopt the first one's file.
//
// Migration 3 adds trust_anchors (PK (kind, id), x, y, at_ns): World ID 4.0
// trust anchors; AddTrustAnchor upserts (INSERT … ON CONFLICT DO UPDATE), so
// setting an anchor again replaces it.
// Migration 4 adds the app lifecycle columns to apps: staging and disabled
// (booleans) and updated_ns (the last operator change; the zero time when
// none). Migration 5 adds refreshes.credential (the credential a refresh
// issued, returned again on a repeat). Migration 6 replaces
// signin_requests by signin_progress: pending sign-ins travel as sealed
// tokens, and only what happened to one is stored. Migration 7 adds the
// UNLOGGED signin_scans (id PK, expires_ns indexed): the wallet's reads
// (MarkScanned), visible to every replica without a WAL write, emptied by
// a crash of PostgreSQL, and left out of backups. Migration 8 adds the
// UNLOGGED bridge_requests (id PK, expires_ns indexed): the built-in Wallet
// Bridge relay's ciphertexts (bridge.go implements bridge/relay.Store, one
// atomic statement or batch per method), shared by replicas, left out of
// backups; each creation deletes up to 16 dead rows. Migration 9 adds
// apps.profile (text, empty for every existing app: the v1 contract) and
// apps.post_logout_redirect_uris (text[], empty by default),
// apps.token_endpoint_auth_method, apps.jwks and apps.jwks_uri (text,
// empty by default),
// apps.pkce_required (boolean, false) and apps.response_types (text[],
// empty: all). Migration 10 adds revoked_keys (id PK, revoked_ns): the kid
// and time of each revoked signing key, which RevokeSigningKey writes in
// the statement that deletes the key (DELETE … RETURNING feeding an
// INSERT), never its key material.
// Migration 11 adds apps.rp_signing_key (text, empty: the app's sign-in
// stays World ID 3.0), a secret backups carry like secret_hash.
// Migration 12 adds device_grants (id PK, user_code UNIQUE, client_id,
// scope, state, subject, verification_level, auth_ns, interval_s,
// polled_ns, expires_ns, retain_ns indexed): the device authorization
// grants (device.go), keyed by the SHA-256 of the device code and of the
// user code, pruned once retain_ns passed, carried by backups.
// Migration 13 adds apps.sector_identifier_uri and apps.sector_app_id
// (text, empty: the app proves for its own app_id, its subjects as
// before; record.App.ProofAppID).
//
// Times (*_ns) are bigint nanoseconds since the Unix epoch, exact like the
// JSON store's RFC 3339 text, within 1677-09-21 to 2262-04-11; the zero
// time.Time is stored as -2^63, below every other time. A time outside the
// range is refused. refreshes.at_s (whole seconds) is generated from at_ns,
// because the JSON store keys refreshes by second. action is bytea because
// it is caller text that may hold U+0000, which PostgreSQL text cannot.
//
// # Uniqueness rules
//
// Every rule is enforced by the database, never by a read in Go followed by
// a write without a lock:
//
//	app id, rp_id            primary key, unique; one INSERT claims both or neither
//	nullifier per action     INSERT … ON CONFLICT (action_id, nullifier) DO UPDATE SET count = count + 1
//	max_verifications        … WHERE NOT (limit > 0 AND count >= limit): the update locks the nullifier's
//	                         row and checks its newest version, so concurrent verifications queue
//	first signing key,       LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE (reads pass), then
//	  one pending successor  INSERT … WHERE NOT EXISTS (a key activating after the bound)
//	sign-in request once     DELETE … RETURNING: one consumer gets the row
//	proof used once          primary key on spent_proofs
//	code redeemed once       UPDATE … SET redeemed WHERE NOT redeemed AND expires_ns > now AND the
//	                         binding (client, redirect URI, challenge) matches RETURNING; no row:
//	                         WITH code AS (SELECT …) INSERT INTO revoked_grants … WHERE redeemed
//	                         AND the client matches (a replay), and the code says why
//	signing key revoked once WITH gone AS (DELETE FROM signing_keys … RETURNING) INSERT INTO
//	                         revoked_keys … FROM gone: a concurrent revocation waits for the row
//	                         lock, deletes nothing, then finds the record (ErrKeyRevoked)
//	revocation (RevokeGrant) INSERT INTO revoked_grants … ON CONFLICT DO UPDATE SET retain_ns =
//	                         GREATEST(…): revoked access tokens' grants and ended login sessions
//	one commitment per tree  unique (tree, commitment)
//	leaf index order         INSERT INTO trees … ON CONFLICT DO UPDATE SET size = size + n RETURNING
//	                         size - n, and the batch's n leaves from there (unnest … WITH
//	                         ORDINALITY), in one statement: the row lock on the tree serializes its
//	                         appends until commit, so indexes are consecutive and committed in
//	                         order; a refused leaf undoes the increment and the whole batch
//	external root once       primary key (tree, root)
//	sub pinned, PCP bound    in one transaction: INSERT … ON CONFLICT DO NOTHING, then SELECT the
//	                         bound value (a new statement, which sees a concurrent winner) and
//	                         compare; a mismatch rolls back the whole refresh
//	orb key once             primary key (orb_id, pem)
//	device grant step        SELECT … FOR UPDATE, the caller's pure update, UPDATE, one transaction:
//	                         a device grant is approved or denied once, redeemed once, and
//	                         concurrent polls on two replicas run one after the other
//	user code once           unique user_code (a collision: ErrExists, the provider draws again)
//
// Unique violations (SQLSTATE 23505) map to record.ErrExists.
//
// # Isolation and atomicity
//
// Everything runs at READ COMMITTED. ON CONFLICT guarantees insert-or-update
// under concurrency at that level, an UPDATE re-checks its WHERE on the
// newest version of a row it waited for, and each statement takes a fresh
// snapshot; the rules above use only these guarantees and row or table
// locks, so no transaction can fail to serialize and none is retried.
// Statements that must be atomic together and need no Go logic between them
// are sent as one pgx batch, which PostgreSQL runs as one implicit
// transaction in one round trip (RecordVerification, PruneExpired);
// AddSigningKey and RecordRefresh use explicit transactions.
//
// # Failure
//
// Connection errors (refused, reset, lost or timed-out connections, a
// shutting-down server, SQLSTATE classes 08, 53 and 58, a read-only
// standby) wrap record.ErrUnavailable and the cause, so handlers answer
// 503. Such an error also closes the pool's idle connections, which most
// likely broke the same way, so that once the server is back the next call
// connects afresh: the store recovers without a restart. As with the JSON
// store, a write that returned ErrUnavailable may or may not have
// committed. Every call has a deadline of its own, so a server that stops
// answering on an open connection (frozen by SIGSTOP, partitioned) fails
// the call with ErrUnavailable within that bound instead of hanging it; a
// caller's context that is canceled or expires first returns the
// context's error. The bounds keep every request's answer before the HTTP
// write timeout (30 s), after which a client would get nothing:
//
//   - 5 s for a call a request makes;
//   - for a batch a request writes (AppendLeaves, PutSignups, ImportApps:
//     at most 1000 rows from the admin API), 5 s plus 5 ms a row, at most
//     20 s (800 identities: 9 s); reading a shared file (a few MiB, for a
//     backup) 20 s;
//   - for operations of any length (Leaves, which at start reads whole
//     trees, Export and Restore) 5 s for each wait for the database, so
//     they proceed while it answers and fail within 5 s once it stops; the
//     time their caller takes between waits (streaming to a backup client,
//     reading a backup file) does not count;
//   - 1 minute for what no request waits for: Open with its migrations,
//     storing a shared file at start, and the background PruneExpired.
//
// POST /admin/identities makes two calls (it reads the tree's new leaves,
// then appends) and may first wait for the follower's catch-up of the same
// tree: at worst about 20 s. Health pings the server with a 2 s deadline.
// A key PostgreSQL text cannot hold (U+0000, invalid UTF-8) is never
// found; writing one fails.
//
// # Backup and restore
//
// Export emits every table in the logical format of package backup from one
// REPEATABLE READ, read-only transaction: a consistent snapshot that blocks
// no writer. Restore loads such rows (shared files included) in one
// transaction after locking every table; it refuses a database with any row
// (ErrNotEmpty) unless forced, when it truncates them first, and lets its
// caller read the rows back inside the transaction (restore and migrate
// compare their digests with the source's) and undo it. Actions get
// new identity ids; nullifiers are joined to them by (rp_id, environment,
// action); tree sizes are derived from the leaves, which must be
// contiguous from 0; orb keys are inserted in position order. Every table
// the migrations create is exported, derived (trees) or shared_files
// (TestEveryTableIsBackedUp).
//
// # What it does not do
//
// It does not route reads
// to replicas, retry failed calls, or prune nullifiers, actions or
// refreshes (as the JSON store does not). Text other than actions cannot
// hold U+0000: writing it fails, where the JSON store would accept it (the
// handlers validate or hex-decode such fields first). Actions are never
// deleted, so nullifiers carry no foreign key to them: its check would
// share-lock the action's row in every verification. Tests need a server:
// WORLDID_TEST_POSTGRES names one (testdb.sh starts one); without it they
// skip.
package postgres
