// Package field implements the text encodings of BN254 scalar-field elements
// defined in doc/crypto.md §a, and the vector arithmetic that the Poseidon2
// and BabyJubJub code shares, with its choice between a scalar and an
// AVX-512 IFMA path.
//
// A field element (FE) is an integer in [0, p), where p is the BN254 scalar
// field modulus
//
//	p = 21888242871839275222246405745257275088548364400416034343698204186575808495617
//
// represented as gnark-crypto's fr.Element.
//
// Output: [Format] writes "0x" followed by exactly 64 lowercase hex digits
// (big-endian, zero-padded). [FormatDecimal] writes the canonical decimal form.
//
// Input: every parser accepts exactly one documented syntax and rejects
// everything else with an error naming the rule that failed. No parser reduces
// mod p; a value ≥ p is an error, except in [ParseVerifyHex], which by spec
// returns the raw uint256 so that the verifier can reject it (doc/crypto.md §g).
//
//   - [ParseStrict]: "0x" + exactly 64 hex digits (either case), value < p.
//     For credential JSON and anything this server emitted. "0X", 63 or 65
//     digits, whitespace and signs are rejected.
//   - [ParsePrefixedHex]: "0x" + 1 to 64 hex digits (either case), value < p.
//     The refresh form field "sub".
//   - [ParseDecimal]: canonical decimal: ASCII digits only, no sign, no
//     leading zero except "0" itself, value < p. BabyJubJub coordinates.
//   - [ParseIDCommitment]: a string starting with "0x" is PrefixedHex,
//     anything else is canonical decimal. The refresh query "idComm".
//   - [ParseVerifyHex]: the World ID 3.0 verify request hex fields as the
//     upstream portal decodes them: trim surrounding whitespace, lowercase,
//     drop one optional "0x", then 1 to 64 hex digits, left-padded. A digit
//     string such as "123" is read as hex. The result is a 32-byte
//     big-endian uint256, deliberately not range-checked.
//
// Decisions where the spec is open: "surrounding whitespace" in VerifyHex is
// what strings.TrimSpace removes (Unicode White_Space). The request schemas'
// own regular expressions (doc/interfaces.md) are not applied here.
//
// Nothing secret is parsed here, so the parsers are not constant time.
//
// # Arithmetic for the crypto packages
//
// [Add] is a branch-free modular addition (gnark-crypto's fr.Element.Add
// branches on the carry). [MulVec] and [MulAddVec] are element-wise
// products (and products plus a constant) of vectors, run on one of two
// paths ([Path]):
//
//   - [Scalar]: one Montgomery multiplication per element; on amd64 CPUs
//     with BMI2 and ADX an assembly loop of this package (mulvec_amd64.s:
//     CIOS with MULX/ADCX/ADOX, final subtraction by CMOV) runs the whole
//     vector in one call, elsewhere gnark-crypto's fr.Element.Mul;
//   - [Vector]: gnark-crypto's fr.Vector.Mul, which runs eight lanes at a
//     time with AVX-512 IFMA ([VectorAvailable]; never under the noavx or
//     purego build tags).
//
// Neither is faster everywhere: on an Intel Xeon with IFMA the vector path
// was 1.3–1.6× slower than the scalar one, on an AMD EPYC with IFMA it was
// the faster. So each operation that can use either (the Poseidon2
// permutations of width 8, 12 and 16, BabyJubJub's k·G) is timed on both by
// [Calibrate] the first time it is used (interleaved runs, best of at most
// 16 pairs or 3 ms; a few milliseconds in all) and keeps the faster; the
// server does this at start-up and logs the result ("crypto path").
// [ForcePath] overrides every choice (serve -crypto-path=scalar|vector, and
// the tests that run each vector test on both paths). Both paths compute
// the same values without branching on them.
package field
