//! The durable job queue and the sandbox accounts' clocks.
//!
//! A job is inserted in the transaction of the change that schedules it, so it exists only if
//! that change commits. `run_at` (milliseconds since the epoch, on the service clock) is when a
//! queued job falls due and, once claimed, when its lease ends: a job whose worker died is
//! claimable again after the lease. A worker's claims also name its instance (`leased_by`),
//! which heartbeats in `job_workers`: the jobs of an instance that stopped heartbeating (its
//! process died) are claimable at once, without waiting for their leases to end. Claiming takes
//! row locks with `FOR UPDATE SKIP LOCKED` on PostgreSQL, so that concurrent workers never claim
//! the same job; on SQLite the single writer connection already serializes claims.
//!
//! A sandbox account's clock is moved by one advance at a time: the advance holds the clock's
//! row (`lock_token`, until `locked_until` on the wall clock) and every change of the offset
//! checks that it still does.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};

pub struct NewJob<'a> {
    pub kind: &'a str,
    pub payload: &'a serde_json::Value,
    /// The account whose (sandbox) clock the job follows.
    pub account_uuid: Option<Uuid>,
    /// Due time on the service clock, in milliseconds.
    pub run_at_ms: i64,
    pub max_attempts: i32,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct JobRow {
    pub uuid: Uuid,
    pub kind: String,
    pub payload: String,
    pub account_uuid: Option<Uuid>,
    pub attempts: i32,
    pub max_attempts: i32,
    pub lease_token: Option<Uuid>,
    /// How far the job's account clock is ahead of the service clock as the claim found it
    /// (none: no account, or a clock never moved), read with the claim to spare each job a
    /// round trip.
    pub clock_offset_ms: Option<i64>,
}

const RETURNING: &str = "uuid, kind, payload, account_uuid, attempts, max_attempts, lease_token, \
    (SELECT offset_ms FROM account_clocks WHERE account_clocks.account_uuid = jobs.account_uuid) \
    AS clock_offset_ms";

