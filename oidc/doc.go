// Package oidc implements Sign in with World ID: an OpenID Connect provider
// (OIDC Core 1.0, OAuth 2.0 RFC 6749, Multiple Response Types, Form Post
// Response Mode, PKCE RFC 7636, introspection RFC 7662, JWT access tokens
// RFC 9068) whose users authenticate with a World ID 3.0 proof.
// It follows interfaces.md §2.1–2.4, §4.1, §5, §7.1, §8 and design.md §4.
//
// # Routes
//
// Register adds, on the public mux:
//
//	GET, OPTIONS   /.well-known/openid-configuration   discovery (pre-encoded; HEAD too)
//	GET, OPTIONS   /jwks, /jwks.json                    published keys (re-encoded only when the key set changes)
//	GET, POST      /authorize                           authorization request → sign-in page
//	POST           /authorize/complete                  the wallet's proof submission
//	POST, OPTIONS  /token                               authorization_code grant
//	POST           /introspect                          RFC 7662
//	GET, POST, OPTIONS /userinfo                        RFC 6750 bearer
//
// Every response carries "Deprecation: @<unix>" (RFC 9745) and
// "Sunset: <HTTP-date>" (RFC 8594), both with Options.SunsetDate as
// design.md §4 specifies (default 2026-01-31); with SunsetEnforce every
// route answers 410 Gone (code "gone") from that date on. Discovery, JWKS,
// token and userinfo send "Access-Control-Allow-Origin: *" and answer CORS
// preflights; credentials are never allowed. Token, introspect, userinfo,
// every page and every error send "Cache-Control: no-store".
//
// # Flows
//
// Response types: code, id_token, "id_token token", "code id_token",
// "code token", "code id_token token" (values in any order; "token" alone
// is refused as unsupported_response_type). Response modes: query (code
// only, interfaces.md §4.1), fragment (default for all but code), form_post.
// nonce is required for every response type but code (OIDC Core §3.2.2.1,
// §3.3.2.11). PKCE: S256 only; a code_challenge without method means plain
// and is refused. Scopes: openid is required, email and profile are
// granted when asked, unknown scopes are ignored. prompt=none gives
// login_required (there is no session); request, request_uri and
// registration give their *_not_supported errors; other OIDC parameters
// (max_age, display, ui_locales, login_hint, id_token_hint, acr_values,
// claims) are ignored: every sign-in is a fresh proof.
//
// Errors of /authorize (RFC 6749 §4.1.2.1): until client_id is known and
// redirect_uri equals one of its registered URIs exactly (string
// equality), errors are an HTML page (400) and never a redirect; after
// that they are redirected (303) with error, error_description and state,
// in the request's response mode (or the response type's default when the
// mode itself is invalid). A parameter given twice is an error (RFC 6749
// §3.1): on the page for client_id and redirect_uri, redirected otherwise.
//
// # Wallet protocol
//
// A valid authorization request creates a pending sign-in request (random
// 256-bit id, 10 minutes, stored under its SHA-256) with a signal of 64
// lowercase hex digits (256 random bits, no "0x", so SDKs hash it as
// text). The page (200, strict CSP) contains exactly one
//
//	<a id="wallet-link" href="worldid://signin?action=&app_id=…&request_id=…&signal=…&submit=…">
//
// whose query (form-encoded) carries request_id (64 lowercase hex),
// app_id (the client_id), action (always empty), signal and submit
// ({issuer}/authorize/complete), and for a staging app environment=staging
// (its proofs are checked against the staging trees). The wallet proves with external nullifier
// ExternalNullifier(app_id, "") and signal_hash = hashToField(UTF-8 bytes
// of signal) (crypto.md §g), then POSTs application/x-www-form-urlencoded
// to submit with exactly request_id, proof (any encoding of crypto.md §g),
// merkle_root and nullifier_hash (VerifyHex syntax, < p) and
// verification_level (orb or device); signal_hash is not sent. Answers:
//
//   - malformed form, unknown parameter, or a request id that is unknown,
//     expired or already used: an HTML error page (400, 413 or 415); the
//     request is not consumed by a malformed form.
//   - otherwise the request is consumed atomically (single use) and the
//     proof is checked (Checker) with Identifier = verification_level,
//     Environment "production", AppID = client_id, Action "".
//   - success: 303 to redirect_uri with the response parameters (query or
//     fragment), or for form_post a 200 page that auto-submits under a
//     nonce'd script with a no-script button.
//   - a proof that does not verify, or one already spent (each proof is
//     recorded once): redirected error=access_denied with state — the user
//     failed to authenticate (RFC 6749 §4.1.2.1), and the relying party
//     must start a new request. Store or checker failures: server_error
//     or temporarily_unavailable, redirected.
//
// The wallet is the user agent of this flow: it follows the 303 (or posts
// the form) to the relying party.
//
// # Tokens
//
// RS256 JWTs only, hand-written in jwt.go. ID token (typ "JWT"): iss, sub
// (the nullifier hash, "0x" + 64 lowercase hex: pairwise by construction),
// aud (client_id), exp (3600 s), iat, auth_time, jti, nonce when given,
// c_hash / at_hash where OIDC Core §3.3.2.11 requires them (front-channel
// responses that issue a code or access token alongside), the
// {base_url}/beta {likely_human: strong for orb, weak for device,
// credential_type} and {base_url}/v1 {verification_level} claims, email
// "<sub>@<issuer host>" with scope email and name "World ID User",
// given_name "World ID", family_name "User" with scope profile. Access
// token (typ "at+jwt", RFC 9068): iss, sub, aud = client_id, client_id,
// exp (3600 s), iat, auth_time, jti, scope, verification_level, grant_id.
// Verification (jwt.go, claims.go) is strict: at most 8 KiB, exactly two
// dots before splitting, a header segment byte-identical to the one a
// published key writes for the expected typ (looked up, never parsed, so
// no none, HS*, crit, jku, jwk, x5u…; RFC 7515 §4, RFC 8725 §3.1),
// canonical unpadded base64url, a signature of the modulus length, claims
// read by internal/strictjson (exact member names, no duplicates, no
// unknown members), then exact iss, aud = client_id, now < exp with the
// injected clock.
//
// Codes: 256 random bits (base64url), stored under their SHA-256, bound to
// client, redirect URI, nonce, scope and PKCE challenge, 10 minutes, single
// use. A second redemption fails with invalid_grant and revokes the grant:
// every token issued for that sign-in (from the code, or in the same hybrid
// response) is then inactive at /introspect and invalid at /userinfo.
//
// # Keys
//
// RSA-2048 (the size every OIDC relying party accepts and twice as fast
// to sign as 3072, which matters for /token throughput; 2048 is rated
// through 2030 by NIST SP 800-57). Keys live in the Store (so replicas
// share them), kid = RFC 7638 thumbprint, created on first start. A
// successor is published 24 h before it signs (the JWKS is cacheable for
// 1 h), the rotation period (default 30 days) is counted from the current
// key's activation, and a retired key stays published 24 h (> the 1 h
// token lifetime) after its successor starts signing, then is deleted.
// Run applies the schedule every 10 minutes and reloads the keys every
// 5 s (so another replica's revocation takes effect here within 5 s);
// RotateKeys schedules a successor at once (idempotent while one is
// pending). RevokeKey is the emergency rotation: the key is deleted now, so
// it leaves the JWKS and every token it signed fails verification
// (inactive at /introspect, invalid_token at /userinfo); if it was signing,
// a new key replaces it in the same store operation and signs at once,
// without pre-publication (relying parties refetch the JWKS on an unknown
// kid). KeyList describes the stored keys for the operator.
//
// # Apps
//
// A disabled app (the operator's switch) cannot start a sign-in (400
// client_disabled page), finish one (access_denied to its redirect URI) or
// redeem a code (400 client_disabled); its tokens are inactive at
// /introspect and rejected at /userinfo, and work again once it is
// enabled. A deleted app's tokens are rejected the same way. A staging app
// (imported from the developer portal) signs in with proofs from the
// staging trees; the wallet link tells the wallet so.
//
// # Errors
//
// JSON body {"code","detail","attribute","error","error_description"}:
// code is the interfaces.md §7.1 name, error the OAuth one. 405
// method_not_allowed (with Allow), 415 invalid_content_type, 413
// request_too_large (64 KiB bodies), 400 required / invalid_request /
// invalid_grant_type→unsupported_grant_type / invalid_grant, 401
// unauthenticated→invalid_client (WWW-Authenticate: Basic) at token and
// introspect, 401 unauthenticated / invalid_token (WWW-Authenticate:
// Bearer) at userinfo, 500/503 for store failures. /introspect answers
// {"active":false} (200) for any invalid, expired, revoked or foreign
// token, so its invalid_token code never appears.
//
// # Not done
//
// No sessions or consent memory, no refresh tokens, no dynamic client
// registration, no request objects, no encrypted or symmetric tokens, no
// RFC 9207 iss response parameter, no token revocation endpoint.
// Userinfo does not re-read the app: a token stays valid until it expires
// or its grant is revoked.
package oidc
