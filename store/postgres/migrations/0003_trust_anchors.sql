-- Migration 3: World ID 4.0 trust anchors (registry/v4.go): the credential
-- issuer key of an issuer_schema_id and the OPRF key of an rp_id, which
-- World's contracts read from chain and this service from its operator.
-- One row per kind and id; adding again replaces the key.
CREATE TABLE trust_anchors (
	kind  text COLLATE "C" NOT NULL,
	id    text COLLATE "C" NOT NULL,
	x     text COLLATE "C" NOT NULL,
	y     text COLLATE "C" NOT NULL,
	at_ns bigint NOT NULL,
	PRIMARY KEY (kind, id)
);
