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

use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
pub use crate::adapters::utility::ServiceOrderPayload;
use crate::{
    adapters::utility::{ServiceOrderKind, UtilityGateway},
    clock::{AccountClock, Clock},
    documents::disconnection::DisconnectionNoticeDocument,
    domain::{
        billing::{Charge, ChargeGroup, InvoiceStatus, PaymentInitiator, PaymentStatus},
        disconnection::{
            instalments, plan_owed, DisconnectionCalendar, DisconnectionStatus, PaymentPlanStatus,
            PlanReason, DEFAULT_PLAN_MONTHS, PAYMENT_PLAN_GROUP,
        },
        events::{Event, ServiceOrder},
        hosted::LinkPurpose,
        jobs::DisconnectPayload,
        market::at_market_time,
    },
    mail::{
        self,
        templates::{CollectionsMail, Template},
    },
    outbox::{self, Job},
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow},
        disconnections::{DisconnectionRow, PaymentPlanRow},
        events::NewEvent,
        Db, Tx,
    },
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

fn event(app: &AppRow, e: &Event, now: DateTime<Utc>) -> NewEvent<'static> {
    NewEvent::of(app.uuid, e, now)
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

/// A location's service address on one line.
fn address(l: &store::enrollment::LocationRow) -> String {
    let unit = l
        .address_2
        .as_deref()
        .filter(|a| !a.is_empty())
        .map(|a| format!(" {a}"))
        .unwrap_or_default();
    format!(
        "{}{unit}, {}, {} {}",
        l.address_1, l.city, l.state, l.postal_code
    )
}

/// The written notice a bill that turned past due was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The disconnection notice (the location is served).
    Disconnection,
    /// The final bill's notice (the location is no longer served): it is the past-due e-mail.
    FinalBill,
    /// None (one was sent already, or the location is gone).
    None,
}

