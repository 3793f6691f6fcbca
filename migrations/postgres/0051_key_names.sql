-- Keys have names, so that the key list and the revoke confirmation say which program a key
-- belongs to. Keys made before names existed are named after the day they were made.

ALTER TABLE app_tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE app_tokens SET name = 'Key of ' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')
    WHERE name = '';
