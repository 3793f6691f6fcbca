//! The service orders: the disconnection on its date, the reconnection once nothing is past
//! due, and the utility's answer to either, recorded by one function (`record_order_done`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::notice::schedule_disconnect;
use super::{calendar, gateway, past_due_cents, record};
use crate::adapters::utility::ServiceOrderPayload;
use crate::services::audit::{self, Actor};
use crate::services::follow_up::mail_with_bill_link;
use crate::{
    adapters::utility::ServiceOrderKind,
    clock::AccountClock,
    domain::{
        billing::InvoiceStatus,
        disconnection::DisconnectionStatus,
        events::{Event, ServiceOrder},
        jobs::DisconnectPayload,
    },
    mail::{
        self,
        templates::{CollectionsMail, Template},
    },
    outbox::{self, Job},
    state::Core,
    store::{self, apps::AppRow, billing::InvoiceRow, disconnections::DisconnectionRow, Tx},
};

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
    let kind = ServiceOrderKind::Disconnect;
    ask_utility(tx, clock, app, row, invoice, kind, now).await
}

/// Asks the utility to carry `kind` out at the notice `row`'s location, in `tx`: the notice
/// waits for it (`requested` or `reconnect_requested`, since `now`) with its event, and the
/// order goes to the app's utility.
async fn ask_utility(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    row: &mut DisconnectionRow,
    invoice: Option<&InvoiceRow>,
    kind: ServiceOrderKind,
    now: DateTime<Utc>,
) -> store::Result<()> {
    let asked: fn(ServiceOrder) -> Event = match kind {
        ServiceOrderKind::Disconnect => {
            row.status = DisconnectionStatus::Requested;
            row.requested_at = Some(now);
            Event::DisconnectionRequested
        }
        ServiceOrderKind::Reconnect => {
            row.status = DisconnectionStatus::ReconnectRequested;
            row.reconnect_requested_at = Some(now);
            Event::ReconnectionRequested
        }
    };
    row.updated_at = now;
    store::disconnections::update_disconnection(tx, row).await?;
    record(tx, app, &asked(order_of(row, invoice)), now).await?;
    let order = ServiceOrderPayload {
        app_uuid: app.uuid,
        disconnection_uuid: row.uuid,
        order: kind,
    };
    order_service(tx, clock, app, order, row.account_uuid).await
}

/// Asks the app's utility for `order`, in `tx`: the simulator's carrying it out is scheduled.
pub(super) async fn order_service(
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

pub(super) fn order_of(row: &DisconnectionRow, invoice: Option<&InvoiceRow>) -> ServiceOrder {
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
    let first_name = account.first_name.clone();
    match payload.order {
        ServiceOrderKind::Disconnect => {
            let past_due = past_due_cents(tx, account.uuid).await?;
            let number = invoice.as_ref().map(|i| i.number.as_str());
            mail_with_bill_link(tx, core, clock, &app, &account, number, |link| {
                Template::Collections(CollectionsMail::Disconnected {
                    first_name,
                    past_due_cents: past_due,
                    link: Some(link),
                })
            })
            .await?;
        }
        ServiceOrderKind::Reconnect => {
            let template = Template::Collections(CollectionsMail::Reconnected { first_name });
            mail::queue_to_account(tx, clock, &app, &account, &template).await?;
        }
    }
    // The location's service is off (or on again): the account's status says so.
    crate::services::follow_up::refresh_status(
        tx,
        &core.clock,
        app.uuid,
        account.uuid,
        clock.now(),
    )
    .await?;
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
pub(super) async fn record_order_done(
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
    record(tx, app, &done(order_of(row, invoice)), now).await?;
    Ok(true)
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
                let kind = ServiceOrderKind::Reconnect;
                ask_utility(tx, clock, app, &mut row, invoice.as_ref(), kind, now).await?;
            }
            _ => {}
        }
    }
    Ok(())
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
