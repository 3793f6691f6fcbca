-- What happens in a flow: each session gets a public id (`uuid`, which the flow's messages to
-- its host carry, never the token), when its `flow.session_ended` webhook was written
-- (`ended_at`, at most once), and the events the flow recorded: its name, the step and, for an
-- error shown, the error's code (never what the customer typed).

ALTER TABLE flow_sessions ADD COLUMN uuid UUID;
ALTER TABLE flow_sessions ADD COLUMN ended_at TIMESTAMPTZ;
CREATE UNIQUE INDEX flow_sessions_uuid ON flow_sessions (uuid);

CREATE TABLE flow_events (
    uuid UUID PRIMARY KEY,
    session_uuid UUID NOT NULL REFERENCES flow_sessions (uuid),
    name TEXT NOT NULL,
    step TEXT,
    error_code TEXT,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX flow_events_session ON flow_events (session_uuid, created_at);