pub async fn insert_job(tx: &mut Tx, job: &NewJob<'_>) -> Result<Uuid> {
    let uuid = Uuid::new_v4();
    let sql = "INSERT INTO jobs (uuid, kind, payload, account_uuid, state, run_at, attempts, \
        max_attempts, created_at) VALUES ($1, $2, $3, $4, 'queued', $5, 0, $6, $7)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(job.kind)
        .bind(job.payload.to_string())
        .bind(job.account_uuid)
        .bind(job.run_at_ms)
        .bind(job.max_attempts)
        .bind(job.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(uuid)
}

/// Claims up to `limit` due jobs (queued and due, running with an ended lease, or running
/// under an instance that no longer heartbeats since `alive_since_ms`), oldest due first: they
/// become `running` under `lease_token` for `instance` until `lease_until_ms`.
pub async fn claim_due(tx: &mut Tx, claim: &Claim, limit: i64) -> Result<Vec<JobRow>> {
    let pick = "SELECT uuid FROM jobs WHERE (state IN ('queued', 'running') AND run_at <= $3) \
        OR (state = 'running' AND leased_by IS NOT NULL AND leased_by NOT IN \
        (SELECT uuid FROM job_workers WHERE heartbeat_at >= $5)) \
        ORDER BY run_at LIMIT $4";
    let update = |pick: &str| {
        format!(
            "UPDATE jobs SET state = 'running', run_at = $1, lease_token = $2, leased_by = $6, \
             attempts = attempts + 1 WHERE uuid IN ({pick}) RETURNING {RETURNING}"
        )
    };
    let sql = match &*tx {
        Tx::Sqlite(_) => update(pick),
        Tx::Postgres(_) => update(&format!("{pick} FOR UPDATE SKIP LOCKED")),
    };
    on_tx!(tx, c => sqlx::query_as::<_, JobRow>(&sql)
        .bind(claim.lease_until_ms)
        .bind(claim.lease_token)
        .bind(claim.now_ms)
        .bind(limit)
        .bind(claim.alive_since_ms)
        .bind(claim.instance)
        .fetch_all(c)
        .await)
}

/// One claim of a worker instance.
pub struct Claim {
    /// Now, on the service clock (due times).
    pub now_ms: i64,
    pub lease_until_ms: i64,
    pub lease_token: Uuid,
    /// The claiming worker instance (none: a one-off run, whose leases last their time).
    pub instance: Option<Uuid>,
    /// Instances that heartbeat since then (wall clock) are alive.
    pub alive_since_ms: i64,
}

/// Records that the worker instance `uuid` is alive at `now_ms` (wall clock).
pub async fn heartbeat(
    tx: &mut Tx,
    uuid: Uuid,
    now_ms: i64,
    started_at: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO job_workers (uuid, heartbeat_at, started_at) VALUES ($1, $2, $3) \
        ON CONFLICT (uuid) DO UPDATE SET heartbeat_at = excluded.heartbeat_at";
    on_tx!(tx, c => sqlx::query(sql).bind(uuid).bind(now_ms).bind(started_at).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Forgets worker instances silent since `before_ms` (their jobs, if any, are claimable anyway:
/// an instance missing from the table is not alive), and the instance `leaving`, if any.
pub async fn forget_workers(tx: &mut Tx, before_ms: i64, leaving: Option<Uuid>) -> Result<u64> {
    let sql = "DELETE FROM job_workers WHERE heartbeat_at < $1 OR uuid = $2";
    on_tx!(tx, c => sqlx::query(sql).bind(before_ms).bind(leaving).execute(c).await
        .map(|r| r.rows_affected()))
}

/// Claims one job by id if it is due (used by the sandbox clock, which runs an account's jobs
/// itself, in order). The lease names no instance: it lasts until `lease_until_ms`.
pub async fn claim_one(
    tx: &mut Tx,
    uuid: Uuid,
    now_ms: i64,
    lease_until_ms: i64,
    lease_token: Uuid,
) -> Result<Option<JobRow>> {
    let base = format!(
        "UPDATE jobs SET state = 'running', run_at = $1, lease_token = $2, leased_by = NULL, \
         attempts = attempts + 1 WHERE uuid = $3 AND state IN ('queued', 'running') \
         AND run_at <= $4 RETURNING {RETURNING}"
    );
    on_tx!(tx, c => sqlx::query_as::<_, JobRow>(&base)
        .bind(lease_until_ms)
        .bind(lease_token)
        .bind(uuid)
        .bind(now_ms)
        .fetch_optional(c)
        .await)
}

/// Marks a claimed job done; false when the lease was lost (another worker has it).
pub async fn complete(tx: &mut Tx, uuid: Uuid, lease: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE jobs SET state = 'done', finished_at = $1, lease_token = NULL \
        WHERE uuid = $2 AND lease_token = $3";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(uuid).bind(lease).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Marks several claimed jobs done (each `(uuid, lease)`), in one statement; answers those
/// whose lease still held (the others are left to the worker that took them over).
pub async fn complete_all(
    tx: &mut Tx,
    jobs: &[(Uuid, Uuid)],
    now: DateTime<Utc>,
) -> Result<Vec<Uuid>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let each = (0..jobs.len())
        .map(|i| format!("(uuid = ${} AND lease_token = ${})", 2 * i + 2, 2 * i + 3))
        .collect::<Vec<_>>()
        .join(" OR ");
    let sql = format!(
        "UPDATE jobs SET state = 'done', finished_at = $1, lease_token = NULL \
         WHERE {each} RETURNING uuid"
    );
    on_tx!(tx, c => {
        let mut query = sqlx::query_scalar::<_, Uuid>(&sql).bind(now);
        for (uuid, lease) in jobs {
            query = query.bind(*uuid).bind(*lease);
        }
        query.fetch_all(c).await
    })
}

/// Puts a claimed job back in the queue, due at `run_at_ms`.
pub async fn reschedule(
    tx: &mut Tx,
    uuid: Uuid,
    lease: Uuid,
    run_at_ms: i64,
    error: Option<&str>,
) -> Result<bool> {
    let sql = "UPDATE jobs SET state = 'queued', run_at = $1, last_error = $2, \
        lease_token = NULL WHERE uuid = $3 AND lease_token = $4";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(run_at_ms).bind(error).bind(uuid).bind(lease)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Gives up on a claimed job.
pub async fn fail(
    tx: &mut Tx,
    uuid: Uuid,
    lease: Uuid,
    error: &str,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE jobs SET state = 'failed', last_error = $1, finished_at = $2, \
        lease_token = NULL WHERE uuid = $3 AND lease_token = $4";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(error).bind(now).bind(uuid).bind(lease)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// The account's earliest queued job due at or before `until_ms`, with its due time.
pub async fn next_account_job(
    tx: &mut Tx,
    account_uuid: Uuid,
    until_ms: i64,
) -> Result<Option<(Uuid, i64)>> {
    let sql = "SELECT uuid, run_at FROM jobs WHERE account_uuid = $1 AND state = 'queued' \
        AND run_at <= $2 ORDER BY run_at LIMIT 1";
    on_tx!(tx, c => sqlx::query_as::<_, (Uuid, i64)>(sql)
        .bind(account_uuid)
        .bind(until_ms)
        .fetch_optional(c)
        .await)
}

/// How many of the account's jobs are running under a live lease.
pub async fn account_jobs_running(db: &Db, account_uuid: Uuid, now_ms: i64) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM jobs WHERE account_uuid = $1 AND state = 'running' \
        AND run_at > $2";
    on_db!(db, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(account_uuid)
        .bind(now_ms)
        .fetch_one(c)
        .await)
}

/// Moves the account's queued jobs `by_ms` earlier on the service clock, as its own clock moves
/// `by_ms` ahead: their due times on the account's clock stay where they were.
pub async fn shift_account_jobs(tx: &mut Tx, account_uuid: Uuid, by_ms: i64) -> Result<()> {
    let sql = "UPDATE jobs SET run_at = run_at - $1 WHERE account_uuid = $2 AND state = 'queued'";
    on_tx!(tx, c => sqlx::query(sql).bind(by_ms).bind(account_uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The payloads of the account's unfinished (queued or running) jobs of `kind`.
pub async fn account_jobs_unfinished(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
    kind: &str,
) -> Result<Vec<String>> {
    let sql = "SELECT payload FROM jobs WHERE account_uuid = $1 AND kind = $2 \
        AND state IN ('queued', 'running')";
    on_conn!(conn.into(), c => sqlx::query_scalar::<_, String>(sql)
        .bind(account_uuid)
        .bind(kind)
        .fetch_all(c)
        .await)
}

/// Deletes up to `limit` jobs that ended (done or failed) before `before`; returns how many.
pub async fn prune_finished(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM jobs WHERE uuid IN (SELECT uuid FROM jobs \
        WHERE state IN ('done', 'failed') AND finished_at < $1 LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}

/// How many jobs are in each state (for tests and operations).
pub async fn count_by_state(db: &Db, state: &str) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM jobs WHERE state = $1";
    on_db!(db, c => sqlx::query_scalar::<_, i64>(sql).bind(state).fetch_one(c).await)
}

/// How far the account's clock is ahead of the service clock (0 when never moved).
pub async fn account_offset_ms(conn: impl Into<Conn<'_>>, account_uuid: Uuid) -> Result<i64> {
    let sql = "SELECT offset_ms FROM account_clocks WHERE account_uuid = $1";
    let found = on_conn!(conn.into(), c => sqlx::query_scalar::<_, i64>(sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)?;
    Ok(found.unwrap_or(0))
}

/// Sets the account's offset, if the advance `token` still holds its clock.
pub async fn set_account_offset_ms(
    tx: &mut Tx,
    account_uuid: Uuid,
    token: Uuid,
    offset_ms: i64,
) -> Result<bool> {
    let sql =
        "UPDATE account_clocks SET offset_ms = $1 WHERE account_uuid = $2 AND lock_token = $3";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(offset_ms).bind(account_uuid).bind(token)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Takes (or, for its holder, extends) the hold of the account's clock for the advance `token`
/// until `until_ms` (wall clock), unless another advance holds it past `now_ms`. When held,
/// answers the clock's offset (as `account_offset_ms` would, in the same round trip).
pub async fn hold_account_clock(
    tx: &mut Tx,
    account_uuid: Uuid,
    token: Uuid,
    now_ms: i64,
    until_ms: i64,
) -> Result<Option<i64>> {
    let sql = "INSERT INTO account_clocks (account_uuid, offset_ms, lock_token, locked_until) \
        VALUES ($1, 0, $2, $3) ON CONFLICT (account_uuid) DO UPDATE \
        SET lock_token = excluded.lock_token, locked_until = excluded.locked_until \
        WHERE account_clocks.lock_token IS NULL OR account_clocks.lock_token = $2 \
        OR account_clocks.locked_until < $4 RETURNING offset_ms";
    on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql).bind(account_uuid).bind(token)
        .bind(until_ms).bind(now_ms).fetch_optional(c).await)
}

/// Lets go of the account's clock held by `token`.
pub async fn release_account_clock(tx: &mut Tx, account_uuid: Uuid, token: Uuid) -> Result<()> {
    let sql = "UPDATE account_clocks SET lock_token = NULL, locked_until = NULL \
        WHERE account_uuid = $1 AND lock_token = $2";
    on_tx!(tx, c => sqlx::query(sql).bind(account_uuid).bind(token).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
