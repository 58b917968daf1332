// Package rpsig makes World ID 4.0 relying-party request signatures (the
// rp_context of a 4.0 proof_request) as IDKit 4 makes them
// (worldcoin/idkit go/idkit/signing.go; world-id-protocol
// crates/primitives/src/rp.rs compute_rp_signature_msg):
//
//	nonce   = hash_to_field(32 random bytes)
//	message = 0x01 ‖ nonce (32) ‖ created_at u64 BE ‖ expires_at u64 BE ‖ [hash_to_field(action) (32)]
//	digest  = keccak256("\x19Ethereum Signed Message:\n" ‖ decimal(len(message)) ‖ message)   (EIP-191)
//	sig     = r (32) ‖ s (32) ‖ v (1), secp256k1 ECDSA, k by RFC 6979 (HMAC-SHA-256),
//	          s ≤ n/2 (low-S), v = 27 + recovery id
//	hash_to_field(x) = keccak256(x) shifted right by 8 bits, 32 bytes big-endian
//
// with a default lifetime of 300 s (expires_at = created_at + 300). The curve
// arithmetic is gnark-crypto's secp256k1; keccak256 is x/crypto's legacy
// Keccak. Signatures are deterministic, so they match IDKit's byte for byte
// (testdata/rp_signature.json).
//
// It does not keep keys (the caller parses one with ParsePrivateKey) and does
// not verify proofs; RecoverAddress exists so a signature can be checked
// against the signer's Ethereum address. Scalar arithmetic uses math/big,
// which is not constant-time.
package rpsig
