//! Webhook endpoints and their delivery log.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::webhooks::DeliveryStatus;

/// An endpoint as stored. The secrets are stored sealed with the PII key
/// (`crypto::PiiKey::seal_text`; rows written before that are sealed at start) and opened to
/// sign; this row's `Debug` leaves them out.
#[derive(Clone, sqlx::FromRow)]
pub struct EndpointRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub url: String,
    /// JSON array of event types.
    pub event_types: String,
    pub description: Option<String>,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    pub disabled: bool,
    pub disabled_reason: Option<String>,
    pub failing_since: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl std::fmt::Debug for EndpointRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointRow")
            .field("uuid", &self.uuid)
            .field("url", &self.url)
            .field("disabled", &self.disabled)
            .finish_non_exhaustive()
    }
}

impl EndpointRow {
    pub fn event_type_list(&self) -> Vec<String> {
        serde_json::from_str(&self.event_types).unwrap_or_default()
    }
}

const COLUMNS: &str = "uuid, app_uuid, url, event_types, description, secret, previous_secret, \
    previous_secret_expires_at, disabled, disabled_reason, failing_since, created_at";

pub async fn insert_endpoint(tx: &mut Tx, e: &EndpointRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO webhook_endpoints ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(e.uuid)
        .bind(e.app_uuid)
        .bind(&e.url)
        .bind(&e.event_types)
        .bind(&e.description)
        .bind(&e.secret)
        .bind(&e.previous_secret)
        .bind(e.previous_secret_expires_at)
        .bind(e.disabled)
        .bind(&e.disabled_reason)
        .bind(e.failing_since)
        .bind(e.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Writes every field a partner or a delivery may change.
pub async fn update_endpoint(tx: &mut Tx, e: &EndpointRow) -> Result<()> {
    let sql = "UPDATE webhook_endpoints SET url = $1, event_types = $2, description = $3, \
        secret = $4, previous_secret = $5, previous_secret_expires_at = $6, disabled = $7, \
        disabled_reason = $8, failing_since = $9 WHERE uuid = $10";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(&e.url)
        .bind(&e.event_types)
        .bind(&e.description)
        .bind(&e.secret)
        .bind(&e.previous_secret)
        .bind(e.previous_secret_expires_at)
        .bind(e.disabled)
        .bind(&e.disabled_reason)
        .bind(e.failing_since)
        .bind(e.uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Endpoints whose secret (or previous secret) is stored in clear, as written before secrets
/// were sealed: (uuid, secret, previous secret).
pub async fn endpoints_with_clear_secrets(
    db: &Db,
    limit: i64,
) -> Result<Vec<(Uuid, String, Option<String>)>> {
    let sql = "SELECT uuid, secret, previous_secret FROM webhook_endpoints \
        WHERE secret NOT LIKE 'sealed:%' \
        OR (previous_secret IS NOT NULL AND previous_secret NOT LIKE 'sealed:%') LIMIT $1";
    on_db!(db, c => sqlx::query_as::<_, (Uuid, String, Option<String>)>(sql)
        .bind(limit)
        .fetch_all(c)
        .await)
}

/// Replaces an endpoint's secrets, if its secret is still `was` (nobody rotated it meanwhile).
pub async fn replace_secrets(
    tx: &mut Tx,
    uuid: Uuid,
    was: &str,
    secret: &str,
    previous_secret: Option<&str>,
) -> Result<bool> {
    let sql = "UPDATE webhook_endpoints SET secret = $1, previous_secret = $2 \
        WHERE uuid = $3 AND secret = $4";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(secret).bind(previous_secret).bind(uuid)
        .bind(was).execute(c).await.map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Deletes (hides) an endpoint; its delivery log stays. False when there was none.
pub async fn delete_endpoint(
    tx: &mut Tx,
    app_uuid: Uuid,
    uuid: Uuid,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE webhook_endpoints SET deleted_at = $1, disabled = TRUE \
        WHERE uuid = $2 AND app_uuid = $3 AND deleted_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(uuid).bind(app_uuid).execute(c)
        .await.map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// The (undeleted) endpoint, if it belongs to `app_uuid`.
pub async fn endpoint_of_app(
    conn: impl Into<Conn<'_>>,
    app_uuid: Uuid,
    uuid: Uuid,
) -> Result<Option<EndpointRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM webhook_endpoints \
         WHERE uuid = $1 AND app_uuid = $2 AND deleted_at IS NULL"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, EndpointRow>(&sql)
        .bind(uuid)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// The (undeleted) endpoint, whatever its app (for deliveries).
pub async fn endpoint_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<EndpointRow>> {
    let sql =
        format!("SELECT {COLUMNS} FROM webhook_endpoints WHERE uuid = $1 AND deleted_at IS NULL");
    on_db!(db, c => sqlx::query_as::<_, EndpointRow>(&sql).bind(uuid).fetch_optional(c).await)
}

/// A page of the app's endpoints, newest first, with one extra row to tell if there are more.
pub async fn endpoints_of_app(
    db: &Db,
    app_uuid: Uuid,
    limit: u32,
    offset: u64,
) -> Result<Vec<EndpointRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM webhook_endpoints WHERE app_uuid = $1 AND deleted_at IS NULL \
         ORDER BY created_at DESC, uuid DESC LIMIT $2 OFFSET $3"
    );
    on_db!(db, c => sqlx::query_as::<_, EndpointRow>(&sql)
        .bind(app_uuid)
        .bind(i64::from(limit) + 1)
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(c)
        .await)
}

/// The app's enabled endpoints and their filters (JSON), for fanning an event out.
pub async fn enabled_endpoint_filters(tx: &mut Tx, app_uuid: Uuid) -> Result<Vec<(Uuid, String)>> {
    let sql = "SELECT uuid, event_types FROM webhook_endpoints \
        WHERE app_uuid = $1 AND deleted_at IS NULL AND disabled = FALSE";
    on_tx!(tx, c => sqlx::query_as::<_, (Uuid, String)>(sql)
        .bind(app_uuid)
        .fetch_all(c)
        .await)
}

/// Records that an attempt succeeded: the endpoint's run of failures, if any, is over.
pub async fn clear_failing(tx: &mut Tx, uuid: Uuid) -> Result<()> {
    let sql = "UPDATE webhook_endpoints SET failing_since = NULL \
        WHERE uuid = $1 AND failing_since IS NOT NULL";
    on_tx!(tx, c => sqlx::query(sql).bind(uuid).execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// Records that an attempt failed; returns when the endpoint's run of failures began.
pub async fn mark_failing(
    tx: &mut Tx,
    uuid: Uuid,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>> {
    let sql = "UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $1) \
        WHERE uuid = $2 RETURNING failing_since";
    on_tx!(tx, c => sqlx::query_scalar::<_, Option<DateTime<Utc>>>(sql)
        .bind(now)
        .bind(uuid)
        .fetch_optional(c)
        .await)
    .map(Option::flatten)
}

pub async fn disable_endpoint(tx: &mut Tx, uuid: Uuid, reason: &str) -> Result<()> {
    let sql = "UPDATE webhook_endpoints SET disabled = TRUE, disabled_reason = $1 WHERE uuid = $2";
    on_tx!(tx, c => sqlx::query(sql).bind(reason).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub uuid: Uuid,
    pub endpoint_uuid: Uuid,
    pub event_uuid: Uuid,
    pub event_type: String,
    pub attempt: i32,
    pub status: DeliveryStatus,
    pub response_status: Option<i32>,
    pub error: Option<String>,
    pub attempted_at: DateTime<Utc>,
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The start of the receiver's answer (`domain::webhooks::response_excerpt`).
    pub response_excerpt: Option<String>,
}

const DELIVERY_COLUMNS: &str = "uuid, endpoint_uuid, event_uuid, event_type, attempt, status, \
    response_status, error, attempted_at, next_attempt_at, response_excerpt";

pub async fn insert_delivery(tx: &mut Tx, d: &DeliveryRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO webhook_deliveries ({DELIVERY_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(d.uuid)
        .bind(d.endpoint_uuid)
        .bind(d.event_uuid)
        .bind(&d.event_type)
        .bind(d.attempt)
        .bind(d.status)
        .bind(d.response_status)
        .bind(&d.error)
        .bind(d.attempted_at)
        .bind(d.next_attempt_at)
        .bind(&d.response_excerpt)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A page of an endpoint's delivery attempts, newest first (plus one row).
pub async fn deliveries_of_endpoint(
    db: &Db,
    endpoint_uuid: Uuid,
    limit: u32,
    offset: u64,
) -> Result<Vec<DeliveryRow>> {
    let sql = format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_uuid = $1 \
         ORDER BY attempted_at DESC, attempt DESC, uuid DESC LIMIT $2 OFFSET $3"
    );
    on_db!(db, c => sqlx::query_as::<_, DeliveryRow>(&sql)
        .bind(endpoint_uuid)
        .bind(i64::from(limit) + 1)
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(c)
        .await)
}

/// The events whose delivery to the endpoint failed for good since `since`: the latest attempt
/// at each was made since then and failed, with no retry still to come (none scheduled, or one
/// due by `now` that never ran, as when the endpoint was disabled meanwhile). At most `limit`,
/// oldest first, as (event, its account).
pub async fn failed_deliveries_since(
    tx: &mut Tx,
    endpoint_uuid: Uuid,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<(Uuid, Option<Uuid>)>> {
    let sql = "SELECT d.event_uuid, e.account_uuid FROM webhook_deliveries d \
        JOIN events e ON e.uuid = d.event_uuid \
        WHERE d.endpoint_uuid = $1 AND d.attempted_at >= $2 AND d.status = 'failed' \
        AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $3) \
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries l \
            WHERE l.endpoint_uuid = d.endpoint_uuid AND l.event_uuid = d.event_uuid \
            AND (l.attempted_at > d.attempted_at \
                OR (l.attempted_at = d.attempted_at AND l.uuid > d.uuid))) \
        ORDER BY d.attempted_at, d.uuid LIMIT $4";
    on_tx!(tx, c => sqlx::query_as::<_, (Uuid, Option<Uuid>)>(sql)
        .bind(endpoint_uuid)
        .bind(since)
        .bind(now)
        .bind(limit)
        .fetch_all(c)
        .await)
}

/// Deletes up to `limit` delivery attempts made before `before` (none still pending); returns
/// how many.
pub async fn prune_deliveries(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM webhook_deliveries WHERE uuid IN (SELECT uuid FROM webhook_deliveries \
        WHERE attempted_at < $1 AND status <> 'pending' LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}