/// The written notice for `invoice`, which just turned past due, in `tx`. While the location
/// is served: the disconnection notice with its earliest disconnection date, its event, the
/// e-mail with the PDF, and the job of its date. Once service there ended (a final bill, or a
/// bill left unpaid after the move-out): nothing can be disconnected, so the customer is told
/// in writing what is owed, how to pay and whom to ask for payment arrangements
/// (`final_bill_notice`). Nothing when the bill was sent a notice already.
pub async fn issue_notice(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice: &InvoiceRow,
) -> store::Result<Notice> {
    if store::disconnections::disconnection_of_invoice(&mut *tx, invoice.uuid)
        .await?
        .is_some()
    {
        return Ok(Notice::None);
    }
    let Some(location) = store::enrollment::locations_of_account(&mut *tx, account.uuid)
        .await?
        .into_iter()
        .find(|l| l.uuid == invoice.location_uuid)
    else {
        return Ok(Notice::None);
    };
    if !location.is_service_active {
        final_bill_notice(tx, core, clock, app, account, invoice, &location).await?;
        return Ok(Notice::FinalBill);
    }
    let now = clock.now();
    let notice_date = clock.today();
    let earliest = calendar(tx).await?.earliest_disconnection(notice_date);
    let past_due_cents: i64 = store::disconnections::unpaid_invoices(&mut *tx, account.uuid)
        .await?
        .iter()
        .filter(|i| i.status == InvoiceStatus::PastDue)
        .map(|i| i.total_cents)
        .sum();
    let (owed, _) = owed_plan(tx, clock, account.uuid).await?;
    let plan_months = owed.map(|_| DEFAULT_PLAN_MONTHS);
    let mut row = DisconnectionRow {
        uuid: Uuid::new_v4(),
        app_uuid: app.uuid,
        account_uuid: account.uuid,
        location_uuid: location.uuid,
        invoice_uuid: invoice.uuid,
        amount_cents: invoice.total_cents,
        notice_date,
        earliest_date: earliest,
        status: DisconnectionStatus::Noticed,
        email_uuid: None,
        requested_at: None,
        disconnected_at: None,
        reconnect_requested_at: None,
        reconnected_at: None,
        created_at: now,
        updated_at: now,
    };
    store::disconnections::insert_disconnection(tx, &row).await?;
    store::events::insert_event(
        tx,
        &event(
            app,
            &Event::DisconnectionNoticeSent {
                account_uuid: account.uuid,
                location_uuid: location.uuid,
                disconnection_uuid: row.uuid,
                invoice_number: invoice.number.clone(),
                amount_cents: invoice.total_cents,
                notice_date,
                earliest_disconnection_date: earliest,
            },
            now,
        ),
    )
    .await?;
    let link = super::follow_up::email_link(
        tx,
        core,
        clock,
        app.uuid,
        account.uuid,
        LinkPurpose::Invoice,
        Some(&invoice.number),
    )
    .await?;
    let email_uuid = mail::queue_to_account(
        tx,
        clock,
        app,
        account,
        &Template::Collections(CollectionsMail::DisconnectionNotice {
            first_name: account.first_name.clone(),
            invoice_number: invoice.number.clone(),
            amount_cents: invoice.total_cents,
            due_date: invoice.payment_due_date,
            earliest_date: earliest,
            plan_months,
            link: Some(link),
        }),
    )
    .await?;
    row.email_uuid = Some(email_uuid);
    store::disconnections::update_disconnection(tx, &row).await?;
    let deposit = store::credit_reviews::latest_deposit(&mut *tx, account.uuid)
        .await?
        .map(|d| d.paid_cents - d.refunded_cents)
        .filter(|c| *c > 0);
    let support = match (&app.support_phone, &app.support_email) {
        (Some(p), Some(e)) => format!("Call us at {p} or write to {e}."),
        (Some(p), None) => format!("Call us at {p}."),
        (None, Some(e)) => format!("Write to us at {e}."),
        (None, None) => format!("Contact {} through its app.", app.display_name),
    };
    let how_to_pay = match &app.support_url {
        Some(url) => format!(
            "Pay in the {} app or at {url}, with a card; the link in the e-mail that came with \
             this notice opens the bill.",
            app.display_name
        ),
        None => format!(
            "Pay in the {} app with a card; the link in the e-mail that came with this notice \
             opens the bill.",
            app.display_name
        ),
    };
    let document = DisconnectionNoticeDocument {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        provider_line: format!(
            "{}, {}",
            core.config.provider.name, core.config.provider.certificate
        ),
        customer_name: format!("{} {}", account.first_name, account.last_name),
        service_address: address(&location),
        esi_id: location.esi_id.clone(),
        invoice_number: invoice.number.clone(),
        due_date: invoice.payment_due_date,
        amount_cents: invoice.total_cents,
        past_due_cents: past_due_cents.max(invoice.total_cents),
        notice_date,
        earliest_date: earliest,
        how_to_pay,
        plan_months,
        deposit_cents: deposit,
        support,
    };
    super::documents::store_disconnection_notice(tx, account.uuid, email_uuid, &document, now)
        .await?;
    schedule_disconnect(tx, clock, &row, earliest).await?;
    Ok(Notice::Disconnection)
}

/// The written notice of a past-due bill of a location no longer served, in `tx`: the
/// `final_bill_past_due` e-mail (the amount, everything past due, how to pay, whom to ask for
/// payment arrangements, energy assistance) and `account.final_bill_notice_sent`. No
/// disconnection notice: the rules' disconnection is of service still given.
async fn final_bill_notice(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice: &InvoiceRow,
    location: &store::enrollment::LocationRow,
) -> store::Result<()> {
    let now = clock.now();
    let past_due = past_due_cents(tx, account.uuid)
        .await?
        .max(invoice.total_cents);
    store::events::insert_event(
        tx,
        &event(
            app,
            &Event::FinalBillNoticeSent {
                account_uuid: account.uuid,
                location_uuid: location.uuid,
                invoice_number: invoice.number.clone(),
                amount_cents: invoice.total_cents,
                past_due_cents: past_due,
            },
            now,
        ),
    )
    .await?;
    let link = super::follow_up::email_link(
        tx,
        core,
        clock,
        app.uuid,
        account.uuid,
        LinkPurpose::Invoice,
        Some(&invoice.number),
    )
    .await?;
    mail::queue_to_account(
        tx,
        clock,
        app,
        account,
        &Template::Collections(CollectionsMail::FinalBillPastDue {
            first_name: account.first_name.clone(),
            invoice_number: invoice.number.clone(),
            amount_cents: invoice.total_cents,
            past_due_cents: past_due,
            due_date: invoice.payment_due_date,
            final_service_date: location.final_service_date,
            link: Some(link),
        }),
    )
    .await?;
    Ok(())
}

