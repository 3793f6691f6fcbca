-- The credit review queue and deposits. A check the bureau did not approve for good (declined,
-- not found, or frozen or failing when its retries ran out) opens one review; the operator
-- approves it, asks for a deposit (at most the rule's maximum, kept with the review), or
-- declines it with a reason. At most one review of a check is open at a time.

CREATE TABLE credit_reviews (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    credit_check_uuid BLOB NOT NULL REFERENCES credit_checks (uuid),
    cause TEXT NOT NULL CHECK (cause IN ('declined', 'not_found', 'frozen', 'error')),
    status TEXT NOT NULL
        CHECK (status IN ('open', 'approved', 'deposit_required', 'declined', 'withdrawn')),
    -- The most a deposit may be, in cents, when the review opened.
    max_deposit_cents INTEGER NOT NULL,
    deposit_cents INTEGER,
    decision_reason TEXT,
    decided_by TEXT,
    decided_by_user_uuid BLOB,
    decided_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX credit_reviews_queue ON credit_reviews (status, created_at);
CREATE INDEX credit_reviews_account ON credit_reviews (account_uuid, created_at);
CREATE UNIQUE INDEX credit_reviews_one_open ON credit_reviews (credit_check_uuid)
    WHERE status = 'open';

-- A deposit asked of an account (one per review that asked for it).
CREATE TABLE deposits (
    uuid BLOB PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    review_uuid BLOB REFERENCES credit_reviews (uuid),
    amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
    status TEXT NOT NULL CHECK (status IN ('required', 'paid', 'refunded', 'applied', 'waived')),
    paid_cents INTEGER NOT NULL DEFAULT 0,
    interest_cents INTEGER NOT NULL DEFAULT 0,
    refunded_cents INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    paid_at TEXT,
    refunded_at TEXT
);
CREATE INDEX deposits_account ON deposits (account_uuid, created_at);
