-- A deposit's life after it is asked for: a waiver the operator records (why, by whom, when),
-- interest accrued at the deployment's yearly rate (`interest_cents` through
-- `interest_through`), instalments on the next bills, and what comes back (a credit on the
-- bills after 12 on-time payments, or applied to the final bill; `refund_left_cents` is what
-- no bill has taken yet). `refund_due` is the sandbox's simulation of a refund earned.

ALTER TABLE deposits ADD COLUMN waiver TEXT
    CHECK (waiver IN ('senior', 'family_violence', 'good_credit_letter'));
ALTER TABLE deposits ADD COLUMN waived_by TEXT;
ALTER TABLE deposits ADD COLUMN waived_at TEXT;
ALTER TABLE deposits ADD COLUMN interest_through TEXT;
ALTER TABLE deposits ADD COLUMN refund_left_cents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deposits ADD COLUMN refund_due BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE deposits ADD COLUMN refund_reason TEXT
    CHECK (refund_reason IN ('on_time_payments', 'final_bill'));

-- The deposit's lines on bills: an instalment still to bill (no invoice yet) or billed, and
-- the refund credits each bill carried.
CREATE TABLE deposit_lines (
    uuid BLOB PRIMARY KEY NOT NULL,
    deposit_uuid BLOB NOT NULL REFERENCES deposits (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    kind TEXT NOT NULL CHECK (kind IN ('instalment', 'refund')),
    seq INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    invoice_uuid BLOB REFERENCES invoices (uuid),
    created_at TEXT NOT NULL,
    UNIQUE (deposit_uuid, kind, seq)
);
CREATE INDEX deposit_lines_account ON deposit_lines (account_uuid, invoice_uuid);
