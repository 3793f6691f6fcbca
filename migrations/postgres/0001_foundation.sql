-- Apps, their tokens, accounts with their status history, account tokens, idempotency records,
-- counters (gap-free numbers) and events.

CREATE TABLE apps (
    uuid UUID PRIMARY KEY,
    name TEXT NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'live')),
    display_name TEXT NOT NULL,
    logo_url TEXT,
    primary_color TEXT,
    support_name TEXT,
    support_phone TEXT,
    support_email TEXT,
    support_hours TEXT,
    support_url TEXT,
    allowed_origins TEXT NOT NULL DEFAULT '[]',
    payment_publishable_key TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE app_tokens (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    prefix TEXT NOT NULL UNIQUE,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);
CREATE INDEX app_tokens_app ON app_tokens (app_uuid);

CREATE TABLE accounts (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_number TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    phone TEXT,
    date_of_birth DATE,
    preliminary_address TEXT,
    renewals_url TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL,
    client_agent_accepted_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX accounts_app_created ON accounts (app_uuid, created_at DESC, uuid DESC);
CREATE INDEX accounts_app_email ON accounts (app_uuid, email);

CREATE TABLE account_status_history (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    status TEXT NOT NULL,
    status_reason TEXT NOT NULL,
    changed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX account_status_history_account ON account_status_history (account_uuid, changed_at);

CREATE TABLE account_tokens (
    token_hash TEXT PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX account_tokens_expiry ON account_tokens (expires_at);

CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),
    response_status INTEGER,
    response_content_type TEXT,
    response_body BYTEA,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (owner, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE TABLE events (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX events_app_created ON events (app_uuid, created_at DESC);
