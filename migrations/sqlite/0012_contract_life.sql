-- The contract's life after enrollment: the expiration notices sent before a fixed contract
-- ends (one row per notice, so that each goes out once), and the documents a customer was
-- given, stored as the bytes they were shown with their SHA-256 so that a later change of
-- template or rates never changes what was agreed to.

CREATE TABLE renewal_notices (
    uuid BLOB PRIMARY KEY NOT NULL,
    contract_uuid BLOB NOT NULL REFERENCES contracts (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    location_uuid BLOB NOT NULL REFERENCES locations (uuid),
    -- Which notice: its nominal days before the contract's end (90, 60, 30 for a year).
    days_before INTEGER NOT NULL,
    contract_end TEXT NOT NULL,
    days_left INTEGER NOT NULL,
    is_final INTEGER NOT NULL,
    renewal_url TEXT NOT NULL,
    -- The final notice's month-to-month plan: the one the contract rolls onto.
    month_to_month_plan_uuid BLOB REFERENCES plans (uuid),
    email_uuid BLOB NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (contract_uuid, days_before)
);
CREATE INDEX renewal_notices_account ON renewal_notices (account_uuid, created_at);

CREATE TABLE stored_documents (
    uuid BLOB PRIMARY KEY NOT NULL,
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    contract_uuid BLOB REFERENCES contracts (uuid),
    notice_uuid BLOB REFERENCES renewal_notices (uuid),
    -- The e-mail that carries it as an attachment.
    email_uuid BLOB,
    kind TEXT NOT NULL CHECK (kind IN ('efl', 'tos', 'yrac', 'loa', 'renewal_notice')),
    version TEXT NOT NULL,
    content_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX stored_documents_contract ON stored_documents (contract_uuid, kind)
    WHERE contract_uuid IS NOT NULL;
CREATE UNIQUE INDEX stored_documents_notice ON stored_documents (notice_uuid)
    WHERE notice_uuid IS NOT NULL;
CREATE INDEX stored_documents_account ON stored_documents (account_uuid);
CREATE INDEX stored_documents_email ON stored_documents (email_uuid) WHERE email_uuid IS NOT NULL;
