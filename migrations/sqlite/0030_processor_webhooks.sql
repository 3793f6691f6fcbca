-- Live payments after the charge: each live app's signing secret of the card processor's
-- webhooks (sealed with the PII key), the processor's events already handled (a delivery sent
-- again is answered and changes nothing), and what happened to a payment since: refunds (by the
-- operator, or reported by the processor) and a dispute.

ALTER TABLE apps ADD COLUMN payment_webhook_secret_sealed BLOB;

CREATE TABLE processor_events (
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (app_uuid, event_id)
);

ALTER TABLE invoice_payments ADD COLUMN refunded_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invoice_payments ADD COLUMN disputed_at TEXT;
CREATE INDEX invoice_payments_processor_id ON invoice_payments (processor_payment_id);

CREATE TABLE payment_refunds (
    uuid BLOB PRIMARY KEY NOT NULL,
    payment_uuid BLOB NOT NULL REFERENCES invoice_payments (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    processor_refund_id TEXT,
    -- 'operator' (from the dashboard) or 'processor' (reported by its webhook).
    source TEXT NOT NULL,
    reason TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX payment_refunds_payment ON payment_refunds (payment_uuid, created_at);