async fn schedule_disconnect(
    tx: &mut Tx,
    clock: &AccountClock,
    row: &DisconnectionRow,
    day: NaiveDate,
) -> store::Result<()> {
    crate::outbox::enqueue(
        tx,
        clock,
        &Job::Disconnect(DisconnectPayload {
            app_uuid: row.app_uuid,
            disconnection_uuid: row.uuid,
        }),
        Some(row.account_uuid),
        at_market_time(day, DISCONNECT_HOUR),
    )
    .await?;
    Ok(())
}

/// A notice's date, in `tx`: when its bill is still past due, the utility is asked to
/// disconnect; when the bill was paid or taken over by a plan, the notice is cancelled; on a
/// day the rules forbid, the request waits for the next allowed day.
pub async fn disconnect_due(
    tx: &mut Tx,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &DisconnectPayload,
) -> store::Result<()> {
    // Through `tx`: a second connection while it is open could wait on a pool it fills.
    let Some(app) = store::apps::app_in(&mut *tx, payload.app_uuid).await? else {
        return Ok(());
    };
    let Some(_account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(());
    };
    let Some(mut row) =
        store::disconnections::disconnection(&mut *tx, payload.disconnection_uuid).await?
    else {
        return Ok(());
    };
    if row.status != DisconnectionStatus::Noticed {
        return Ok(());
    }
    let invoice = store::billing::invoice(&mut *tx, row.invoice_uuid).await?;
    let now = clock.now();
    let service_active = store::enrollment::locations_of_account(&mut *tx, account_uuid)
        .await?
        .iter()
        .any(|l| l.uuid == row.location_uuid && l.is_service_active);
    if invoice.as_ref().map(|i| i.status) != Some(InvoiceStatus::PastDue) || !service_active {
        row.status = DisconnectionStatus::Cancelled;
        row.updated_at = now;
        return store::disconnections::update_disconnection(tx, &row).await;
    }
    let today = clock.today();
    let cal = calendar(tx).await?;
    if cal.forbidden(today).is_some() || today < row.earliest_date {
        let next = cal.first_allowed(today.max(row.earliest_date));
        return schedule_disconnect(tx, clock, &row, next).await;
    }
    request_disconnection(tx, clock, &app, &mut row, invoice.as_ref()).await
}

pub async fn request_disconnection(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    row: &mut DisconnectionRow,
    invoice: Option<&InvoiceRow>,
) -> store::Result<()> {
    let now = clock.now();
    // Another notice of the account had the location disconnected already: this one waits
    // with it for the payment.
    let already = store::disconnections::disconnections_of_account(&mut *tx, row.account_uuid)
        .await?
        .iter()
        .any(|d| {
            d.uuid != row.uuid
                && d.location_uuid == row.location_uuid
                && matches!(
                    d.status,
                    DisconnectionStatus::Requested | DisconnectionStatus::Disconnected
                )
        });
    if already {
        return Ok(());
    }
    row.status = DisconnectionStatus::Requested;
    row.requested_at = Some(now);
    row.updated_at = now;
    store::disconnections::update_disconnection(tx, row).await?;
    store::events::insert_event(
        tx,
        &event(
            app,
            &Event::DisconnectionRequested(order_of(row, invoice)),
            now,
        ),
    )
    .await?;
    let order = ServiceOrderPayload {
        app_uuid: app.uuid,
        disconnection_uuid: row.uuid,
        order: ServiceOrderKind::Disconnect,
    };
    order_service(tx, clock, app, order, row.account_uuid).await
}

/// Asks the app's utility for `order`, in `tx`: the simulator's carrying it out is scheduled.
async fn order_service(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    order: ServiceOrderPayload,
    account_uuid: Uuid,
) -> store::Result<()> {
    if let Some(at) = gateway(app).await.service_order_done_at(clock.now()) {
        let job = Job::UtilityServiceOrder(order);
        outbox::enqueue(tx, clock, &job, Some(account_uuid), at).await?;
    }
    Ok(())
}

fn order_of(row: &DisconnectionRow, invoice: Option<&InvoiceRow>) -> ServiceOrder {
    ServiceOrder {
        account_uuid: row.account_uuid,
        location_uuid: row.location_uuid,
        disconnection_uuid: row.uuid,
        invoice_number: invoice.map(|i| i.number.clone()).unwrap_or_default(),
    }
}

