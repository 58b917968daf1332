// Package wallet is the development wallet: it keeps a Semaphore identity
// (identity nullifier and trapdoor) in a file, fetches its Merkle inclusion
// proof (unless Wallet.Paths gives it, as for the developer simulator's
// test identities) and the local proving key from a worldid server, makes
// World ID 3.0 proofs in the shape IDKit sends them (identifier,
// merkle_root, nullifier, proof, signal_hash), completes sign-in pages as
// World App would, builds test PCPs and calls the credential refresh.
//
// Files: identity.go (the identity file), prove.go (inclusion proof,
// proving key, IDKit-shaped proofs), signin.go (the browser's side of a
// sign-in page of package signin: the wait page, its connect URL answered
// through the bridge, its status polled until done, the redirect), bridge.go (a request named by a Wallet Bridge connect
// URL: read from the relay once, proven for its app, action and hashed
// signal, answered encrypted under the request's key; package bridge), pcp.go (synthetic PCP v2.3 signed by a test Orb key),
// pcpfiles.go (PCP directories, the issuer key), refresh.go (the
// /api/v1/refresh client with its x-zkp-proof, and credential checks).
//
// It exercises the real public endpoints — never a bypass — and is what the
// demo, the end-to-end tests and `worldid wallet` use.
//
// Signal hashing is IDKit 4's hashSignal (semaphore.HashSignal, doc/crypto.md
// §g): "0x" followed by a non-empty, even number of hex digits is hashed as
// the bytes it encodes; any other string, "0x" alone included, as its
// UTF-8 bytes.
//
// The identity file is JSON with mode 0600:
//
//	{"nullifier":"0x…","trapdoor":"0x…","commitment":"0x…"}
//
// It is a test tool: secrets live in a plain file, and nothing here is
// hardened for holding a real identity.
package wallet
