//! Flow logins (single-use tokens in flow links) and the flow sessions they open.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::flow_events::FlowEventName;

pub struct NewFlowLogin<'a> {
    pub token_hash: &'a str,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub scope: &'a str,
    pub plan_group_uuid: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

pub async fn insert_flow_login(tx: &mut Tx, l: &NewFlowLogin<'_>) -> Result<()> {
    let sql = "INSERT INTO flow_logins (token_hash, app_uuid, account_uuid, scope, \
        plan_group_uuid, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(l.token_hash)
        .bind(l.app_uuid)
        .bind(l.account_uuid)
        .bind(l.scope)
        .bind(l.plan_group_uuid)
        .bind(l.expires_at)
        .bind(l.now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FlowLoginRow {
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub scope: String,
    pub plan_group_uuid: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

pub async fn flow_login(tx: &mut Tx, token_hash: &str) -> Result<Option<FlowLoginRow>> {
    let sql = "SELECT app_uuid, account_uuid, scope, plan_group_uuid, expires_at, used_at \
        FROM flow_logins WHERE token_hash = $1";
    on_tx!(tx, c => sqlx::query_as::<_, FlowLoginRow>(sql).bind(token_hash).fetch_optional(c).await)
}

/// Spends a login token; false when it was already spent.
pub async fn use_flow_login(tx: &mut Tx, token_hash: &str, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE flow_logins SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(token_hash).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// Opens a flow session; `uuid` is its public id (`flow_session_id`).
pub async fn insert_flow_session(
    tx: &mut Tx,
    uuid: Uuid,
    token_hash: &str,
    login: &FlowLoginRow,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO flow_sessions (uuid, token_hash, account_uuid, scope, plan_group_uuid, \
        expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .bind(token_hash)
        .bind(login.account_uuid)
        .bind(&login.scope)
        .bind(login.plan_group_uuid)
        .bind(expires_at)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FlowSessionRow {
    /// None for a session opened before sessions had public ids.
    pub uuid: Option<Uuid>,
    pub account_uuid: Uuid,
    pub app_uuid: Uuid,
    pub scope: String,
    pub plan_group_uuid: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
}

pub async fn flow_session(db: &Db, token_hash: &str) -> Result<Option<FlowSessionRow>> {
    let sql = "SELECT s.uuid, s.account_uuid, a.app_uuid, s.scope, s.plan_group_uuid, s.expires_at FROM flow_sessions s \
        JOIN accounts a ON a.uuid = s.account_uuid WHERE s.token_hash = $1";
    on_db!(db, c => sqlx::query_as::<_, FlowSessionRow>(sql).bind(token_hash).fetch_optional(c).await)
}

/// A flow session by its public id, and whether its summary went out.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EndingSessionRow {
    pub account_uuid: Uuid,
    pub app_uuid: Uuid,
    pub scope: String,
    pub created_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

pub async fn session_by_uuid(
    conn: impl Into<Conn<'_>>,
    uuid: Uuid,
) -> Result<Option<EndingSessionRow>> {
    let sql = "SELECT s.account_uuid, a.app_uuid, s.scope, s.created_at, s.ended_at \
        FROM flow_sessions s JOIN accounts a ON a.uuid = s.account_uuid WHERE s.uuid = $1";
    on_conn!(conn.into(), c => sqlx::query_as::<_, EndingSessionRow>(sql).bind(uuid).fetch_optional(c).await)
}

/// Marks a session's summary as sent; false when it already was (it goes out once).
pub async fn mark_session_ended(tx: &mut Tx, uuid: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let sql = "UPDATE flow_sessions SET ended_at = $1 WHERE uuid = $2 AND ended_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql).bind(now).bind(uuid).execute(c).await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

pub struct NewFlowEvent<'a> {
    pub session_uuid: Uuid,
    pub name: FlowEventName,
    pub step: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub now: DateTime<Utc>,
}

pub async fn insert_flow_event(tx: &mut Tx, e: &NewFlowEvent<'_>) -> Result<()> {
    let sql = "INSERT INTO flow_events (uuid, session_uuid, name, step, error_code, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(Uuid::new_v4())
        .bind(e.session_uuid)
        .bind(e.name)
        .bind(e.step)
        .bind(e.error_code)
        .bind(e.now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A recorded event of a session.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FlowEventRow {
    pub session_uuid: Uuid,
    pub name: String,
    pub step: Option<String>,
    pub error_code: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A session's events in the order they were recorded.
pub async fn session_events(conn: impl Into<Conn<'_>>, uuid: Uuid) -> Result<Vec<FlowEventRow>> {
    let sql = "SELECT session_uuid, name, step, error_code, created_at FROM flow_events \
        WHERE session_uuid = $1 ORDER BY created_at, uuid";
    on_conn!(conn.into(), c => sqlx::query_as::<_, FlowEventRow>(sql).bind(uuid).fetch_all(c).await)
}

/// How many sessions of `scope` the app's flow links opened in `[from, to)`.
pub async fn sessions_started(
    db: &Db,
    app_uuid: Uuid,
    scope: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM flow_sessions s JOIN accounts a ON a.uuid = s.account_uuid \
        WHERE a.app_uuid = $1 AND s.scope = $2 AND s.created_at >= $3 AND s.created_at < $4";
    on_db!(db, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(app_uuid)
        .bind(scope)
        .bind(from)
        .bind(to)
        .fetch_one(c)
        .await)
}

/// The events of those sessions, session by session, each session's in recorded order.
pub async fn events_of_sessions_started(
    db: &Db,
    app_uuid: Uuid,
    scope: &str,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<FlowEventRow>> {
    let sql = "SELECT e.session_uuid, e.name, e.step, e.error_code, e.created_at \
        FROM flow_events e JOIN flow_sessions s ON s.uuid = e.session_uuid \
        JOIN accounts a ON a.uuid = s.account_uuid \
        WHERE a.app_uuid = $1 AND s.scope = $2 AND s.created_at >= $3 AND s.created_at < $4 \
        ORDER BY e.session_uuid, e.created_at, e.uuid";
    on_db!(db, c => sqlx::query_as::<_, FlowEventRow>(sql)
        .bind(app_uuid)
        .bind(scope)
        .bind(from)
        .bind(to)
        .fetch_all(c)
        .await)
}
