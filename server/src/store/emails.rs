//! The e-mail outbox: every e-mail the service sends, kept whether or not SMTP delivered it.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_db, on_tx, Db, Result, Tx};
use crate::domain::emails::EmailStatus;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EmailRow {
    pub uuid: Uuid,
    /// `None` for the platform's own e-mails (to dashboard users).
    pub app_uuid: Option<Uuid>,
    pub account_uuid: Option<Uuid>,
    pub template: String,
    pub to_address: String,
    pub subject: String,
    pub text_body: String,
    pub html_body: String,
    /// `queued`, `sent` (handed to SMTP), `stored` (no SMTP configured) or `failed`.
    pub status: EmailStatus,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "uuid, app_uuid, account_uuid, template, to_address, subject, text_body, \
    html_body, status, error, created_at, sent_at";

pub async fn insert_email(tx: &mut Tx, e: &EmailRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO emails ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(e.uuid)
        .bind(e.app_uuid)
        .bind(e.account_uuid)
        .bind(&e.template)
        .bind(&e.to_address)
        .bind(&e.subject)
        .bind(&e.text_body)
        .bind(&e.html_body)
        .bind(e.status)
        .bind(&e.error)
        .bind(e.created_at)
        .bind(e.sent_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn email_by_uuid(db: &Db, uuid: Uuid) -> Result<Option<EmailRow>> {
    let sql = format!("SELECT {COLUMNS} FROM emails WHERE uuid = $1");
    on_db!(db, c => sqlx::query_as::<_, EmailRow>(&sql).bind(uuid).fetch_optional(c).await)
}

/// The e-mails of `uuids` that exist, in one query (in no particular order).
pub async fn emails_by_uuids(db: &Db, uuids: &[Uuid]) -> Result<Vec<EmailRow>> {
    if uuids.is_empty() {
        return Ok(Vec::new());
    }
    let list = (1..=uuids.len())
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!("SELECT {COLUMNS} FROM emails WHERE uuid IN ({list})");
    on_db!(db, c => {
        let mut query = sqlx::query_as::<_, EmailRow>(&sql);
        for uuid in uuids {
            query = query.bind(*uuid);
        }
        query.fetch_all(c).await
    })
}

pub async fn set_email_status(
    tx: &mut Tx,
    uuid: Uuid,
    status: EmailStatus,
    error: Option<&str>,
    sent_at: Option<DateTime<Utc>>,
) -> Result<()> {
    let sql = "UPDATE emails SET status = $1, error = $2, sent_at = $3 WHERE uuid = $4";
    on_tx!(tx, c => sqlx::query(sql).bind(status).bind(error).bind(sent_at).bind(uuid)
        .execute(c).await.map(|r| r.rows_affected()))?;
    Ok(())
}

/// A page of the app's e-mails, newest first (plus one row).
pub async fn emails_of_app(
    db: &Db,
    app_uuid: Uuid,
    account_uuid: Option<Uuid>,
    limit: u32,
    offset: u64,
) -> Result<Vec<EmailRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM emails WHERE app_uuid = $1 \
         AND ($2 IS NULL OR account_uuid = $2) \
         ORDER BY created_at DESC, uuid DESC LIMIT $3 OFFSET $4"
    );
    on_db!(db, c => sqlx::query_as::<_, EmailRow>(&sql)
        .bind(app_uuid)
        .bind(account_uuid)
        .bind(i64::from(limit) + 1)
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .fetch_all(c)
        .await)
}

/// Deletes up to `limit` e-mails written before `before` that are done with (sent, kept without
/// SMTP, or failed); returns how many.
pub async fn prune_emails(tx: &mut Tx, before: DateTime<Utc>, limit: i64) -> Result<u64> {
    let sql = "DELETE FROM emails WHERE uuid IN (SELECT uuid FROM emails \
        WHERE status IN ('sent', 'stored', 'failed') AND created_at < $1 LIMIT $2)";
    on_tx!(tx, c => sqlx::query(sql).bind(before).bind(limit).execute(c).await
        .map(|r| r.rows_affected()))
}
