// Package admin implements the operator's HTTP API, served on the separate
// admin listener (default 127.0.0.1:8081) under /admin/, and the client the
// worldid CLI subcommands use to call it.
//
// Every request must carry "Authorization: Bearer <admin token>"; the token
// lives in the data directory with mode 0600 and is compared in constant time
// (over SHA-256 digests, so its length leaks nothing either). Bodies are JSON
// (exactly application/json, at most 64 KiB; internal/strictjson rejects
// unknown, case-folded and duplicate member names, invalid UTF-8, nesting
// over 64 and trailing data, in time and memory linear in the body).
//
// Errors have one shape, {"error": "<code>", "message": "<text>"}, with
// 400 bad_request, 401 unauthenticated, 404 not_found, 405 method_not_allowed
// (with Allow), 409 conflict, 413 too_large, 415 unsupported_media_type and
// 503 unavailable (storage cannot accept writes). A failed request writes
// nothing: each change is one atomic store operation.
//
// Routes:
//
//	POST /admin/apps   create an app: {"name", "redirect_uris"} → credentials (the secret is shown once)
//	GET  /admin/apps        list apps (never secrets or their hashes)
//	POST /admin/identities  insert an identity commitment into a tree: {"identifier", "environment", "identity_commitment"}
//	                        or a batch, atomically: "identity_commitments" (1 to 800, distinct) instead
//	                        → {"index" (the first's), "count", "root"}
//	POST /admin/keys/rotate publish the next OIDC signing key (it signs after the pre-publication delay)
//	POST /admin/signups     import signup records: {"signups":[{"id_commitment","signup_id","verified_at"}]} (≤ 200 per request)
//	POST /admin/orbkeys     trust an Orb key: {"orb_id", "public_key_pem"} (secp256k1 SPKI PEM)
//	POST /admin/refresh     turn credential refresh on or off: {"enabled": bool}
//	POST /admin/actions     set an action's max_verifications: {"rp_id", "action", "environment", "max_verifications"}
//	POST /admin/roots       add a root of a tree kept elsewhere: {"identifier", "environment", "root", "depth", "at"}; "at" at most 5 min in the future
//
// It does not implement operator accounts, roles or audit logging beyond the
// request log: whoever holds the admin token is the operator.
package admin
