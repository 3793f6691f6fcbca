//! A deposit's life after it is asked for (the deposit itself is written with its credit
//! review, `store::credit_reviews`): waivers, interest accrued, instalments and refund credits
//! as lines of bills, and the bills whose payments earn it back.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_tx, Conn, Result, Tx};

/// Records the operator's waiver of a deposit still `required`; answers whether it was.
pub async fn waive(
    tx: &mut Tx,
    uuid: Uuid,
    waiver: &str,
    by: &str,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE deposits SET status = 'waived', waiver = $1, waived_by = $2, \
        waived_at = $3 WHERE uuid = $4 AND status = 'required'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(waiver)
        .bind(by)
        .bind(now)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}

/// The interest accrued so far is `interest_cents`, through `through`; `paid_cents` what is
/// held now (an instalment billed adds to it).
pub async fn set_accrued(
    tx: &mut Tx,
    uuid: Uuid,
    interest_cents: i64,
    through: NaiveDate,
    paid_cents: i64,
) -> Result<()> {
    let sql = "UPDATE deposits SET interest_cents = $1, interest_through = $2, paid_cents = $3 \
        WHERE uuid = $4";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(interest_cents)
        .bind(through)
        .bind(paid_cents)
        .bind(uuid)
        .execute(c)
        .await
        .map(|_| ()))
}

/// The deposit comes back (`refunded`) or is applied to the final bill (`applied`): what
/// comes back in all, deposit and interest, all of it still to be taken by bills.
pub async fn start_refund(
    tx: &mut Tx,
    uuid: Uuid,
    status: &str,
    reason: &str,
    refunded_cents: i64,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE deposits SET status = $1, refund_reason = $2, refunded_cents = $3, \
        refund_left_cents = $3, refunded_at = $4 WHERE uuid = $5 AND status = 'paid'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(reason)
        .bind(refunded_cents)
        .bind(now)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}

/// What no bill has taken of the refund yet is now `left_cents`.
pub async fn set_refund_left(tx: &mut Tx, uuid: Uuid, left_cents: i64) -> Result<()> {
    let sql = "UPDATE deposits SET refund_left_cents = $1 WHERE uuid = $2";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(left_cents)
        .bind(uuid)
        .execute(c)
        .await
        .map(|_| ()))
}

/// `cents` of what no bill took went back to the card the deposit was paid with.
pub async fn record_payout(tx: &mut Tx, uuid: Uuid, cents: i64, now: DateTime<Utc>) -> Result<()> {
    let sql = "UPDATE deposits SET paid_out_cents = paid_out_cents + $1, \
        refund_left_cents = refund_left_cents - $1, paid_out_at = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(cents)
        .bind(now)
        .bind(uuid)
        .execute(c)
        .await
        .map(|_| ()))
}

/// Marks a held deposit's refund as earned (the sandbox's simulation); answers whether the
/// account had a held deposit.
pub async fn set_refund_due(tx: &mut Tx, uuid: Uuid) -> Result<bool> {
    let sql = "UPDATE deposits SET refund_due = TRUE WHERE uuid = $1 AND status = 'paid'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DepositLineRow {
    pub uuid: Uuid,
    pub deposit_uuid: Uuid,
    pub account_uuid: Uuid,
    /// `instalment` or `refund`.
    pub kind: String,
    pub seq: i32,
    pub amount_cents: i64,
    pub invoice_uuid: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

const LINE_COLUMNS: &str =
    "uuid, deposit_uuid, account_uuid, kind, seq, amount_cents, invoice_uuid, created_at";

/// A line of the deposit: an instalment still to bill (`invoice_uuid` none), or a refund
/// credit on the bill `invoice_uuid`.
pub async fn insert_line(tx: &mut Tx, l: &DepositLineRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO deposit_lines ({LINE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(l.uuid)
        .bind(l.deposit_uuid)
        .bind(l.account_uuid)
        .bind(&l.kind)
        .bind(l.seq)
        .bind(l.amount_cents)
        .bind(l.invoice_uuid)
        .bind(l.created_at)
        .execute(c)
        .await
        .map(|_| ()))
}

/// The lines of a deposit, in order.
pub async fn lines_of_deposit(
    conn: impl Into<Conn<'_>>,
    deposit_uuid: Uuid,
) -> Result<Vec<DepositLineRow>> {
    let sql = format!(
        "SELECT {LINE_COLUMNS} FROM deposit_lines WHERE deposit_uuid = $1 ORDER BY kind, seq"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, DepositLineRow>(&sql)
        .bind(deposit_uuid)
        .fetch_all(c)
        .await)
}

/// The instalment line is billed on `invoice_uuid`.
pub async fn bill_line(tx: &mut Tx, uuid: Uuid, invoice_uuid: Uuid) -> Result<()> {
    let sql = "UPDATE deposit_lines SET invoice_uuid = $1 WHERE uuid = $2 AND invoice_uuid IS NULL";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(invoice_uuid)
        .bind(uuid)
        .execute(c)
        .await
        .map(|_| ()))
}

/// What decides whether a bill was paid on time.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct BillPaymentRow {
    pub payment_due_date: NaiveDate,
    pub paid_at: Option<DateTime<Utc>>,
}

/// The account's bills that count toward a deposit's refund, oldest first: every bill with
/// something to pay, neither voided nor a credit note.
pub async fn bills_paid(tx: &mut Tx, account_uuid: Uuid) -> Result<Vec<BillPaymentRow>> {
    let sql = "SELECT payment_due_date, paid_at FROM invoices \
        WHERE account_uuid = $1 AND status <> 'voided' AND total_cents > 0 \
        ORDER BY invoice_date, number";
    on_tx!(tx, c => sqlx::query_as::<_, BillPaymentRow>(sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// Whether the account has a bill past due now.
pub async fn has_past_due_bill(tx: &mut Tx, account_uuid: Uuid) -> Result<bool> {
    let sql = "SELECT COUNT(*) FROM invoices WHERE account_uuid = $1 AND status = 'past_due'";
    let n: i64 = on_tx!(tx, c => sqlx::query_scalar(sql)
        .bind(account_uuid)
        .fetch_one(c)
        .await)?;
    Ok(n > 0)
}
