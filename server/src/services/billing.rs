//! Billing's use cases, on the account's clock: starting billing when service starts (the
//! utility's year of usage history and the first cycle read), billing a cycle (usage, the meter
//! read, the invoice with any late fee it charges, `invoice.created`, an e-mail, the auto-pay and
//! past-due jobs) and the final bill, attaching a card, and the sandbox's simulations. The jobs
//! that run them on schedule are in `jobs::cycle`; what happens to an issued invoice (reading
//! it, paying it, auto-pay, past due) is in `services::invoices`.
//!
//! Each job's payload carries the instant it was meant for (`at`); business records use it, so
//! that work run late (a sandbox clock jumping months ahead, demo data) carries its real dates.
//!
//! A cycle whose stored inputs (rates, delivery charges, taxes, usage days) cannot be read is
//! never billed with them at $0: it stops with the reason (`BillingError`), nothing of it kept.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

use crate::{
    adapters::payments::{PaymentProcessor, ProcessorError, SetupSession},
    clock::AccountClock,
    domain::{
        billing::{
            self, card_name, contract_on, invoice_number, payment_due_date, period_kwh,
            BillingError, ChargeGroup, InvoiceInput, InvoiceStatus, PaymentInitiator, StoredCycle,
            StoredDay, StoredPeriod,
        },
        collections::{late_fee_group, late_fees, LateFee, LateFeePercent, PastDueBill},
        enrollment::{start_of_market_day, ContractStatus},
        events::Event,
        hosted::LinkPurpose,
        jobs::ReadPayload,
        usage,
    },
    mail::{
        self,
        templates::{BillReady, CardChanged, Template},
    },
    outbox::Job,
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, MeterReadRow, PaymentRow},
        collections::LateFeeRow,
        enrollment::{ContractRow, LocationRow},
        events::NewEvent,
        payments::CardRow,
        Tx,
    },
};

use super::{
    invoices::{record_payment, Charged},
    Error,
};

/// Days of usage history the utility supplies when service starts.
const HISTORY_DAYS: i64 = 365;

/// Local hour at which a cycle's read arrives.
const READ_HOUR: i64 = 6;

fn read_instant(date: NaiveDate) -> DateTime<Utc> {
    start_of_market_day(date) + Duration::hours(READ_HOUR)
}

/// Service started at `location` on `start`: stores the utility's year of history before it and
/// schedules the first cycle read, in the caller's transaction.
pub async fn start_billing(
    tx: &mut Tx,
    clock: &AccountClock,
    app_uuid: Uuid,
    location: &LocationRow,
    start: NaiveDate,
) -> store::Result<()> {
    store_history(tx, location, start).await?;
    let first = usage::next_read_date(&location.esi_id, start);
    schedule_read(tx, clock, app_uuid, location, first).await?;
    Ok(())
}

/// The utility's year of usage history before `start`, in the caller's transaction.
pub async fn store_history(
    tx: &mut Tx,
    location: &LocationRow,
    start: NaiveDate,
) -> store::Result<()> {
    let history = super::usage::measured(
        &location.esi_id,
        start - Duration::days(HISTORY_DAYS),
        start - Duration::days(1),
    );
    store::billing::insert_usage_days(tx, location.uuid, &history).await
}

pub async fn schedule_read(
    tx: &mut Tx,
    clock: &AccountClock,
    app_uuid: Uuid,
    location: &LocationRow,
    read_date: NaiveDate,
) -> store::Result<Uuid> {
    let at = read_instant(read_date);
    crate::outbox::enqueue(
        tx,
        clock,
        &Job::MeterRead(ReadPayload {
            app_uuid,
            location_uuid: location.uuid,
            read_date,
            at,
        }),
        Some(location.account_uuid),
        at,
    )
    .await
}

