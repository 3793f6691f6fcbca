//! Collections: each app's late-fee percent, the accounts exempt from late fees, and the late
//! fees charged (one per penalized bill).

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{
    billing::{InvoiceRow, INVOICE_COLUMNS},
    on_conn, on_tx, Conn, Result, Tx,
};

/// The app's late-fee percent as stored; none when the app charges no late fee.
pub async fn late_fee_percent(conn: impl Into<Conn<'_>>, app_uuid: Uuid) -> Result<Option<String>> {
    let sql = "SELECT percent FROM app_late_fee_settings WHERE app_uuid = $1";
    on_conn!(conn.into(), c => sqlx::query_scalar::<_, String>(sql)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// Sets the app's late-fee percent, or (none) turns late fees off.
pub async fn set_late_fee_percent(
    tx: &mut Tx,
    app_uuid: Uuid,
    percent: Option<&str>,
    now: DateTime<Utc>,
) -> Result<()> {
    match percent {
        Some(p) => {
            let sql = "INSERT INTO app_late_fee_settings (app_uuid, percent, updated_at) \
                VALUES ($1, $2, $3) ON CONFLICT (app_uuid) DO UPDATE \
                SET percent = excluded.percent, updated_at = excluded.updated_at";
            on_tx!(tx, c => sqlx::query(sql)
                .bind(app_uuid)
                .bind(p)
                .bind(now)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
        }
        None => {
            let sql = "DELETE FROM app_late_fee_settings WHERE app_uuid = $1";
            on_tx!(tx, c => sqlx::query(sql)
                .bind(app_uuid)
                .execute(c)
                .await
                .map(|r| r.rows_affected()))?;
        }
    }
    Ok(())
}

/// Whether the operator marked the account exempt from late fees.
pub async fn is_late_fee_exempt(conn: impl Into<Conn<'_>>, account_uuid: Uuid) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM late_fee_exemptions WHERE account_uuid = $1";
    let n = on_conn!(conn.into(), c => sqlx::query_scalar::<_, i64>(sql)
        .bind(account_uuid)
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}

/// Marks the account exempt from late fees, or clears the mark; answers whether it changed.
pub async fn set_late_fee_exempt(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    exempt: bool,
    now: DateTime<Utc>,
) -> Result<bool> {
    let changed = if exempt {
        let sql = "INSERT INTO late_fee_exemptions (account_uuid, app_uuid, marked_at) \
            VALUES ($1, $2, $3) ON CONFLICT (account_uuid) DO NOTHING";
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .bind(app_uuid)
            .bind(now)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?
    } else {
        let sql = "DELETE FROM late_fee_exemptions WHERE account_uuid = $1";
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?
    };
    Ok(changed > 0)
}

/// The account's bills past due that were issued before `before`, oldest first.
pub async fn past_due_before(
    tx: &mut Tx,
    account_uuid: Uuid,
    before: NaiveDate,
) -> Result<Vec<InvoiceRow>> {
    let sql = format!(
        "SELECT {INVOICE_COLUMNS} FROM invoices WHERE account_uuid = $1 AND status = 'past_due' \
         AND invoice_date < $2 ORDER BY invoice_date, number"
    );
    on_tx!(tx, c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(account_uuid)
        .bind(before)
        .fetch_all(c)
        .await)
}

/// Whether a late fee was charged on the bill already.
pub async fn is_penalized(tx: &mut Tx, invoice_uuid: Uuid) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM late_fees WHERE penalized_invoice_uuid = $1";
    let n = on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(invoice_uuid)
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}

/// Whether another bill of the account was issued after `invoice`'s due date.
pub async fn billed_since_due(tx: &mut Tx, invoice: &InvoiceRow) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM invoices WHERE account_uuid = $1 AND uuid <> $2 \
        AND invoice_date > $3";
    let n = on_tx!(tx, c => sqlx::query_scalar::<_, i64>(sql)
        .bind(invoice.account_uuid)
        .bind(invoice.uuid)
        .bind(invoice.payment_due_date)
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LateFeeRow {
    pub uuid: Uuid,
    pub account_uuid: Uuid,
    pub penalized_invoice_uuid: Uuid,
    pub charged_invoice_uuid: Uuid,
    pub base_cents: i64,
    pub percent: String,
    pub amount_cents: i64,
    pub created_at: DateTime<Utc>,
}

/// Records a late fee; the penalized bill's unique key refuses a second fee on it.
pub async fn insert_late_fee(tx: &mut Tx, f: &LateFeeRow) -> Result<()> {
    let sql = "INSERT INTO late_fees (uuid, account_uuid, penalized_invoice_uuid, \
        charged_invoice_uuid, base_cents, percent, amount_cents, created_at) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(f.uuid)
        .bind(f.account_uuid)
        .bind(f.penalized_invoice_uuid)
        .bind(f.charged_invoice_uuid)
        .bind(f.base_cents)
        .bind(&f.percent)
        .bind(f.amount_cents)
        .bind(f.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
