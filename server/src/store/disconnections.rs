//! Disconnection notices and what followed each (the utility's disconnection and
//! reconnection), the operator's extreme-weather emergency days, and deferred payment plans
//! with their instalments.

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{
    billing::{InvoiceRow, INVOICE_COLUMNS},
    on_conn, on_tx, Conn, Result, Tx,
};
use crate::domain::disconnection::{DisconnectionStatus, PaymentPlanStatus};

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DisconnectionRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub invoice_uuid: Uuid,
    pub amount_cents: i64,
    pub notice_date: NaiveDate,
    pub earliest_date: NaiveDate,
    pub status: DisconnectionStatus,
    pub email_uuid: Option<Uuid>,
    pub requested_at: Option<DateTime<Utc>>,
    pub disconnected_at: Option<DateTime<Utc>>,
    pub reconnect_requested_at: Option<DateTime<Utc>>,
    pub reconnected_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "uuid, app_uuid, account_uuid, location_uuid, invoice_uuid, amount_cents, \
    notice_date, earliest_date, status, email_uuid, requested_at, disconnected_at, \
    reconnect_requested_at, reconnected_at, created_at, updated_at";

pub async fn insert_disconnection(tx: &mut Tx, d: &DisconnectionRow) -> Result<()> {
    let placeholders: Vec<String> = (1..=16).map(|n| format!("${n}")).collect();
    let sql = format!(
        "INSERT INTO disconnections ({COLUMNS}) VALUES ({})",
        placeholders.join(", ")
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(d.uuid)
        .bind(d.app_uuid)
        .bind(d.account_uuid)
        .bind(d.location_uuid)
        .bind(d.invoice_uuid)
        .bind(d.amount_cents)
        .bind(d.notice_date)
        .bind(d.earliest_date)
        .bind(d.status)
        .bind(d.email_uuid)
        .bind(d.requested_at)
        .bind(d.disconnected_at)
        .bind(d.reconnect_requested_at)
        .bind(d.reconnected_at)
        .bind(d.created_at)
        .bind(d.updated_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Writes where a notice stands now (its status, dates and e-mail).
pub async fn update_disconnection(tx: &mut Tx, d: &DisconnectionRow) -> Result<()> {
    let sql = "UPDATE disconnections SET status = $1, earliest_date = $2, email_uuid = $3, \
        requested_at = $4, disconnected_at = $5, reconnect_requested_at = $6, \
        reconnected_at = $7, updated_at = $8 WHERE uuid = $9";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(d.status)
        .bind(d.earliest_date)
        .bind(d.email_uuid)
        .bind(d.requested_at)
        .bind(d.disconnected_at)
        .bind(d.reconnect_requested_at)
        .bind(d.reconnected_at)
        .bind(d.updated_at)
        .bind(d.uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

pub async fn disconnection(
    conn: impl Into<Conn<'_>>,
    uuid: Uuid,
) -> Result<Option<DisconnectionRow>> {
    let sql = format!("SELECT {COLUMNS} FROM disconnections WHERE uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, DisconnectionRow>(&sql)
        .bind(uuid)
        .fetch_optional(c)
        .await)
}

/// The notice of a bill, if it was sent one.
pub async fn disconnection_of_invoice(
    conn: impl Into<Conn<'_>>,
    invoice_uuid: Uuid,
) -> Result<Option<DisconnectionRow>> {
    let sql = format!("SELECT {COLUMNS} FROM disconnections WHERE invoice_uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, DisconnectionRow>(&sql)
        .bind(invoice_uuid)
        .fetch_optional(c)
        .await)
}

/// The account's notices, newest first.
pub async fn disconnections_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<DisconnectionRow>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM disconnections WHERE account_uuid = $1 \
         ORDER BY created_at DESC, notice_date DESC, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, DisconnectionRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// The account's bills still to be paid (open or past due), oldest first.
pub async fn unpaid_invoices(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<InvoiceRow>> {
    let sql = format!(
        "SELECT {INVOICE_COLUMNS} FROM invoices WHERE account_uuid = $1 \
         AND status IN ('open', 'past_due') ORDER BY invoice_date, number"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, InvoiceRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// The operator's extreme-weather emergency days with their notes, in order.
pub async fn weather_emergencies(conn: impl Into<Conn<'_>>) -> Result<Vec<(NaiveDate, String)>> {
    let sql = "SELECT day, note FROM weather_emergencies ORDER BY day";
    on_conn!(conn.into(), c => sqlx::query_as::<_, (NaiveDate, String)>(sql)
        .fetch_all(c)
        .await)
}

/// Records an emergency day (its note replaced when it was recorded already).
pub async fn add_weather_emergency(
    tx: &mut Tx,
    day: NaiveDate,
    note: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    let sql = "INSERT INTO weather_emergencies (day, note, created_at) VALUES ($1, $2, $3) \
        ON CONFLICT (day) DO UPDATE SET note = excluded.note";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(day)
        .bind(note)
        .bind(now)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Removes an emergency day; answers whether it was there.
pub async fn remove_weather_emergency(tx: &mut Tx, day: NaiveDate) -> Result<bool> {
    let sql = "DELETE FROM weather_emergencies WHERE day = $1";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(day)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PaymentPlanRow {
    pub uuid: Uuid,
    pub app_uuid: Uuid,
    pub account_uuid: Uuid,
    pub status: PaymentPlanStatus,
    pub reason: String,
    pub total_cents: i64,
    pub months: i32,
    pub created_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

const PLAN_COLUMNS: &str =
    "uuid, app_uuid, account_uuid, status, reason, total_cents, months, created_at, ended_at";

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct InstalmentRow {
    pub plan_uuid: Uuid,
    pub seq: i32,
    pub amount_cents: i64,
    pub invoice_uuid: Option<Uuid>,
}

/// Stores a plan and its instalments, none billed yet.
pub async fn insert_plan(tx: &mut Tx, p: &PaymentPlanRow, amounts: &[i64]) -> Result<()> {
    let sql = format!(
        "INSERT INTO payment_plans ({PLAN_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    );
    on_tx!(tx, c => sqlx::query(&sql)
        .bind(p.uuid)
        .bind(p.app_uuid)
        .bind(p.account_uuid)
        .bind(p.status)
        .bind(&p.reason)
        .bind(p.total_cents)
        .bind(p.months)
        .bind(p.created_at)
        .bind(p.ended_at)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    for (i, amount) in amounts.iter().enumerate() {
        let seq = i32::try_from(i + 1).unwrap_or(i32::MAX);
        let sql = "INSERT INTO payment_plan_instalments (plan_uuid, seq, amount_cents) \
            VALUES ($1, $2, $3)";
        on_tx!(tx, c => sqlx::query(sql)
            .bind(p.uuid)
            .bind(seq)
            .bind(*amount)
            .execute(c)
            .await
            .map(|r| r.rows_affected()))?;
    }
    Ok(())
}

/// The account's plans, newest first.
pub async fn plans_of_account(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<PaymentPlanRow>> {
    let sql = format!(
        "SELECT {PLAN_COLUMNS} FROM payment_plans WHERE account_uuid = $1 \
         ORDER BY created_at DESC, uuid"
    );
    on_conn!(conn.into(), c => sqlx::query_as::<_, PaymentPlanRow>(&sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

pub async fn plan(conn: impl Into<Conn<'_>>, uuid: Uuid) -> Result<Option<PaymentPlanRow>> {
    let sql = format!("SELECT {PLAN_COLUMNS} FROM payment_plans WHERE uuid = $1");
    on_conn!(conn.into(), c => sqlx::query_as::<_, PaymentPlanRow>(&sql)
        .bind(uuid)
        .fetch_optional(c)
        .await)
}

pub async fn instalments(conn: impl Into<Conn<'_>>, plan_uuid: Uuid) -> Result<Vec<InstalmentRow>> {
    let sql = "SELECT plan_uuid, seq, amount_cents, invoice_uuid FROM payment_plan_instalments \
        WHERE plan_uuid = $1 ORDER BY seq";
    on_conn!(conn.into(), c => sqlx::query_as::<_, InstalmentRow>(sql)
        .bind(plan_uuid)
        .fetch_all(c)
        .await)
}

/// The instalments a bill carries.
pub async fn instalments_of_invoice(
    conn: impl Into<Conn<'_>>,
    invoice_uuid: Uuid,
) -> Result<Vec<InstalmentRow>> {
    let sql = "SELECT plan_uuid, seq, amount_cents, invoice_uuid FROM payment_plan_instalments \
        WHERE invoice_uuid = $1 ORDER BY plan_uuid, seq";
    on_conn!(conn.into(), c => sqlx::query_as::<_, InstalmentRow>(sql)
        .bind(invoice_uuid)
        .fetch_all(c)
        .await)
}

/// An instalment not billed yet, with the status of its plan.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnbilledRow {
    pub plan_uuid: Uuid,
    pub seq: i32,
    pub amount_cents: i64,
    pub months: i32,
    pub status: PaymentPlanStatus,
}

/// The account's instalments not billed yet, of its active plan and of plans that ended
/// unpaid, in order.
pub async fn unbilled_instalments(
    conn: impl Into<Conn<'_>>,
    account_uuid: Uuid,
) -> Result<Vec<UnbilledRow>> {
    let sql = "SELECT i.plan_uuid, i.seq, i.amount_cents, p.months, p.status \
        FROM payment_plan_instalments i JOIN payment_plans p ON p.uuid = i.plan_uuid \
        WHERE p.account_uuid = $1 AND p.status IN ('active', 'defaulted') \
        AND i.invoice_uuid IS NULL ORDER BY p.created_at, i.plan_uuid, i.seq";
    on_conn!(conn.into(), c => sqlx::query_as::<_, UnbilledRow>(sql)
        .bind(account_uuid)
        .fetch_all(c)
        .await)
}

/// The instalment becomes a line of the bill `invoice_uuid`.
pub async fn bill_instalment(
    tx: &mut Tx,
    plan_uuid: Uuid,
    seq: i32,
    invoice_uuid: Uuid,
) -> Result<()> {
    let sql = "UPDATE payment_plan_instalments SET invoice_uuid = $1 \
        WHERE plan_uuid = $2 AND seq = $3 AND invoice_uuid IS NULL";
    on_tx!(tx, c => sqlx::query(sql)
        .bind(invoice_uuid)
        .bind(plan_uuid)
        .bind(seq)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Ends a plan (completed or defaulted).
pub async fn end_plan(
    tx: &mut Tx,
    plan_uuid: Uuid,
    status: PaymentPlanStatus,
    now: DateTime<Utc>,
) -> Result<bool> {
    let sql = "UPDATE payment_plans SET status = $1, ended_at = $2 \
        WHERE uuid = $3 AND status = 'active'";
    let n = on_tx!(tx, c => sqlx::query(sql)
        .bind(status)
        .bind(now)
        .bind(plan_uuid)
        .execute(c)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(n > 0)
}
