//! Disconnection for non-payment and deferred payment plans, on the account's clock.
//!
//! The day a bill turns past due (`invoices::past_due`) it is sent a written disconnection
//! notice (`issue_notice`: the e-mail with the notice as a PDF, `account.disconnection_notice_sent`)
//! and the notice's date is scheduled. On that date (`disconnect_due`) the utility is asked to
//! disconnect (`location.disconnection_requested`) unless the bill was paid or taken over by a
//! payment plan, or the day is one the rules forbid (it then waits for the next allowed day).
//! The utility gateway carries the order out: the sandbox's simulator an hour later
//! (`complete_service_order`, `location.disconnected`), the live worklist when the operator
//! records it. Once nothing is past due any more (`reconnect_if_settled`, after a payment or a
//! plan) the utility is asked to reconnect (`location.reconnection_requested`, then
//! `location.reconnected`).
//!
//! A payment plan (`accept_plan`) takes the account's unpaid bills over (each settled by a
//! payment of `initiated_by: payment_plan`), and the billing cycle bills one instalment on
//! each following bill (`plan_lines`). A bill with an instalment that turns past due ends the
//! plan (`instalment_missed`): what was not billed yet is due on the next bill. The operator
//! keeps the extreme-weather emergency days (`set_weather_emergency`).

mod notice;
mod orders;
mod payment_plans;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

use super::audit::{self, Actor};
pub use crate::adapters::utility::ServiceOrderPayload;
use crate::{
    adapters::utility::UtilityGateway,
    clock::{AccountClock, Clock},
    domain::{
        billing::InvoiceStatus,
        disconnection::{plan_owed, DisconnectionCalendar, PaymentPlanStatus, PlanReason},
        events::Event,
    },
    store::{self, apps::AppRow, billing::InvoiceRow, events::NewEvent, Db, Tx},
};
pub use notice::{issue_notice, notices, Notice};
pub use orders::{
    complete_service_order, disconnect_due, reconnect_if_settled, record_utility_done,
    request_disconnection,
};
pub use payment_plans::{
    accept_plan, after_payment, instalment_missed, mark_billed, plan_lines, plan_overview,
    PlanOffer, PlanOverview, PlanRefused,
};

/// The market hour at which a disconnection is asked for on its day.
const DISCONNECT_HOUR: u32 = 8;

/// The days no disconnection happens on, as stored now.
pub async fn calendar(conn: &mut Tx) -> store::Result<DisconnectionCalendar> {
    let holidays = store::market::federal_holidays(&mut *conn).await?;
    let emergencies = store::disconnections::weather_emergencies(&mut *conn).await?;
    Ok(DisconnectionCalendar::new(
        holidays,
        emergencies.into_iter().map(|(d, _)| d),
    ))
}

async fn gateway(app: &AppRow) -> UtilityGateway {
    UtilityGateway::for_environment(app.environment_kind())
}

/// Writes the app's event `e`, in `tx`.
async fn record(tx: &mut Tx, app: &AppRow, e: &Event, now: DateTime<Utc>) -> store::Result<()> {
    store::events::insert_event(tx, &NewEvent::of(app.uuid, e, now)).await?;
    Ok(())
}

/// Notices sent to the account in the 12 months before `today`.
async fn notices_last_year(
    tx: &mut Tx,
    account_uuid: Uuid,
    today: NaiveDate,
) -> store::Result<usize> {
    let since = today - Duration::days(365);
    Ok(
        store::disconnections::disconnections_of_account(&mut *tx, account_uuid)
            .await?
            .iter()
            .filter(|d| d.notice_date > since)
            .count(),
    )
}

/// The payment plan the account is owed if it asks now, and why; none when it has nothing
/// unpaid, a plan running, or too many notices this year outside an emergency.
async fn owed_plan(
    tx: &mut Tx,
    clock: &AccountClock,
    account_uuid: Uuid,
) -> store::Result<(Option<PlanReason>, Vec<InvoiceRow>)> {
    let unpaid = store::disconnections::unpaid_invoices(&mut *tx, account_uuid).await?;
    let unpaid_cents: i64 = unpaid.iter().map(|i| i.total_cents).sum();
    let active = store::disconnections::plans_of_account(&mut *tx, account_uuid)
        .await?
        .iter()
        .any(|p| p.status == PaymentPlanStatus::Active);
    // A plan's instalments ride on the following bills: once service has ended there are
    // none, and what is owed is arranged with the provider (`final_bill_notice`).
    if !served(tx, account_uuid).await? {
        return Ok((None, unpaid));
    }
    let today = clock.today();
    let notices = notices_last_year(tx, account_uuid, today).await?;
    let emergency = calendar(tx).await?.is_emergency(today);
    Ok((plan_owed(unpaid_cents, active, notices, emergency), unpaid))
}

/// Whether a location of the account is served (service started and not ended; a location
/// disconnected for non-payment still is).
async fn served(tx: &mut Tx, account_uuid: Uuid) -> store::Result<bool> {
    Ok(
        store::enrollment::locations_of_account(&mut *tx, account_uuid)
            .await?
            .iter()
            .any(|l| l.is_service_active),
    )
}

async fn past_due_cents(tx: &mut Tx, account_uuid: Uuid) -> store::Result<i64> {
    Ok(
        store::disconnections::unpaid_invoices(&mut *tx, account_uuid)
            .await?
            .iter()
            .filter(|i| i.status == InvoiceStatus::PastDue)
            .map(|i| i.total_cents)
            .sum(),
    )
}

/// The extreme-weather emergency days, in order.
pub async fn weather_emergencies(db: &Db) -> store::Result<Vec<(NaiveDate, String)>> {
    store::disconnections::weather_emergencies(db).await
}

/// The operator records (`on`) or removes an extreme-weather emergency day, audited. No
/// disconnection happens on such a day, and everyone asking is owed a payment plan.
pub async fn set_weather_emergency(
    db: &Db,
    clock: &Clock,
    actor: &Actor,
    day: NaiveDate,
    note: &str,
    on: bool,
) -> store::Result<bool> {
    let mut tx = db.begin().await?;
    let changed = if on {
        store::disconnections::add_weather_emergency(&mut tx, day, note.trim(), clock.now())
            .await?;
        true
    } else {
        store::disconnections::remove_weather_emergency(&mut tx, day).await?
    };
    if changed {
        audit::record(
            &mut tx,
            actor,
            if on {
                "market.weather_emergency_added"
            } else {
                "market.weather_emergency_removed"
            },
            &format!("weather_emergency:{day}"),
            serde_json::json!({ "day": day, "note": note.trim() }),
            clock.now(),
        )
        .await?;
    }
    tx.commit().await?;
    Ok(changed)
}
