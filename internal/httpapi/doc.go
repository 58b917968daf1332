// Package httpapi is the HTTP ground floor every JSON handler of this
// module stands on (verify, refresh, admin, registry, oidc). It holds what
// must be the same in all of them, and nothing of any one protocol:
//
//   - [WriteJSON], the one JSON writer: the body is v encoded by
//     encoding/json with a trailing newline, and the answer always carries
//     "Content-Type: application/json" and "Cache-Control: no-store"
//     (RFC 9111 §5.2.2.5): every answer here is per request — a
//     verification outcome, a credential, an app secret — and none may be
//     stored by a cache on the way;
//   - [FailureStatus], the one triage of an error that ends a request
//     without being the handler's own verdict (a store or checker failure):
//     a client that went away is [StatusClientClosed] logged at Debug, a
//     store that cannot write ([record.ErrUnavailable]) is 503, anything
//     else is 500; both are logged at Error with the cause, which is never
//     sent to the client;
//   - [AllowMethod] and [HasMediaType], the method and exact content-type
//     checks of a parse step: a wrong method gets an Allow header
//     (RFC 9110 §15.5.6), and a content type matches only when the whole
//     header parses (RFC 9110 §8.3.1) and names exactly the media type.
//
// What it does NOT do: it defines no error body. Each handler keeps its
// own wire error type and writer (their shapes are fixed by the interface
// each one serves) and calls this package for the headers, the status and
// the logging. It routes nothing, reads no body and imports nothing of
// this module but record's storage sentinels.
package httpapi
