-- Reliability: one advance of a sandbox clock at a time, worker heartbeats so that a dead
-- process's jobs are taken over at once, and indexes for pruning old rows.

-- The advance holding an account's clock, until `locked_until` (wall clock, milliseconds).
ALTER TABLE account_clocks ADD COLUMN lock_token UUID;
ALTER TABLE account_clocks ADD COLUMN locked_until BIGINT;

-- A running worker instance and its last heartbeat (wall clock, milliseconds).
CREATE TABLE job_workers (
    uuid UUID PRIMARY KEY,
    heartbeat_at BIGINT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL
);

-- The worker instance holding a running job's lease (NULL: the lease alone decides).
ALTER TABLE jobs ADD COLUMN leased_by UUID;

-- Retention: the oldest finished rows first.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state IN ('done', 'failed');
CREATE INDEX emails_sent ON emails (created_at) WHERE status IN ('sent', 'stored', 'failed');
CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries (attempted_at);
