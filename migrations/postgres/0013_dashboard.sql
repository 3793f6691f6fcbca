-- The dashboard: organisations (a partner; they own apps), the people who sign in (operators
-- run the platform, partner members their organisation's apps), when each AppToken was last
-- used, an app's default renewal link, and the audit log of changes made in the dashboard or
-- the CLI (never with secrets).

CREATE TABLE organisations (
    uuid UUID PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);

ALTER TABLE apps ADD COLUMN organisation_uuid UUID REFERENCES organisations (uuid);
ALTER TABLE apps ADD COLUMN renewals_url TEXT;
CREATE INDEX apps_organisation ON apps (organisation_uuid);

ALTER TABLE app_tokens ADD COLUMN last_used_at TIMESTAMPTZ;

CREATE TABLE dashboard_users (
    uuid UUID PRIMARY KEY,
    -- Stored lower-case, so that one address is one user.
    email TEXT NOT NULL UNIQUE,
    -- An argon2id PHC string.
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('operator', 'partner')),
    organisation_uuid UUID REFERENCES organisations (uuid),
    created_at TIMESTAMPTZ NOT NULL,
    CHECK ((role = 'operator' AND organisation_uuid IS NULL)
        OR (role = 'partner' AND organisation_uuid IS NOT NULL))
);

CREATE TABLE audit_log (
    uuid UUID PRIMARY KEY,
    -- Who: a user's e-mail, or `cli` / `system`.
    actor TEXT NOT NULL,
    user_uuid UUID REFERENCES dashboard_users (uuid),
    action TEXT NOT NULL,
    -- What was changed, e.g. `app:<uuid>`.
    target TEXT NOT NULL,
    -- A JSON object (before/after, never a secret).
    detail TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_log_created ON audit_log (created_at);
