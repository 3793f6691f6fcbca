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

/// What the audit log page narrows the log to; `None` leaves a part open. Texts match
/// anywhere, ignoring case, with `%` and `_` taken as typed.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
    /// From this instant on.
    pub from: Option<DateTime<Utc>>,
    /// Before this instant.
    pub until: Option<DateTime<Utc>>,
}

/// A `LIKE` pattern that finds `text` anywhere, its own `%`, `_` and `\` matched as such.
fn contains_pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// The entries `filter` lets through, newest first, `limit` from `offset`.
pub async fn filtered_entries(
    db: &Db,
    filter: &AuditFilter,
    limit: i64,
    offset: i64,
) -> Result<Vec<AuditRow>> {
    let sql = "SELECT uuid, actor, user_uuid, action, target, detail, created_at FROM audit_log \
        WHERE ($1 IS NULL OR LOWER(actor) LIKE $1 ESCAPE '\\') \
        AND ($2 IS NULL OR LOWER(action) LIKE $2 ESCAPE '\\') \
        AND ($3 IS NULL OR LOWER(target) LIKE $3 ESCAPE '\\') \
        AND ($4 IS NULL OR created_at >= $4) AND ($5 IS NULL OR created_at < $5) \
        ORDER BY created_at DESC, uuid LIMIT $6 OFFSET $7";
    let actor = filter.actor.as_deref().map(contains_pattern);
    let action = filter.action.as_deref().map(contains_pattern);
    let target = filter.target.as_deref().map(contains_pattern);
    on_db!(db, c => sqlx::query_as::<_, AuditRow>(sql)
        .bind(actor.clone())
        .bind(action.clone())
        .bind(target.clone())
        .bind(filter.from)
        .bind(filter.until)
        .bind(limit)
        .bind(offset)
        .fetch_all(c)
        .await)
}

#[cfg(test)]
mod tests {
    use super::contains_pattern;

    #[test]
    fn a_typed_wildcard_matches_only_itself() {
        assert_eq!(contains_pattern("Token.Revoked"), "%token.revoked%");
        assert_eq!(contains_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
    }
}
