-- Migration 10: what remains of a revoked OIDC signing key (oidc.go,
-- RevokeSigningKey): its kid and when it was revoked, never the key
-- material, so that the operator can list it and a second revocation is
-- told apart from an unknown kid.
CREATE TABLE revoked_keys (
	id         text COLLATE "C" PRIMARY KEY,
	revoked_ns bigint NOT NULL
);
