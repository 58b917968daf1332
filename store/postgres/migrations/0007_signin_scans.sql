-- Migration 7: the wallet's read of a pending sign-in ("scanned") is a
-- display hint, not state, and anyone can cause one: it moves out of
-- signin_progress into an UNLOGGED table, which every replica sees but
-- which writes no WAL (no fsync per read). A crash of PostgreSQL empties
-- it; the wait pages of requests pending then merely do not say "confirm
-- in your wallet". Rows already in signin_progress as 'scanned' stay valid.
CREATE UNLOGGED TABLE signin_scans (
	id         text COLLATE "C" PRIMARY KEY,
	expires_ns bigint NOT NULL
);
CREATE INDEX signin_scans_expiry ON signin_scans (expires_ns);
