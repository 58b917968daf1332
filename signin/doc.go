// Package signin is the browser side of Sign in with World ID: what
// happens between a valid authorization request and the authorization
// response (doc/interfaces.md §4.1, §5, doc/design.md §4). The OpenID
// Connect endpoints (package oidc) hand it a validated oauth.Request
// (Flow.Start); it binds the request to the browser, shows the wait page,
// which is a Wallet Bridge requester (doc/bridge.md: its QR code and "Open
// World App" button carry the connect URL of an encrypted World ID 3.0
// request left at the relay), fetches and verifies the wallet's answer
// when the page polls, and, once the proof verified, asks the provider for
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
//	GET            /authorize/status?r=…                the wait page's polling (JSON); drives the bridge
//	POST           /authorize/cancel                    Cancel → error=access_denied to the app
//	POST           /authorize/retry                     Try again: a fresh bridge request, same sign-in
//
// The wallet talks to the relay only (below, "Wallet Bridge"): this
// server has no wallet routes of its own, and Options.BridgeURL and
// Options.Bridge are required.
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
// oidc/seal.go; the token layouts are in tokens.go). The browser token (in
// the wait page's URL) holds the whole request, a random 128-bit request
// id, the expiry (10 minutes), the SHA-256 of a 256-bit binding secret
// and, once the page was shown, its bridge request (relay id and AES key).
// The sealing key is
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
// hash it as text; the bridge request carries its hash).
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
// code of the connect URL as inline SVG (internal/leaf/qr: byte mode,
// level M, drawn server-side) in a white frame, the "Open World App"
// button (the connect URL with return_to; first on a narrow or touch
// screen, after the QR code otherwise), a Cancel button, the expiry, what
// the app receives and a warning never to scan a code someone sent. A
// nonce'd script polls /authorize/status every 1.5 s and on
// visibilitychange and shows the state in an announced status line
// (role=status, aria-live=polite): "confirm in World App" once scanned, a
// refused proof or a wallet error with "Try again", "retrying" while the
// bridge is unavailable; it reloads, so that the server shows the true
// state, on any other state and on any non-2xx answer. It also counts the
// expiry down in the browser's local time. A <noscript> meta refresh
// reloads it every 2 s without JavaScript (each load also asks the bridge;
// the expiry then shows in UTC). CSP: default-src 'none'; script-src and
// style-src the nonce; connect-src 'self'; no form-action (the Cancel
// answer redirects to the app, and form-action would govern that).
//
// With Options.SimulatorPath (`worldid serve -simulator`,
// internal/simulator), the wait page also links to the developer
// simulator, for clients Options.SimulatorAllowed accepts (loopback, no
// proxy), with the QR code's connect URL; the simulator answers through the
// same bridge as any wallet, and the
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
// # Wallet Bridge
//
// The wait page is a requester of the Wallet Bridge (doc/bridge.md,
// ../shared/spec/bridge.md), so the World App, World's simulator, our CLI
// wallet (internal/wallet) and our developer simulator all complete it:
//
//   - Creation is lazy: /authorize creates nothing; the wait page's first
//     showing (a URL whose token has no bridge request) creates one at
//     Options.BridgeURL (bridge/client.Create: AES-256-GCM, key and IV from
//     Options.Rand) and answers 303 to the wait page whose token carries
//     it. The key is sealed inside that token (Provider.Seal) and never
//     stored or sent to the relay. So at most one bridge request is made
//     per page shown (reloads, the no-script refresh and return_to reuse
//     it), and each client address may create DefaultCreateRate of them
//     (20 at once, then one every 3 s; internal/leaf/ratelimit, per
//     process, IPv6 by /64); past it the page is a 429 ("too many sign-in
//     pages…"), so a flood of anonymous /authorize calls is answered with
//     303s and 429s and cannot make the server an amplifier against the
//     relay. A relay that cannot be reached (within Options.BridgeTimeout,
//     5 s by default, for every call) leaves the page up
//     without a QR code, state "unavailable"; reloading or Try again
//     retries.
//   - The request: World ID 3.0, app_id = client_id, action "", signal =
//     the 0x hash (IDKit's hashSignal) of the sign-in's signal (below),
//     verification_level "device" (the lowest; orb-verified users satisfy
//     it and the proof's own level becomes the claim; apps have no setting
//     yet), environment "staging" for staging apps.
//   - The connect URL: https://world.org/verify (staging apps
//     https://staging.world.org/verify)?t=wld&i=…&k=…[&return_to=…][&b=…],
//     b omitted for World's relay. The button's carries return_to = this
//     wait page (the same-device flow: World App brings the user back, and
//     the page finishes by itself); the QR code's does not (it is read by
//     another device, which could not finish the sign-in).
//   - Polling: GET /authorize/status (and every load of the wait page, so
//     a page without JavaScript also finishes) asks the relay's GET
//     /response at most once per second per sign-in in each replica (a
//     bounded in-memory table of 65,536 bridge ids: last call and last
//     outcome; no goroutine). "retrieved" marks the request scanned
//     (Store.MarkScanned, no durable write); "completed" is decrypted and
//     verified (Checker with the app's environment, AppID = client_id, action "", the signal's hash, level
//     orb or device) and approves the request in one atomic step; nothing
//     is written before. An answer whose check failed for want of the
//     store or checker is kept in memory and checked again on the next
//     poll.
//   - States (JSON {"state","message"}): pending, scanned, done (approved:
//     the page reloads and finishes), refused (a proof that does not
//     verify, for another app, signal or action, an answer that does not
//     decrypt or parse, or a World ID 4.0 answer to a 3.0-only request),
//     wallet_error (the
//     wallet's error_code, said in plain words), unavailable (the relay
//     cannot be reached; the page keeps polling), cancelled, finished,
//     expired. A bridge request the relay no longer knows (expired, or
//     its answer taken by another replica that then failed) answers 409
//     bridge_gone; the page reloads and its load makes a fresh one for the
//     same sign-in. Refused and wallet_error offer Try again
//     (POST /authorize/retry), which does the same.
//   - The signal is unforgeable: it derives from the request's random id,
//     known only inside the sealed tokens, so a proof approves one sign-in;
//     a replayed bridge answer (another request's ciphertext) does not
//     decrypt under this page's key.
//   - Options.Observe is told started, scanned, approved, refused,
//     wallet_error, finished, cancelled, expired, bridge_create_ok,
//     bridge_create_error, bridge_poll_ok and bridge_poll_error.
//
// # World ID 4.0
//
// When the app has an RP signing key (record.App.RPSigningKey, set by the
// operator) and Options.CheckerV4 is set, the bridge request also carries
// a World ID 4.0 proof_request, built as IDKit 4 builds it (worldcoin/idkit
// rust/core/src/bridge.rs IDKitRequest::create): id "req_" + 32 random hex
// digits, version 1, proof_type uniqueness, rp_id and oprf_key_id the
// app's rp_id, action hashToField("") (the sign-in's empty action, as
// FieldElement::from_arbitrary_raw_bytes), session_id null, and
// created_at, expires_at (300 s later), nonce and signature from
// bridge/rpsig (signed over the empty action), asking for proof_of_human
// (issuer_schema_id 1) with the sign-in's signal unhashed; the request
// sets allow_legacy_proofs, so a World App without 4.0 answers the 3.0
// request beside it. The nonce is sealed in the page's token. A 4.0
// answer must be one uniqueness item of proof_of_human with five proof
// words and a nullifier in the field; it is checked by Options.CheckerV4
// (the checker /api/v4/verify uses) with the app's rp_id and environment,
// that action, the sealed nonce and the signal's hash, and approves the
// sign-in at level orb with the 4.0 nullifier (canonical hex) as the
// subject. That nullifier is not the 3.0 nullifier hash: the same person
// gets another sub through 4.0 than through 3.0. The answer's id is not
// compared (the signed nonce binds the proof). Without a key, or without
// CheckerV4, the request is 3.0 only and a 4.0 answer is refused.
//
// # Sectors
//
// An app that joined another app's sector (record.App.SectorAppID,
// doc/interfaces.md §2.4.2) signs in with that app's proofs (Flow.proofApp):
// its 3.0 request names the sector app's app_id, its 4.0 request the
// sector app's rp_id and RP signing key, and the answer is checked for
// them, so the sector's apps share subjects. The wait page still names
// the app being signed in to; World App shows the sector app.
//
// # Not done
//
// No consent memory; login sessions are the provider's (oidc session.go):
// every request that reaches the flow is a fresh proof. No 4.0
// session proofs or credentials other than proof_of_human, no per-app
// verification level; the creation rate and the poll table are per
// replica.
package signin
