//! Submissions of live enrollments to the utility: the operator's worklist of answers to record.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::enrollment::SubmissionStatus;

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct SubmissionRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub esi_id: String,
    /// The start date the customer accepted.
    pub requested_start_date: Option<NaiveDate>,
    pub status: SubmissionStatus,
    /// The start date the utility gave when it accepted.
    pub start_date: Option<NaiveDate>,
    pub reason: Option<String>,
    pub submitted_at: DateTime<Utc>,
    pub answered_at: Option<DateTime<Utc>>,
    pub activated_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "uuid, app_uuid, account_uuid, location_uuid, esi_id, \
    requested_start_date, status, start_date, reason, submitted_at, answered_at, activated_at";

pub async fn insert_submission(tx: &mut Tx, s: &SubmissionRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO utility_submissions ({COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(s.uuid)
        .bind(s.app_uuid)
        .bind(s.account_uuid)
        .bind(s.location_uuid)
        .bind(&s.esi_id)
        .bind(s.requested_start_date)
        .bind(s.status)
        .bind(s.start_date)
        .bind(&s.reason)
        .bind(s.submitted_at)
        .bind(s.answered_at)
        .bind(s.activated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The worklist, oldest first; only those still waiting for an answer when `pending_only`.
pub async fn submissions(db: &Db, pending_only: bool) -> Result<Vec<SubmissionRow>> {
    let filter = if pending_only {
        "WHERE status = 'pending'"
    } else {
        ""
    };
    let sql =
        format!("SELECT {COLUMNS} FROM utility_submissions {filter} ORDER BY submitted_at, uuid");
    on_db!(db, c => sqlx::query_as::<_, SubmissionRow>(&sql).fetch_all(c).await)
}

/// Writes what the utility answered of a submission.
pub async fn update_submission(tx: &mut Tx, s: &SubmissionRow) -> Result<()> {
    let sql = "UPDATE utility_submissions SET status = $1, start_date = $2, reason = $3, \
        answered_at = $4, activated_at = $5 WHERE uuid = $6";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(s.status)
        .bind(s.start_date)
        .bind(&s.reason)
        .bind(s.answered_at)
        .bind(s.activated_at)
        .bind(s.uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn submission(conn: impl Into<Conn<'_>>, uuid: Uuid) -> Result<Option<SubmissionRow>> {
    let sql = format!("SELECT {COLUMNS} FROM utility_submissions WHERE uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, SubmissionRow>(&sql)
        .bind(uuid)
        .fetch_optional(c)
        .await)
}