/// The utility carried out an order, in `tx`: the location is disconnected (and, when the
/// customer paid meanwhile, reconnection is asked for at once) or reconnected, each with its
/// event and e-mail.
pub async fn complete_service_order(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &ServiceOrderPayload,
) -> store::Result<bool> {
    // Through `tx`: a second connection while it is open could wait on a pool it fills.
    let Some(app) = store::apps::app_in(&mut *tx, payload.app_uuid).await? else {
        return Ok(false);
    };
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(false);
    };
    let Some(mut row) =
        store::disconnections::disconnection(&mut *tx, payload.disconnection_uuid).await?
    else {
        return Ok(false);
    };
    let invoice = store::billing::invoice(&mut *tx, row.invoice_uuid).await?;
    let (to, done): (_, fn(ServiceOrder) -> Event) = match payload.order {
        ServiceOrderKind::Disconnect => (DisconnectionStatus::Disconnected, Event::Disconnected),
        ServiceOrderKind::Reconnect => (DisconnectionStatus::Reconnected, Event::Reconnected),
    };
    if !record_order_done(tx, clock, &app, &mut row, invoice.as_ref(), to, done).await? {
        return Ok(false);
    }
    let template = match payload.order {
        ServiceOrderKind::Disconnect => {
            let past_due = past_due_cents(tx, account.uuid).await?;
            let link = super::follow_up::email_link(
                tx,
                core,
                clock,
                app.uuid,
                account.uuid,
                LinkPurpose::Invoice,
                invoice.as_ref().map(|i| i.number.as_str()),
            )
            .await?;
            CollectionsMail::Disconnected {
                first_name: account.first_name.clone(),
                past_due_cents: past_due,
                link: Some(link),
            }
        }
        ServiceOrderKind::Reconnect => CollectionsMail::Reconnected {
            first_name: account.first_name.clone(),
        },
    };
    mail::queue_to_account(tx, clock, &app, &account, &Template::Collections(template)).await?;
    // The location's service is off (or on again): the account's status says so.
    super::follow_up::refresh_status(tx, &core.clock, app.uuid, account.uuid, clock.now()).await?;
    if payload.order == ServiceOrderKind::Disconnect {
        // Paid while the order was on its way: reconnection is asked for at once.
        reconnect_if_settled(tx, clock, &app, account.uuid).await?;
    }
    Ok(true)
}

