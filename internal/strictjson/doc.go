// Package strictjson decodes one JSON value into a Go value as
// encoding/json does, after rejecting what encoding/json lets through
// silently:
//
//   - a member name repeated in one object (encoding/json keeps the last;
//     RFC 8259 §4 leaves the result to the parser, so two parsers may read
//     one body differently);
//   - a member name that matches a struct field only when case is folded
//     (encoding/json matches "Name" to `json:"name"`);
//   - a member name that matches no field (DisallowUnknownFields);
//   - anything after the value.
//
// Member names are checked against the struct tags of the destination
// type at every depth: through pointers, slices, arrays, maps and embedded
// structs. Values of types with their own UnmarshalJSON (time.Time, for
// example) are opaque apart from the duplicate check.
//
// It does not bound the input (callers wrap bodies in http.MaxBytesReader)
// and does not validate UTF-8 beyond what encoding/json does.
package strictjson
