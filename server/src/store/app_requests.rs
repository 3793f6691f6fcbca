//! Partners' requests for a live app, and whether a slug is free for one.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::app_requests::RequestStatus;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LiveAppRequestRow {
    pub uuid: Uuid,
    pub organisation_uuid: Uuid,
    pub organisation_name: String,
    /// The e-mail of the member who asked.
    pub requested_by: String,
    pub requested_by_user_uuid: Option<Uuid>,
    pub display_name: String,
    pub slug: String,
    pub reason: String,
    pub status: RequestStatus,
    /// Why the operator declined.
    pub decision_reason: Option<String>,
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    /// The live app an approval created.
    pub app_uuid: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "r.uuid, r.organisation_uuid, o.name AS organisation_name, r.requested_by, \
    r.requested_by_user_uuid, r.display_name, r.slug, r.reason, r.status, r.decision_reason, \
    r.decided_by, r.decided_at, r.app_uuid, r.created_at";

/// A new request (its `status` pending; the decision's fields empty).
pub async fn insert_request(tx: &mut Tx, r: &LiveAppRequestRow) -> Result<()> {
    let sql = "INSERT INTO live_app_requests (uuid, organisation_uuid, requested_by, \
        requested_by_user_uuid, display_name, slug, reason, status, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(r.uuid)
        .bind(r.organisation_uuid)
        .bind(&r.requested_by)
        .bind(r.requested_by_user_uuid)
        .bind(&r.display_name)
        .bind(&r.slug)
        .bind(&r.reason)
        .bind(r.status)
        .bind(r.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The request `uuid`, read in the caller's transaction (or from the pool).
pub async fn request_by_uuid(
    conn: impl Into<Conn<'_>>,
    uuid: Uuid,
) -> Result<Option<LiveAppRequestRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM live_app_requests r \
         JOIN organisations o ON o.uuid = r.organisation_uuid WHERE r.uuid = $1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, LiveAppRequestRow>(&sql).bind(uuid)
        .fetch_optional(c).await)
}

/// The requests of one organisation (none: every organisation's), pending first, then newest
/// first; at most `limit`.
pub async fn requests_of(
    db: &Db,
    organisation: Option<Uuid>,
    limit: i64,
) -> Result<Vec<LiveAppRequestRow>> {
    let filter = if organisation.is_some() {
        "WHERE r.organisation_uuid = $2"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM live_app_requests r \
         JOIN organisations o ON o.uuid = r.organisation_uuid {filter} \
         ORDER BY CASE WHEN r.status = 'pending' THEN 0 ELSE 1 END, r.created_at DESC, r.uuid \
         LIMIT $1"
    );
    on_db!(db, c => {
        let q = sqlx::query_as::<_, LiveAppRequestRow>(&sql).bind(limit);
        match organisation {
            Some(org) => q.bind(org).fetch_all(c).await,
            None => q.fetch_all(c).await,
        }
    })
}

/// Records the operator's decision on a pending request. Returns whether it was still pending
/// (a request is decided once).
pub async fn decide(
    tx: &mut Tx,
    uuid: Uuid,
    status: RequestStatus,
    reason: Option<&str>,
    decided_by: &str,
    app_uuid: Option<Uuid>,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE live_app_requests SET status = $1, decision_reason = $2, decided_by = $3, \
        decided_at = $4, app_uuid = $5 WHERE uuid = $6 AND status = 'pending'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(reason)
        .bind(decided_by)
        .bind(now)
        .bind(app_uuid)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Whether an app has this slug, or a pending request other than `except` asks for it.
pub async fn slug_in_use(tx: &mut Tx, slug: &str, except: Option<Uuid>) -> Result<bool> {
    let sql = "SELECT (SELECT COUNT(*) FROM apps WHERE slug = $1) \
        + (SELECT COUNT(*) FROM live_app_requests WHERE slug = $2 AND status = 'pending' \
           AND uuid <> $3)";
    let n = on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(slug)
        .bind(slug)
        .bind(except.unwrap_or_default())
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}