/// Reads the meter through `period_end` (from the day after the last read, or the service
/// start) and issues the cycle's invoice, in `tx`: usage days, the read, the invoice with its
/// number, `invoice.created`, the e-mail, and the auto-pay and past-due jobs. `None` when there
/// is nothing to bill (the period is empty or was read already); `Err(why)` when stored data it
/// is computed from cannot be read, in which case the caller drops `tx`.
#[allow(clippy::too_many_arguments)]
pub async fn bill_cycle(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    location: &LocationRow,
    read_date: NaiveDate,
    period_end: NaiveDate,
    when: DateTime<Utc>,
) -> store::Result<Result<Option<InvoiceRow>, BillingError>> {
    let prepared = match prepare_bill(
        tx, core, clock, app, account, location, read_date, period_end, when,
    )
    .await?
    {
        Ok(Some(prepared)) => prepared,
        Ok(None) => return Ok(Ok(None)),
        Err(why) => return Ok(Err(why)),
    };
    let bill = ReadyBill {
        clock,
        app,
        account: account.clone(),
        prepared,
    };
    Ok(Ok(issue_bills(tx, core, vec![bill]).await?.pop()))
}

/// A cycle's bill as `prepare_bill` leaves it in the transaction: the usage, the read and the
/// invoice's jobs written, the invoice computed; what carries the invoice's number (the
/// invoice, what it bills, its events and e-mail) is written by `issue_bills`.
struct PreparedBill {
    /// The invoice without its number.
    invoice: InvoiceRow,
    fees: Vec<(InvoiceRow, LateFee)>,
    late_fee_cents: i64,
    instalments_billed: Vec<(Uuid, i32)>,
    credits_applied: Vec<Uuid>,
    deposit_billing: super::deposits::DepositBilling,
    card: Option<CardRow>,
    /// The period's consumption as the e-mail shows it.
    kwh: String,
    endpoints: store::events::Subscribers,
}

