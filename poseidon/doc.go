// Package poseidon implements the two Poseidon hash families the World ID
// service needs, over the BN254 scalar field F_p (gnark-crypto's fr.Element):
// Poseidon2 as instantiated by TACEO's taceo-poseidon2 / HorizenLabs
// (doc/crypto.md §b) and the original Poseidon as instantiated by circomlib
// (doc/crypto.md §c).
//
// # Poseidon2
//
// [Permute2], [Permute3], [Permute4], [Permute8], [Permute12] and [Permute16]
// are the permutations P2_t, with S-box x^5, R_F = 8 full rounds (4 before and
// 4 after the partial rounds) and R_P = 56 partial rounds for t = 2, 3, 4 and
// 57 for t = 8, 12, 16. The layout is: s ← M_E·s; 4 full rounds (add the
// row's t constants, x^5 on every slot, M_E); R_P partial rounds (add one
// constant to slot 0, x^5 on slot 0, M_I); 4 full rounds; the whole state is
// returned, with no feed-forward.
//
//   - M_E is [[2,1],[1,2]] for t = 2, out[i] = s[i] + Σs for t = 3,
//     M4 = [[5,7,1,3],[4,6,1,1],[1,3,5,7],[1,1,4,6]] for t = 4, and for
//     t = 8, 12, 16 the block matrix with 2·M4 on the diagonal and M4
//     elsewhere.
//   - M_I is out[i] = s[i]·diag[i] + Σs, diag = mat_internal_diag_m_1;
//     [1,2] for t = 2 and [1,1,2] for t = 3.
//
// Constants: the round constants of a width are regenerated on its first use
// with the Grain LFSR of doc/crypto.md §c for (t, 8, R_P), drawing t values per
// full round and one per partial round in round order. The diagonals for
// t ≥ 4 cannot be derived that way and are embedded (p2params.go), from
// TaceoLabs/eddsa-babyjubjub poseidon2/src/bn254/t*.rs @ taceo-poseidon2-v0.2.1
// (4d3e9b43643f5821d1d5a73aebcdd5d697bfa84a). The tests compare every
// constant with testdata/vectors/poseidon2_params.json.
//
// gnark-crypto v0.21.0's ecc/bn254/fr/poseidon2 has the same constants for
// t = 4, 8, 12 and 16 (a differential test checks it), but for t = 2 and 3
// it derives its own constants from a Keccak seed, so its outputs differ
// from ours there by design (also pinned by a test).
//
// [Hash] is the hash mode H(tag, x1..xN): the state [fe(tag), x1, …, xN,
// 0, …] of width t = 2, 3, 4, 8, 12, 16 for N = 1, 2, 3, 4–7, 8–11, 12–15,
// where fe(tag) reads the ASCII tag as a big-endian integer; the result is
// slot 1 of P2_t. Tags longer than 31 bytes and N outside 1..15 are
// programming errors and panic. [Compress] is the 4.0 Merkle compression
// P2_2([l, r])[0] + l.
//
// [HashBytes] is the byte sponge S(tag, data):
//
//	T = SHA3-256(BE4(0x80000000 + len(data)) ‖ BE4(32) ‖ tag) mod p
//	state = [0]*15 ‖ [T]
//	for each group of up to 15 chunks of 31 bytes: state[j] += chunk_j; state = P2_16(state)
//	result = state[0]
//
// Each chunk is read big-endian, so it is below 2^248 < p: byte input can
// never produce an out-of-range element and nothing is reduced or rejected
// on that account. Empty data is an error, never a value. The spec requires
// len(data) < 2^32; since 0x80000000 + len must fit the 32-bit word, this
// package rejects len(data) ≥ 2^31 too (a decision where the spec is open;
// the reference's u32 addition would overflow there).
//
// # Poseidon v1 (circomlib)
//
// [HashV1] is circomlib's Poseidon P(x1..xn), n = 1..16, t = n+1: the
// state [0, x1, …, xn] goes through R_F = 8 full and R_P partial rounds, each
// adding t constants, applying x^5 (to every slot in full rounds, to slot 0
// in partial rounds) and multiplying by the MDS matrix M; the result is
// slot 0. R_P is 56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64,
// 68 for t = 2..17 ([V1PartialRounds]). The constants C and M come from the
// Grain LFSR (doc/crypto.md §c steps 1-7), generated for a width on its first
// use; they reproduce circomlibjs 0.1.7 and are checked against
// poseidon1.json and go-iden3-crypto. [V1Constants] exposes copies for the
// in-circuit Poseidon of package semaphore.
//
// # Implementation notes
//
// The permutations work in place on fixed-size arrays and allocate nothing;
// neither do Hash, HashV1, Compress and HashBytes. Element-wise products (the
// full-round S-boxes; M_I as s[i]·diag[i] + Σs) go through worldid/field's
// MulVec and MulAddVec, on the scalar or the vector (AVX-512 IFMA) path
// chosen per width by a calibration on the width's first use ([Paths];
// field.ForcePath overrides it); widths below 8 always take the scalar
// path. Additions use field.Add, a branch-free modular add equal to
// fr.Element.Add, whose reduction branch is unpredictable on random data. HashV1 runs circomlib's
// rounds in the equivalent form of the Poseidon paper's appendix B (constants
// moved to slot 0, sparse partial-round matrices; v1sched.go), checked
// against the literal rounds for every width. Apart from the sponge's loop
// over the input length, the package's own code does not branch on data.
//
// This package does not implement Poseidon2 for other fields or widths,
// variable-length hash modes other than the byte sponge, or gnark circuits.
package poseidon
