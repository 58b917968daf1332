-- Migration 9: the Sign in with World ID profile of an app (apps.go,
-- record.App.Profile): '' is the v1 contract, which every existing app
-- keeps.
ALTER TABLE apps ADD COLUMN profile text NOT NULL DEFAULT '';
