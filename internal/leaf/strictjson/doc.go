// Package strictjson is the one JSON reader for untrusted input in this
// module: request bodies (verify, admin, registry), the x-zkp-proof header
// and hashes.json (refresh), credentials read back (credential), access
// token claims (oidc), backup files (backup) and the signup lines of
// `worldid signup import` (internal/cli).
//
// [Parse] checks a whole document once, in one pass, before any caller
// looks at it, and rejects:
//
//   - anything outside the grammar of RFC 8259 §2–§7 (the four whitespace
//     bytes only; numbers as in §6, so no leading zeros, "+1", ".5", "1.",
//     NaN or Infinity; strings as in §7, so no raw control characters and
//     only the escapes listed there) — [ErrSyntax];
//   - anything after the value but whitespace (§2) — [ErrSyntax];
//   - bytes that are not UTF-8 (RFC 8259 §8.1), including overlong forms
//     and encoded surrogates, and \u escapes that are unpaired UTF-16
//     surrogates (§8.2) — [ErrUTF8]. encoding/json replaces both with
//     U+FFFD, so two readers of one body would see different strings;
//   - more than [MaxDepth] arrays and objects open at once (§9 lets a
//     parser limit nesting) — [ErrDepth];
//   - a member name given twice in one object, compared after unescaping
//     (§4 leaves the meaning of duplicates to the parser, so two parsers
//     may read one body differently) — [ErrDuplicate]. Names are compared
//     exactly: "name" and "Name" are different names here.
//
// Parse returns the value as a [Value], which callers walk with
// [Value.Members] and [Value.Elements] under their own member policy
// (which names exist, what is required, whether unknown names are
// ignored). [Decode] is that policy for Go structs: it also rejects member
// names that match no field exactly (encoding/json would fold case or
// ignore them) and then decodes with encoding/json.
//
// Cost: time and memory are linear in the input. Parse keeps one frame per
// open container (at most MaxDepth) and, for the duplicate check, the
// unescaped names of the members of the open objects with one small
// record each, sorted when their object closes (O(k log k) for k
// members); it builds no path strings, and names the path of a failure
// only when it reports one ([Error.Path]). A document nested too deep is
// refused at its 65th bracket, having read no further. [Value]'s methods
// re-scan the checked bytes, so a walk costs at most MaxDepth passes.
//
// It does not bound the input's size (callers read bodies through
// http.MaxBytesReader), does not normalize Unicode (names differing only
// in normalization are different names), and says nothing about number
// ranges: callers parse the number text they are given.
package strictjson
