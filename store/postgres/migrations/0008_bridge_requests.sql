-- Migration 8: the built-in Wallet Bridge relay's requests (bridge/relay),
-- shared by every replica so that a request created through one can be
-- read and answered through another. Ciphertext only, and short-lived
-- (the relay's TTL): UNLOGGED, like signin_scans, so a write costs no WAL
-- fsync; a crash of PostgreSQL empties it, and requesters replace their
-- pending bridge requests with fresh ones. request_* are NULL once a
-- wallet has read the request, response_* until it answers; a row whose
-- expires_ns has passed is dead and is deleted by later creations.
CREATE UNLOGGED TABLE bridge_requests (
	id               text COLLATE "C" PRIMARY KEY,
	status           text NOT NULL CHECK (status IN ('initialized', 'retrieved', 'completed')),
	request_iv       text,
	request_payload  text,
	response_iv      text,
	response_payload text,
	expires_ns       bigint NOT NULL
);
CREATE INDEX bridge_requests_expiry ON bridge_requests (expires_ns);
