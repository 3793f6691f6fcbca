//! The expiration notices sent before a fixed contract ends, one row per notice.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_tx, Conn, Result, Tx};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RenewalNoticeRow {
    pub uuid: Uuid,
    pub contract_uuid: Uuid,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    /// Which notice of the contract (its nominal days before the end).
    pub days_before: i64,
    pub contract_end: NaiveDate,
    /// The days from the day it went out to the contract's end.
    pub days_left: i64,
    pub is_final: bool,
    pub renewal_url: String,
    /// The month-to-month plan the final notice states.
    pub month_to_month_plan_uuid: Option<Uuid>,
    pub email_uuid: Uuid,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "uuid, contract_uuid, account_uuid, location_uuid, days_before, \
    contract_end, days_left, is_final, renewal_url, month_to_month_plan_uuid, email_uuid, \
    created_at";

pub async fn insert_notice(tx: &mut Tx, n: &RenewalNoticeRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO renewal_notices ({COLUMNS}) VALUES \
         ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(n.uuid)
        .bind(n.contract_uuid)
        .bind(n.account_uuid)
        .bind(n.location_uuid)
        .bind(n.days_before)
        .bind(n.contract_end)
        .bind(n.days_left)
        .bind(n.is_final)
        .bind(&n.renewal_url)
        .bind(n.month_to_month_plan_uuid)
        .bind(n.email_uuid)
        .bind(n.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The notices whose `column` is `uuid`, earliest first.
async fn notices_where(
    conn: impl Into<Conn<'_>>,
    column: &'static str,
    uuid: Uuid,
) -> Result<Vec<RenewalNoticeRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM renewal_notices WHERE {column} = $1 \
         ORDER BY created_at, days_before DESC"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, RenewalNoticeRow>(&sql)
        .bind(uuid)
        .fetch_all(c)
        .await)
}

/// The notices of a contract, earliest first.
pub async fn notices_of_contract(
    conn: impl Into<Conn<'_>>,
    contract_uuid: Uuid,
) -> Result<Vec<RenewalNoticeRow>> {
    notices_where(conn, "contract_uuid", contract_uuid).await
}

/// The notices of an account's contracts, earliest first.
pub async fn notices_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<RenewalNoticeRow>> {
    notices_where(conn, "account_uuid", account_uuid).await
}
