-- The credit check pipeline: the job that runs an account's current check and when the bureau
-- last answered it; the sandbox credit bureau's memory (one file per credit-check submission, so
-- that sandbox accounts sharing a magic SSN never affect each other).
ALTER TABLE credit_checks ADD COLUMN job_uuid BLOB;
ALTER TABLE credit_checks ADD COLUMN checked_at TEXT;

CREATE TABLE sandbox_credit_files (
    credit_check_uuid BLOB PRIMARY KEY NOT NULL REFERENCES credit_checks (uuid),
    -- A scenario forced by `sandbox/simulate` (frozen, declined, not_found, error_once).
    forced TEXT,
    unfrozen BOOLEAN NOT NULL DEFAULT FALSE,
    errors_served INTEGER NOT NULL DEFAULT 0
);
