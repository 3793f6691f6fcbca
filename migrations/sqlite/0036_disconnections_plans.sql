-- Disconnection for non-payment and deferred payment plans.
--
-- Every bill that turns past due gets a written disconnection notice (one per bill); its
-- earliest disconnection date is at least 10 days after the notice, on a day the rules allow.
-- The row follows the request to the utility and the reconnection after payment. The operator
-- keeps the market's extreme-weather emergency days, on which nobody is disconnected. A payment
-- plan takes over the unpaid bills' balance and bills it in instalments on the following bills.

CREATE TABLE weather_emergencies (
    day TEXT PRIMARY KEY NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE disconnections (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    -- The past-due bill the notice is about: one notice each.
    invoice_uuid BLOB NOT NULL UNIQUE REFERENCES invoices (uuid),
    amount_cents INTEGER NOT NULL,
    notice_date TEXT NOT NULL,
    earliest_date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('noticed', 'cancelled', 'requested', 'disconnected',
        'reconnect_requested', 'reconnected')),
    -- The e-mail that carried the notice (its PDF rides along).
    email_uuid BLOB,
    requested_at TEXT,
    disconnected_at TEXT,
    reconnect_requested_at TEXT,
    reconnected_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX disconnections_account ON disconnections (account_uuid, created_at);
CREATE INDEX disconnections_status ON disconnections (status);

CREATE TABLE payment_plans (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    status TEXT NOT NULL CHECK (status IN ('active', 'completed', 'defaulted')),
    -- Why it was offered: the customer asked, or a weather emergency.
    reason TEXT NOT NULL,
    total_cents INTEGER NOT NULL CHECK (total_cents > 0),
    months INTEGER NOT NULL CHECK (months > 0),
    created_at TEXT NOT NULL,
    ended_at TEXT
);
-- At most one active plan per account.
CREATE UNIQUE INDEX payment_plans_active ON payment_plans (account_uuid) WHERE status = 'active';

CREATE TABLE payment_plan_instalments (
    plan_uuid BLOB NOT NULL REFERENCES payment_plans (uuid),
    seq INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    -- The bill that carries it; none until billed.
    invoice_uuid BLOB REFERENCES invoices (uuid),
    PRIMARY KEY (plan_uuid, seq)
);
CREATE INDEX payment_plan_instalments_invoice ON payment_plan_instalments (invoice_uuid)
    WHERE invoice_uuid IS NOT NULL;

-- A disconnection notice is a stored document too (attached to its e-mail).
CREATE TABLE stored_documents_next (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    contract_uuid BLOB REFERENCES contracts (uuid),
    notice_uuid BLOB REFERENCES renewal_notices (uuid),
    -- The e-mail that carries it as an attachment.
    email_uuid BLOB,
    kind TEXT NOT NULL CHECK (kind IN ('efl', 'tos', 'yrac', 'loa', 'renewal_notice',
        'disconnection_notice')),
    version TEXT NOT NULL,
    content_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO stored_documents_next (uuid, account_uuid, contract_uuid, notice_uuid, email_uuid,
    kind, version, content_type, sha256, bytes, created_at)
SELECT uuid, account_uuid, contract_uuid, notice_uuid, email_uuid, kind, version, content_type,
    sha256, bytes, created_at FROM stored_documents;
DROP TABLE stored_documents;
ALTER TABLE stored_documents_next RENAME TO stored_documents;
CREATE UNIQUE INDEX stored_documents_contract ON stored_documents (contract_uuid, kind)
    WHERE contract_uuid IS NOT NULL;
CREATE UNIQUE INDEX stored_documents_notice ON stored_documents (notice_uuid)
    WHERE notice_uuid IS NOT NULL;
CREATE INDEX stored_documents_account ON stored_documents (account_uuid);
CREATE INDEX stored_documents_email ON stored_documents (email_uuid) WHERE email_uuid IS NOT NULL;
