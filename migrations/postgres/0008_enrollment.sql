-- Enrollment: confirmed service addresses (history: the newest counts), locations and their
-- contracts (created together on plan acceptance), the enrollment's progress after finalize,
-- and billing addresses (history: the newest counts).

CREATE TABLE confirmed_addresses (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    esi_id TEXT NOT NULL,
    address_1 TEXT NOT NULL,
    address_2 TEXT,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    tdu TEXT NOT NULL,
    confirmed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX confirmed_addresses_account ON confirmed_addresses (account_uuid, confirmed_at);

CREATE TABLE locations (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    esi_id TEXT NOT NULL,
    address_1 TEXT NOT NULL,
    address_2 TEXT,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    tdu TEXT NOT NULL,
    enrollment_type TEXT NOT NULL CHECK (enrollment_type IN ('switch', 'move_in')),
    status TEXT NOT NULL,
    service_start_date DATE,
    final_service_date DATE,
    is_service_active BOOLEAN NOT NULL,
    has_usage_history BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX locations_account ON locations (account_uuid, created_at);

CREATE TABLE contracts (
    uuid UUID PRIMARY KEY,
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    plan_uuid UUID NOT NULL REFERENCES plans (uuid),
    plan_name TEXT NOT NULL,
    plan_type TEXT NOT NULL,
    term_months BIGINT NOT NULL,
    start_date DATE NOT NULL,
    end_date DATE,
    -- The accepted rates as the Plan showed them (JSON object of the Rates shape).
    rates TEXT NOT NULL,
    tos_version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'ended', 'cancelled')),
    accepted_at TIMESTAMPTZ NOT NULL,
    accepted_by TEXT NOT NULL CHECK (accepted_by IN ('customer', 'client_agent')),
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX contracts_location ON contracts (location_uuid, start_date);
CREATE INDEX contracts_account ON contracts (account_uuid);

CREATE TABLE enrollments (
    account_uuid UUID PRIMARY KEY REFERENCES accounts (uuid),
    finalized_at TIMESTAMPTZ NOT NULL,
    is_client_agent BOOLEAN NOT NULL,
    verification TEXT NOT NULL,
    utility TEXT NOT NULL,
    cancellation TEXT,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE billing_addresses (
    uuid UUID PRIMARY KEY,
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    same_as_service_address BOOLEAN NOT NULL,
    address_1 TEXT,
    address_2 TEXT,
    city TEXT,
    state TEXT,
    postal_code TEXT,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX billing_addresses_account ON billing_addresses (account_uuid, created_at);
