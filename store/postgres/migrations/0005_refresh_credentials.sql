-- Migration 5: a refresh keeps the credential it issued, so that a repeat
-- refresh returns that same credential (not a general
-- re-issuance endpoint). NULL for refreshes recorded before.
ALTER TABLE refreshes ADD COLUMN credential text;