/// `bill_cycle` up to the invoice's number: everything of the bill that does not carry it.
#[allow(clippy::too_many_arguments)]
async fn prepare_bill(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    location: &LocationRow,
    read_date: NaiveDate,
    period_end: NaiveDate,
    when: DateTime<Utc>,
) -> store::Result<Result<Option<PreparedBill>, BillingError>> {
    let last = store::billing::latest_meter_read(&mut *tx, location.uuid).await?;
    let Some(period_start) = last
        .map(|r| r.end_date + Duration::days(1))
        .or(location.service_start_date)
    else {
        return Ok(Ok(None));
    };
    if period_start > period_end {
        return Ok(Ok(None));
    }
    // A meter the utility disconnected measures nothing on the days it was off.
    let off = super::usage::disconnected_days(&mut *tx, location, period_start, period_end).await?;
    store::billing::insert_usage_days(
        tx,
        location.uuid,
        &super::usage::measured_while_served(&location.esi_id, period_start, period_end, &off),
    )
    .await?;
    let days =
        store::billing::usage_days(&mut *tx, location.uuid, period_start, period_end).await?;
    let stored: Vec<StoredDay> = days
        .iter()
        .map(|d| StoredDay {
            day: d.day,
            consumption_kwh: &d.consumption_kwh,
            generation_kwh: &d.generation_kwh,
        })
        .collect();
    let (consumption, generation) = match period_kwh(stored.iter().copied()) {
        Ok(kwh) => kwh,
        Err(why) => return Ok(Err(why)),
    };
    let read = MeterReadRow {
        uuid: Uuid::new_v4(),
        location_uuid: location.uuid,
        read_date,
        start_date: period_start,
        end_date: period_end,
        kwh: consumption.to_string(),
        generation_kwh: generation.to_string(),
        read_type: "actual".to_owned(),
        created_at: when,
    };
    if !store::billing::insert_meter_read(tx, &read).await? {
        return Ok(Ok(None));
    }
    let contracts = billing_contracts(tx, location).await?;
    // A day no contract covers is billed as the cycle's last day is.
    let last_day =
        contract_on(&contracts, |c| c.start_date, |c| c.end_date, period_end).or(contracts.last());
    let covering =
        |day| contract_on(&contracts, |c| c.start_date, |c| c.end_date, day).or(last_day);
    let mut by_contract: Vec<(&ContractRow, Vec<StoredDay>)> = Vec::new();
    for d in &stored {
        let Some(c) = covering(d.day) else { continue };
        match by_contract.last_mut() {
            Some((last, days)) if last.uuid == c.uuid => days.push(*d),
            _ => by_contract.push((c, vec![*d])),
        }
    }
    let mut periods = Vec::new();
    if by_contract.len() > 1 {
        for (c, days) in &by_contract {
            let (consumption_kwh, generation_kwh) = match period_kwh(days.iter().copied()) {
                Ok(kwh) => kwh,
                Err(why) => return Ok(Err(why)),
            };
            periods.push(StoredPeriod {
                consumption_kwh,
                generation_kwh,
                contract_rates: &c.rates,
            });
        }
    }
    let delivery = store::market::tdu_charges_on(&mut *tx, &location.tdu, period_end).await?;
    let gross_receipts =
        store::market::city_gross_receipts_percent(tx, &location.city, &location.state).await?;
    let input = match InvoiceInput::from_stored(&StoredCycle {
        period_start,
        period_end,
        consumption_kwh: consumption,
        generation_kwh: generation,
        contract_rates: last_day.map(|c| c.rates.as_str()),
        periods,
        tdu: &location.tdu,
        delivery: delivery
            .as_ref()
            .map(|d| (d.fixed_cents_per_month, d.cents_per_kwh.as_str())),
        gross_receipts_percent: gross_receipts.as_deref(),
        off_days: i64::try_from(off.len()).unwrap_or(i64::MAX),
    }) {
        Ok(input) => input,
        Err(why) => return Ok(Err(why)),
    };
    let mut computed = billing::compute(&input);
    let fees = late_fees_due(tx, app.uuid, account.uuid, read_date).await?;
    let late_fee_cents: i64 = fees.iter().map(|(_, f)| f.amount_cents).sum();
    let owned: Vec<LateFee> = fees.iter().map(|(_, f)| f.clone()).collect();
    if let Some(group) = late_fee_group(&owned) {
        computed.total_cents += group.total_cents;
        computed.groups.push(group);
    }
    let (plan_group, instalments_billed) =
        super::disconnection::plan_lines(tx, account.uuid).await?;
    if let Some(group) = plan_group {
        computed.total_cents += group.total_cents;
        computed.groups.push(group);
    }
    let (credit_group, credits_applied) =
        super::corrections::credit_lines(tx, account.uuid).await?;
    if let Some(group) = credit_group {
        computed.total_cents += group.total_cents;
        computed.groups.push(group);
    }
    // The deposit's lines: instalments, and once it is earned back or on the final bill, the
    // deposit with its interest as a credit.
    let is_final = location
        .final_service_date
        .is_some_and(|last| period_end >= last);
    let deposit_billing = super::deposits::bill_lines(
        tx,
        core.config.deposit_interest_percent,
        read_date,
        account.uuid,
        is_final,
        computed.total_cents,
    )
    .await?;
    if let Some(group) = deposit_billing.group.clone() {
        computed.total_cents += group.total_cents;
        computed.groups.push(group);
    }
    let calendar = core.business_calendar().await?;
    let card = store::payments::current_payment_method(&mut *tx, account.uuid).await?;
    let invoice_date = read_date;
    let settled = computed.total_cents <= 0;
    let invoice = InvoiceRow {
        uuid: Uuid::new_v4(),
        // Given by `issue_bills`, as late as the rows that carry it allow.
        number: String::new(),
        app_uuid: app.uuid,
        account_uuid: account.uuid,
        location_uuid: location.uuid,
        meter_read_uuid: read.uuid,
        invoice_date,
        payment_due_date: payment_due_date(invoice_date, calendar),
        billing_period_start: period_start,
        billing_period_end: period_end,
        total_cents: computed.total_cents,
        total_kwh: consumption.to_string(),
        generation_kwh: generation.to_string(),
        charges: serde_json::to_string(&computed.groups)
            .map_err(|e| sqlx::Error::Encode(Box::new(e)))?,
        // Nothing to pay (a credit from solar export) settles the invoice at once.
        status: if settled {
            InvoiceStatus::Paid
        } else {
            InvoiceStatus::Open
        },
        paid_at: settled.then_some(when),
        voided_at: None,
        created_at: when,
        updated_at: when,
    };
    // The jobs of the invoice name it by its uuid, not its number: they are written before the
    // number is allocated.
    if !settled {
        super::follow_up::schedule_payment_jobs(tx, clock, &invoice).await?;
    }
    let endpoints = store::events::subscribers(tx, app.uuid).await?;
    Ok(Ok(Some(PreparedBill {
        invoice,
        fees,
        late_fee_cents,
        instalments_billed,
        credits_applied,
        deposit_billing,
        card,
        kwh: app::format::thousands(&consumption.round_dp(0).to_string()),
        endpoints,
    })))
}

