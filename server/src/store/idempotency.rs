//! Idempotency records: the first completed response to an `Idempotency-Key`, kept for replay.

use chrono::{DateTime, Utc};

use super::{on_tx, Result, Tx};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct IdempotencyRow {
    pub request_hash: String,
    pub state: String,
    pub response_status: Option<i32>,
    pub response_content_type: Option<String>,
    pub response_body: Option<Vec<u8>>,
    pub created_at: DateTime<Utc>,
}

pub enum Claim {
    /// The key is ours: run the request, then `complete` or `release`.
    Claimed,
    /// Another request holds or completed this key.
    Existing(IdempotencyRow),
}

/// Claims `(owner, key)` for a request. A record older than `expired_before`, or still in
/// progress since before `abandoned_before` (its server died mid-request), is taken over.
pub async fn claim(
    tx: &mut Tx,
    owner: &str,
    key: &str,
    request_hash: &str,
    now: DateTime<Utc>,
    expired_before: DateTime<Utc>,
    abandoned_before: DateTime<Utc>,
) -> Result<Claim> {
    let insert = "INSERT INTO idempotency_keys (owner, idempotency_key, request_hash, state, \
        created_at) VALUES ($1, $2, $3, 'in_progress', $4) \
        ON CONFLICT (owner, idempotency_key) DO NOTHING";
    let inserted = on_tx!(tx, c => sqlx::query(insert)
        .bind(owner)
        .bind(key)
        .bind(request_hash)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    if inserted == 1 {
        return Ok(Claim::Claimed);
    }
    let select = "SELECT request_hash, state, response_status, response_content_type, \
        response_body, created_at FROM idempotency_keys WHERE owner = $1 AND idempotency_key = $2";
    let row = on_tx!(tx, c => sqlx::query_as::<_, IdempotencyRow>(select)
        .bind(owner)
        .bind(key)
        .fetch_one(c)
        .await)?;
    let stale = row.created_at < expired_before
        || (row.state == "in_progress" && row.created_at < abandoned_before);
    if !stale {
        return Ok(Claim::Existing(row));
    }
    let take_over = "UPDATE idempotency_keys SET request_hash = $1, state = 'in_progress', \
        response_status = NULL, response_content_type = NULL, response_body = NULL, \
        created_at = $2 WHERE owner = $3 AND idempotency_key = $4 AND created_at = $5";
    let taken = on_tx!(tx, c => sqlx::query(take_over)
        .bind(request_hash)
        .bind(now)
        .bind(owner)
        .bind(key)
        .bind(row.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(if taken == 1 {
        Claim::Claimed
    } else {
        Claim::Existing(row)
    })
}

pub async fn complete(
    tx: &mut Tx,
    owner: &str,
    key: &str,
    status: u16,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<()> {
    let sql = "UPDATE idempotency_keys SET state = 'completed', response_status = $1, \
        response_content_type = $2, response_body = $3 WHERE owner = $4 AND idempotency_key = $5";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(i32::from(status))
        .bind(content_type)
        .bind(body)
        .bind(owner)
        .bind(key)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Forgets a claim whose request did not complete (so that a retry can run it).
pub async fn release(tx: &mut Tx, owner: &str, key: &str) -> Result<()> {
    let sql = "DELETE FROM idempotency_keys WHERE owner = $1 AND idempotency_key = $2";
    on_tx!(tx, c => sqlx::query(sql).bind(owner).bind(key).execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}
