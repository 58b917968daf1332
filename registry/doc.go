// Package registry is the identity registry: one incremental Merkle tree
// (depth 30, circomlib Poseidon, semaphore.Tree) per credential type and
// environment, each with the history of its roots, plus the roots of trees
// kept elsewhere that the operator adds; and the checker that verifies
// World ID 3.0 proofs against them (doc/design.md §5, §6; doc/crypto.md §g).
//
// Trees are named "<identifier>/<environment>", identifier ∈ orb, device,
// document, secure_document, face and environment ∈ production, staging.
// "selfie" is IDKit 4's name for the face credential and names the face
// tree everywhere (record.CredentialType); a "selfie/<environment>" tree
// is still loaded for leaves and roots stored under that name before, and
// its roots verify under both names. Leaves are stored (Store.AppendLeaves) before they enter the
// in-memory tree, stamped with their insertion time: their root's creation
// time.
//
// AddIdentities inserts a batch: one atomic store append, its leaves all
// stamped with one time, then semaphore.Tree.InsertBatch (about 2 hashes
// per leaf instead of 30; AddIdentity is a batch of one). Only the batch's
// final root enters the live history: the roots between its leaves were
// never observable, since the tree stays locked for the whole batch, so no
// inclusion proof ever named them. A zero commitment is refused before it
// is stored.
//
// # Loading and checkpoints
//
// Stored leaves the in-memory tree lacks (at start, or added by another
// replica) are inserted in chunks of 1024, one InsertBatch each, and the
// history gets the root after each run of leaves sharing one time (one
// batch: the live history exactly, unless two batches got the same time)
// and the root after each chunk (a prefix of the tree: harmless), so the
// tree and its history agree between chunks and a cancelled context stops
// the work between them. Roots of runs created more than 7 days (the
// largest max_age) before they are loaded are not added: after a restart
// such a root is unknown (invalid_merkle_root) rather than too old.
//
// With Options.Checkpoints a start first reads each tree's checkpoint
// (checkpoint.go: the tree's nodes, semaphore.Snapshot's encoding, and its
// roots of the last 7 days plus the current one, with a SHA-256 of the
// whole). It is used only if its digest and framing check, it names the
// tree, its tree parses (semaphore.ParseTree rehashes its top levels),
// holds no more leaves than the store, its leaves equal the first stored
// leaves and its current root is its tree's root; the stored leaves after
// it are then inserted as above. Otherwise the tree is rebuilt from every
// stored leaf, and the log says why. The leaves and the top levels are
// thus checked; the levels between them (below the lowest level of at
// most 1024 nodes) are vouched for by the digest, which catches a damaged
// or truncated file, not a forger who recomputes it: checking them too
// would cost the rebuild's hashes, and writing a checkpoint takes access
// to the data dir, which also holds the admin token (identity add) and,
// with the JSON store, the stored leaves themselves. SaveCheckpoints (KeepCheckpoints: every interval, and
// the server at shutdown) writes the checkpoint of each tree that gained
// leaves; it locks the tree only to snapshot it (O(depth) and the roots),
// never while encoding or writing.
//
// Which verifying key checks a proof is decided by its root: roots of the
// local trees were proven with the local key (generated on first start,
// semaphore/prover.Setup); an external root names the depth of the published
// Semaphore v3 key its tree uses (World ID: 30). Local and external roots
// keep separate histories, so each has its own "current" root, which is
// valid whatever its age (doc/crypto.md §g "Root validity").
//
// Options.TestRoots is the developer simulator's hook (set by the server
// only with -simulator): a root no history knows is accepted, with the
// local key, when the hook names it the root of its in-memory tree of test
// identities for the credential type and environment. Those identities are
// never stored, so no other process and no later start accepts them.
//
// CheckClaim order: tree exists → proof decodes (invalid_format /
// invalid_proof) → root known (invalid_merkle_root) and fresh
// (root_too_old) → Groth16 with public inputs [root, nullifier_hash,
// signal_hash, ExternalNullifier(app_id, action)] (invalid_proof).
// Concurrent checks share pairings through semaphore.Batcher unless
// batching is disabled; answers are identical either way.
//
// # World ID 4.0 (CheckClaimV4)
//
// What World's WorldIDVerifierV2 contract checks (world-id-protocol
// contracts/src/core/WorldIDVerifier.sol, WorldIDVerifierV2.sol
// @bc22329f), in its order, with this server's operator beside the chain:
// the action's first byte must be 0x00 for a uniqueness claim and 0x02
// for a session claim (one with a non-zero session input; InvalidAction,
// verification_failed); the root (the proof's
// fifth word) must be a 4.0 root the operator added for the environment
// (AddRootV4, stored as an external root of tree
// "world_id_4/<environment>", valid as external roots are) or one the root
// source holds valid (environment_mismatch if it is valid only in the
// other environment; invalid_root otherwise, and for a root ≥ r, which no
// registry holds);
// the issuer_schema_id must have an issuer key (trust anchor
// "issuer_key": stored by the operator, which wins; else, where
// Options.Keys has the environment's issuer registry, what World's
// CredentialSchemaIssuerRegistry holds; else Options.DefaultAnchors — the
// server passes its own PoH issuer key for schema 1;
// invalid_credential_issuer otherwise); the rp_id must have an OPRF key
// (anchor "oprf_key", looked up the same way, on chain in World's
// OprfKeyRegistry; verification_failed otherwise); a key source that
// cannot answer is an error (verification_error), never a key;
// expires_at_min + MinExpiration (default 18000 s, the deployed
// threshold) must not be before now, nor overflow
// uint64, where the contract reverts (verification_failed); then, as
// Verifier.sol, the proof points must decompress (invalid_proof), every
// other public input must be < r (invalid_public_input), and package
// oprfproof checks the proof (invalid_proof) over the Batcher shared with
// 3.0 proofs. Anchors are
// stored (AddTrustAnchor replaces one of the same kind and id) and
// followed by Refresh like roots.
//
// # Root source
//
// Options.Roots (package rootsource in the server) is asked about a root
// that no history here knows, for the trees it has a contract for: a 3.0
// root it vouches for is checked with the published key of
// Options.RootSourceDepth (default 30); a 4.0 root passes the root check.
// Its failure is an error of the check (the item's verification_error),
// never a verification.
//
// Its [Handler] (NewHandler) serves the two public endpoints a wallet
// needs, as a sequencer would: POST /api/v1/inclusion-proof (a leaf's
// Merkle path and the root) and GET /api/v1/semaphore/proving-key (the
// local proving key, public parameters). The inclusion-proof body is at
// most 4 KiB of exactly application/json, decoded by internal/leaf/strictjson
// (exact member names, no duplicates, valid UTF-8, nesting at most 64,
// nothing after the object); its JSON answers carry Cache-Control:
// no-store (internal/httpapi).
//
// Replicas sharing one store (PostgreSQL) see each other's identities and
// external roots through Refresh, which Follow runs every interval (serve:
// 2 s), so an identity added on one replica is provable and verifiable on
// every other within that interval. AddIdentities catches up before it
// appends, so leaf indexes always match the store's order.
//
// It does not delete leaves.
package registry
