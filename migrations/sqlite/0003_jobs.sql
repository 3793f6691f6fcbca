-- Background machinery: the durable job queue, per-account sandbox clocks, webhook endpoints and
-- their delivery log, and the e-mail outbox.

-- `run_at` is milliseconds since the epoch: when a queued job falls due, or when the lease of a
-- running job ends (a job whose lease ended is claimable again). Integers keep the ordering and
-- the sandbox clock's shifts (`run_at - offset`) identical on both engines.
CREATE TABLE jobs (
    uuid BLOB PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    account_uuid BLOB,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    run_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    lease_token BLOB,
    last_error TEXT,
    created_at TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX jobs_due ON jobs (run_at) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_account_due ON jobs (account_uuid, run_at) WHERE state IN ('queued', 'running');

-- How far a sandbox account's clock is ahead of the service's clock.
CREATE TABLE account_clocks (
    account_uuid BLOB PRIMARY KEY NOT NULL REFERENCES accounts (uuid),
    offset_ms BIGINT NOT NULL
);

CREATE INDEX events_app_type_created ON events (app_uuid, type, created_at DESC);
CREATE INDEX events_account_created ON events (account_uuid, created_at DESC);

CREATE TABLE webhook_endpoints (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    url TEXT NOT NULL,
    -- JSON array of event types; empty means every type.
    event_types TEXT NOT NULL,
    description TEXT,
    secret TEXT NOT NULL,
    -- The secret before the last rotation, still signing until `previous_secret_expires_at`.
    previous_secret TEXT,
    previous_secret_expires_at TEXT,
    disabled BOOLEAN NOT NULL DEFAULT 0,
    disabled_reason TEXT,
    -- Start of the current run of failed attempts (cleared by a success).
    failing_since TEXT,
    created_at TEXT NOT NULL,
    deleted_at TEXT
);
CREATE INDEX webhook_endpoints_app ON webhook_endpoints (app_uuid, created_at DESC);

-- One row per delivery attempt.
CREATE TABLE webhook_deliveries (
    uuid BLOB PRIMARY KEY NOT NULL,
    endpoint_uuid BLOB NOT NULL REFERENCES webhook_endpoints (uuid),
    event_uuid BLOB NOT NULL REFERENCES events (uuid),
    event_type TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed', 'pending')),
    response_status INTEGER,
    error TEXT,
    attempted_at TEXT NOT NULL,
    next_attempt_at TEXT
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_uuid, attempted_at DESC);

CREATE TABLE emails (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB,
    template TEXT NOT NULL,
    to_address TEXT NOT NULL,
    subject TEXT NOT NULL,
    text_body TEXT NOT NULL,
    html_body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'stored', 'failed')),
    error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
CREATE INDEX emails_app_created ON emails (app_uuid, created_at DESC);
