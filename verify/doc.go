// Package verify implements the proof verification endpoint
// POST /api/v4/verify/{rp_id} (doc/interfaces.md §2.6, §4.3; doc/design.md §5, §8).
//
// A request names an action and carries 1 to MaxResponses (default 16)
// World ID 3.0 proofs, one per credential type, or World ID 4.0 proofs
// (see "Protocol 4.0"). The endpoint resolves the
// relying party, has a [Checker] verify every item (root known and fresh
// for the identifier's tree in the environment, then Groth16 — the
// cryptography is not in this package), and records the verified
// nullifier for the action through its [Store].
//
// # Request
//
// The path id is "rp_" + 16 lowercase hex digits, or for backward
// compatibility "app_" or "app_staging_" + 32 lowercase hex digits, which
// resolves to its app's relying party. A disabled app is refused (403
// app_disabled). A staging app (imported from the developer portal) is
// checked in the staging environment, in both protocols, as the portal
// does (4.0: the staging registry's roots and root source contract): an absent
// environment means staging (and is echoed so), production is a
// validation_error. Anything else (other lengths, upper case, encoded
// slashes) is 404 without a store lookup. Only POST; Content-Type exactly
// application/json (a charset parameter, if any, must be utf-8); body at
// most 64 KiB.
//
// Body members: protocol_version (required, "3.0" or "4.0"), nonce (required,
// non-empty, not otherwise interpreted), action (required, may be empty:
// sign-in and IDKit 4's legacy results send "", which World's portal
// refuses),
// action_description (optional string), environment (optional:
// "production", the default, "staging", or "sandbox", which uses the
// staging trees and nullifiers but is echoed as given), responses
// (required array of 1..MaxResponses objects). Item members: identifier
// (required: orb, device, document, secure_document, face or selfie —
// selfie is IDKit 4's name for face, one credential type, and results
// answer with the name sent),
// merkle_root and nullifier (required), proof (required string, passed to
// the checker as given), signal_hash (optional, default hashToField of the
// empty signal, doc/crypto.md §g), max_age (optional integer seconds,
// 3600..604800, default 604800).
//
// merkle_root, nullifier and signal_hash are read with VerifyHex
// (doc/crypto.md §a) after the schema patterns nullifier ^(0x)?[0-9a-fA-F]+$ and
// signal_hash ^0x[0-9a-f]+$, and must then be < p: a value ≥ p is a
// validation_error naming the attribute, never reduced and never a
// per-item verdict.
//
// Decisions on the parser (doc/design.md §8): the body is read by
// internal/leaf/strictjson, so invalid UTF-8 anywhere (which encoding/json would
// turn into U+FFFD), unpaired surrogate escapes and nesting deeper than 64
// are invalid_request; member names match exactly (no case folding); a
// duplicate member name, at any depth, is a validation_error naming it
// (attribute "action", "responses[0].proof", "extra.a"); null is the
// same as absent; required strings must be non-empty; max_age must be a JSON
// integer literal (no fraction or exponent); unknown members are ignored at
// both levels, because IDKit clients forward their result object verbatim
// and it gains members across versions (the upstream schema ignores them
// too). action_description is type-checked but not stored.
//
// # Answers
//
// Success, 200, when at least one item verified and was recorded:
//
//	{"success": true, "action", "nullifier", "created_at", "environment", "results", "message"}
//
// nullifier is the first successful item's, canonical (0x + 64 lowercase
// hex); created_at is when that nullifier was first recorded for the action
// (RFC 3339, UTC); message is "Proof verified successfully", or
// "Proof verified successfully (nullifier reuse)" when it had been recorded
// before. Each result is {identifier, success, nullifier, code, detail}:
// nullifier is the item's, canonical, always; code and detail are present
// only on failure. Per-result codes are those of the checker
// (invalid_format, invalid_merkle_root, root_too_old, invalid_proof),
// max_verifications_reached, and verification_error when the checker
// itself failed (logged; the detail says nothing more).
//
// Errors have one type, [Error], and two bodies: request errors are
// {code, detail, attribute} (attribute null when none); verification
// outcomes are {success: false, code, detail, results}.
//
//	status  code                      when
//	400     invalid_request           not JSON, not one object, trailing data, invalid UTF-8, nested over 64 deep
//	400     validation_error          a member is missing, mistyped or out of range (attribute names it, e.g. responses[0].nullifier)
//	403     app_disabled              the operator disabled the app
//	404     not_found                 malformed route id, unknown rp_/app_ id, other paths under /api/v4/verify/
//	405     method_not_allowed        not POST (Allow: POST)
//	413     request_too_large         body over 64 KiB (a declared Content-Length over it: before reading)
//	415     invalid_content_type      not application/json
//	400     all_verifications_failed  no item verified (with results)
//	400     max_verifications_reached every verified nullifier is at the action's limit (with results)
//	500     internal_error            no item accepted and a check failed inside the checker (with results), or a storage error
//	503     service_unavailable       storage cannot accept writes (record.ErrUnavailable)
//
// Responses carry Cache-Control: no-store.
//
// # Nullifiers and actions
//
// Nullifiers are recorded per (rp_id, action, environment), where sandbox
// is staging. One request records one verification: that of the first
// successful item's nullifier (items of one request usually share it, as
// one identity holds several credentials; upstream records only the first
// too). The action is created by that first success. By default a reused
// nullifier verifies again (v4 semantics) with its original created_at. If
// the operator set max_verifications > 0 for the action, the store refuses,
// atomically, a verification beyond it: every item with that nullifier then
// fails with max_verifications_reached and the next successful item, if its
// nullifier differs, is tried. Failed items are never recorded.
//
// Items are checked concurrently, one goroutine each; a panicking checker
// fails its item with verification_error instead of crashing the server.
//
// # Protocol 4.0
//
// The body shapes of World's portal (developer-portal
// web/api/v4/verify/request-schema.ts @657f6222), as IDKit 4 sends them.
// nonce must be a uint256 (decimal or 0x/0X-hex, as JavaScript's BigInt
// reads it). A uniqueness request has action; a session request has
// session_id and no (or an empty) action. session_id is only IDKit 4's
// form (world-id-primitives SessionId): "session_" + 128 hex digits, the
// commitment then an OPRF seed whose first byte is 0x01; the commitment
// must be non-zero — zero is a uniqueness proof's session input, so a
// "session" of commitment zero (or a bare number) would let a uniqueness
// proof through the session path, where nothing is recorded. Items: identifier
// (any non-empty string of at most 64 bytes, echoed unchanged; it chooses
// no tree, but IDKit 4's names must carry World's issuer_schema_id for
// them — proof_of_human 1, selfie 11, passport 9303, mnc 9310, idkit-core
// 4.3.0 — or the item fails with invalid_credential_issuer, so a result
// never names a credential the proof is not about; the portal does not
// check this),
// issuer_schema_id and expires_at_min (uint64, a JSON integer or decimal
// string), credential_genesis_issued_at_min (optional, default 0),
// signal_hash (optional, ^0x[0-9a-f]+$, default 0x0), proof (an array of
// exactly 5 uint256 strings: the compressed Groth16 proof, then the Merkle
// root), and nullifier (uniqueness, ^(0x)?[0-9a-fA-F]+$ then BigInt
// syntax) or session_nullifier (session: [nullifier, action]), and
// sybil_score (optional integer: a Selfie Check item's score, idkit-core
// 4.3), echoed in the item's result as sent — it is not a public input,
// so the proof does not vouch for it. An item of
// the other protocol — a string proof in a 4.0 request, a proof of 5
// values in a 3.0 request — or a 4.0 proof of another length fails on its
// own with invalid_proof, like any proof the checker cannot accept, while
// the other items are checked (World's portal refuses the whole request
// here; a per-item answer tells an IDKit client which item to fix). Other
// 3.0 members in a 4.0 item (merkle_root, max_age) or a malformed number
// are a validation_error naming the attribute; session_id in a 3.0
// request too.
//
// The action of a uniqueness proof is the field element IDKit 4 puts in
// the proof request the World App proves: hashToField of the action's
// UTF-8 bytes (FieldElement::from_arbitrary_raw_bytes, worldcoin/idkit
// rust/core/src/bridge.rs), whatever the string looks like. This differs
// from World's portal, which hashes it with hashSignal (verify-v4.ts) and
// so decodes a 0x-hex action such as "0x1234" to bytes first, refusing
// genuine proofs for it; testdata/vectors/idkit_actions.json holds
// idkit-core's own outputs. An action that is already a field element
// (World's WorldIDVerifierTest vector) cannot be sent: IDKit 4 sends every
// action as a string (String(action) of its config), and no documented
// wire form marks a string as a field element, so none is guessed from
// its shape. The rp_id is the route's relying party, as a uint64. The
// [CheckerV4] (package registry) then does what World's WorldIDVerifierV2
// contract does. Per-result codes are the portal's, decided in the
// contract's order (package registry): verification_failed for an action
// without its proof type's prefix byte (0x00 uniqueness, 0x02 session:
// InvalidAction, checked first), invalid_root (unknown, or ≥ the field
// modulus), environment_mismatch (IDKit 4's code: the root is valid in
// the other environment), invalid_credential_issuer (no key for
// issuer_schema_id), verification_failed (no OPRF key for the rp_id,
// expires_at_min too old or so large that the contract's sum overflows),
// invalid_proof (the points, then the proof), invalid_public_input
// (another value ≥ the field modulus, found after the points decoded),
// feature_unavailable (IDKit 4's code: no 4.0 checker configured),
// verification_error (the checker failed, e.g. the chain is unreachable:
// 500 as for 3.0).
//
// Uniqueness proofs are recorded exactly as 3.0 proofs (same nullifier
// reuse and limit rules), keyed by the nullifier's value: the same proof
// with its nullifier spelled otherwise (case, leading zeros, 0X, decimal)
// is the same nullifier, so a limit cannot be dodged by re-encoding.
// Session proofs record nothing; success is
//
//	{"success": true, "session_id", "environment", "results", "message": "Session proof verified successfully"}
//
// with each result's nullifier the item's session_nullifier[0].
//
// Not implemented: integrity bundles (the member is ignored),
// CORS (relying parties call this endpoint from their servers), and any
// authentication of the caller (none is defined, doc/interfaces.md §5).
package verify