/// A prepared bill waiting for its number, with what issuing it needs: its account's clock, its
/// app and the account it bills.
struct ReadyBill<'a> {
    clock: &'a AccountClock,
    app: &'a AppRow,
    account: AccountRow,
    prepared: PreparedBill,
}

/// Issues `bills` in `tx`: one block of invoice numbers for all of them (gap-free, in their
/// order), then what of each carries its number (`issue_bill`). The numbers come last: on
/// PostgreSQL the counter's row stays locked from here to the commit, so concurrent bills wait
/// only for the few writes that carry the numbers. Answers the invoices, in the order of
/// `bills`.
async fn issue_bills(
    tx: &mut Tx,
    core: &Core,
    bills: Vec<ReadyBill<'_>>,
) -> store::Result<Vec<InvoiceRow>> {
    if bills.is_empty() {
        return Ok(Vec::new());
    }
    let count = i64::try_from(bills.len()).unwrap_or(i64::MAX);
    let first = store::counters::next_values(tx, "invoice_number", count).await?;
    let mut invoices = Vec::with_capacity(bills.len());
    for (sequence, bill) in (first..).zip(bills) {
        let ReadyBill {
            clock,
            app,
            account,
            prepared,
        } = bill;
        invoices.push(issue_bill(tx, core, clock, app, &account, prepared, sequence).await?);
    }
    Ok(invoices)
}

/// Writes what of a prepared bill carries its number, `sequence` of the invoice numbers
/// (allocated in `tx`): the invoice, the lines it bills, its late fees, `invoice.created`
/// and the e-mail with its link.
async fn issue_bill(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    prepared: PreparedBill,
    sequence: i64,
) -> store::Result<InvoiceRow> {
    let PreparedBill {
        mut invoice,
        fees,
        late_fee_cents,
        instalments_billed,
        credits_applied,
        deposit_billing,
        card,
        kwh,
        endpoints,
    } = prepared;
    invoice.number = invoice_number(sequence);
    let (period_start, period_end) = (invoice.billing_period_start, invoice.billing_period_end);
    store::billing::insert_invoice(tx, &invoice).await?;
    super::disconnection::mark_billed(tx, &instalments_billed, invoice.uuid).await?;
    super::corrections::mark_applied(tx, &credits_applied, invoice.uuid).await?;
    super::deposits::mark_billed(tx, clock, app.uuid, &invoice, deposit_billing).await?;
    for (penalized, fee) in &fees {
        store::collections::insert_late_fee(
            tx,
            &LateFeeRow {
                uuid: Uuid::new_v4(),
                account_uuid: account.uuid,
                penalized_invoice_uuid: penalized.uuid,
                charged_invoice_uuid: invoice.uuid,
                base_cents: fee.base_cents,
                percent: fee.percent.normalize().to_string(),
                amount_cents: fee.amount_cents,
                created_at: invoice.created_at,
            },
        )
        .await?;
        store::events::insert_event_to(
            tx,
            &NewEvent::of(
                app.uuid,
                &Event::InvoiceLateFeeCharged {
                    account_uuid: account.uuid,
                    location_uuid: invoice.location_uuid,
                    invoice_number: invoice.number.clone(),
                    penalized_invoice_number: penalized.number.clone(),
                    base_cents: fee.base_cents,
                    percent: fee.percent.normalize().to_string(),
                    amount_cents: fee.amount_cents,
                },
                clock.now(),
            ),
            &endpoints,
        )
        .await?;
    }
    store::events::insert_event_to(
        tx,
        &NewEvent::of(
            app.uuid,
            &Event::InvoiceCreated {
                account_uuid: account.uuid,
                location_uuid: invoice.location_uuid,
                invoice_number: invoice.number.clone(),
                total_cents: invoice.total_cents,
                invoice_date: invoice.invoice_date,
                payment_due_date: invoice.payment_due_date,
                status: invoice.status.to_string(),
            },
            clock.now(),
        ),
        &endpoints,
    )
    .await?;
    super::follow_up::mail_with_link(
        tx,
        core,
        clock,
        app,
        account,
        LinkPurpose::Invoice,
        Some(&invoice.number),
        |link| {
            Template::BillReady(BillReady {
                first_name: account.first_name.clone(),
                invoice_number: invoice.number.clone(),
                period_start,
                period_end,
                total_cents: invoice.total_cents,
                kwh,
                due_date: invoice.payment_due_date,
                late_fee_cents,
                // Auto-pay charges the card on the due date.
                auto_pay_card: card.as_ref().map(|c| card_name(&c.brand, &c.last4)),
                link: Some(link),
            })
        },
    )
    .await?;
    Ok(invoice)
}

