-- The credit review queue and deposits. A check the bureau did not approve for good (declined,
-- not found, or frozen or failing when its retries ran out) opens one review; the operator
-- approves it, asks for a deposit (at most the rule's maximum, kept with the review), or
-- declines it with a reason. At most one review of a check is open at a time.

CREATE TABLE credit_reviews (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    credit_check_uuid UUID NOT NULL REFERENCES credit_checks (uuid),
    cause TEXT NOT NULL CHECK (cause IN ('declined', 'not_found', 'frozen', 'error')),
    status TEXT NOT NULL
        CHECK (status IN ('open', 'approved', 'deposit_required', 'declined', 'withdrawn')),
    -- The most a deposit may be, in cents, when the review opened.
    max_deposit_cents BIGINT NOT NULL,
    deposit_cents BIGINT,
    decision_reason TEXT,
    decided_by TEXT,
    decided_by_user_uuid UUID,
    decided_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX credit_reviews_queue ON credit_reviews (status, created_at);
CREATE INDEX credit_reviews_account ON credit_reviews (account_uuid, created_at);
CREATE UNIQUE INDEX credit_reviews_one_open ON credit_reviews (credit_check_uuid)
    WHERE status = 'open';

-- A deposit asked of an account (one per review that asked for it).
CREATE TABLE deposits (
    uuid UUID PRIMARY KEY,
    app_uuid UUID NOT NULL REFERENCES apps (uuid),
    account_uuid UUID NOT NULL REFERENCES accounts (uuid),
    review_uuid UUID REFERENCES credit_reviews (uuid),
    amount_cents BIGINT NOT NULL CHECK (amount_cents > 0),
    status TEXT NOT NULL CHECK (status IN ('required', 'paid', 'refunded', 'applied', 'waived')),
    paid_cents BIGINT NOT NULL DEFAULT 0,
    interest_cents BIGINT NOT NULL DEFAULT 0,
    refunded_cents BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL,
    paid_at TIMESTAMPTZ,
    refunded_at TIMESTAMPTZ
);
CREATE INDEX deposits_account ON deposits (account_uuid, created_at);
