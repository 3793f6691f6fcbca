-- More of the dashboard: a user's session generation (a password reset raises it, which ends
-- every session signed in before), the single-use password reset links (only the SHA-256 of
-- the token is kept), an excerpt of what a webhook receiver answered, an account's payments
-- by date, and e-mails of the platform itself (to dashboard users), which belong to no app.

ALTER TABLE dashboard_users ADD COLUMN session_generation INTEGER NOT NULL DEFAULT 0;

CREATE TABLE dashboard_password_resets (
    -- Hex SHA-256 of the token the e-mailed link carries.
    token_hash TEXT PRIMARY KEY,
    user_uuid UUID NOT NULL REFERENCES dashboard_users (uuid),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);
CREATE INDEX dashboard_password_resets_user ON dashboard_password_resets (user_uuid, created_at);

-- An account's payments, as its dashboard page lists them.
CREATE INDEX invoice_payments_account ON invoice_payments (account_uuid, attempted_at);

-- The first 500 bytes of the receiver's answer, as text (invalid UTF-8 replaced).
ALTER TABLE webhook_deliveries ADD COLUMN response_excerpt TEXT;

-- NULL for the platform's own e-mails (a dashboard user's password reset).
ALTER TABLE emails ALTER COLUMN app_uuid DROP NOT NULL;
