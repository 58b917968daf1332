// Package field implements the text encodings of BN254 scalar-field elements
// defined in doc/crypto.md §a.
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
package field
