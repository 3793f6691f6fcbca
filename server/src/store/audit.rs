//! The audit log: who changed what, from the dashboard or the CLI.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_db, on_tx, Db, Result, Tx};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AuditRow {
    pub uuid: Uuid,
    pub actor: String,
    pub user_uuid: Option<Uuid>,
    pub action: String,
    pub target: String,
    /// A JSON object.
    pub detail: String,
    pub created_at: DateTime<Utc>,
}

pub async fn insert_entry(tx: &mut Tx, row: &AuditRow) -> Result<()> {
    let sql = "INSERT INTO audit_log (uuid, actor, user_uuid, action, target, detail, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(row.uuid)
        .bind(&row.actor)
        .bind(row.user_uuid)
        .bind(&row.action)
        .bind(&row.target)
        .bind(&row.detail)
        .bind(row.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The latest entries, newest first.
pub async fn latest_entries(db: &Db, limit: i64) -> Result<Vec<AuditRow>> {
    let sql = "SELECT uuid, actor, user_uuid, action, target, detail, created_at FROM audit_log \
        ORDER BY created_at DESC, uuid LIMIT $1";
    on_db!(db, c => sqlx::query_as::<_, AuditRow>(sql).bind(limit).fetch_all(c).await)
}
