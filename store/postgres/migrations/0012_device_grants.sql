-- Migration 12: device authorization grants (RFC 8628, oidc/device*.go).
-- id and user_code are the SHA-256 of the device code and of the
-- normalized user code; the bearer values are never stored. Rows are
-- deleted once retain_ns has passed (PruneExpired).
CREATE TABLE device_grants (
	id                 text COLLATE "C" PRIMARY KEY,
	user_code          text COLLATE "C" NOT NULL UNIQUE,
	client_id          text NOT NULL,
	scope              text NOT NULL,
	state              text NOT NULL,
	subject            text NOT NULL,
	verification_level text NOT NULL,
	auth_ns            bigint NOT NULL,
	interval_s         integer NOT NULL,
	polled_ns          bigint NOT NULL,
	expires_ns         bigint NOT NULL,
	retain_ns          bigint NOT NULL
);
CREATE INDEX device_grants_retention ON device_grants (retain_ns);
