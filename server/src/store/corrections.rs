//! Corrections of bills (the cancelled bill, its credit note and the bill issued in its
//! place) and the credits an overpayment leaves for the next bill.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{on_conn, on_tx, Conn, Result, Tx};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CorrectionRow {
    pub uuid: Uuid,
    pub account_uuid: Uuid,
    pub original_invoice_uuid: Uuid,
    pub credit_note_invoice_uuid: Uuid,
    pub reissued_invoice_uuid: Uuid,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "uuid, account_uuid, original_invoice_uuid, credit_note_invoice_uuid, \
    reissued_invoice_uuid, reason, created_at";

pub async fn insert_correction(tx: &mut Tx, c: &CorrectionRow) -> Result<()> {
    let sql =
        format!("INSERT INTO invoice_corrections ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)");
    on_tx!(tx, x => sqlx::query(&sql)
        .bind(c.uuid)
        .bind(c.account_uuid)
        .bind(c.original_invoice_uuid)
        .bind(c.credit_note_invoice_uuid)
        .bind(c.reissued_invoice_uuid)
        .bind(&c.reason)
        .bind(c.created_at)
        .execute(x)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Whether the invoice is a credit note.
pub async fn is_credit_note(conn: impl Into<Conn<'_>>, invoice_uuid: Uuid) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM invoice_corrections WHERE credit_note_invoice_uuid = $1";
    let n = on_conn!(conn.into(), c => sqlx::query_scalar::<_, i64>(sql)
        .bind(invoice_uuid)
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}

/// The account's corrections, newest first.
pub async fn corrections_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<CorrectionRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM invoice_corrections WHERE account_uuid = $1 \
         ORDER BY created_at DESC, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, CorrectionRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CreditRow {
    pub uuid: Uuid,
    pub account_uuid: Uuid,
    pub source_invoice_uuid: Uuid,
    pub amount_cents: i64,
    pub applied_invoice_uuid: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

const CREDIT_COLUMNS: &str =
    "uuid, account_uuid, source_invoice_uuid, amount_cents, applied_invoice_uuid, created_at";

pub async fn insert_credit(tx: &mut Tx, c: &CreditRow) -> Result<()> {
    let sql =
        format!("INSERT INTO account_credits ({CREDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)");
    on_tx!(tx, x => sqlx::query(&sql)
        .bind(c.uuid)
        .bind(c.account_uuid)
        .bind(c.source_invoice_uuid)
        .bind(c.amount_cents)
        .bind(c.applied_invoice_uuid)
        .bind(c.created_at)
        .execute(x)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The account's credits not applied to a bill yet, oldest first.
pub async fn unapplied_credits(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<CreditRow>> {
    let sql = format!(
        "SELECT {CREDIT_COLUMNS} FROM account_credits WHERE account_uuid = $1 \
         AND applied_invoice_uuid IS NULL ORDER BY created_at, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, CreditRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// The credit is a line of the bill `invoice_uuid`.
pub async fn apply_credit(tx: &mut Tx, credit_uuid: Uuid, invoice_uuid: Uuid) -> Result<()> {
    let sql = "UPDATE account_credits SET applied_invoice_uuid = $1 \
        WHERE uuid = $2 AND applied_invoice_uuid IS NULL";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(invoice_uuid)
        .bind(credit_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
