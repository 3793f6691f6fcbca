//! Billing: daily usage per location, meter reads, invoices with their status history, and
//! payment attempts.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{on_conn, on_db, on_tx, Conn, Db, Result, Tx};
use crate::domain::billing::{InvoiceStatus, PaymentInitiator, PaymentStatus};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UsageDayRow {
    pub day: NaiveDate,
    pub consumption_kwh: String,
    pub generation_kwh: String,
    pub vehicle_kwh: String,
    pub eligible_vehicle_kwh: String,
}

/// Stores days of usage; a day already stored keeps its figures.
pub async fn insert_usage_days(
    tx: &mut Tx,
    location_uuid: Uuid,
    days: &[UsageDayRow],
) -> Result<()> {
    // Several rows per statement: a year of history is one round trip per hundred days.
    for chunk in days.chunks(100) {
        let values: Vec<String> = (0..chunk.len())
            .map(|i| {
                let b = i * 6;
                format!(
                    "(${}, ${}, ${}, ${}, ${}, ${})",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO usage_days (location_uuid, day, consumption_kwh, generation_kwh, \
             vehicle_kwh, eligible_vehicle_kwh) VALUES {} \
             ON CONFLICT (location_uuid, day) DO NOTHING",
            values.join(", ")
        );
        on_tx!(tx, c => {
            let mut q = sqlx::query(&sql);
            for d in chunk {
                q = q
                    .bind(location_uuid)
                    .bind(d.day)
                    .bind(&d.consumption_kwh)
                    .bind(&d.generation_kwh)
                    .bind(&d.vehicle_kwh)
                    .bind(&d.eligible_vehicle_kwh);
            }
            q.execute(c).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(())
}

const USAGE_RANGE: &str = "SELECT day, consumption_kwh, generation_kwh, vehicle_kwh, \
    eligible_vehicle_kwh FROM usage_days WHERE location_uuid = $1 AND day >= $2 AND day <= $3 \
    ORDER BY day";

/// The stored days from `from` to `to`, both included.
pub async fn usage_days(
    conn: impl Into<Conn<'_>>,
    location_uuid: Uuid,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<UsageDayRow>> {
    on_conn!(conn.into(), c => sqlx::query_as::<_, UsageDayRow>(USAGE_RANGE)
        .bind(location_uuid)
        .bind(from)
        .bind(to)
        .fetch_all(c)
        .await)
}

/// The first and last day with usage.
pub async fn usage_bounds(db: &Db, location_uuid: Uuid) -> Result<Option<(NaiveDate, NaiveDate)>> {
    let first = "SELECT day FROM usage_days WHERE location_uuid = $1 ORDER BY day LIMIT 1";
    let last = "SELECT day FROM usage_days WHERE location_uuid = $1 ORDER BY day DESC LIMIT 1";
    let first: Option<NaiveDate> = on_db!(db, c => sqlx::query_scalar(first)
        .bind(location_uuid)
        .fetch_optional(c)
        .await)?;
    let last: Option<NaiveDate> = on_db!(db, c => sqlx::query_scalar(last)
        .bind(location_uuid)
        .fetch_optional(c)
        .await)?;
    Ok(first.zip(last))
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MeterReadRow {
    pub uuid: Uuid,
    pub location_uuid: Uuid,
    pub read_date: NaiveDate,
    pub start_date: NaiveDate,
    pub end_date: NaiveDate,
    pub kwh: String,
    pub generation_kwh: String,
    pub read_type: String,
    pub created_at: DateTime<Utc>,
}

const READ_COLUMNS: &str =
    "uuid, location_uuid, read_date, start_date, end_date, kwh, generation_kwh, read_type, created_at";

/// Stores a read; false when the location already has a read ending that day.
pub async fn insert_meter_read(tx: &mut Tx, r: &MeterReadRow) -> Result<bool> {
    let sql = format!(
        "INSERT INTO meter_reads ({READ_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (location_uuid, end_date) DO NOTHING"
    );
    let n = on_tx!(tx, c => sqlx::query(&sql)
        .bind(r.uuid)
        .bind(r.location_uuid)
        .bind(r.read_date)
        .bind(r.start_date)
        .bind(r.end_date)
        .bind(&r.kwh)
        .bind(&r.generation_kwh)
        .bind(&r.read_type)
        .bind(r.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

pub async fn latest_meter_read(
    conn: impl Into<Conn<'_>>,
    location_uuid: Uuid,
) -> Result<Option<MeterReadRow>> {
    let sql = format!(
        "SELECT {READ_COLUMNS} FROM meter_reads WHERE location_uuid = $1 \
         ORDER BY end_date DESC LIMIT 1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, MeterReadRow>(&sql)
        .bind(location_uuid)
        .fetch_optional(c)
        .await)
}

/// The location's reads that cover any day from `from` to `to`, oldest first.
pub async fn meter_reads_within(
    conn: impl Into<Conn<'_>>,
    location_uuid: Uuid,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<MeterReadRow>> {
    let sql = format!(
        "SELECT {READ_COLUMNS} FROM meter_reads WHERE location_uuid = $1 \
         AND end_date >= $2 AND start_date <= $3 ORDER BY end_date"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, MeterReadRow>(&sql)
        .bind(location_uuid)
        .bind(from)
        .bind(to)
        .fetch_all(c)
        .await)
}

/// A page of the location's reads, newest first.
pub async fn meter_reads(
    db: &Db,
    location_uuid: Uuid,
    limit: i64,
    offset: i64,
) -> Result<Vec<MeterReadRow>> {
    let sql = format!(
        "SELECT {READ_COLUMNS} FROM meter_reads WHERE location_uuid = $1 \
         ORDER BY end_date DESC LIMIT $2 OFFSET $3"
    );
    on_db!(db, c => sqlx::query_as::<_, MeterReadRow>(&sql)
        .bind(location_uuid)
        .bind(limit)
        .bind(offset)
        .fetch_all(c)
        .await)
}

/// The read dates of an account's locations, newest first: `(location, read_date)`.
pub async fn read_dates_of_account(db: &Db, account_uuid: Uuid) -> Result<Vec<(Uuid, NaiveDate)>> {
    let sql = "SELECT location_uuid, read_date FROM meter_reads WHERE location_uuid IN \
        (SELECT uuid FROM locations WHERE account_uuid = $1) ORDER BY read_date DESC";
    on_db!(db, c => sqlx::query_as::<_, (Uuid, NaiveDate)>(sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct InvoiceRow {
    pub uuid: Uuid,
    pub number: String,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub meter_read_uuid: Uuid,
    pub invoice_date: NaiveDate,
    pub payment_due_date: NaiveDate,
    pub billing_period_start: NaiveDate,
    pub billing_period_end: NaiveDate,
    pub total_cents: i64,
    pub total_kwh: String,
    pub generation_kwh: String,
    /// JSON array of the charge groups.
    pub charges: String,
    pub status: InvoiceStatus,
    pub paid_at: Option<DateTime<Utc>>,
    pub voided_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub(crate) const INVOICE_COLUMNS: &str = "uuid, number, app_uuid, account_uuid, location_uuid, \
    meter_read_uuid, invoice_date, payment_due_date, billing_period_start, billing_period_end, \
    total_cents, total_kwh, generation_kwh, charges, status, paid_at, voided_at, created_at, \
    updated_at";

/// Stores a new invoice and the first row of its status history.
pub async fn insert_invoice(tx: &mut Tx, i: &InvoiceRow) -> Result<()> {
    let placeholders: Vec<String> = (1..=19).map(|n| format!("${n}")).collect();
    let sql = format!(
        "INSERT INTO invoices ({INVOICE_COLUMNS}) VALUES ({})",
        placeholders.join(", ")
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(i.uuid)
        .bind(&i.number)
        .bind(i.app_uuid)
        .bind(i.account_uuid)
        .bind(i.location_uuid)
        .bind(i.meter_read_uuid)
        .bind(i.invoice_date)
        .bind(i.payment_due_date)
        .bind(i.billing_period_start)
        .bind(i.billing_period_end)
        .bind(i.total_cents)
        .bind(&i.total_kwh)
        .bind(&i.generation_kwh)
        .bind(&i.charges)
        .bind(i.status)
        .bind(i.paid_at)
        .bind(i.voided_at)
        .bind(i.created_at)
        .bind(i.updated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    insert_status_history(tx, i.uuid, i.status, i.created_at).await
}

async fn insert_status_history(
    tx: &mut Tx,
    invoice_uuid: Uuid,
    status: InvoiceStatus,
    at: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO invoice_status_history (invoice_uuid, status, changed_at) \
        VALUES ($1, $2, $3)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(invoice_uuid)
        .bind(status)
        .bind(at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Moves an invoice to `status` (with `paid_at` when paid) and historizes the change.
pub async fn set_invoice_status(
    tx: &mut Tx,
    invoice_uuid: Uuid,
    status: InvoiceStatus,
    paid_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "UPDATE invoices SET status = $1, paid_at = COALESCE($2, paid_at), updated_at = $3 \
        WHERE uuid = $4";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(paid_at)
        .bind(now)
        .bind(invoice_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    insert_status_history(tx, invoice_uuid, status, now).await
}

/// Cancels an invoice: voided, its number kept, the change historized.
pub async fn void_invoice(tx: &mut Tx, invoice_uuid: Uuid, now: DateTime<Utc>) -> Result<()> {
    let sql = "UPDATE invoices SET status = 'voided', voided_at = $1, updated_at = $1 \
        WHERE uuid = $2";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(now)
        .bind(invoice_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    insert_status_history(tx, invoice_uuid, InvoiceStatus::Voided, now).await
}

/// How many invoices exist (benchmarks and operations).
pub async fn count_invoices(db: &Db) -> Result<i64> {
    on_db!(db, c => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM invoices")
        .fetch_one(c)
        .await)
}

/// A page of the account's invoices, newest first.
pub async fn invoices_of_account(
    db: &Db,
    account_uuid: Uuid,
    limit: i64,
    offset: i64,
) -> Result<Vec<InvoiceRow>> {
    let sql = format!(
        "SELECT {INVOICE_COLUMNS} FROM invoices WHERE account_uuid = $1 \
         ORDER BY invoice_date DESC, number DESC LIMIT $2 OFFSET $3"
    );
    on_db!(db, c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(account_uuid)
        .bind(limit)
        .bind(offset)
        .fetch_all(c)
        .await)
}

pub async fn invoice_by_number(
    db: &Db,
    account_uuid: Uuid,
    number: &str,
) -> Result<Option<InvoiceRow>> {
    let sql =
        format!("SELECT {INVOICE_COLUMNS} FROM invoices WHERE account_uuid = $1 AND number = $2");
    on_db!(db, c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(account_uuid)
        .bind(number)
        .fetch_optional(c)
        .await)
}

pub async fn invoice(conn: impl Into<Conn<'_>>, invoice_uuid: Uuid) -> Result<Option<InvoiceRow>> {
    let sql = format!("SELECT {INVOICE_COLUMNS} FROM invoices WHERE uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(invoice_uuid)
        .fetch_optional(c)
        .await)
}

/// The account's newest invoice that is still to be paid.
pub async fn latest_unpaid_invoice(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Option<InvoiceRow>> {
    let sql = format!(
        "SELECT {INVOICE_COLUMNS} FROM invoices WHERE account_uuid = $1 \
         AND status IN ('open', 'past_due') ORDER BY invoice_date DESC, number DESC LIMIT 1"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PaymentRow {
    pub uuid: Uuid,
    pub invoice_uuid: Uuid,
    pub account_uuid: Uuid,
    pub amount_cents: i64,
    pub status: PaymentStatus,
    pub initiated_by: PaymentInitiator,
    pub failure_code: Option<String>,
    pub processor_payment_id: Option<String>,
    pub attempted_at: DateTime<Utc>,
    /// How much of a succeeded payment was refunded since (by the operator or the processor).
    pub refunded_cents: i64,
    /// When the cardholder disputed it with their bank, as the processor reported.
    pub disputed_at: Option<DateTime<Utc>>,
}

const INSERTED_PAYMENT_COLUMNS: &str = "uuid, invoice_uuid, account_uuid, amount_cents, status, \
    initiated_by, failure_code, processor_payment_id, attempted_at";

const PAYMENT_COLUMNS: &str = "uuid, invoice_uuid, account_uuid, amount_cents, status, \
    initiated_by, failure_code, processor_payment_id, attempted_at, refunded_cents, disputed_at";

pub async fn insert_payment(tx: &mut Tx, p: &PaymentRow) -> Result<()> {
    let sql = format!(
        "INSERT INTO invoice_payments ({INSERTED_PAYMENT_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(p.uuid)
        .bind(p.invoice_uuid)
        .bind(p.account_uuid)
        .bind(p.amount_cents)
        .bind(p.status)
        .bind(p.initiated_by)
        .bind(&p.failure_code)
        .bind(&p.processor_payment_id)
        .bind(p.attempted_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

fn payments_sql() -> String {
    format!(
        "SELECT {PAYMENT_COLUMNS} FROM invoice_payments WHERE invoice_uuid = $1 \
         ORDER BY attempted_at, uuid"
    )
}

/// An invoice's payment attempts, oldest first.
pub async fn payments_of_invoice(
    conn: impl Into<Conn<'_>>,
    invoice_uuid: Uuid,
) -> Result<Vec<PaymentRow>> {
    let sql = payments_sql();
    on_conn!(conn.into(), c => sqlx::query_as::<_, PaymentRow>(&sql)
        .bind(invoice_uuid)
        .fetch_all(c)
        .await)
}

/// The account's payment attempts, newest first, at most `limit`.
pub async fn payments_of_account(
    db: &Db,
    account_uuid: Uuid,
    limit: i64,
) -> Result<Vec<PaymentRow>> {
    let sql = format!(
        "SELECT {PAYMENT_COLUMNS} FROM invoice_payments WHERE account_uuid = $1 \
         ORDER BY attempted_at DESC, uuid DESC LIMIT $2"
    );
    on_db!(db, c => sqlx::query_as::<_, PaymentRow>(&sql)
        .bind(account_uuid)
        .bind(limit)
        .fetch_all(c)
        .await)
}

/// The newest payment of the app's accounts that the processor knows by `processor_payment_id`,
/// locked for the change a webhook reports (read in `tx`).
pub async fn payment_by_processor_id(
    tx: &mut Tx,
    app_uuid: Uuid,
    processor_payment_id: &str,
) -> Result<Option<PaymentRow>> {
    let sql = format!(
        "SELECT {} FROM invoice_payments p WHERE p.processor_payment_id = $1 \
         AND p.account_uuid IN (SELECT uuid FROM accounts WHERE app_uuid = $2) \
         ORDER BY p.attempted_at DESC, p.uuid DESC LIMIT 1",
        PAYMENT_COLUMNS
            .split(", ")
            .map(|c| format!("p.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    on_tx!(tx, c => sqlx::query_as::<_, PaymentRow>(&sql)
        .bind(processor_payment_id)
        .bind(app_uuid)
        .fetch_optional(c)
        .await)
}

/// One payment of an account.
pub async fn payment_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
    payment_uuid: Uuid,
) -> Result<Option<PaymentRow>> {
    let sql = format!(
        "SELECT {PAYMENT_COLUMNS} FROM invoice_payments WHERE uuid = $1 AND account_uuid = $2"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, PaymentRow>(&sql)
        .bind(payment_uuid)
        .bind(account_uuid)
        .fetch_optional(c)
        .await)
}

/// Settles a payment's outcome as the processor reported it later (a payment that needed the
/// customer, or one the processor failed after all).
pub async fn set_payment_outcome(
    tx: &mut Tx,
    payment_uuid: Uuid,
    status: PaymentStatus,
    failure_code: Option<&str>,
) -> Result<()> {
    let sql = "UPDATE invoice_payments SET status = $1, failure_code = $2 WHERE uuid = $3";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(failure_code)
        .bind(payment_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Marks a payment disputed (once: false when it already was).
pub async fn set_payment_disputed(
    tx: &mut Tx,
    payment_uuid: Uuid,
    at: DateTime<Utc>,
) -> Result<bool> {
    let sql =
        "UPDATE invoice_payments SET disputed_at = $1 WHERE uuid = $2 AND disputed_at IS NULL";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(at)
        .bind(payment_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

/// A refund of (part of) a payment.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RefundRow {
    pub uuid: Uuid,
    pub payment_uuid: Uuid,
    pub account_uuid: Uuid,
    pub amount_cents: i64,
    pub processor_refund_id: Option<String>,
    /// `operator` or `processor`.
    pub source: String,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// Records a refund and adds it to its payment's refunded total.
pub async fn insert_refund(tx: &mut Tx, r: &RefundRow) -> Result<()> {
    let sql = "INSERT INTO payment_refunds (uuid, payment_uuid, account_uuid, amount_cents, \
        processor_refund_id, source, reason, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(r.uuid)
        .bind(r.payment_uuid)
        .bind(r.account_uuid)
        .bind(r.amount_cents)
        .bind(&r.processor_refund_id)
        .bind(&r.source)
        .bind(&r.reason)
        .bind(r.created_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    let sql = "UPDATE invoice_payments SET refunded_cents = refunded_cents + $1 WHERE uuid = $2";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(r.amount_cents)
        .bind(r.payment_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The refunds of an account's payments, oldest first.
pub async fn refunds_of_account(db: &Db, account_uuid: Uuid) -> Result<Vec<RefundRow>> {
    let sql = "SELECT uuid, payment_uuid, account_uuid, amount_cents, processor_refund_id, \
        source, reason, created_at FROM payment_refunds WHERE account_uuid = $1 \
        ORDER BY created_at, uuid";
    on_db!(db, c => sqlx::query_as::<_, RefundRow>(sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// The refunds of an invoice's payments, oldest first.
pub async fn refunds_of_invoice(db: &Db, invoice_uuid: Uuid) -> Result<Vec<RefundRow>> {
    let sql = "SELECT r.uuid, r.payment_uuid, r.account_uuid, r.amount_cents, \
        r.processor_refund_id, r.source, r.reason, r.created_at FROM payment_refunds r \
        JOIN invoice_payments p ON p.uuid = r.payment_uuid WHERE p.invoice_uuid = $1 \
        ORDER BY r.created_at, r.uuid";
    on_db!(db, c => sqlx::query_as::<_, RefundRow>(sql)
        .bind(invoice_uuid)
        .fetch_all(c)
        .await)
}

/// The billing jobs of an account (meter reads, auto-pay, past-due checks).
pub const BILLING_JOB_KINDS: [&str; 3] = [
    crate::domain::jobs::JobKind::MeterRead.as_str(),
    crate::domain::jobs::JobKind::AutoPay.as_str(),
    crate::domain::jobs::JobKind::PastDue.as_str(),
];

/// Sandbox reset of an account's billing: payments, invoices, reads and usage of its
/// locations. Called before the locations themselves go.
pub async fn delete_billing_of_account(tx: &mut Tx, account_uuid: Uuid) -> Result<()> {
    for sql in [
        "DELETE FROM deposit_lines WHERE account_uuid = $1",
        "DELETE FROM late_fees WHERE account_uuid = $1",
        "DELETE FROM disconnections WHERE account_uuid = $1",
        "DELETE FROM account_credits WHERE account_uuid = $1",
        "DELETE FROM invoice_corrections WHERE account_uuid = $1",
        "DELETE FROM payment_plan_instalments WHERE plan_uuid IN \
            (SELECT uuid FROM payment_plans WHERE account_uuid = $1)",
        "DELETE FROM payment_plans WHERE account_uuid = $1",
        "DELETE FROM payment_refunds WHERE account_uuid = $1",
        "DELETE FROM invoice_payments WHERE account_uuid = $1",
        "DELETE FROM invoice_status_history WHERE invoice_uuid IN \
            (SELECT uuid FROM invoices WHERE account_uuid = $1)",
        "DELETE FROM invoices WHERE account_uuid = $1",
        "DELETE FROM meter_reads WHERE location_uuid IN \
            (SELECT uuid FROM locations WHERE account_uuid = $1)",
        "DELETE FROM usage_days WHERE location_uuid IN \
            (SELECT uuid FROM locations WHERE account_uuid = $1)",
    ] {
        on_tx!(tx, c => sqlx::query(sql)
            .bind(account_uuid)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
    }
    Ok(())
}
