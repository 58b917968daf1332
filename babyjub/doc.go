// Package babyjub implements the BabyJubJub curve and EdDSA-Poseidon2
// signatures over it, compatible with TACEO's taceo-eddsa-babyjubjub (the
// World ID credential signer), as specified in doc/crypto.md §d and §e.
//
// # Curve (doc/crypto.md §d)
//
// BabyJubJub in circomlib / EIP-2494 form over F_p, p the BN254 scalar field:
//
//	a·x² + y² = 1 + d·x²·y²,  a = 168700, d = 168696
//
// with identity (0, 1), group order 8·L (cofactor 8),
//
//	L = 2736030358979909402780800718157159386076813972158567259200215660948447373041
//
// and generator G = circomlib's Base8, which spans the order-L subgroup.
// Arithmetic uses gnark-crypto's fr.Element and this package's own formulas.
// Encodings, hash inputs and every coordinate the spec names are in the
// circom form; internally points live on the isomorphic a = −1 curve
// −u² + y² = 1 + d'·u²·y² (u = λ·x, λ² = −a, d' = −d/a), where the
// extended-coordinate formulas of Hisil–Wong–Carter–Dawson 2008 are complete
// (−1 is a square, d' is not) and never multiply by a. The map costs one
// multiplication each way. gnark-crypto's twistededwards package (same
// a = −1 curve, different sign bit) is not used.
//
// A point is encoded in 32 bytes, arkworks style: LE32(y) with bit 7 of byte
// 31 set iff x > (p−1)/2. Decoding is strict: exactly 32 bytes; y < p (which
// also rejects bit 6); (1 − y²)/(a − d·y²) must be a square; the encoding of
// x = 0 with the sign bit set is rejected (arkworks accepts it); the point
// must be in the subgroup (L·P = O). Every rule has its own error.
//
// # Signatures (doc/crypto.md §e)
//
// A private key is a 32-byte seed. With h = BLAKE3-XOF(seed)[0..64]:
//
//	sk = LE(h[0..32] with b[0] &= 0xF8, b[31] &= 0x7F, b[31] |= 0x40) mod L
//	ns = LE(h[32..64]) mod L
//	A  = sk·G
//
// Signing the field element M:
//
//	r = LE(BLAKE3-XOF(LE32(ns) ‖ LE32(M))[0..64]) mod L,  R = r·G
//	c = Poseidon2("EdDSA Signature", R.x, R.y, A.x, A.y, M) mod L
//	s = (r + c·sk) mod L
//	signature = compressed(R) ‖ LE32(s)   (64 bytes)
//
// BLAKE3 is implemented here, restricted to what EdDSA needs: the unkeyed
// hash of one chunk (≤ 1024 bytes) with extendable output. The Poseidon2
// challenge is worldid/poseidon's hash mode (width 8).
//
// # Verification checklist (doc/crypto.md §e)
//
// A signature is accepted only if every step passes. Where a step is one of
// the checks recommended by Chalkias, Garillot and Nikolaenko, "Taming the
// many EdDSAs" (SSR 2020), the check is named.
//
//  1. The public key decodes under §d: on the curve and in the prime-order
//     subgroup (ParsePublicKey, ParsePublicKeyCoordinates; from JSON the
//     coordinates must be canonical decimals < p). Taming: canonical point
//     encoding of A; small-order / subgroup rejection of A.
//  2. The public key is not the identity. Taming: small-order A rejected.
//  3. The signature is exactly 64 bytes.
//  4. R decodes with the strict §d decoder, including the subgroup check.
//     Taming: canonical encoding of R; small-order / subgroup rejection of R.
//  5. s = LE(sig[32..64]) < L, never reduced. Taming: canonical s < L
//     (prevents s + L malleability).
//  6. M < p. An fr.Element from gnark-crypto's API always is; hand-built
//     limbs that are not reduced are rejected.
//  7. c is recomputed from (R, A, M) as in signing.
//  8. Accept iff 8·(s·G − R − c·A) = O. Taming: the cofactored equation.
//
// Steps 1–2 are enforced when a PublicKey is constructed, so Verify takes a
// parsed key. Step 8 is evaluated as the exact equation s·G − c·A = R, which
// accepts exactly the same inputs: A is in the subgroup (step 1), so
// s·G − c·A is too; if R is in the subgroup, 8·X = O implies X = O for
// X = s·G − c·A − R because gcd(8, L) = 1; and if R is outside the subgroup,
// s·G − c·A = R is impossible. Verify therefore leaves the subgroup part of
// step 4 to the equation, saving a full scalar multiplication by L, while
// ParseSignature performs it explicitly so that its errors name the rule.
// Tests check that both paths agree on every vector and fuzz input, and that
// signatures with R + T for torsion points T of order 2, 4 and 8 (for which
// the cofactored equation holds) are rejected.
//
// # Implementation notes
//
// Secret-dependent work (sk, ns, r and the points derived from them) is
// constant time on amd64 and arm64 without the purego build tag, and only
// there: other builds use gnark-crypto's generic field arithmetic, which
// branches on a carry, and [ConstantTime] reports false (the server then
// refuses to start). timing_test.go checks signing and k·G with a
// dudect-style Welch t-test on every test run. How:
//   - scalars mod L use Montgomery arithmetic on four 64-bit limbs, no
//     math/big;
//   - k·G is a signed radix-16 fixed-base comb (64 precomputed rows of
//     Niels points, no doublings) that scans every table row in full with
//     masked moves; eight accumulators take digits i ≡ l mod 8 and advance
//     together, one 8-lane product (field.MulVec) per product of the 7M
//     mixed addition, and are folded pairwise at the end. The products run
//     on the path chosen for this operation ([Paths]): scalar (worldid/field's
//     BMI2/ADX assembly loop, or gnark-crypto's Mul) or vector (gnark-crypto's
//     AVX-512 IFMA vector Mul), whichever was faster in a calibration of a
//     few milliseconds on first use, unless field.ForcePath forces one;
//     both are branch-free;
//   - the point formulas use gnark-crypto's Mul, Square and vector Mul
//     (branch-free assembly on amd64 and arm64) and this package's
//     branch-free addition, subtraction and negation, because
//     gnark-crypto's branch on the carry outside its amd64 assembly;
//   - the inversion that makes sk·G and r·G affine is gnark-crypto's fast
//     variable-time one applied to Z·β, so its timing depends only on Z·β,
//     which is uniform: the secret blinding factor β is read from the
//     BLAKE3 output right after the 64 bytes the spec uses (bytes 64..96 of
//     the key expansion and of the nonce hash). No value the spec defines
//     changes.
//
// Verification handles public data only and runs in variable time. Each
// PublicKey carries, for j = 0..7, the odd multiples up to 15 of 2^(32j)·A
// (8 KiB, built when the key is parsed or derived); s·G − c·A is then one
// Straus chain of 33 doublings over the width-5 NAFs of the 32-bit parts of
// −c mod L (and width-8 NAFs of s against a static table of odd multiples of
// 2^(32j)·G, 48 KiB). The same routine computes L·P for subgroup checks. Verify
// and VerifySignature do not allocate.
//
// Not implemented: batch verification, the a = −1 (gnark) encoding (the
// a = −1 model is internal; no a = −1 point is ever encoded), keyed
// or multi-chunk BLAKE3, and zeroization guarantees for key material
// beyond clearing local buffers (Go cannot promise it).
package babyjub
