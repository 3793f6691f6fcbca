-- Enrollments of live apps submitted to the utility, waiting for (or holding) its answer. Until
-- a market connection exists an operator records the answers from the command line.

CREATE TABLE utility_submissions (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    location_uuid UUID NOT NULL REFERENCES locations (uuid),
    esi_id TEXT NOT NULL,
    requested_start_date DATE,
    status TEXT NOT NULL
        CHECK (status IN ('pending', 'accepted', 'switch_hold', 'deactivated', 'rejected', 'active')),
    start_date DATE,
    reason TEXT,
    submitted_at TIMESTAMPTZ NOT NULL,
    answered_at TIMESTAMPTZ,
    activated_at TIMESTAMPTZ
);
CREATE INDEX utility_submissions_status ON utility_submissions (status, submitted_at);
CREATE INDEX utility_submissions_account ON utility_submissions (account_uuid, submitted_at);
