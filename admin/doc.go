// Package admin implements the operator's HTTP API, served on the separate
// admin listener (default 127.0.0.1:8081) under /admin/, and the client the
// worldid CLI subcommands use to call it.
//
// Every request must carry "Authorization: Bearer <admin token>"; the token
// lives in the data directory with mode 0600 and is compared in constant time
// (over SHA-256 digests, so its length leaks nothing either). Bodies are JSON
// (exactly application/json, at most 64 KiB; internal/leaf/strictjson rejects
// unknown, case-folded and duplicate member names, invalid UTF-8, nesting
// over 64 and trailing data, in time and memory linear in the body), but
// for an app import: JSON lines (application/x-ndjson, at most 4 MiB and
// 1000 apps, each line at most 64 KiB and decoded as strictly).
//
// Errors have one shape, {"error": "<code>", "message": "<text>"}, with
// 400 bad_request, 401 unauthenticated, 404 not_found, 405 method_not_allowed
// (with Allow), 409 conflict, 413 too_large, 415 unsupported_media_type and
// 503 unavailable (storage cannot accept writes); a client that went away
// is recorded as 499 client_closed (internal/httpapi). Every answer
// carries Cache-Control: no-store. A failed request writes nothing: each
// change is one atomic store operation.
//
// New refuses a configuration without a token, store, registry, key
// manager or Orb-key parser, rather than answering 404 to an empty
// bearer token or panicking on first use.
//
// Routes:
//
//	POST /admin/apps   create an app: {"name", "redirect_uris"} → credentials (the secret is shown once)
//	GET  /admin/apps        list apps (never secrets or their hashes), with environment, state, created_at, updated_at
//	POST /admin/apps/import[?replace=true]  import apps with their ids, all or none: one JSON line per app,
//	                        {"app_id", "rp_id", "name", "redirect_uris", "environment", "client_secret"}; app_id
//	                        app_/app_staging_ + 32 lowercase hex, rp_id rp_ + 16; without client_secret one is
//	                        generated and shown once → {"apps": [...]} in line order. Every line is checked
//	                        first (400 naming the line; an id twice in the batch too), then all are stored in
//	                        one store operation: a taken app_id (unless replace) or rp_id is 409 naming the line
//	                        Create and import also take the sign-in settings (signin.go, SigninSettings):
//	                        "profile", "token_endpoint_auth_method", "jwks" or "jwks_uri", "post_logout_redirect_uris",
//	                        "pkce" ("required"/"optional"; absent: optional; worldid app create sends required), "response_types",
//	                        "sector_identifier_uri" (sector.go: its document is fetched through Options.CheckSector and
//	                        must list every redirect URI; a current-profile app on several hosts needs one; a later
//	                        app of a sector proves for its first app's app_id, listed as "sector_app_id");
//	                        absent, an app keeps the v1 contract, either secret method and every response type
//	POST /admin/apps/{app_id}          update: {"name"} and/or {"redirect_uris"} (re-checked against the
//	                        app's sector document and the several-hosts rule)
//	DELETE /admin/apps/{app_id}        delete (its nullifiers stay recorded); 409 while another app of
//	                        its sector proves for its app_id
//	PUT  /admin/apps/{app_id}/rp-signing-key   {"rp_signing_key": 64 hex digits, 0x optional}: the app's
//	                        World ID 4.0 RP signing key (secp256k1, checked by bridge/rpsig); its sign-in
//	                        requests then carry a signed 4.0 proof_request. Stored as lowercase hex (backups
//	                        carry it); never answered: app info shows only its address as rp_signer
//	DELETE /admin/apps/{app_id}/rp-signing-key   remove it: the app's sign-in is World ID 3.0 again
//	POST /admin/apps/{app_id}/secret   rotate the client secret → {"app_id", "client_secret"}; the old one stops at once
//	POST /admin/apps/{app_id}/disable  refuse sign-in and verify, make its tokens inactive; /enable undoes it
//	GET  /admin/keys        list OIDC signing keys: kid, state (pending, active, retiring), created_at, activates_at,
//	                        retires_at; then the revoked ones: kid, state revoked, revoked_at
//	POST /admin/keys/{kid}/revoke  remove a key now; a new one signs at once if it was signing; a key
//	                        revoked before is 409 conflict "… is already revoked"
//	GET  /admin/backup      stream a backup (package backup) of the running server, data-dir key files included
//	POST /admin/identities  insert an identity commitment into a tree: {"identifier", "environment", "identity_commitment"}
//	                        or a batch, atomically: "identity_commitments" (1 to 800, distinct) instead
//	                        → {"index" (the first's), "count", "root"}
//	POST /admin/keys/rotate publish the next OIDC signing key (it signs after the pre-publication delay)
//	POST /admin/signups     import signup records: {"signups":[{"id_commitment","signup_id","verified_at"}]} (≤ 200 per request)
//	POST /admin/orbkeys     trust an Orb key: {"orb_id", "public_key_pem"} (secp256k1 SPKI PEM)
//	POST /admin/refresh     turn credential refresh on or off: {"enabled": bool}
//	POST /admin/actions     set an action's max_verifications: {"rp_id", "action", "environment", "max_verifications"}
//	POST /admin/roots       add a root of a tree kept elsewhere: {"identifier", "environment", "root", "depth", "at"}, or of
//	                        World's 4.0 registry: {"protocol_version": "4.0", "environment", "root", "at"}; "at" at most
//	                        5 min in the future either way
//	POST /admin/anchors     set a World ID 4.0 trust anchor: {"kind": "issuer_key"|"oprf_key", "id", "x", "y"}; GET lists them
//
// Audit: every change is logged as one line "admin change" with who (the
// token's TokenID), what and which id. It does not implement operator
// accounts or roles: whoever holds the admin token is the operator.
package admin
