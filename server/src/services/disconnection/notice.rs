//! The written notices of a past-due bill: the disconnection notice with its PDF and the
//! job of its date, or the final bill's notice once the location is no longer served.

use chrono::NaiveDate;
use uuid::Uuid;

use super::{calendar, owed_plan, past_due_cents, record, DISCONNECT_HOUR};
use crate::services::follow_up::mail_with_bill_link;
use crate::{
    clock::AccountClock,
    documents::disconnection::DisconnectionNoticeDocument,
    domain::{
        disconnection::{DisconnectionStatus, DEFAULT_PLAN_MONTHS},
        events::Event,
        jobs::DisconnectPayload,
        market::at_market_time,
    },
    mail::templates::{CollectionsMail, Template},
    outbox::Job,
    state::Core,
    store::{
        self, accounts::AccountRow, apps::AppRow, billing::InvoiceRow,
        disconnections::DisconnectionRow, Db, Tx,
    },
};

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
    let past_due = past_due_cents(tx, account.uuid).await?;
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
    record(
        tx,
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
    )
    .await?;
    let number = Some(invoice.number.as_str());
    let email_uuid = mail_with_bill_link(tx, core, clock, app, account, number, |link| {
        Template::Collections(CollectionsMail::DisconnectionNotice {
            first_name: account.first_name.clone(),
            invoice_number: invoice.number.clone(),
            amount_cents: invoice.total_cents,
            due_date: invoice.payment_due_date,
            earliest_date: earliest,
            plan_months,
            link: Some(link),
        })
    })
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
        service_address: location.one_line_address(),
        esi_id: location.esi_id.clone(),
        invoice_number: invoice.number.clone(),
        due_date: invoice.payment_due_date,
        amount_cents: invoice.total_cents,
        past_due_cents: past_due.max(invoice.total_cents),
        notice_date,
        earliest_date: earliest,
        how_to_pay,
        plan_months,
        deposit_cents: deposit,
        support,
    };
    crate::services::documents::store_disconnection_notice(
        tx,
        account.uuid,
        email_uuid,
        &document,
        now,
    )
    .await?;
    schedule_disconnect(tx, clock, &row, earliest).await?;
    Ok(Notice::Disconnection)
}

/// The written notice of a past-due bill of a location no longer served, in `tx`: the
/// `final_bill_past_due` e-mail (the amount, everything past due, how to pay, whom to ask for
/// payment arrangements, energy assistance) and `account.final_bill_notice_sent`. No
/// disconnection notice: the rules' disconnection is of service still given.
pub(super) async fn final_bill_notice(
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
    record(
        tx,
        app,
        &Event::FinalBillNoticeSent {
            account_uuid: account.uuid,
            location_uuid: location.uuid,
            invoice_number: invoice.number.clone(),
            amount_cents: invoice.total_cents,
            past_due_cents: past_due,
        },
        now,
    )
    .await?;
    let number = Some(invoice.number.as_str());
    mail_with_bill_link(tx, core, clock, app, account, number, |link| {
        Template::Collections(CollectionsMail::FinalBillPastDue {
            first_name: account.first_name.clone(),
            invoice_number: invoice.number.clone(),
            amount_cents: invoice.total_cents,
            past_due_cents: past_due,
            due_date: invoice.payment_due_date,
            final_service_date: location.final_service_date,
            link: Some(link),
        })
    })
    .await?;
    Ok(())
}

pub(super) async fn schedule_disconnect(
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
