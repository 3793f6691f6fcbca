-- Embedded flows: single-use login tokens (in flow links, 10 minutes) and the flow sessions
-- they open (a bearer token held by the page, limited to one scope).

CREATE TABLE flow_logins (
    token_hash TEXT PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    scope TEXT NOT NULL,
    plan_group_uuid BLOB,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE flow_sessions (
    token_hash TEXT PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    scope TEXT NOT NULL,
    plan_group_uuid BLOB,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX flow_sessions_expiry ON flow_sessions (expires_at);