/// The late fees the next bill of the account (issued on `invoice_date`) charges, each with the
/// past-due bill it is on: none when the app charges none or the account is exempt. A past-due
/// bill whose stored charges cannot be read is not penalized (never a fee on a guess).
async fn late_fees_due(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    invoice_date: NaiveDate,
) -> store::Result<Vec<(InvoiceRow, LateFee)>> {
    let percent = store::collections::late_fee_percent(&mut *tx, app_uuid)
        .await?
        .as_deref()
        .and_then(LateFeePercent::from_stored);
    let Some(percent) = percent else {
        return Ok(Vec::new());
    };
    let exempt = store::collections::is_late_fee_exempt(&mut *tx, account_uuid).await?;
    if exempt {
        return Ok(Vec::new());
    }
    let rows = store::collections::past_due_before(tx, account_uuid, invoice_date).await?;
    let mut due = Vec::new();
    for row in rows {
        let Ok(groups) = serde_json::from_str::<Vec<ChargeGroup>>(&row.charges) else {
            tracing::error!(invoice = %row.uuid, "a past-due bill's charges cannot be read");
            continue;
        };
        let bill = PastDueBill {
            number: row.number.clone(),
            groups,
            penalized: store::collections::is_penalized(tx, row.uuid).await?,
            billed_since_due: store::collections::billed_since_due(tx, &row).await?,
        };
        if let Some(fee) = late_fees(Some(percent), exempt, &[bill]).pop() {
            due.push((row, fee));
        }
    }
    Ok(due)
}

/// The location's contracts that bill its days (all but the cancelled), oldest first.
async fn billing_contracts(tx: &mut Tx, location: &LocationRow) -> store::Result<Vec<ContractRow>> {
    let mut contracts =
        store::enrollment::contracts_of_account(&mut *tx, location.account_uuid).await?;
    contracts.retain(|c| c.location_uuid == location.uuid && c.status != ContractStatus::Cancelled);
    Ok(contracts)
}

/// A card becomes the account's payment method, in `tx`, announced by
/// `account.payment_method_added`.
pub async fn attach_card(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    card: &CardRow,
    now: DateTime<Utc>,
) -> store::Result<()> {
    store::payments::attach_payment_method(tx, account_uuid, card, now).await?;
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app_uuid,
            &Event::PaymentMethodAdded {
                account_uuid,
                card_brand: card.brand.clone(),
                card_last4: card.last4.clone(),
            },
            now,
        ),
    )
    .await?;
    Ok(())
}

/// Why a sandbox billing simulation could not apply; nothing was written.
#[derive(Debug)]
pub enum BillingRefused {
    /// No location with active service.
    NoActiveService,
    /// The meter was already read through today.
    NothingToBill,
    /// Stored data the invoice is computed from cannot be read.
    Unbillable(BillingError),
    /// No invoice is waiting for payment.
    NothingToPay,
}

