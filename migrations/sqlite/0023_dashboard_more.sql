-- More of the dashboard: a user's session generation (a password reset raises it, which ends
-- every session signed in before), the single-use password reset links (only the SHA-256 of
-- the token is kept), an excerpt of what a webhook receiver answered, an account's payments
-- by date, and e-mails of the platform itself (to dashboard users), which belong to no app.

ALTER TABLE dashboard_users ADD COLUMN session_generation INTEGER NOT NULL DEFAULT 0;

CREATE TABLE dashboard_password_resets (
    -- Hex SHA-256 of the token the e-mailed link carries.
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_uuid BLOB NOT NULL REFERENCES dashboard_users (uuid),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE INDEX dashboard_password_resets_user ON dashboard_password_resets (user_uuid, created_at);

-- An account's payments, as its dashboard page lists them.
CREATE INDEX invoice_payments_account ON invoice_payments (account_uuid, attempted_at);

-- The first 500 bytes of the receiver's answer, as text (invalid UTF-8 replaced).
ALTER TABLE webhook_deliveries ADD COLUMN response_excerpt TEXT;

-- SQLite cannot drop a NOT NULL in place: the table is copied. Nothing references it.
CREATE TABLE emails_new (
    uuid BLOB PRIMARY KEY NOT NULL,
    -- NULL for the platform's own e-mails (a dashboard user's password reset).
    app_uuid BLOB REFERENCES apps (uuid),
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
INSERT INTO emails_new (uuid, app_uuid, account_uuid, template, to_address, subject, text_body,
    html_body, status, error, created_at, sent_at)
SELECT uuid, app_uuid, account_uuid, template, to_address, subject, text_body, html_body,
    status, error, created_at, sent_at FROM emails;
DROP TABLE emails;
ALTER TABLE emails_new RENAME TO emails;
CREATE INDEX emails_app_created ON emails (app_uuid, created_at DESC);
CREATE INDEX emails_sent ON emails (created_at) WHERE status IN ('sent', 'stored', 'failed');
