// Package credential implements the World ID Credential V1 of doc/crypto.md §f
// (the wire format of world-id-primitives v0.3.0) and the PoH claims of
// doc/crypto.md §h.
//
// A [Credential] has the fields id, issuer_schema_id, sub, genesis_issued_at,
// expires_at, 16 claims, associated_data_hash, signature and issuer. Its
// hashes, over BN254 with Poseidon2 (package poseidon):
//
//	claims_hash = P2_16(claims[0..16])[1]                       (no tag)
//	hash        = H("POSEIDON2+EDDSA-BJJ", issuer_schema_id, sub,
//	                genesis_issued_at, expires_at, claims_hash,
//	                associated_data_hash, id)                   (t = 8, slot 1)
//	sub         = H("H_CS(id, r)", leaf_index, blinding_factor) ([BlindedSub])
//
// [Credential.Sign] sets the issuer and signs hash with EdDSA-Poseidon2 on
// BabyJubJub (package babyjub). It refuses claims[15] ≠ 0, which newer
// protocol versions reserve. [Credential.Verify] recomputes the hash and runs
// the doc/crypto.md §e checklist against an expected issuer key.
//
// Encodings:
//   - [Credential.MarshalJSON] writes the byte-exact v0.3.0 JSON: compact,
//     members in the order id, version, issuer_schema_id, sub,
//     genesis_issued_at, expires_at, claims (always 16), associated_data_hash,
//     signature (128 lowercase hex digits, or null), issuer {"pk":[x, y]}
//     (canonical decimals).
//   - [Parse] reads it strictly: JSON checked by internal/leaf/strictjson
//     (duplicate member names at any depth, invalid UTF-8, nesting over 64
//     and trailing data rejected), required members present, unknown
//     members ignored, u64 values as bare JSON
//     integers (never through float64), version "V1", 0 to 16 claims padded
//     with zeros, "0x"+64-hex field elements below p, issuer.pk canonical
//     decimals forming a subgroup point, signature missing, null or exactly
//     128 hex digits of either case.
//   - [Credential.MarshalHEAD] is the optional serializer of upstream main
//     (issuer_version 0, 15 claims, associated_data_commitment, compressed
//     hex issuer), and [Credential.HeadHash] its hash rule with
//     id + issuer_version·2^64 in the last slot.
//
// PoH claims[0] (doc/crypto.md §h): [ClaimFromBytes] is the byte sponge
// S("CLAIMS_HASH_V1", data), applied to the exact hashes.json bytes of a PCP
// refresh; [RefreshClaim] applies it to [RefreshClaimPreimage]
// BE32(idComm) ‖ BE32(sub) ‖ BE32(ts) for a refresh without a PCP.
//
// Decisions where the spec is open:
//   - A nil Issuer stands for the identity point, which an unsigned
//     credential carries (the reference's default, {"pk":["0","1"]}). Parse
//     accepts the identity as a subgroup point and returns a nil Issuer;
//     such a credential never verifies (doc/crypto.md §e step 2).
//   - Verify takes the expected issuer key and fails unless the credential's
//     Issuer equals it, so a caller cannot forget that check.
//
// What it does not do: it does not choose claim values, ids or expiry (the
// issuer, package refresh, does), and it does not compute the blinded sub
// on the issuer's behalf: the server receives sub from the client.
package credential
