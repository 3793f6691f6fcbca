-- Billing: what each meter measured per day (history from the utility, then each cycle's
-- read), the cycle reads, invoices (numbered gap-free when issued, never deleted outside sandbox
-- resets; a correction voids and reissues), their status history, and every payment attempt.

CREATE TABLE usage_days (
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    day DATE NOT NULL,
    -- Exact decimals, kWh.
    consumption_kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    vehicle_kwh TEXT NOT NULL,
    eligible_vehicle_kwh TEXT NOT NULL,
    PRIMARY KEY (location_uuid, day)
);

CREATE TABLE meter_reads (
    uuid UUID PRIMARY KEY,
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    read_date DATE NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE NOT NULL,
    kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    read_type TEXT NOT NULL CHECK (read_type IN ('actual', 'estimated')),
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (location_uuid, end_date)
);

CREATE TABLE invoices (
    uuid UUID PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    meter_read_uuid UUID NOT NULL REFERENCES meter_reads (uuid),
    invoice_date DATE NOT NULL,
    payment_due_date DATE NOT NULL,
    billing_period_start DATE NOT NULL,
    billing_period_end DATE NOT NULL,
    total_cents BIGINT NOT NULL,
    total_kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    -- The charge groups as computed when issued (JSON array).
    charges TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'past_due', 'voided')),
    paid_at TIMESTAMPTZ,
    voided_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoices_account ON invoices (account_uuid, invoice_date);

CREATE TABLE invoice_status_history (
    invoice_uuid UUID NOT NULL REFERENCES invoices (uuid),
    status TEXT NOT NULL,
    changed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoice_status_history_invoice ON invoice_status_history (invoice_uuid, changed_at);

CREATE TABLE invoice_payments (
    uuid UUID PRIMARY KEY,
    invoice_uuid UUID NOT NULL REFERENCES invoices (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    amount_cents BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed', 'pending')),
    -- What started it: auto_pay, customer or simulation.
    initiated_by TEXT NOT NULL,
    failure_code TEXT,
    processor_payment_id TEXT,
    attempted_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX invoice_payments_invoice ON invoice_payments (invoice_uuid, attempted_at);
