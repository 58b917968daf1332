-- Migration 11: an app's World ID 4.0 RP signing key (apps.go), the
-- secp256k1 private key as 64 lowercase hex digits, set by the operator;
-- empty (every existing app) keeps its sign-in at World ID 3.0.
ALTER TABLE apps
	ADD COLUMN rp_signing_key text NOT NULL DEFAULT '';