/// The utility answered an order, in `tx`: the notice waiting for that answer moves to `to`
/// (`disconnected` from `requested`, `reconnected` from `reconnect_requested`, with the time)
/// and `done` makes the order's event. False, and nothing written, when the notice was not
/// waiting for it (answered already, or cancelled).
async fn record_order_done(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    row: &mut DisconnectionRow,
    invoice: Option<&InvoiceRow>,
    to: DisconnectionStatus,
    done: fn(ServiceOrder) -> Event,
) -> store::Result<bool> {
    let now = clock.now();
    let (waiting, at) = match to {
        DisconnectionStatus::Disconnected => {
            (DisconnectionStatus::Requested, &mut row.disconnected_at)
        }
        DisconnectionStatus::Reconnected => (
            DisconnectionStatus::ReconnectRequested,
            &mut row.reconnected_at,
        ),
        _ => return Ok(false),
    };
    if row.status != waiting {
        return Ok(false);
    }
    *at = Some(now);
    row.status = to;
    row.updated_at = now;
    store::disconnections::update_disconnection(tx, row).await?;
    store::events::insert_event(tx, &event(app, &done(order_of(row, invoice)), now)).await?;
    Ok(true)
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

/// Once nothing of the account is past due (paid, or taken over by a plan), in `tx`: notices
/// still waiting are cancelled, and a location disconnected (or about to be) is reconnected
/// through the utility.
pub async fn reconnect_if_settled(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
) -> store::Result<()> {
    if past_due_cents(tx, account_uuid).await? > 0 {
        return Ok(());
    }
    let now = clock.now();
    for mut row in store::disconnections::disconnections_of_account(&mut *tx, account_uuid).await? {
        match row.status {
            DisconnectionStatus::Noticed => {
                row.status = DisconnectionStatus::Cancelled;
                row.updated_at = now;
                store::disconnections::update_disconnection(tx, &row).await?;
            }
            DisconnectionStatus::Requested | DisconnectionStatus::Disconnected => {
                let invoice = store::billing::invoice(&mut *tx, row.invoice_uuid).await?;
                row.status = DisconnectionStatus::ReconnectRequested;
                row.reconnect_requested_at = Some(now);
                row.updated_at = now;
                store::disconnections::update_disconnection(tx, &row).await?;
                store::events::insert_event(
                    tx,
                    &event(
                        app,
                        &Event::ReconnectionRequested(order_of(&row, invoice.as_ref())),
                        now,
                    ),
                )
                .await?;
                let order = ServiceOrderPayload {
                    app_uuid: app.uuid,
                    disconnection_uuid: row.uuid,
                    order: ServiceOrderKind::Reconnect,
                };
                order_service(tx, clock, app, order, account_uuid).await?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why a payment plan was not accepted; nothing was written.
#[derive(Debug)]
pub enum PlanRefused {
    AccountMissing,
    /// Nothing unpaid to spread.
    NothingUnpaid,
    /// A plan is running already.
    PlanActive,
    /// More disconnection notices this year than a plan is owed after.
    NotOwed,
    /// Service has ended: no following bill would carry the instalments.
    ServiceEnded,
}

/// Where the account's payment plans stand: the plan it is owed if it asks now (with the
/// unpaid total), and its plans with their instalments, newest first.
pub struct PlanOverview {
    pub offer: Option<PlanOffer>,
    pub plans: Vec<(PaymentPlanRow, Vec<store::disconnections::InstalmentRow>)>,
}

pub struct PlanOffer {
    pub reason: PlanReason,
    pub unpaid_cents: i64,
    pub months: u32,
    pub invoice_numbers: Vec<String>,
}

pub async fn plan_overview(core: &Core, account_uuid: Uuid) -> store::Result<PlanOverview> {
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let (owed, unpaid) = owed_plan(&mut tx, &clock, account_uuid).await?;
    let mut plans = Vec::new();
    for p in store::disconnections::plans_of_account(&mut tx, account_uuid).await? {
        let lines = store::disconnections::instalments(&mut tx, p.uuid).await?;
        plans.push((p, lines));
    }
    tx.commit().await?;
    Ok(PlanOverview {
        offer: owed.map(|reason| PlanOffer {
            reason,
            unpaid_cents: unpaid.iter().map(|i| i.total_cents).sum(),
            months: DEFAULT_PLAN_MONTHS,
            invoice_numbers: unpaid.iter().map(|i| i.number.clone()).collect(),
        }),
        plans,
    })
}

/// The customer accepts a payment plan of `months` instalments (from the portal, a flow or
/// the API), in one transaction: the unpaid bills are taken over (settled by the plan), the
/// instalments are stored to be billed on the following bills, `account.payment_plan_accepted`
/// and an e-mail; a waiting disconnection is cancelled and a disconnected location
/// reconnected.
pub async fn accept_plan(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    months: u32,
) -> Result<PaymentPlanRow, Error<PlanRefused>> {
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Error::Refused(PlanRefused::AccountMissing))?;
    let (owed, unpaid) = owed_plan(&mut tx, &clock, account_uuid).await?;
    let total: i64 = unpaid.iter().map(|i| i.total_cents).sum();
    let Some(reason) = owed else {
        let active = store::disconnections::plans_of_account(&mut tx, account_uuid)
            .await?
            .iter()
            .any(|p| p.status == PaymentPlanStatus::Active);
        let served = served(&mut tx, account_uuid).await?;
        return Err(Error::Refused(if total <= 0 {
            PlanRefused::NothingUnpaid
        } else if active {
            PlanRefused::PlanActive
        } else if !served {
            PlanRefused::ServiceEnded
        } else {
            PlanRefused::NotOwed
        }));
    };
    let now = clock.now();
    let plan = PaymentPlanRow {
        uuid: Uuid::new_v4(),
        app_uuid: app.uuid,
        account_uuid,
        status: PaymentPlanStatus::Active,
        reason: reason.as_str().to_owned(),
        total_cents: total,
        months: i32::try_from(months).unwrap_or(i32::MAX),
        created_at: now,
        ended_at: None,
    };
    let amounts = instalments(total, months);
    store::disconnections::insert_plan(&mut tx, &plan, &amounts).await?;
    for invoice in &unpaid {
        let payment = PaymentRow {
            uuid: Uuid::new_v4(),
            invoice_uuid: invoice.uuid,
            account_uuid,
            amount_cents: invoice.total_cents,
            status: PaymentStatus::Succeeded,
            initiated_by: PaymentInitiator::PaymentPlan,
            failure_code: None,
            processor_payment_id: None,
            attempted_at: now,
            refunded_cents: 0,
            disputed_at: None,
        };
        store::billing::insert_payment(&mut tx, &payment).await?;
        store::billing::set_invoice_status(
            &mut tx,
            invoice.uuid,
            InvoiceStatus::Paid,
            Some(now),
            now,
        )
        .await?;
    }
    let first = amounts.first().copied().unwrap_or_default();
    store::events::insert_event(
        &mut tx,
        &event(
            app,
            &Event::PaymentPlanAccepted {
                account_uuid,
                plan_uuid: plan.uuid,
                total_cents: total,
                months,
                instalment_cents: first,
                reason: reason.as_str().to_owned(),
                invoice_numbers: unpaid.iter().map(|i| i.number.clone()).collect(),
            },
            now,
        ),
    )
    .await?;
    mail::queue_to_account(
        &mut tx,
        &clock,
        app,
        &account,
        &Template::Collections(CollectionsMail::PlanAccepted {
            first_name: account.first_name.clone(),
            total_cents: total,
            months,
            instalment_cents: first,
        }),
    )
    .await?;
    reconnect_if_settled(&mut tx, &clock, app, account_uuid).await?;
    tx.commit().await?;
    core.account_changed(account_uuid);
    Ok(plan)
}

/// The payment-plan lines the account's next bill carries, with the instalments they bill:
/// the next instalment of a running plan, and all that is left of a plan that ended unpaid.
pub async fn plan_lines(
    tx: &mut Tx,
    account_uuid: Uuid,
) -> store::Result<(Option<ChargeGroup>, Vec<(Uuid, i32)>)> {
    let unbilled = store::disconnections::unbilled_instalments(&mut *tx, account_uuid).await?;
    let mut charges = Vec::new();
    let mut billed = Vec::new();
    let mut seen_active = std::collections::HashSet::new();
    let mut defaulted: std::collections::BTreeMap<Uuid, i64> = Default::default();
    for i in &unbilled {
        match i.status {
            PaymentPlanStatus::Active => {
                if seen_active.insert(i.plan_uuid) {
                    charges.push(Charge {
                        description: format!("Payment plan instalment {} of {}", i.seq, i.months),
                        quantity: rust_decimal::Decimal::ONE,
                        unit: "instalment".to_owned(),
                        rate: rust_decimal::Decimal::new(i.amount_cents, 2),
                        amount_cents: i.amount_cents,
                    });
                    billed.push((i.plan_uuid, i.seq));
                }
            }
            _ => {
                *defaulted.entry(i.plan_uuid).or_default() += i.amount_cents;
                billed.push((i.plan_uuid, i.seq));
            }
        }
    }
    for cents in defaulted.values() {
        charges.push(Charge {
            description: "Payment plan balance (the plan ended)".to_owned(),
            quantity: rust_decimal::Decimal::ONE,
            unit: "balance".to_owned(),
            rate: rust_decimal::Decimal::new(*cents, 2),
            amount_cents: *cents,
        });
    }
    if charges.is_empty() {
        return Ok((None, billed));
    }
    Ok((
        Some(ChargeGroup {
            name: PAYMENT_PLAN_GROUP.to_owned(),
            total_cents: charges.iter().map(|c| c.amount_cents).sum(),
            charges,
        }),
        billed,
    ))
}

/// The instalments `billed` are lines of the bill `invoice_uuid`, in `tx`.
pub async fn mark_billed(
    tx: &mut Tx,
    billed: &[(Uuid, i32)],
    invoice_uuid: Uuid,
) -> store::Result<()> {
    for (plan, seq) in billed {
        store::disconnections::bill_instalment(tx, *plan, *seq, invoice_uuid).await?;
    }
    Ok(())
}

/// A bill was paid, in `tx`: a plan whose every instalment is billed and paid is complete;
/// and when nothing is past due any more, the location is reconnected.
pub async fn after_payment(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice: &InvoiceRow,
) -> store::Result<()> {
    let now = clock.now();
    for line in store::disconnections::instalments_of_invoice(&mut *tx, invoice.uuid).await? {
        let lines = store::disconnections::instalments(&mut *tx, line.plan_uuid).await?;
        let mut all_paid = true;
        for l in &lines {
            let paid = match l.invoice_uuid {
                None => false,
                Some(u) => store::billing::invoice(&mut *tx, u)
                    .await?
                    .is_some_and(|i| i.status == InvoiceStatus::Paid),
            };
            all_paid &= paid;
        }
        if all_paid
            && store::disconnections::end_plan(
                tx,
                line.plan_uuid,
                PaymentPlanStatus::Completed,
                now,
            )
            .await?
        {
            store::events::insert_event(
                tx,
                &event(
                    app,
                    &Event::PaymentPlanEnded {
                        account_uuid: account.uuid,
                        plan_uuid: line.plan_uuid,
                        status: PaymentPlanStatus::Completed.as_str().to_owned(),
                        remaining_cents: 0,
                    },
                    now,
                ),
            )
            .await?;
            mail::queue_to_account(
                tx,
                clock,
                app,
                account,
                &Template::Collections(CollectionsMail::PlanEnded {
                    first_name: account.first_name.clone(),
                    completed: true,
                    remaining_cents: 0,
                }),
            )
            .await?;
        }
    }
    reconnect_if_settled(tx, clock, app, account.uuid).await
}

/// A bill that turned past due carried an instalment, in `tx`: its plan ends (defaulted),
/// what it had not billed yet is due on the next bill, with its event and an e-mail.
pub async fn instalment_missed(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice: &InvoiceRow,
) -> store::Result<()> {
    let now = clock.now();
    for line in store::disconnections::instalments_of_invoice(&mut *tx, invoice.uuid).await? {
        if !store::disconnections::end_plan(tx, line.plan_uuid, PaymentPlanStatus::Defaulted, now)
            .await?
        {
            continue;
        }
        let remaining: i64 = store::disconnections::instalments(&mut *tx, line.plan_uuid)
            .await?
            .iter()
            .filter(|l| l.invoice_uuid.is_none())
            .map(|l| l.amount_cents)
            .sum();
        store::events::insert_event(
            tx,
            &event(
                app,
                &Event::PaymentPlanEnded {
                    account_uuid: account.uuid,
                    plan_uuid: line.plan_uuid,
                    status: PaymentPlanStatus::Defaulted.as_str().to_owned(),
                    remaining_cents: remaining,
                },
                now,
            ),
        )
        .await?;
        mail::queue_to_account(
            tx,
            clock,
            app,
            account,
            &Template::Collections(CollectionsMail::PlanEnded {
                first_name: account.first_name.clone(),
                completed: false,
                remaining_cents: remaining,
            }),
        )
        .await?;
    }
    Ok(())
}

/// The account's notices, newest first.
pub async fn notices(
    db: &Db,
    account_uuid: Uuid,
) -> store::Result<Vec<(DisconnectionRow, String)>> {
    let mut out = Vec::new();
    for row in store::disconnections::disconnections_of_account(db, account_uuid).await? {
        let number = store::billing::invoice(db, row.invoice_uuid)
            .await?
            .map(|i| i.number)
            .unwrap_or_default();
        out.push((row, number));
    }
    Ok(out)
}

/// The operator records what the utility did with an order of a live app's worklist (a
/// notice `requested` is now disconnected, one `reconnect_requested` reconnected), audited;
/// answers whether there was such an order to record.
pub async fn record_utility_done(
    core: &Core,
    actor: &Actor,
    app: &AppRow,
    account_uuid: Uuid,
    disconnection_uuid: Uuid,
) -> store::Result<bool> {
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let Some(row) = store::disconnections::disconnection(&mut tx, disconnection_uuid)
        .await?
        .filter(|d| d.account_uuid == account_uuid && d.app_uuid == app.uuid)
    else {
        return Ok(false);
    };
    let order = match row.status {
        DisconnectionStatus::Requested => ServiceOrderKind::Disconnect,
        DisconnectionStatus::ReconnectRequested => ServiceOrderKind::Reconnect,
        _ => return Ok(false),
    };
    let payload = ServiceOrderPayload {
        app_uuid: app.uuid,
        disconnection_uuid,
        order,
    };
    if !complete_service_order(&mut tx, core, &clock, account_uuid, &payload).await? {
        return Ok(false);
    }
    audit::record(
        &mut tx,
        actor,
        "account.utility_order_recorded",
        &format!("account:{account_uuid}"),
        serde_json::json!({ "disconnection_uuid": disconnection_uuid, "order": order }),
        core.clock.now(),
    )
    .await?;
    tx.commit().await?;
    core.account_changed(account_uuid);
    Ok(true)
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
