// Package relay is a Wallet Bridge relay: the routes of World's
// wallet-bridge (worldcoin/wallet-bridge src/routes/request.rs and
// response.rs at 2d8af5d), served in bounded memory or from a shared store,
// so that development, tests and our own wallet need no outside bridge.
//
//	POST /request             body {"iv","payload"[,"request_id"]} → 200 {"request_id"}
//	                           (a UUID v4 unless the body names an id; 409 if that id is live)
//	GET  /request/{id}        → 200 {"iv","payload"}, once; the status becomes retrieved; 404 if
//	                           unknown, expired or already read
//	HEAD /request/{id}        → 200 while the request waits to be read, else 404
//	PUT  /response/{id}       body {"iv","payload"} → 201; 409 while an answer waits to be
//	                           fetched; 400 for an id without a live request (as wallet-bridge)
//	GET  /response/{id}       → 200 {"status":"initialized"|"retrieved","response":null}, or
//	                           {"status":"completed","response":{…}} once, after which the id is
//	                           gone; 404 for unknown or expired
//
// Every id is lowercased, then must be 16–256 characters of [a-z0-9-_.]
// (else 400). Every write restarts the id's lifetime, TTL (900 s, wallet-
// bridge's EXPIRE_AFTER_SECONDS). Bodies must be application/json (else
// 415), at most MaxBody bytes (64 KiB; wallet-bridge allows 5 MiB, but its
// payloads are a few KiB: 413 above), with string iv and payload (400 for
// JSON that does not parse, 422 for missing or mistyped members; unknown
// members are ignored). Errors are the bare status code with an empty body,
// as wallet-bridge answers them; a full store answers 503. CORS as
// wallet-bridge's tower-http layer: any origin, any header, methods GET,
// POST, HEAD, PUT; OPTIONS is the preflight.
//
// Deviations, all stricter: an id is taken (409) while any part of it is
// live, not only its unread request; a second PUT /response while the first
// waits is 409 (wallet-bridge: 400 once its status key is gone). Not
// implemented: the staging-only PUT /request/{id}, POST /response (a
// standalone answer), HEAD /response/{id}, app_overrides and idkit_flow_id.
//
// Storage is the Store interface; Memory is the bounded in-memory one
// (one process); store/postgres implements Store for replicas sharing a
// database. The relay sees only ciphertext and never a key.
package relay
