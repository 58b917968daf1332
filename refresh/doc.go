// Package refresh implements the proof-of-human credential issuer:
// POST /api/v1/refresh?idComm=… (doc/interfaces.md §4.2, doc/design.md §7).
//
// A request is multipart/form-data with the form field sub, optionally
// encrypted_user_id, and for a PCP refresh all of signup_id, orb_id,
// operator_id, signup_reason, timestamp, software_version, orb_country (each
// with <name>_salt), iris_code_shares_0..2 and the files hashes.json and
// hashes.sign. The answer is 200 {"success":true, "credential", "message"}
// where credential is the standard padded base64 of the credential's v0.3.0
// JSON (package credential). GET /api/v1/refresh/issuer publishes the
// issuer's EdDSA public key ({"issuer":{"pk":[x,y]},"compressed",
// "issuer_schema_id"}) so holders can check whom a credential is from.
//
// # Checks, in order
//
//  1. Refresh disabled by the operator: 503, body without an error name
//     (doc/interfaces.md §7.2).
//  2. Method other than POST: 405 METHOD_NOT_ALLOWED with Allow: POST.
//     Declared Content-Length over 32 MiB: 413 PAYLOAD_TOO_LARGE.
//     Content-Type not multipart/form-data with a boundary, or the idComm
//     query parameter missing, repeated, or neither PrefixedHex nor a
//     canonical decimal below p (doc/crypto.md §a): 400 INVALID_REQUEST.
//  3. Per-source rate limit: client IP (IPv6 per /64), an in-memory token
//     bucket (30 burst, 1 per 2 s): 429 RATE_LIMIT_EXCEEDED with
//     Retry-After in whole seconds. Every request spends its source's
//     budget, and only its source's: nothing unauthenticated touches an
//     identity's budget.
//  4. x-zkp-proof missing, malformed, for another idComm, outside the time
//     window or not verifying: 401 INVALID_PROOF. The proof is in the
//     header and is verified before a byte of the body is read (the header
//     carries the sub and, for a PCP refresh, pcp_digest, so the signal is
//     known). The checks run in a lane of Options.ProofChecks at once
//     (GOMAXPROCS−1), so false proofs from fresh sources leave a core to
//     the other endpoints; one that cannot start within ProofWait: 503
//     SERVICE_UNAVAILABLE with Retry-After.
//  5. Per-identity rate limit (5 burst, 1 per 12 min), spent only by a
//     verified proof, so strangers naming a public idComm cannot lock its
//     holder out: 429 as in 3.
//  6. The body is streamed (mime/multipart, never ParseMultipartForm) under
//     http.MaxBytesReader: 32 MiB in total, and per part 1 MiB for
//     hashes.json, 1 KiB for hashes.sign, 8 MiB per iris share, 64 KiB for
//     every text field, 64 KiB for the framing (preamble, boundaries, part
//     headers); beyond: 413 PAYLOAD_TOO_LARGE. Iris shares are
//     hashed as they stream and never held, so a request holds at most
//     about 2 MiB. An unknown or repeated field, a part with a non-identity
//     Content-Transfer-Encoding, or a malformed or truncated body: 400
//     INVALID_REQUEST. The form is a closed contract, so unknown fields are
//     rejected rather than ignored.
//  7. sub missing or not PrefixedHex ("0x" + 1–64 hex digits, below p):
//     400 INVALID_SUB. It is stored and compared in its canonical form.
//     A sub other than the proof's, or hashes.json whose SHA-256 is not the
//     header's pcp_digest (or present without one): 401 INVALID_PROOF.
//  8. No signup record for idComm: 404 NO_SIGNUP_RECORD.
//  9. idComm pinned to another sub: 400 SUB_MISMATCH.
//  10. PCP partial or failing a check: 422 PCP_VALIDATION_FAILED; the message
//     names the check: the doc/crypto.md §h names json, missing_key,
//     hash_format, version, salt_format, salted_field, timestamp_format,
//     iris_share_hash, signup_reason, signature_encoding, signature, and
//     this server's partial (some PCP fields absent), signup_id (not the
//     signup record's) and pcp_reuse (the hashes.json already served
//     another identity commitment).
//  11. An identity that already holds a valid credential (recorded with
//     its bytes, signed by the current key, not expired) gets that same
//     credential back, unless the operator started the server with
//     -refresh-reissue (Options.Reissue): this is not a general
//     re-issuance endpoint (doc/interfaces.md §1). Only the proof is spent.
//     A PCP the held credential was not issued for is new evidence and
//     goes on to step 12 (doc/design.md §7 step 11).
//  12. Otherwise build, sign, self-verify (re-serialize, re-parse, re-hash,
//     verify) and record the refresh in one atomic store operation, which
//     spends the proof, pins sub on the first refresh, binds the hashes.json
//     digest and keeps the credential; a concurrent refresh that lost the
//     race gets SUB_MISMATCH, pcp_reuse or, for the same proof, 401
//     INVALID_PROOF (replay).
//
// Errors are {"success":false, "error":"<CODE>", "message"}. Besides the
// table of doc/interfaces.md §7.2 the codes are INVALID_REQUEST, INVALID_PROOF,
// PAYLOAD_TOO_LARGE, METHOD_NOT_ALLOWED, SERVICE_UNAVAILABLE (storage cannot
// accept writes) and INTERNAL_ERROR. A failed or unauthenticated request
// writes nothing: the proof is spent only by the success it authorizes, in
// the same store transaction.
//
// # x-zkp-proof (this server's design; the real format is not public)
//
// The header is standard padded base64 of one JSON object with the
// members of record.RefreshProof, no duplicates, no others:
//
//	{"id_commitment":"0x…","sub":"0x…","timestamp":<unix seconds>,
//	 "merkle_root":"0x…","nullifier_hash":"0x…","proof":"0x<512 hex>",
//	 "pcp_digest":"<64 lowercase hex>"}
//
// pcp_digest is present exactly for a PCP refresh: the SHA-256 of the
// hashes.json the body will carry, so that the proof can be verified before
// the body is read.
// Field elements are "0x" + 64 hex digits below p; proof is any encoding of
// doc/crypto.md §g (the wallet sends ABI hex). It is a Semaphore v3 proof under
// the server's local verifying key (doc/design.md §6) that the prover knows the
// identity whose commitment is idComm, as the only leaf (index 0) of a
// depth-30 tree: merkle_root MUST be that one-leaf root (doc/crypto.md §g). The
// public inputs are
//
//	root              one-leaf root of idComm
//	nullifierHash     nullifier_hash
//	signalHash        hashToField(UTF-8 signal)
//	externalNullifier ExternalNullifier("app_worldid_refresh", "refresh")
//
// with the signal (record.RefreshSignal)
//
//	refresh:<sub>:<timestamp>               without hashes.json
//	refresh:<sub>:<timestamp>:<sha256hex>   with hashes.json
//
// where sub is the canonical "0x" + 64 lowercase hex form, timestamp the
// decimal of the JSON timestamp, and sha256hex the header's pcp_digest,
// which MUST be the lowercase hex SHA-256 of the uploaded hashes.json
// bytes. id_commitment and sub in the JSON MUST equal the query's and the
// form's values. The timestamp MUST be within
// ±300 s (Options.ProofWindow) of the server clock. The statement is
// remembered, by the successful refresh it authorizes, under "refresh:" +
// hex SHA-256(BE32(nullifier hash) ‖ BE32(signal hash)) until the
// timestamp leaves the window plus 60 s (maxReplicaSkew, the largest clock
// difference between replicas sharing a store that replay protection
// tolerates); a second use is a replay. Proof bytes are not the key, since
// Groth16 proofs can be re-randomized.
//
// # The credential
//
// issuer_schema_id Options.SchemaID (default 1); genesis_issued_at the time
// of the identity's first issuance (doc/interfaces.md §2.5: the first recorded
// refresh; now for the first), so neither re-issuance nor a re-imported
// signup moves it; expires_at now + Options.Validity (default
// 3 × 365 days); a random id from Options.Rand; associated_data_hash 0;
// claims[0] = S("CLAIMS_HASH_V1", hashes.json) with a PCP, else
// S("CLAIMS_HASH_V1", BE32(idComm) ‖ BE32(sub) ‖ BE32(ts)) with ts the
// issuance second, recorded with the refresh (doc/crypto.md §h); other claims 0.
//
// The credential's sub is the form's sub, canonicalized. doc/interfaces.md
// §2.5 defines the credential subject as blinded,
// H_CS(leaf_index, blinding_factor) (doc/crypto.md §f), and says the issuer
// "may require a proof for the requested sub". The blinding factor belongs
// to the holder, so only the holder can compute the blinded sub: the
// issuer receives it as the account id of the form and cannot derive or
// check it. What the issuer does guarantee is the binding: the x-zkp-proof
// signs the sub, and the first refresh pins it to idComm, so no one else
// can have a credential issued for that identity under another subject.
//
// # Decisions
//
//   - encrypted_user_id is read (within its cap) and discarded: it is never
//     stored or logged. Neither are iris shares, proofs or keys.
//   - Query parameters other than idComm are ignored.
//   - The PCP timestamp has no freshness limit: it is the enrollment time.
//   - A PCP proves an enrollment only for the signup record's signup_id; an
//     Orb key is trusted only for its orb_id (operator-managed, SPKI PEM on
//     secp256k1, see ParseOrbKeyPEM). High-S ECDSA signatures are accepted.
//   - The client IP is the connection's address (or the one a trusted proxy
//     names); otherwise, behind a reverse proxy, all clients share the
//     proxy's bucket.
//   - Each limiter tracks at most Options.MaxRateKeys keys (100 000, about
//     10 MB). A full table never refuses a newcomer: keys whose bucket has
//     refilled are dropped, and if all are active an arbitrary one is
//     evicted and restarts with a full bucket. The bound: memory is fixed;
//     a source with more than MaxRateKeys active addresses (or /64s) can
//     get up to Burst extra requests per eviction of one of its keys, and
//     every such request still costs it a full proof check.
//   - Rate-limit state is per process: with N replicas behind a load
//     balancer a client may get up to N times the budget. The durable
//     guarantees (replay, pin, PCP binding, one credential per identity)
//     are the store's and hold across replicas.
//   - Two first refreshes of one identity racing each other may both issue
//     a credential; later refreshes return the newest.
//   - One-leaf roots are memoized per identity commitment (at most
//     Options.MaxRateKeys, arbitrary eviction): their 30 Poseidon hashes
//     cost about as much as the Groth16 check.
//
// It does not implement the World ID 4.0 credential format, OPRF-derived
// subjects, or revocation.
package refresh