/// `invoice_generated`: an off-cycle read through today and its invoice, in `tx`.
pub async fn simulate_invoice(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
) -> store::Result<Result<InvoiceRow, BillingRefused>> {
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(Err(BillingRefused::NoActiveService));
    };
    let Some(location) = store::enrollment::locations_of_account(&mut *tx, account_uuid)
        .await?
        .into_iter()
        .find(|l| l.is_service_active)
    else {
        return Ok(Err(BillingRefused::NoActiveService));
    };
    let today = clock.today();
    let now = clock.now();
    Ok(
        match bill_cycle(tx, core, clock, app, &account, &location, today, today, now).await? {
            Ok(Some(invoice)) => Ok(invoice),
            Ok(None) => Err(BillingRefused::NothingToBill),
            Err(why) => {
                tracing::error!(location = %location.uuid, error = %why, "an invoice could not be billed");
                Err(BillingRefused::Unbillable(why))
            }
        },
    )
}

/// `payment_failed`: a declined charge of the newest unpaid invoice, in `tx`.
pub async fn simulate_payment_failure(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
) -> store::Result<Result<PaymentRow, BillingRefused>> {
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(Err(BillingRefused::NothingToPay));
    };
    let Some(invoice) = store::billing::latest_unpaid_invoice(&mut *tx, account_uuid).await? else {
        return Ok(Err(BillingRefused::NothingToPay));
    };
    let charged = Charged::Failed {
        failure_code: "card_declined".to_owned(),
    };
    Ok(Ok(record_payment(
        tx,
        core,
        clock,
        app,
        &account,
        &invoice,
        charged,
        PaymentInitiator::Simulation,
        clock.now(),
    )
    .await?))
}

/// The cycle's read of `payload`: bills it and schedules the next read while service lasts, in
/// the transaction it answers (which the caller commits with the job's end). Refused, with
/// nothing kept, when the cycle's stored data cannot be read.
pub async fn read_meter(
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &ReadPayload,
) -> Result<Tx, Error<BillingError>> {
    // Read before the transaction: on SQLite the transaction holds the one writer.
    let app = store::apps::app_by_uuid(&core.db, payload.app_uuid)
        .await?
        .ok_or_else(|| Error::Failed(anyhow::anyhow!("the app of a meter read is gone")))?;
    let mut tx = core.db.begin().await?;
    read_meter_in(&mut tx, core, clock, &app, account_uuid, payload).await?;
    Ok(tx)
}

async fn read_meter_in(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
    payload: &ReadPayload,
) -> Result<(), Error<BillingError>> {
    if let Some((account, prepared)) =
        prepare_read(tx, core, clock, app, account_uuid, payload).await?
    {
        let bill = ReadyBill {
            clock,
            app,
            account,
            prepared,
        };
        issue_bills(tx, core, vec![bill]).await?;
    }
    Ok(())
}

/// A cycle's read of `payload` up to its invoice's number: the next read scheduled and the
/// bill prepared (`prepare_bill`), with the account it bills; `None` when there is nothing to
/// bill.
async fn prepare_read(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account_uuid: Uuid,
    payload: &ReadPayload,
) -> Result<Option<(AccountRow, PreparedBill)>, Error<BillingError>> {
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(None);
    };
    let location = store::enrollment::locations_of_account(&mut *tx, account_uuid)
        .await?
        .into_iter()
        .find(|l| l.uuid == payload.location_uuid);
    let Some(location) = location.filter(|l| l.is_service_active) else {
        return Ok(None);
    };
    let when = payload.at.min(clock.now());
    let period_end = payload.read_date - Duration::days(1);
    let next = usage::next_read_date(&location.esi_id, payload.read_date);
    schedule_read(tx, clock, app.uuid, &location, next).await?;
    let prepared = prepare_bill(
        tx,
        core,
        clock,
        app,
        &account,
        &location,
        payload.read_date,
        period_end,
        when,
    )
    .await?;
    match prepared {
        Ok(prepared) => Ok(prepared.map(|p| (account, p))),
        Err(why) => {
            tracing::error!(location = %location.uuid, error = %why, "a cycle could not be billed");
            Err(Error::Refused(why))
        }
    }
}

/// One of several due cycle reads that `read_meters` bills together: the read's account, its
/// clock and its payload.
pub struct DueRead<'a> {
    pub clock: &'a AccountClock,
    pub account_uuid: Uuid,
    pub payload: &'a ReadPayload,
}

