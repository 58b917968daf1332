// Package semaphore implements World ID 3.0 proofs: Semaphore v3 Groth16
// proofs over BN254 (doc/crypto.md §g, doc/design.md §5–6).
//
// It provides
//   - ParseProof: every request encoding of doc/crypto.md §g — the `\"`-escaped
//     string, the nested JSON array [[a0,a1],[[b0,b1],[b2,b3]],[c0,c1]], the
//     ABI form "0x" + 512 hex digits, and the padded compressed form (words
//     4–7 zero) — into a Proof whose points are fully checked; Packed, ABIHex,
//     Compress and DecompressProof for the other direction;
//   - VerifyingKey: snarkjs verification_key.json (ParseVerifyingKey,
//     MarshalJSON; ParseGroth16Key for another statement's number of public
//     inputs, as World ID 4.0's 15) and the published Semaphore v3 keys for depths 16–32,
//     embedded from semaphore_v3_vks_all_depths.json (PublishedKey; World ID
//     uses depth 30);
//   - Verify, VerifyBatch and Batcher: Groth16 verification, single or as a
//     random linear combination of many proofs with one final exponentiation;
//     VerifyScalars and Batcher.VerifyScalars for any statement (package
//     oprfproof's 4.0 proofs share the batcher with 3.0 proofs);
//   - HashToField, HashSignal (IDKit 4's hashSignal), ExternalNullifier and Identity (secret, commitment,
//     nullifier hash) with circomlib Poseidon from package worldid/poseidon;
//   - Tree and RootHistory: the incremental identity tree (depth 30 for
//     World ID) and the root validity rule;
//   - NewVerifyingKey and NewProof: keys and proofs from their points, for
//     the local prover (package worldid/semaphore/prover), with the same
//     checks as the parsers.
//
// # Parameters
//
// Base field q and scalar field r of BN254 as in doc/crypto.md §a. A proof is
// packed as [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y] (EVM order:
// imaginary part first; snarkjs JSON is the reverse). Public inputs are
// [root, nullifierHash, signalHash, externalNullifier]. Every coordinate must
// be < q, A and C on y² = x³ + 3, B on the twist and in the order-r
// subgroup, no point at infinity, and every public input < r; nothing is
// reduced. Square roots are a^((q+1)/4) and must square back. The
// compressed form, the twist constant 3/(9+i) and the flags are those of
// doc/crypto.md §g "Padded compressed form".
//
// # Decisions where the spec is open
//
//   - Errors: parsers return *Error, whose Code is CodeInvalidFormat (cannot
//     be decoded: hex, JSON shape, length, non-canonical decimal in a key) or
//     CodeInvalidProof (decoded but invalid: coordinate ≥ q, off the curve,
//     outside the subgroup, at infinity, not decompressible, or a public
//     input ≥ r); Rule names the rule. Keys use the same two codes.
//   - The escaped form must be one JSON string literal, quotes included.
//     Nested items are "0x" + 1–64 hex digits (either case), a string of
//     1–78 decimal digits, or a JSON integer, each below 2^256; the ABI form
//     needs the lowercase "0x" prefix.
//   - Verifying keys: protocol, curve and nPublic are optional but must be
//     "groth16", "bn128" and 4 (ParseGroth16Key: n) when present; IC must
//     have 5 (n + 1) points; numbers
//     are canonical decimals; unknown members (vk_alphabeta_12, source) are
//     ignored and e(α, β) is recomputed.
//   - Verify precomputes e(α, β), the Miller-loop lines of β, γ and δ, and,
//     on first use of a key, a fixed-base table of the IC points (0.5 MiB
//     per public input: 2 MiB for Semaphore v3). It
//     runs the Miller loop of (A, B) on a second goroutine.
//   - VerifyBatch takes items under different keys in one batch: the fixed
//     side is grouped per key pointer, with one final exponentiation for
//     all. Randomizers are ρ = a + λ·b mod r with a = 2^64 + u, u and b
//     uniform below 2^64 from the injected reader, λ the eigenvalue of
//     G1's endomorphism φ, so ρ·A = a·A + b·φ(A) takes about 65 doublings
//     (GLV, CRYPTO 2001), and Σρᵢ·Cᵢ is one loop of as many doublings over
//     every proof's digits (Straus) instead of a 254-bit multi-
//     exponentiation; distinct (u, b) give distinct nonzero ρ mod r, so the
//     error bound is 2^-128 as for uniform 128-bit randomizers (see
//     randomizer.go). A failing batch is bisected down to single Verify
//     calls, so each answer is Verify's (up to probability 2^-128 per
//     check). If the reader fails, every item is verified alone.
//   - Batcher batches concurrent callers: a request waits while the
//     previous batch is being verified, and a batch smaller than the
//     previous one waits at most lingerMax (2 ms) for more; after a lone
//     request nothing waits, so an idle server adds no latency. It
//     keeps a running fraction of invalid proofs (each answer weighing
//     1/64); above 1/16 every caller verifies its own proof alone, as
//     without batching, so a flood of invalid proofs does not make every
//     batch bisect; below 1/64 batching resumes.
//     BenchmarkHonestUnderFlood measures an honest caller under such a
//     flood.
//   - Tree rejects the zero leaf (it is the empty leaf) and keeps the
//     leaves and every filled node from level 3 up, about 1.25 field
//     elements per leaf (levels 1 and 2 would add 0.75), so an insert costs
//     depth hashes and InsertBatch of k leaves about 2k + depth; a path
//     rehashes its level-1 and level-2 siblings from the leaves (4 hashes,
//     about 40 µs). The store
//     keeps the ordered leaves: BuildTree rebuilds the tree and RootAfter
//     gives each past root, which with the leaves' times rebuilds a
//     RootHistory. Find looks a leaf up in an open-addressing index of
//     4-byte slots over the tree's own level 0 (5.3 to 10.7 bytes per leaf,
//     a per-tree random hash seed; at most 2^32 − 1 leaves).
//   - Snapshot captures a tree in O(depth) (only the last node of each
//     level is ever rewritten) and encodes it: "semaphore tree 2\n", the
//     depth (1 byte), the leaf count (8 bytes big-endian), then every
//     stored node, level by level from the leaves, 32 bytes big-endian.
//     Version 1 ("semaphore tree 1\n", every level) is still read.
//     ParseTree reads it back in time linear in its size: canonical
//     elements, nonzero leaves, exact level sizes, and the levels from the
//     lowest one of at most 1024 nodes up rehashed; the levels below are
//     the caller's to vouch for (package registry compares the leaves with
//     the stored ones and keeps a digest).
//   - RootHistory.Since lists the roots from a time on, oldest first, and
//     the current one: what a checkpoint keeps.
//   - RootHistory: the current root is the most recently added root, local
//     or external (an operator adding a root of a tree kept elsewhere adds
//     that tree's newest state); re-adding a root keeps its first time.
//     Check is a pure function of the history, now and max_age.
//   - NewIdentity draws 31 random bytes per secret (below 2^248 < r, so
//     uniform without reduction).
//
// # Not done here
//
// No proving and no setup: those are package worldid/semaphore/prover, so
// that verifiers do not link gnark (only gnark-crypto). No Poseidon
// (package poseidon), no storage, HTTP, logging or clock: time and
// randomness are passed in. The server never recomputes a signal hash from
// a signal; typed (ABI-packed) actions are out of scope. Root validity
// follows the sequencer (age from creation), not the on-chain contract (age
// from supersession).
package semaphore
