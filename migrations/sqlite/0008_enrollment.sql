-- Enrollment: confirmed service addresses (history: the newest counts), locations and their
-- contracts (created together on plan acceptance), the enrollment's progress after finalize,
-- and billing addresses (history: the newest counts).

CREATE TABLE confirmed_addresses (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    esi_id TEXT NOT NULL,
    address_1 TEXT NOT NULL,
    address_2 TEXT,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    tdu TEXT NOT NULL,
    confirmed_at TEXT NOT NULL
);
CREATE INDEX confirmed_addresses_account ON confirmed_addresses (account_uuid, confirmed_at);

CREATE TABLE locations (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    esi_id TEXT NOT NULL,
    address_1 TEXT NOT NULL,
    address_2 TEXT,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    postal_code TEXT NOT NULL,
    tdu TEXT NOT NULL,
    enrollment_type TEXT NOT NULL CHECK (enrollment_type IN ('switch', 'move_in')),
    status TEXT NOT NULL,
    service_start_date TEXT,
    final_service_date TEXT,
    is_service_active INTEGER NOT NULL,
    has_usage_history INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX locations_account ON locations (account_uuid, created_at);

CREATE TABLE contracts (
    uuid BLOB PRIMARY KEY NOT NULL,
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    plan_uuid BLOB NOT NULL REFERENCES plans (uuid),
    plan_name TEXT NOT NULL,
    plan_type TEXT NOT NULL,
    term_months INTEGER NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT,
    -- The accepted rates as the Plan showed them (JSON object of the Rates shape).
    rates TEXT NOT NULL,
    tos_version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'ended', 'cancelled')),
    accepted_at TEXT NOT NULL,
    accepted_by TEXT NOT NULL CHECK (accepted_by IN ('customer', 'client_agent')),
    created_at TEXT NOT NULL
);
CREATE INDEX contracts_location ON contracts (location_uuid, start_date);
CREATE INDEX contracts_account ON contracts (account_uuid);

CREATE TABLE enrollments (
    account_uuid BLOB PRIMARY KEY NOT NULL REFERENCES accounts (uuid),
    finalized_at TEXT NOT NULL,
    is_client_agent INTEGER NOT NULL,
    verification TEXT NOT NULL,
    utility TEXT NOT NULL,
    cancellation TEXT,
    updated_at TEXT NOT NULL
);

CREATE TABLE billing_addresses (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    same_as_service_address INTEGER NOT NULL,
    address_1 TEXT,
    address_2 TEXT,
    city TEXT,
    state TEXT,
    postal_code TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX billing_addresses_account ON billing_addresses (account_uuid, created_at);
