-- Migration 9: the Sign in with World ID settings of an app (apps.go):
-- profile ('' is the v1 contract, which every existing app keeps) and the
-- registered post-logout redirect URIs of RP-initiated logout.
ALTER TABLE apps
	ADD COLUMN profile                   text NOT NULL DEFAULT '',
	ADD COLUMN post_logout_redirect_uris text[] NOT NULL DEFAULT '{}';
