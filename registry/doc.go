// Package registry is the identity registry: one incremental Merkle tree
// (depth 30, circomlib Poseidon, semaphore.Tree) per credential type and
// environment, each with the history of its roots, plus the roots of trees
// kept elsewhere that the operator adds; and the checker that verifies
// World ID 3.0 proofs against them (design.md §5, §6; crypto.md §g).
//
// Trees are named "<identifier>/<environment>", identifier ∈ orb, device,
// document, secure_document, face, selfie and environment ∈ production,
// staging. Leaves are stored (Store.AppendLeaf) before they enter the
// in-memory tree, and every tree is rebuilt from its stored leaves on start,
// so each leaf's root gets that leaf's insertion time as its creation time.
//
// Which verifying key checks a proof is decided by its root: roots of the
// local trees were proven with the local key (generated on first start,
// semaphore.Setup); an external root names the depth of the published
// Semaphore v3 key its tree uses (World ID: 30). Local and external roots
// keep separate histories, so each has its own "current" root, which is
// valid whatever its age (crypto.md §g "Root validity").
//
// CheckClaim order: tree exists → proof decodes (invalid_format /
// invalid_proof) → root known (invalid_merkle_root) and fresh
// (root_too_old) → Groth16 with public inputs [root, nullifier_hash,
// signal_hash, ExternalNullifier(app_id, action)] (invalid_proof).
// Concurrent checks share pairings through semaphore.Batcher unless
// batching is disabled; answers are identical either way.
//
// It also serves the two public endpoints a wallet needs, as a sequencer
// would: POST /api/v1/inclusion-proof (a leaf's Merkle path and the root) and
// GET /api/v1/semaphore/proving-key (the local proving key, public
// parameters).
//
// Replicas sharing one store (PostgreSQL) see each other's identities and
// external roots through Refresh, which Follow runs every interval (serve:
// 2 s), so an identity added on one replica is provable and verifiable on
// every other within that interval. AddIdentity catches up before it
// appends, so leaf indexes always match the store's order.
//
// It does not delete leaves.
package registry
