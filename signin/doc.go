// Package signin is the browser side of Sign in with World ID: what
// happens between a valid authorization request and the authorization
// response (doc/interfaces.md §4.1, §5, doc/design.md §4). The OpenID
// Connect endpoints (package oidc) hand it a validated oauth.Request
// (Flow.Start); it binds the request to the browser, shows the wait page
// with the wallet's QR code, lets the wallet read the request and post its
// World ID 3.0 proof, and, once the proof verified, asks the provider for
// the authorization response and delivers it to the browser that started
// the sign-in.
//
// # Routes
//
// Register adds, through the provider's route wrapper (Provider.Route:
// the deprecation headers, the sunset switch and method dispatch of every
// route of the interface):
//
//	GET            /authorize/wait?r=…                  the browser's wait page; finishes an approved sign-in
//	GET            /authorize/status?r=…                the wait page's polling (JSON)
//	POST           /authorize/cancel                    Cancel → error=access_denied to the app
//	GET            /authorize/request?request=…         the wallet reads a request (JSON); marks it scanned
//	POST           /authorize/complete                  the wallet's proof (JSON answer)
//
// # Interfaces
//
// Store is the flow's storage (the app, and SigninProgress, MarkScanned,
// AdvanceSignin for what happened to a request); Checker verifies the
// wallet's proof; Provider is all the flow needs of package oidc (Seal and
// Open, AuthorizationResponse, Denied, Respond, RestartURL, Route). The
// flow never imports oidc, and oidc never imports it: the wiring
// (internal/server) gives each the other.
//
// # Pending sign-ins
//
// A valid authorization request costs no store write and no memory: it is
// sealed by the provider (Provider.Seal: AES-256-GCM, oidc/derive.go,
// oidc/seal.go; the token layouts are in tokens.go) into two tokens. The browser token (in
// the wait page's URL) holds the whole request, a random 128-bit request
// id, the expiry (10 minutes) and the SHA-256 of a 256-bit binding secret;
// the wallet token (in the QR code, about 150 characters) holds the id,
// expiry, client_id and the redirect URI's host. The sealing key is
// HKDF-SHA256 of the provider's current RSA signing key's PKCS #8 bytes, which every
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
// its own URL, so a reload shows the same request) is a card
// (internal/leaf/page) with the app's name, the host it returns to, the QR
// code of the wallet link as inline SVG (internal/leaf/qr: byte mode,
// level M, drawn server-side) in a white frame, the link as "Open World
// App" (first on a narrow or touch screen, after the QR code otherwise),
// the match code, a Cancel button, the expiry, what the app receives and a
// warning never to scan a code someone sent. A nonce'd script polls
// /authorize/status every 1.5 s and on visibilitychange and shows the
// state in an announced status line (role=status, aria-live=polite):
// "confirm in World App" once scanned, a refused proof or a wallet error
// with "Try again" (when the flow offers RetryURL), "retrying" while the
// bridge is unavailable; it reloads, so that the server shows the true
// state, on any other state and on any non-2xx answer. It also counts the
// expiry down in the browser's local time. A <noscript> meta refresh
// reloads it every 2 s without JavaScript (the expiry then shows in UTC). CSP: default-src 'none'; script-src and
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
// sign-in: the provider issues the code and tokens then
// (Provider.AuthorizationResponse; auth_time is the approval; the code is
// saved), the request moves to finished, and the browser gets the 303 to
// redirect_uri or the self-submitting form_post page (Provider.Respond). A store failure on the way answers a 503 page and leaves the
// request approved, so reloading retries (a code saved by the failed
// attempt was shown to nobody and expires unused). Only the browser
// with the binding cookie can load it (otherwise 403 "other_browser"), so
// a phone's approval completes the browser that started the sign-in and
// no other while the sign-in is live. Once it is over its page tells
// whoever loads it the true state (ended.go; the browser that started it
// has lost its cookie by then): "already finished" (400
// already_completed), "cancelled" (400 already_completed) or "expired"
// (410), the last two with a "Start again" link that repeats the
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
// # Not done
//
// No sessions or consent memory (every sign-in is a fresh proof), no
// Wallet Bridge (the wallet link is this server's own worldid:// scheme),
// no World ID 4.0 proofs.
package signin
