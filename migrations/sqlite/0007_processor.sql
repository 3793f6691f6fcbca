-- The real processor for live apps: an app's secret key (sealed with the PII key; the
-- publishable key stays in `apps.payment_publishable_key`) and the processor's customer of
-- each account.

ALTER TABLE apps ADD COLUMN payment_secret_key_sealed BLOB;

CREATE TABLE processor_customers (
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    customer_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (app_uuid, account_uuid)
);
