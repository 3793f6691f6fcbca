-- The built-in test-mode payment processor (setup sessions and the payment methods it
-- creates), the payment methods attached to accounts (history: detached rows stay), and
-- credit-check submissions (SSN encrypted; only the last four digits in clear).

CREATE TABLE payment_sessions (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    client_secret_hash TEXT NOT NULL UNIQUE,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE processor_payment_methods (
    id TEXT PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL,
    exp_year INTEGER NOT NULL,
    postal_code TEXT,
    fingerprint TEXT NOT NULL,
    charges_fail BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE account_payment_methods (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    payment_method_id TEXT NOT NULL,
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL,
    exp_year INTEGER NOT NULL,
    postal_code TEXT,
    fingerprint TEXT NOT NULL,
    attached_at TIMESTAMPTZ NOT NULL,
    detached_at TIMESTAMPTZ
);
CREATE INDEX account_payment_methods_account ON account_payment_methods (account_uuid, attached_at);

CREATE TABLE credit_checks (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    ssn_ciphertext BYTEA NOT NULL,
    ssn_last4 TEXT NOT NULL,
    consented_at TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX credit_checks_account ON credit_checks (account_uuid, created_at);

CREATE UNIQUE INDEX apps_publishable_key ON apps (payment_publishable_key);
