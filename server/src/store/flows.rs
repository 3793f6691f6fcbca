//! Flow logins (single-use tokens in flow links) and the flow sessions they open.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_db, on_tx, Db, Result, Tx};

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

pub async fn insert_flow_session(
    tx: &mut Tx,
    token_hash: &str,
    login: &FlowLoginRow,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO flow_sessions (token_hash, account_uuid, scope, plan_group_uuid, \
        expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)";
    on_tx!(tx, c => sqlx::query(sql)
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
    pub account_uuid: Uuid,
    pub app_uuid: Uuid,
    pub scope: String,
    pub plan_group_uuid: Option<Uuid>,
    pub expires_at: DateTime<Utc>,
}

pub async fn flow_session(db: &Db, token_hash: &str) -> Result<Option<FlowSessionRow>> {
    let sql = "SELECT s.account_uuid, a.app_uuid, s.scope, s.plan_group_uuid, s.expires_at FROM flow_sessions s \
        JOIN accounts a ON a.uuid = s.account_uuid WHERE s.token_hash = $1";
    on_db!(db, c => sqlx::query_as::<_, FlowSessionRow>(sql).bind(token_hash).fetch_optional(c).await)
}
