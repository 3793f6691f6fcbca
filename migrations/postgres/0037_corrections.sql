-- Corrections of a bill: the operator cancels it (voided, its number kept), a credit note
-- (an invoice of its own, numbered in the same sequence, for minus the cancelled total)
-- references it, and a new bill carries the corrected lines. What the customer had paid on
-- the cancelled bill counts toward the new one; an overpayment is a credit applied to the
-- next bill.

CREATE TABLE invoice_corrections (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    original_invoice_uuid UUID NOT NULL UNIQUE REFERENCES invoices (uuid),
    credit_note_invoice_uuid UUID NOT NULL UNIQUE REFERENCES invoices (uuid),
    reissued_invoice_uuid UUID NOT NULL UNIQUE REFERENCES invoices (uuid),
    reason TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoice_corrections_account ON invoice_corrections (account_uuid, created_at);

CREATE TABLE account_credits (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    -- The corrected bill whose overpayment it is.
    source_invoice_uuid UUID NOT NULL REFERENCES invoices (uuid),
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    -- The bill it was applied to; none until then.
    applied_invoice_uuid UUID REFERENCES invoices (uuid),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX account_credits_account ON account_credits (account_uuid, created_at);
