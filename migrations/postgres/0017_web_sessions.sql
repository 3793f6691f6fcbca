-- Browser sessions of the dashboard and of customers (hosted pages, portal), in the shape the
-- session store reads: the id, the session's data (MessagePack) and when it expires.
CREATE TABLE IF NOT EXISTS web_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BYTEA NOT NULL,
    expiry_date TIMESTAMPTZ NOT NULL
);
