-- Embedded flows: single-use login tokens (in flow links, 10 minutes) and the flow sessions
-- they open (a bearer token held by the page, limited to one scope).

CREATE TABLE flow_logins (
    token_hash TEXT PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    scope TEXT NOT NULL,
    plan_group_uuid UUID,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE flow_sessions (
    token_hash TEXT PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    scope TEXT NOT NULL,
    plan_group_uuid UUID,
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX flow_sessions_expiry ON flow_sessions (expires_at);
