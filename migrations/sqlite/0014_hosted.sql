-- Hosted pages and the customer portal.
--
-- hosted_links: the single-use links an e-mail carries (renewal, change card, see the bill,
-- unfreeze and retry); only the SHA-256 of the token is kept. `target` is what the purpose
-- points at (a location, an invoice number, the bureau's unfreeze page). A link sent to replace
-- a spent or expired one names it in `replaces`, which is how re-sends are counted.
CREATE TABLE hosted_links (
    token_hash TEXT PRIMARY KEY NOT NULL,
    app_uuid BLOB NOT NULL REFERENCES apps (uuid),
    account_uuid BLOB NOT NULL REFERENCES accounts (uuid),
    purpose TEXT NOT NULL,
    target TEXT,
    replaces TEXT,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX hosted_links_account ON hosted_links (account_uuid, created_at);

-- hosted_codes: one-time codes e-mailed to confirm an address (hosted sign-up) or to sign in to
-- the portal; only the SHA-256 of the code (salted with the row's uuid) is kept. `ip` is the
-- requesting address, for the per-address limit.
CREATE TABLE hosted_codes (
    uuid BLOB PRIMARY KEY NOT NULL,
    -- The app and account the code is for; none when the address matched no account (the row
    -- is kept all the same, so that every request counts against the limits).
    app_uuid BLOB REFERENCES apps (uuid),
    account_uuid BLOB REFERENCES accounts (uuid),
    purpose TEXT NOT NULL,
    email TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    ip TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX hosted_codes_email ON hosted_codes (email, created_at);
CREATE INDEX hosted_codes_ip ON hosted_codes (ip, created_at);
