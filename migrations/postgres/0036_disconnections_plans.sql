-- Disconnection for non-payment and deferred payment plans.
--
-- Every bill that turns past due gets a written disconnection notice (one per bill); its
-- earliest disconnection date is at least 10 days after the notice, on a day the rules allow.
-- The row follows the request to the utility and the reconnection after payment. The operator
-- keeps the market's extreme-weather emergency days, on which nobody is disconnected. A payment
-- plan takes over the unpaid bills' balance and bills it in instalments on the following bills.

CREATE TABLE weather_emergencies (
    day DATE PRIMARY KEY,
    note TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE disconnections (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    -- The past-due bill the notice is about: one notice each.
    invoice_uuid UUID NOT NULL UNIQUE REFERENCES invoices (uuid),
    amount_cents BIGINT NOT NULL,
    notice_date DATE NOT NULL,
    earliest_date DATE NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('noticed', 'cancelled', 'requested', 'disconnected',
        'reconnect_requested', 'reconnected')),
    -- The e-mail that carried the notice (its PDF rides along).
    email_uuid UUID,
    requested_at TIMESTAMPTZ,
    disconnected_at TIMESTAMPTZ,
    reconnect_requested_at TIMESTAMPTZ,
    reconnected_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX disconnections_account ON disconnections (account_uuid, created_at);
CREATE INDEX disconnections_status ON disconnections (status);

CREATE TABLE payment_plans (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    status TEXT NOT NULL CHECK (status IN ('active', 'completed', 'defaulted')),
    -- Why it was offered: the customer asked, or a weather emergency.
    reason TEXT NOT NULL,
    total_cents BIGINT NOT NULL CHECK (total_cents > 0),
    months INTEGER NOT NULL CHECK (months > 0),
    created_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ
);
-- At most one active plan per account.
CREATE UNIQUE INDEX payment_plans_active ON payment_plans (account_uuid) WHERE status = 'active';

CREATE TABLE payment_plan_instalments (
    plan_uuid UUID NOT NULL REFERENCES payment_plans (uuid),
    seq INTEGER NOT NULL,
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    -- The bill that carries it; none until billed.
    invoice_uuid UUID REFERENCES invoices (uuid),
    PRIMARY KEY (plan_uuid, seq)
);
CREATE INDEX payment_plan_instalments_invoice ON payment_plan_instalments (invoice_uuid)
    WHERE invoice_uuid IS NOT NULL;

-- A disconnection notice is a stored document too (attached to its e-mail).
ALTER TABLE stored_documents DROP CONSTRAINT stored_documents_kind_check;
ALTER TABLE stored_documents ADD CONSTRAINT stored_documents_kind_check
    CHECK (kind IN ('efl', 'tos', 'yrac', 'loa', 'renewal_notice', 'disconnection_notice'));
