-- The late fee. An app charges one when the operator sets its percent (no row: off); it is
-- charged once on the next bill on the unpaid amount of a past-due bill, never on an amount
-- already penalized (one fee per penalized bill, enforced by the unique key), and never to an
-- account the operator marked exempt.

CREATE TABLE app_late_fee_settings (
    app_uuid UUID PRIMARY KEY REFERENCES apps (uuid),
    -- Percent of the unpaid amount, a decimal string above 0 and at most 5.
    percent TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE late_fee_exemptions (
    account_uuid UUID PRIMARY KEY REFERENCES accounts (uuid),
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    marked_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE late_fees (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    -- The past-due bill whose unpaid amount the fee is on: at most one fee each.
    penalized_invoice_uuid UUID NOT NULL UNIQUE REFERENCES invoices (uuid),
    -- The bill the fee is a line of.
    charged_invoice_uuid UUID NOT NULL REFERENCES invoices (uuid),
    base_cents BIGINT NOT NULL CHECK (base_cents > 0),
    percent TEXT NOT NULL,
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX late_fees_account ON late_fees (account_uuid, created_at);
