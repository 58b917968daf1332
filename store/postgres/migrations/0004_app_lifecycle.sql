-- Migration 3: app lifecycle (apps.go). staging: proofs use the staging
-- trees; disabled: sign-in, verify and the app's tokens are refused;
-- updated_ns: the last operator change (the zero time, math.MinInt64, when
-- there was none).
ALTER TABLE apps
	ADD COLUMN staging    boolean NOT NULL DEFAULT false,
	ADD COLUMN disabled   boolean NOT NULL DEFAULT false,
	ADD COLUMN updated_ns bigint NOT NULL DEFAULT -9223372036854775808;
