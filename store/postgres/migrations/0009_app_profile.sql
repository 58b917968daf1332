-- Migration 9: the Sign in with World ID settings of an app (apps.go):
-- profile ('' is the v1 contract, which every existing app keeps), the
-- registered post-logout redirect URIs of RP-initiated logout, and client
-- authentication ('' keeps client_secret_basic and client_secret_post; jwks
-- or jwks_uri holds the keys of private_key_jwt), whether PKCE is required, and the
-- response types allowed (empty: all).
ALTER TABLE apps
	ADD COLUMN profile                    text NOT NULL DEFAULT '',
	ADD COLUMN post_logout_redirect_uris  text[] NOT NULL DEFAULT '{}',
	ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT '',
	ADD COLUMN jwks                       text NOT NULL DEFAULT '',
	ADD COLUMN pkce_required              boolean NOT NULL DEFAULT false,
	ADD COLUMN response_types             text[] NOT NULL DEFAULT '{}',
	ADD COLUMN jwks_uri                   text NOT NULL DEFAULT '';
