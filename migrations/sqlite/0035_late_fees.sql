-- The late fee. An app charges one when the operator sets its percent (no row: off); it is
-- charged once on the next bill on the unpaid amount of a past-due bill, never on an amount
-- already penalized (one fee per penalized bill, enforced by the unique key), and never to an
-- account the operator marked exempt.

CREATE TABLE app_late_fee_settings (
    app_uuid BLOB PRIMARY KEY NOT NULL REFERENCES apps (uuid),
    -- Percent of the unpaid amount, a decimal string above 0 and at most 5.
    percent TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE late_fee_exemptions (
    account_uuid BLOB PRIMARY KEY NOT NULL REFERENCES accounts (uuid),
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    marked_at TEXT NOT NULL
);

CREATE TABLE late_fees (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    -- The past-due bill whose unpaid amount the fee is on: at most one fee each.
    penalized_invoice_uuid BLOB NOT NULL UNIQUE REFERENCES invoices (uuid),
    -- The bill the fee is a line of.
    charged_invoice_uuid BLOB NOT NULL REFERENCES invoices (uuid),
    base_cents INTEGER NOT NULL CHECK (base_cents > 0),
    percent TEXT NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    created_at TEXT NOT NULL
);
CREATE INDEX late_fees_account ON late_fees (account_uuid, created_at);
