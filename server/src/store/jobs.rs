//! The durable job queue and the sandbox accounts' clocks.
//!
//! A job is inserted in the transaction of the change that schedules it, so it exists only if
//! that change commits. `run_at` (milliseconds since the epoch, on the service clock) is when a
//! queued job falls due and, once claimed, when its lease ends: a job whose worker died is
//! claimable again after the lease. Claiming takes row locks with `FOR UPDATE SKIP LOCKED` on
//! PostgreSQL, so that concurrent workers never claim the same job; on SQLite the single writer
//! connection already serializes claims.

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
}

const RETURNING: &str = "uuid, kind, payload, account_uuid, attempts, max_attempts, lease_token";

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

/// Claims up to `limit` due jobs (queued and due, or running with an ended lease), oldest due
/// first: they become `running` under `lease_token` until `lease_until_ms`.
pub async fn claim_due(
    tx: &mut Tx,
    now_ms: i64,
    lease_until_ms: i64,
    lease_token: Uuid,
    limit: i64,
) -> Result<Vec<JobRow>> {
    let pick = "SELECT uuid FROM jobs WHERE state IN ('queued', 'running') AND run_at <= $3 \
        ORDER BY run_at LIMIT $4";
    let update = |pick: &str| {
        format!(
            "UPDATE jobs SET state = 'running', run_at = $1, lease_token = $2, \
             attempts = attempts + 1 WHERE uuid IN ({pick}) RETURNING {RETURNING}"
        )
    };
    match tx {
        Tx::Sqlite(t) => {
            sqlx::query_as::<_, JobRow>(&update(pick))
                .bind(lease_until_ms)
                .bind(lease_token)
                .bind(now_ms)
                .bind(limit)
                .fetch_all(&mut **t)
                .await
        }
        Tx::Postgres(t) => {
            sqlx::query_as::<_, JobRow>(&update(&format!("{pick} FOR UPDATE SKIP LOCKED")))
                .bind(lease_until_ms)
                .bind(lease_token)
                .bind(now_ms)
                .bind(limit)
                .fetch_all(&mut **t)
                .await
        }
    }
}

/// Claims one job by id if it is due (used by the sandbox clock, which runs an account's jobs
/// itself, in order).
pub async fn claim_one(
    tx: &mut Tx,
    uuid: Uuid,
    now_ms: i64,
    lease_until_ms: i64,
    lease_token: Uuid,
) -> Result<Option<JobRow>> {
    let base = format!(
        "UPDATE jobs SET state = 'running', run_at = $1, lease_token = $2, \
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

pub async fn set_account_offset_ms(tx: &mut Tx, account_uuid: Uuid, offset_ms: i64) -> Result<()> {
    let sql = "INSERT INTO account_clocks (account_uuid, offset_ms) VALUES ($1, $2) \
        ON CONFLICT (account_uuid) DO UPDATE SET offset_ms = excluded.offset_ms";
    on_tx!(tx, c => sqlx::query(sql).bind(account_uuid).bind(offset_ms).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
