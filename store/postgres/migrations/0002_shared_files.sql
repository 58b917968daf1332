-- Migration 2: key material every replica must share (sharedfiles.go): the
-- local Semaphore proving key and the credential issuer's EdDSA seed, which
-- the JSON store keeps as files in its data dir. The first replica to start
-- stores its own; the others adopt it.
CREATE TABLE shared_files (
	name       text COLLATE "C" PRIMARY KEY,
	content    bytea NOT NULL,
	created_ns bigint NOT NULL
);