/// Several cycles' reads, each as `read_meter` does it, in one transaction (which the caller
/// commits with the jobs' ends): the reads and bills first, then one block of invoice numbers
/// for all of them (gap-free, in the order of `reads`) and what carries the numbers, so that
/// the counter is held for the batch's last writes only. Any read refused (its stored data
/// cannot be read) refuses the batch: the caller drops `tx` and runs each read alone.
pub async fn read_meters(core: &Core, reads: &[DueRead<'_>]) -> Result<Tx, Error<BillingError>> {
    // Read before the transaction: on SQLite the transaction holds the one writer.
    // Each read's app, as its index in `apps`.
    let mut apps: Vec<AppRow> = Vec::new();
    let mut read_apps = Vec::with_capacity(reads.len());
    for read in reads {
        let index = match apps.iter().position(|a| a.uuid == read.payload.app_uuid) {
            Some(index) => index,
            None => {
                let app = store::apps::app_by_uuid(&core.db, read.payload.app_uuid)
                    .await?
                    .ok_or_else(|| {
                        Error::Failed(anyhow::anyhow!("the app of a meter read is gone"))
                    })?;
                apps.push(app);
                apps.len() - 1
            }
        };
        read_apps.push(index);
    }
    let mut tx = core.db.begin().await?;
    let mut bills = Vec::new();
    for (read, app) in reads.iter().zip(read_apps) {
        let app = &apps[app];
        let prepared = prepare_read(
            &mut tx,
            core,
            read.clock,
            app,
            read.account_uuid,
            read.payload,
        )
        .await?;
        if let Some((account, prepared)) = prepared {
            bills.push(ReadyBill {
                clock: read.clock,
                app,
                account,
                prepared,
            });
        }
    }
    issue_bills(&mut tx, core, bills).await?;
    Ok(tx)
}

/// The final bill when service ends on `final_date`: the last read covers the days through it,
/// in `tx`. Refused (the caller drops `tx`) when the cycle's stored data cannot be read.
#[allow(clippy::too_many_arguments)]
pub async fn final_bill(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    location: &LocationRow,
    final_date: NaiveDate,
    when: DateTime<Utc>,
) -> Result<Option<InvoiceRow>, Error<BillingError>> {
    // The bill through the final service date is the final bill (the deposit is applied).
    let location = LocationRow {
        final_service_date: Some(final_date),
        ..location.clone()
    };
    match bill_cycle(
        tx, core, clock, app, account, &location, final_date, final_date, when,
    )
    .await?
    {
        Ok(invoice) => Ok(invoice),
        Err(why) => {
            tracing::error!(location = %location.uuid, error = %why, "a final bill could not be billed");
            Err(Error::Refused(why))
        }
    }
}

/// A single-use session for the processor's card form, for a card of `account_uuid`.
pub async fn payment_session(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<SetupSession, ProcessorError> {
    core.processor_for(app)
        .await?
        .start_session(account_uuid)
        .await
}

/// The card the processor holds as `payment_method_id` becomes the account's payment method
/// (unless it is already), with its event and the account's refreshed status, in one
/// transaction.
pub async fn ensure_card(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    payment_method_id: &str,
) -> Result<CardRow, Error<ProcessorError>> {
    let app_uuid = app.uuid;
    let card = core
        .processor_for(app)
        .await
        .map_err(Error::Refused)?
        .read_card(account_uuid, payment_method_id.trim())
        .await
        .map_err(Error::Refused)?;
    let current = store::payments::current_payment_method(&core.db, account_uuid).await?;
    if current.as_ref() == Some(&card) {
        return Ok(card);
    }
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let now = core.clock.now();
    let mut tx = core.db.begin().await?;
    attach_card(&mut tx, app_uuid, account_uuid, &card, now).await?;
    // A card that replaces another is told to the customer, so that a change they did not
    // make is seen.
    if let Some(previous) = current {
        if let Some(account) =
            store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid).await?
        {
            mail::queue_to_account(
                &mut tx,
                &clock,
                app,
                &account,
                &Template::CardChanged(CardChanged {
                    first_name: account.first_name.clone(),
                    card: card_name(&card.brand, &card.last4),
                    previous: Some(card_name(&previous.brand, &previous.last4)),
                    changed_on: clock.today(),
                }),
            )
            .await?;
        }
    }
    super::follow_up::refresh_status(&mut tx, &core.clock, app_uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(card)
}
