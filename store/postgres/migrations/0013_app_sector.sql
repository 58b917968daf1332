-- Migration 13: an app's sector identifier (OIDC Core §8.1, apps.go):
-- apps.sector_identifier_uri, the https URL the operator registered, and
-- apps.sector_app_id, the app of the same sector whose app_id the wallet
-- proves for. Empty for every existing app: it proves for its own app_id,
-- so its subjects do not change.
ALTER TABLE apps
	ADD COLUMN sector_identifier_uri text NOT NULL DEFAULT '',
	ADD COLUMN sector_app_id text NOT NULL DEFAULT '';
