// Package prover implements a local Groth16 setup and prover for the
// Semaphore v3 circuit over BN254, with gnark (doc/crypto.md §g "Circuit
// relations", doc/design.md §6). Verification, proof encodings, keys in snarkjs
// JSON, trees and hashing are package semaphore's; this package only makes
// keys and proofs, which it hands over as semaphore types.
//
// It provides
//   - Setup: compiles the circuit for a tree depth and runs a single-party
//     Groth16 setup, returning the ProvingKey and its
//     semaphore.VerifyingKey;
//   - ProvingKey.WriteTo and ReadProvingKey: the key file the server keeps
//     in its data dir and serves to wallets;
//   - Prove: a proof of membership for an Identity and its MerklePath, with
//     its public inputs.
//
// # Parameters
//
// The circuit is semaphore.circom v3.15.2: the identity commitment
// P(P(nullifier, trapdoor)) is the leaf; each level hashes (node, sibling),
// swapped when the path bit is 1; the nullifier hash is
// P(externalNullifier, nullifier); signalHash enters through a dummy square
// so the proof binds it. P is circomlib Poseidon (doc/crypto.md §c, widths 2
// and 3, constants from package poseidon), x^5 S-box, 8 full rounds. Public
// inputs, in gnark's and snarkjs's order: [root, nullifierHash, signalHash,
// externalNullifier]. At depth 30 it has 7,956 constraints
// (TestCircuitSize). Depths 1 to semaphore.MaxDepth are accepted.
//
// # Decisions where the spec is open
//
//   - The setup is single-party: gnark draws the toxic waste (and the
//     prover's blinding scalars) from crypto/rand itself, so neither can be
//     injected. Whoever ran Setup could forge proofs for that key, which is
//     acceptable only for the operator's own deployment (SECURITY.md).
//   - The key file is a magic line ("worldid/semaphore groth16 bn254 v1"),
//     one byte of depth, then gnark's uncompressed verifying and proving
//     keys. The circuit is not stored: ReadProvingKey compiles it again for
//     the file's depth, checks every point and that the key's sizes fit the
//     circuit, which takes seconds at depth 30. A server that needs only the
//     verifying key keeps it as snarkjs JSON (semaphore.ParseVerifyingKey)
//     instead.
//   - gnark's global logger writes to stdout; it is disabled at init.
//
// # Not done here
//
// No verification (semaphore.Verify), no multi-party ceremony, no
// published Semaphore proving keys (the published verifying keys are for
// the trusted-setup zkeys, which this package cannot read), no I/O beyond
// the io.Reader and io.Writer given. The gnark prover is not constant time:
// use it where the identity's owner runs it, as the development wallet does.
package prover
