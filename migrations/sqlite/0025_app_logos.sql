-- A partner's uploaded logo (PNG), served from our own origin at an address named by its
-- digest (`/apps/{uuid}/logo/{sha256}.png`, so it may be cached for good) and drawn on its bills.
-- One per app: a new upload replaces it.
CREATE TABLE app_logos (
    app_uuid BLOB PRIMARY KEY NOT NULL REFERENCES apps (uuid),
    content_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    bytes BLOB NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
