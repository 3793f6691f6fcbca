-- Billing: what each meter measured per day (history from the utility, then each cycle's
-- read), the cycle reads, invoices (numbered gap-free when issued, never deleted outside sandbox
-- resets; a correction voids and reissues), their status history, and every payment attempt.

CREATE TABLE usage_days (
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    day TEXT NOT NULL,
    -- Exact decimals, kWh.
    consumption_kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    vehicle_kwh TEXT NOT NULL,
    eligible_vehicle_kwh TEXT NOT NULL,
    PRIMARY KEY (location_uuid, day)
);

CREATE TABLE meter_reads (
    uuid BLOB PRIMARY KEY NOT NULL,
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    read_date TEXT NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    read_type TEXT NOT NULL CHECK (read_type IN ('actual', 'estimated')),
    created_at TEXT NOT NULL,
    UNIQUE (location_uuid, end_date)
);

CREATE TABLE invoices (
    uuid BLOB PRIMARY KEY NOT NULL,
    number TEXT NOT NULL UNIQUE,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    meter_read_uuid BLOB NOT NULL REFERENCES meter_reads (uuid),
    invoice_date TEXT NOT NULL,
    payment_due_date TEXT NOT NULL,
    billing_period_start TEXT NOT NULL,
    billing_period_end TEXT NOT NULL,
    total_cents INTEGER NOT NULL,
    total_kwh TEXT NOT NULL,
    generation_kwh TEXT NOT NULL,
    -- The charge groups as computed when issued (JSON array).
    charges TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'past_due', 'voided')),
    paid_at TEXT,
    voided_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX invoices_account ON invoices (account_uuid, invoice_date);

CREATE TABLE invoice_status_history (
    invoice_uuid BLOB NOT NULL REFERENCES invoices (uuid),
    status TEXT NOT NULL,
    changed_at TEXT NOT NULL
);
CREATE INDEX invoice_status_history_invoice ON invoice_status_history (invoice_uuid, changed_at);

CREATE TABLE invoice_payments (
    uuid BLOB PRIMARY KEY NOT NULL,
    invoice_uuid BLOB NOT NULL REFERENCES invoices (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    amount_cents INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('succeeded', 'failed', 'pending')),
    -- What started it: auto_pay, customer or simulation.
    initiated_by TEXT NOT NULL,
    failure_code TEXT,
    processor_payment_id TEXT,
    attempted_at TEXT NOT NULL
);
CREATE INDEX invoice_payments_invoice ON invoice_payments (invoice_uuid, attempted_at);
