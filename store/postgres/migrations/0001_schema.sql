-- Migration 1: every table of the PostgreSQL store (doc.go explains each
-- rule). Times are bigint nanoseconds since 1970-01-01 UTC, columns *_ns:
-- exact like the JSON store; to_timestamp(x_ns / 1e9) shows one. Keys are
-- COLLATE "C" so that ORDER BY is byte order, as in the JSON store.

-- Apps (apps.go).
CREATE TABLE apps (
	id            text COLLATE "C" PRIMARY KEY,
	rp_id         text COLLATE "C" NOT NULL UNIQUE,
	name          text NOT NULL,
	secret_hash   text NOT NULL,
	redirect_uris text[] NOT NULL,
	created_ns    bigint NOT NULL
);

-- Verification actions and their nullifiers (verify.go). action is bytea:
-- it is caller text, which may hold U+0000, and PostgreSQL text cannot.
CREATE TABLE actions (
	id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	rp_id             text COLLATE "C" NOT NULL,
	environment       text COLLATE "C" NOT NULL,
	action            bytea NOT NULL,
	max_verifications bigint NOT NULL CHECK (max_verifications >= 0),
	created_ns        bigint NOT NULL,
	UNIQUE (rp_id, environment, action)
);

-- No foreign key to actions (never deleted): its check would share-lock
-- the action's row in every verification.
CREATE TABLE nullifiers (
	action_id  bigint NOT NULL,
	nullifier  text COLLATE "C" NOT NULL,
	count      bigint NOT NULL CHECK (count > 0),
	created_ns bigint NOT NULL,
	PRIMARY KEY (action_id, nullifier)
);

-- Sign-in (oidc.go). Request ids and codes are SHA-256 hex of the bearer
-- values.
CREATE TABLE signing_keys (
	id          text COLLATE "C" PRIMARY KEY,
	private_key bytea NOT NULL,
	created_ns  bigint NOT NULL,
	activate_ns bigint NOT NULL
);

CREATE TABLE signin_requests (
	id             text COLLATE "C" PRIMARY KEY,
	client_id      text NOT NULL,
	redirect_uri   text NOT NULL,
	response_type  text NOT NULL,
	response_mode  text NOT NULL,
	scope          text NOT NULL,
	state          text NOT NULL,
	nonce          text NOT NULL,
	code_challenge text NOT NULL,
	signal         text NOT NULL,
	expires_ns     bigint NOT NULL
);
CREATE INDEX signin_requests_expiry ON signin_requests (expires_ns);

CREATE TABLE spent_proofs (
	key        text COLLATE "C" PRIMARY KEY,
	expires_ns bigint NOT NULL
);
CREATE INDEX spent_proofs_expiry ON spent_proofs (expires_ns);

CREATE TABLE auth_codes (
	id                 text COLLATE "C" PRIMARY KEY,
	grant_id           text NOT NULL,
	client_id          text NOT NULL,
	redirect_uri       text NOT NULL,
	scope              text NOT NULL,
	nonce              text NOT NULL,
	code_challenge     text NOT NULL,
	subject            text NOT NULL,
	verification_level text NOT NULL,
	auth_ns            bigint NOT NULL,
	expires_ns         bigint NOT NULL,
	retain_ns          bigint NOT NULL,
	redeemed           boolean NOT NULL DEFAULT false
);
CREATE INDEX auth_codes_retention ON auth_codes (retain_ns);

CREATE TABLE revoked_grants (
	grant_id  text COLLATE "C" PRIMARY KEY,
	retain_ns bigint NOT NULL
);
CREATE INDEX revoked_grants_retention ON revoked_grants (retain_ns);

-- Identity trees (registry.go). size is the next leaf index; its row lock
-- orders the appends of one tree.
CREATE TABLE trees (
	tree text COLLATE "C" PRIMARY KEY,
	size bigint NOT NULL CHECK (size BETWEEN 0 AND 1073741824)
);

CREATE TABLE leaves (
	tree       text COLLATE "C" NOT NULL REFERENCES trees,
	idx        bigint NOT NULL CHECK (idx >= 0),
	commitment text COLLATE "C" NOT NULL,
	at_ns      bigint NOT NULL,
	PRIMARY KEY (tree, idx),
	UNIQUE (tree, commitment)
);

CREATE TABLE external_roots (
	tree  text COLLATE "C" NOT NULL,
	root  text COLLATE "C" NOT NULL,
	depth integer NOT NULL,
	at_ns bigint NOT NULL,
	PRIMARY KEY (tree, root)
);

-- Credential refresh (refresh.go).
CREATE TABLE switches (
	name    text COLLATE "C" PRIMARY KEY,
	enabled boolean NOT NULL
);

CREATE TABLE signups (
	id_commitment text COLLATE "C" PRIMARY KEY,
	signup_id     text NOT NULL,
	verified_ns   bigint NOT NULL
);

CREATE TABLE orb_keys (
	orb_id text COLLATE "C" NOT NULL,
	pem    text COLLATE "C" NOT NULL,
	added  bigint GENERATED ALWAYS AS IDENTITY,
	PRIMARY KEY (orb_id, pem)
);

CREATE TABLE pinned_subs (
	id_commitment text COLLATE "C" PRIMARY KEY,
	sub           text NOT NULL
);

CREATE TABLE pcp_bindings (
	pcp_digest    text COLLATE "C" PRIMARY KEY,
	id_commitment text NOT NULL
);

-- The key mirrors the JSON store's: commitment, whole seconds, credential
-- id (a uint64, hence numeric).
CREATE TABLE refreshes (
	id_commitment text COLLATE "C" NOT NULL,
	sub           text NOT NULL,
	at_ns         bigint NOT NULL CHECK (at_ns >= 0),
	at_s          bigint GENERATED ALWAYS AS (at_ns / 1000000000) STORED,
	pcp_digest    text,
	credential_id numeric(20, 0) NOT NULL CHECK (credential_id BETWEEN 0 AND 18446744073709551615),
	PRIMARY KEY (id_commitment, at_s, credential_id)
);
