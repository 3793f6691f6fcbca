-- The built-in test-mode payment processor (setup sessions and the payment methods it
-- creates), the payment methods attached to accounts (history: detached rows stay), and
-- credit-check submissions (SSN encrypted; only the last four digits in clear).

CREATE TABLE payment_sessions (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    client_secret_hash TEXT NOT NULL UNIQUE,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE processor_payment_methods (
    id TEXT PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL,
    exp_year INTEGER NOT NULL,
    postal_code TEXT,
    fingerprint TEXT NOT NULL,
    charges_fail INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE account_payment_methods (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    payment_method_id TEXT NOT NULL,
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL,
    exp_year INTEGER NOT NULL,
    postal_code TEXT,
    fingerprint TEXT NOT NULL,
    attached_at TEXT NOT NULL,
    detached_at TEXT
);
CREATE INDEX account_payment_methods_account ON account_payment_methods (account_uuid, attached_at);

CREATE TABLE credit_checks (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    ssn_ciphertext BLOB NOT NULL,
    ssn_last4 TEXT NOT NULL,
    consented_at TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX credit_checks_account ON credit_checks (account_uuid, created_at);

CREATE UNIQUE INDEX apps_publishable_key ON apps (payment_publishable_key);
