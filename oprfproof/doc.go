// Package oprfproof verifies World ID 4.0 proofs: Groth16 proofs over BN254
// of the OPRF-nullifier circuit (15 public inputs), in the compressed form
// of World's Solidity verifier, with the public inputs its WorldIDVerifier
// contract assembles (worldcoin/world-id-protocol @bc22329f,
// contracts/src/core/Verifier.sol and WorldIDVerifier.sol).
//
// # Parameters
//
// The verifying key is the trusted-setup key
// circom/artifacts/OPRFNullifierProof/oprfnullifierproof_vkey.json of
// world-id-protocol's trusted-setup branch @189abeaf (embedded; its points
// equal the constants of Verifier.sol). A proof is five uint256 words: the
// compressed points A (one word), B (two words: x.im, then x.re with the
// sign and hint bits) and C (one word) — the layout of Verifier.sol's
// compressProof, which is semaphore.DecompressProof's — followed by the
// World ID registry Merkle root the proof was made against.
//
// Public inputs, in circuit order (Statement.Inputs):
//
//	0 nullifier            5 credential_genesis_issued_at_min  10, 11 OPRF public key (x, y)
//	1 issuer_schema_id     6 Merkle root                        12 signal hash
//	2, 3 issuer key (x, y) 7 tree depth (30)                    13 nonce
//	4 expires_at_min       8 rp_id                              14 session id (0: uniqueness)
//	                       9 action
//
// A uniqueness proof's action is the relying party's action string as
// IDKit 4 hashes it (hashToField of its UTF-8 bytes, package verify); a
// session proof carries its own action (the second member of
// session_nullifier, randomised by the client) and binds the session
// commitment as input 14 (SessionCommitment, read only from IDKit's
// session_<hex> form). ValidAction is WorldIDVerifierV2's action prefix
// rule: 0x00 for uniqueness, 0x02 for sessions. ParseWord reads numbers
// as JavaScript's BigInt does (decimal, 0x or 0X hex); ParseFieldElement
// adds the bound r, for values an operator enters.
//
// Every input is an element of the BN254 scalar field: parsers here reject
// values ≥ r instead of reducing them, as Verifier.sol does
// (PublicInputNotInField).
//
// # Not done here
//
// Trust anchors — whether the root is valid, the issuer key of a schema id,
// the OPRF key of an rp_id — and the expiry threshold are the caller's
// (package registry): this package checks the proof for the statement it
// is given. The Groth16 equation, point checks and batching are package
// semaphore's (VerifyScalars, Batcher.VerifyScalars).
package oprfproof
