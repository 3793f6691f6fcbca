-- Enrollments of live apps submitted to the utility, waiting for (or holding) its answer. Until
-- a market connection exists an operator records the answers from the command line.

CREATE TABLE utility_submissions (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    esi_id TEXT NOT NULL,
    requested_start_date TEXT,
    status TEXT NOT NULL
        CHECK (status IN ('pending', 'accepted', 'switch_hold', 'deactivated', 'rejected', 'active')),
    start_date TEXT,
    reason TEXT,
    submitted_at TEXT NOT NULL,
    answered_at TEXT,
    activated_at TEXT
);
CREATE INDEX utility_submissions_status ON utility_submissions (status, submitted_at);
CREATE INDEX utility_submissions_account ON utility_submissions (account_uuid, submitted_at);
