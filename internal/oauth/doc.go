// Package oauth is the wire vocabulary that the OpenID Connect endpoints
// (package oidc) and the browser sign-in (package signin) share, so that
// Sign in with World ID answers as one interface (doc/design.md §4,
// doc/interfaces.md §7.1):
//
//   - Error, the one error body {"code","detail","attribute","error",
//     "error_description"} with its HTTP status, Allow and WWW-Authenticate
//     headers, and ErrorParams for a redirected error (RFC 6749 §4.1.2.1);
//   - Responder, the JSON writer (internal/httpapi's, plus Pragma:
//     no-cache and nosniff), the page writer and error page
//     (internal/leaf/page: a plain headline and advice for the kind of
//     failure, the detail as a sentence, the code only in small print for
//     support), and the error bodies of internal/httpapi's triage
//     of store and checker failures (client gone 499 at Debug,
//     record.ErrUnavailable 503, else 500 with the cause logged, never sent);
//   - Router, the route wrapper: Deprecation (RFC 9745) and Sunset (RFC
//     8594) headers, the sunset switch (410 gone), CORS preflights for the
//     routes that allow any origin (never with credentials), method
//     dispatch (405 with Allow; GET serves HEAD);
//   - ReadForm, ParseQuery and StrictParams: application/x-www-form-urlencoded
//     bodies (exact media type by internal/httpapi, UTF-8 charset at most) under the 64 KiB limit (doc/design.md
//     §8), duplicates rejected (RFC 6749 §3.1) and empty values treated as
//     omitted;
//   - Request, a validated authorization request; Response, the answer
//     to one (its parameters, and the sealed login session the provider
//     turns into a cookie); and HashHex, the store key of a bearer value.
//
// Not done: it parses no OAuth parameter and issues nothing; it imports
// no handler and no backend.
package oauth
