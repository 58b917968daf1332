// Package oidc implements Sign in with World ID: an OpenID Connect provider
// (OIDC Core 1.0, OAuth 2.0 RFC 6749, Multiple Response Types, Form Post
// Response Mode, PKCE RFC 7636, introspection RFC 7662, JWT access tokens
// RFC 9068, device authorization grant RFC 8628) whose users authenticate
// with a World ID 3.0 proof.
// It follows doc/interfaces.md §2.1–2.4, §4.1, §5, §7.1, §8 and doc/design.md §4.
//
// # Routes
//
// Register adds, on the public mux:
//
//	GET, OPTIONS   /.well-known/openid-configuration   discovery (pre-encoded; HEAD too)
//	GET, OPTIONS   /jwks, /jwks.json                    published keys (re-encoded only when the key set changes)
//	GET, POST      /authorize                           authorization request → the browser sign-in (Signin.Start)
//	POST, OPTIONS  /token                               authorization_code and device_code grants
//	POST, OPTIONS  /device_authorization                RFC 8628 §3.1 (device.go)
//	GET, POST      /device                              the device grant's verification page (deviceverify.go)
//	POST           /introspect                          RFC 7662
//	GET, POST, OPTIONS /userinfo                        RFC 6750 bearer
//
// The browser sign-in (package signin: the wait page, its status and
// Cancel, the wallet's routes) is the other half of the interface. The
// two meet through two small interfaces the wiring fills: Signin (the
// provider hands it a valid oauth.Request) and signin.Provider (the flow
// asks the provider to seal its tokens, to issue the response of an
// approved request, to deliver a response, and to register its routes with
// Route). Provider.Route gives every route of both the same wrapper
// (internal/oauth.Router).
//
// Every response carries "Deprecation: @<unix>" (RFC 9745) and
// "Sunset: <HTTP-date>" (RFC 8594), both with Options.SunsetDate as
// doc/design.md §4 specifies (default 2026-01-31); with SunsetEnforce every
// route answers 410 Gone (code "gone") from that date on.
// The sunset is for operators (these headers); the pages a person signs in
// on do not mention it.
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
// nonce is required when an ID token comes back from /authorize (OIDC
// Core §3.2.2.1, §3.3.2.1), so not for code and code token. PKCE: S256 only; a code_challenge without method means plain
// and is refused. Scopes: openid is required, email and profile are
// granted when asked, unknown scopes are ignored. prompt=none gives
// login_required unless the browser's login session (session.go,
// doc/interfaces.md §4.1.1) is for the same app, within max_age, for the
// id_token_hint's subject and at the acr_values level; a request with
// max_age and without prompt is answered from such a session too,
// and otherwise goes to the wallet; request, request_uri and
// registration give their *_not_supported errors, a refused request
// object's response_mode, response_type and state (OIDC Core §6.1)
// deciding where the error goes; acr_values is honoured (acr.go: the
// proof must satisfy one known value, else access_denied); other OIDC
// parameters (display, ui_locales, login_hint, claims) are ignored, and
// every other request is a fresh proof. Every authorization
// response carries iss (RFC 9207). Apps on the current profile get acr,
// amr ["pop"], no legacy claims, 5-minute codes and ID tokens
// (doc/interfaces.md §2.4.1).
//
// Errors of /authorize (RFC 6749 §4.1.2.1): until client_id is known and
// redirect_uri equals one of its registered URIs exactly (string
// equality), errors are an HTML page (400) and never a redirect; after
// that they are redirected (303) with error, error_description and state,
// in the request's response mode (or the response type's default when the
// mode itself is invalid). A parameter given twice is an error (RFC 6749
// §3.1): on the page for client_id and redirect_uri, redirected otherwise.
//
// # Sign-ins
//
// A valid authorization request becomes an oauth.Request (canonical
// response type, granted scopes) handed to Signin.Start; the provider
// keeps nothing. The flow later calls AuthorizationResponse for an
// approved request: the code and tokens are issued then (auth_time is the
// approval; the code is saved), or access_denied when the operator
// disabled or deleted the app since; Respond delivers it to the
// registered redirect URI in the request's mode (303 with query or
// fragment, or the self-submitting form_post page of internal/leaf/page);
// Denied is the access_denied response of a cancelled request; RestartURL
// repeats the request with the app's state, nonce and PKCE challenge.
// Seal and Open protect the flow's tokens (below, "Keys").
//
// # Device grant
//
// RFC 8628 (doc/interfaces.md §4.1.2): /device_authorization (device.go)
// authenticates the client as /token does and stores a record.DeviceGrant
// under the SHA-256 of a 256-bit device code, with the SHA-256 of a user
// code of 8 letters from RFC 8628 §6.1's 20 consonants (usercode.go: no
// vowels, no look-alikes, drawn without modulo bias; 20^8 ≈ 2^34.6; a
// collision with a stored code is drawn again), for 10 minutes, polled
// every 5 s. /device (deviceverify.go) is a form (double-submit token in
// a SameSite=Strict cookie, no script) that accepts the code in any case
// with dashes and spaces; ?user_code= fills it in for comparison and
// looks nothing up. An entry costs a token of a per-address limiter and
// of a per-replica one (guesses are bounded, §5.1); a pending grant's code
// starts the very sign-in /authorize starts (Signin.Start) with an
// oauth.Request whose Device names the grant and whose "redirect URI" is
// /device. When it comes back, AuthorizationResponse approves the grant
// (subject, level, auth_time) instead of issuing a code, and Respond shows
// the outcome page (internal/leaf/page "device") instead of redirecting;
// an error response (Cancel, a disabled app) denies the grant there. The
// poll at /token (devicetoken.go) is one atomic UpdateDeviceGrant whose
// pure step, pollDevice, answers authorization_pending, slow_down (a poll
// over a second early adds 5 s to the interval, §3.5), access_denied,
// expired_token or invalid_grant, or redeems an approved grant once for
// the code grant's tokens (issueTokens, the app's profile).
//
// # Tokens
//
// Hand-written JWTs (jwt.go). ID token: RS256 (typ "JWT"): iss, sub (the
// nullifier hash of the proof for the app's record.App.ProofAppID, "0x" +
// 64 lowercase hex: pairwise per app, or per sector, by construction), aud
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
// use. /token authenticates the client, then hands the store the code's
// hash with the presented client, redirect_uri and PKCE challenge; the
// store redeems the code in one atomic step only if all three match, so a
// failed call consumes nothing. Presenting a redeemed code again, by the client
// it was issued to, fails with invalid_grant and revokes the grant: every
// token issued for that sign-in (from the code, or in the same hybrid
// response) is then inactive at /introspect and invalid at /userinfo.
//
// # Keys
//
// Every key derivation is in derive.go: from each RSA key's PKCS #8
// bytes, HKDF-SHA256 with two info strings gives the AES-256-GCM key that
// seals the sign-in flow's tokens (Seal, Open: kid prefix "." base64url
// nonce ‖ ciphertext, the purpose as additional data; a token opens while
// the key that sealed it is published) and the ES256 access-token key.
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
// kid). The store keeps the revoked kid and the time, never the key
// material; revoking it again is record.ErrKeyRevoked. KeyList describes
// the stored keys, then the revoked ones, for the operator.
//
// # Apps
//
// A disabled app (the operator's switch) cannot start a sign-in (400
// client_disabled page), finish one (access_denied to its redirect URI) or
// redeem a code (400 client_disabled); its tokens are inactive at
// /introspect and rejected at /userinfo, and work again once it is
// enabled. A deleted app's tokens are rejected the same way. A staging app
// (imported from the developer portal) signs in with proofs from the
// staging trees (package signin).
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
// 6750 §3.1); 499/500/503 for store failures (internal/httpapi's
// triage). The body, its writer and the route wrapper are internal/oauth's,
// shared with package signin. /authorize's errors are HTML pages
// (internal/leaf/page). /introspect answers
// {"active":false} (200) for any invalid, expired, revoked or foreign
// token, so its invalid_token code never appears.
//
// # Not done
//
// No consent memory, no refresh tokens, no dynamic client registration,
// no request objects (refused, see above), no encrypted or symmetric
// tokens, no caching of a client's jwks_uri (fetched per authentication),
// no device-code denial from the wallet's own refusal (device.go).
// Sector identifiers (sector.go) are checked when the operator registers
// an app, never at sign-in; the
// subject a sector shares comes from the wallet's proof for the sector's
// app (record.App.ProofAppID, doc/interfaces.md §2.4.2), never from a
// server-side derivation. A login session answers only prompt=none and
// max_age requests, and names one app (session.go), also within a sector.
//
// Login sessions, logout and revocation (session.go, logout.go,
// revoke.go): a completed sign-in sets a sealed session cookie
// (doc/interfaces.md §4.1.1); /end_session (RP-Initiated Logout 1.0)
// revokes it in the store and clears it, asking the user first unless
// id_token_hint names the session; /revoke (RFC 7009) revokes the
// grant of the client's own access token. Client authentication
// (clientauth.go): client_secret_basic, client_secret_post or
// private_key_jwt (RFC 7523), as the app registered. The device grant
// takes no acr_values, and a wallet's refusal leaves its sign-in page up
// (Try again or Cancel, as at /authorize) rather than denying the grant.
// Userinfo does not re-read the app: a token stays valid until it expires
// or its grant is revoked.
package oidc
