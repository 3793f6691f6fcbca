-- Keys have names, so that the key list and the revoke confirmation say which program a key
-- belongs to. Keys made before names existed are named after the day they were made.

ALTER TABLE app_tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE app_tokens SET name = 'Key of ' || substr(created_at, 1, 10) WHERE name = '';
