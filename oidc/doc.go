// Package oidc implements Sign in with World ID: an OpenID Connect provider
// (OIDC Core 1.0, OAuth 2.0 RFC 6749, Multiple Response Types, Form Post
// Response Mode, PKCE RFC 7636, introspection RFC 7662, JWT access tokens
// RFC 9068) whose users authenticate with a World ID 3.0 proof.
// It follows doc/interfaces.md §2.1–2.4, §4.1, §5, §7.1, §8 and doc/design.md §4.
//
// # Routes
//
// Register adds, on the public mux:
//
//	GET, OPTIONS   /.well-known/openid-configuration   discovery (pre-encoded; HEAD too)
//	GET, OPTIONS   /jwks, /jwks.json                    published keys (re-encoded only when the key set changes)
//	GET, POST      /authorize                           authorization request → 303 to the wait page
//	GET            /authorize/wait?r=…                  the browser's wait page; finishes an approved sign-in
//	GET            /authorize/status?r=…                the wait page's polling (JSON)
//	POST           /authorize/cancel                    Cancel → error=access_denied to the app
//	GET            /authorize/request?request=…         the wallet reads a request (JSON); marks it scanned
//	POST           /authorize/complete                  the wallet's proof (JSON answer)
//	POST, OPTIONS  /token                               authorization_code grant
//	POST           /introspect                          RFC 7662
//	GET, POST, OPTIONS /userinfo                        RFC 6750 bearer
//
// Every response carries "Deprecation: @<unix>" (RFC 9745) and
// "Sunset: <HTTP-date>" (RFC 8594), both with Options.SunsetDate as
// doc/design.md §4 specifies (default 2026-01-31); with SunsetEnforce every
// route answers 410 Gone (code "gone") from that date on. The wait page
// says "shuts down on <date>" before the date and that the announced date
// has passed after it, so the sentence is true on the day it is shown.
// Discovery, JWKS, token and userinfo send "Access-Control-Allow-Origin: *"
// and answer CORS preflights; credentials are never allowed. Token,
// introspect, userinfo, every page and every error send
// "Cache-Control: no-store".
//
// # Flows
//
// Response types: code, id_token, "id_token token", "code id_token",
// "code token", "code id_token token" (values in any order; "token" alone
// is refused as unsupported_response_type). Response modes: query (code
// only, doc/interfaces.md §4.1), fragment (default for all but code), form_post.
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
// # Pending sign-ins
//
// A valid authorization request costs no store write and no memory: it is
// sealed (AES-256-GCM, request.go) into two tokens. The browser token (in
// the wait page's URL) holds the whole request, a random 128-bit request
// id, the expiry (10 minutes) and the SHA-256 of a 256-bit binding secret;
// the wallet token (in the QR code, about 150 characters) holds the id,
// expiry, client_id and the redirect URI's host. The sealing key is
// HKDF-SHA256 of the current RSA signing key's PKCS #8 bytes, which every
// replica loads from the store: any replica, before or after a restart,
// opens a token, and a token names its key by the first 8 characters of
// the kid, so it opens as long as that key is published (24 h after its
// successor starts signing). The store records only what happens to a
// request (record.SigninProgress, keyed by the SHA-256 of the id):
// approved (with the subject and level), cancelled, finished; each step
// is one atomic transition (Store.AdvanceSignin), so a request is approved
// at most once and finished at most once. The wallet's read ("scanned")
// only marks it, without a durable write (Store.MarkScanned: the JSON
// store keeps at most 4096 marks in memory, PostgreSQL an UNLOGGED table
// every replica sees), because anyone can mint requests and read them; a
// lost mark only keeps the page from saying "confirm in your wallet".
// The proof's signal is the hex
// SHA-256 of a label and the id (64 lowercase hex digits, no "0x", so SDKs
// hash it as text), the match code 5 characters of another hash of it.
//
// # Wait page
//
// /authorize answers 303 to {issuer}/authorize/wait?r=<browser token> and
// sets the binding cookie "worldid-signin-<8 hex of the id>" (HttpOnly,
// SameSite=Lax, Path=/, 11 minutes: the request's 10 and the finish grace;
// "__Host-" and Secure when the issuer is https), one per request, so two
// tabs can sign in at once. Finishing or cancelling the sign-in, or
// loading its page once it is over, expires that cookie. The page (200,
// its own URL, so a reload shows the same request) shows the app's name,
// the host it returns to, the QR code of the wallet link as inline SVG
// (qr.go: byte mode, level M, drawn server-side), the match code, the
// expiry, the wallet link as "open the wallet on this device", a Cancel
// button, and a warning never to scan a code someone sent. A nonce'd
// script polls /authorize/status every 1.5 s and on visibilitychange; it
// shows "confirm in your wallet" once scanned and reloads when the state
// is no longer pending or scanned. A <noscript> meta refresh reloads it
// every 2 s without JavaScript. CSP: default-src 'none'; script-src and
// style-src the nonce; connect-src 'self'; no form-action (the Cancel
// answer redirects to the app, and form-action would govern that).
//
// With Options.SimulatorPath (`worldid serve -simulator`,
// internal/simulator), the wait page also links to the developer
// simulator, for clients Options.SimulatorAllowed accepts (loopback, no
// proxy); the simulator submits through the same wallet routes, and the
// Checker accepts its test identities only in the process that runs it,
// only while it runs with -simulator (they are never stored).
//
// Loading the wait page when the wallet has approved finishes the
// sign-in: the code and tokens are issued then (auth_time is the
// approval), the code is saved, the request moves to finished, and the
// browser gets the 303 to redirect_uri or the self-submitting form_post
// page. A store failure on the way answers a 503 page and leaves the
// request approved, so reloading retries (a code saved by the failed
// attempt was shown to nobody and expires unused). Only the browser
// with the binding cookie can load it (otherwise 403 "other_browser"), so
// a phone's approval completes the browser that started the sign-in and
// no other; a finished or cancelled request shows "already over" (400);
// an expired one a page (410) whose "Start again" link repeats the
// authorization request with the app's state, nonce and PKCE challenge.
// An approved request can still be finished for 60 s after it expires
// (finishGrace: the wallet may approve in the last seconds, and the page
// polls every 1.5 s), so progress records are kept until then.
//
// # Wallet protocol
//
// The wallet link is worldid://signin?request=<wallet token>&server=<issuer>.
// The wallet GETs {server}/authorize/request?request=… and receives
// {"request","app_id","app_name","return_host","match_code","action"
// (always ""),"signal","expires_at","submit"}; the request is then
// "scanned". It proves with external nullifier ExternalNullifier(app_id, "")
// and signal_hash = hashToField(UTF-8 bytes of signal) (doc/crypto.md §g), then
// POSTs application/x-www-form-urlencoded to submit with exactly request,
// proof (any encoding of doc/crypto.md §g), merkle_root and nullifier_hash
// (VerifyHex syntax, < p) and verification_level (orb or device). The
// wallet never receives the code. Answers (JSON):
//
//   - 200 {"status":"approved","return_to":"<host>"}: the proof verified
//     (Checker: Identifier = verification_level, Environment = the
//     app's (staging apps prove from the staging trees; the wallet request
//     says "environment":"staging"), AppID = client_id, Action ""), and the request is approved, in one
//     atomic step. The signal is unique to the request and a request is
//     approved at most once, so a proof approves one request once.
//   - 400 for a malformed form or token (invalid_request, required), an
//     expired request ("expired"); 403 access_denied for a proof that does
//     not verify; 409 "cancelled" or "already_completed"; 500/503 for
//     store or checker failures. None of these consumes
//     the request: the wallet may try again while the browser waits.
//
// # Tokens
//
// Hand-written JWTs (jwt.go). ID token: RS256 (typ "JWT"): iss, sub (the
// nullifier hash, "0x" + 64 lowercase hex: pairwise by construction), aud
// (client_id), exp (3600 s), iat, auth_time, jti, nonce when given,
// c_hash / at_hash where OIDC Core §3.3.2.11 requires them (front-channel
// responses that issue a code or access token alongside), the
// {base_url}/beta {likely_human: strong for orb, weak for device,
// credential_type} and {base_url}/v1 {verification_level} claims, email
// "<sub>@<domain>" with scope email (Options.EmailDomain, default the
// issuer's host, or "worldid.invalid" when that is an IP address, so the
// value is always an address) and name "World ID User", given_name "World
// ID", family_name "User" with scope profile. Access token: ES256 (typ
// "at+jwt", RFC 9068): iss, sub, aud = client_id, client_id, exp (3600 s),
// iat, auth_time, jti, scope, verification_level, grant_id. An ES256
// signature costs tens of microseconds where RS256-2048 costs about a
// millisecond, so /token makes one RSA signature. Verification (jwt.go,
// claims.go) is strict: at most 8 KiB, exactly two dots before splitting,
// a header segment byte-identical to the one a published key writes for
// the expected typ (looked up, never parsed, so no none, HS*, crit, jku,
// jwk, x5u…; RFC 7515 §4, RFC 8725 §3.1; the typ pins RS256 or ES256),
// canonical unpadded base64url, a signature of the exact length, claims
// read by internal/leaf/strictjson (exact member names, no duplicates, no
// unknown members), then exact iss, aud = client_id, now < exp with the
// injected clock.
//
// Codes: 256 random bits (base64url), stored under their SHA-256, bound to
// client, redirect URI, nonce, scope and PKCE challenge, 10 minutes, single
// use. /token checks everything (client authentication, the code's client,
// redirect_uri, PKCE) before it redeems the code atomically, so a failed
// call consumes nothing. Presenting a redeemed code again, by the client
// it was issued to, fails with invalid_grant and revokes the grant: every
// token issued for that sign-in (from the code, or in the same hybrid
// response) is then inactive at /introspect and invalid at /userinfo.
//
// # Keys
//
// RSA-2048 (the size every OIDC relying party accepts and twice as fast
// to sign as 3072, which matters for /token throughput; 2048 is rated
// through 2030 by NIST SP 800-57). Keys live in the Store (so replicas
// share them), kid = RFC 7638 thumbprint, created on first start. Each RSA
// key brings a P-256 access-token key, HKDF-SHA256 of its PKCS #8 bytes
// reduced to [1, n−1], published right after it in the JWKS under its own
// thumbprint; it is stored nowhere and rotates with the RSA key. A
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
// code is the doc/interfaces.md §7.1 name, error the OAuth one. 405
// method_not_allowed (with Allow), 415 invalid_content_type, 413
// request_too_large (64 KiB bodies), 400 required / invalid_request /
// invalid_grant_type→unsupported_grant_type / invalid_grant, 401
// unauthenticated→invalid_client (WWW-Authenticate: Basic) at token and
// introspect; at userinfo 401 invalid_token (WWW-Authenticate: Bearer
// realm="worldid", error="invalid_token", …) for a bad token, and for a
// request without any token 401 "unauthenticated" with the bare challenge
// Bearer realm="worldid" and no error / error_description members (RFC
// 6750 §3.1); 500/503 for store failures. The wait page, Cancel and the
// wait page's errors are HTML pages. /introspect answers
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
