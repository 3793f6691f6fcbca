//! What happens to an issued invoice: the customer reads it (its period's usage, its payments,
//! its PDF) and may pay it early with the saved card; auto-pay charges it on its due date, every
//! attempt is recorded with its events, and an invoice still open the day after turns past due.
//! Issuing invoices is the billing cycle's (`services::billing`).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{follow_up::schedule_invoice_job, Error};
use crate::domain::jobs::InvoicePayload;
use crate::{
    adapters::payments::{
        ChargeOutcome, ChargeRequest, PaymentProcessor, Processor, ProcessorError,
    },
    clock::AccountClock,
    documents::{self, invoice as pdf, InvoiceRecords},
    domain::{
        billing::{
            auto_pay_retry_after, contract_on, ChargeGroup, InvoiceStatus, PaymentInitiator,
            PaymentStatus,
        },
        events::{Event, PaymentAttempt},
        hosted::LinkPurpose,
        market::market_date,
    },
    mail::{
        self,
        templates::{AuthenticatePayment, PastDueNotice, PaymentFailed, PaymentReceipt, Template},
    },
    outbox::{Job, JobKind},
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow, RefundRow, UsageDayRow},
        events::NewEvent,
        Tx,
    },
};

/// Why an invoice request was refused; nothing was written.
#[derive(Debug)]
pub enum InvoiceRefused {
    /// No invoice of this number on the account.
    InvoiceMissing,
    /// A signed link names an account or invoice that is gone (the link says no more).
    LinkedInvoiceMissing,
    /// The account itself is gone.
    AccountMissing,
    /// The invoice's location is gone.
    LocationMissing,
    /// Paid or voided already.
    NotPayable { number: String, status: String },
    /// No card on file to pay with.
    NoCard,
    /// The processor could not be asked.
    Processor(ProcessorError),
}

/// An invoice with what its detail shows: its charges, its period's days and its payments.
pub struct InvoiceDetail {
    pub invoice: InvoiceRow,
    pub groups: Vec<ChargeGroup>,
    pub days: Vec<UsageDayRow>,
    pub payments: Vec<PaymentRow>,
    /// The refunds of those payments, oldest first.
    pub refunds: Vec<RefundRow>,
}

/// An invoice as a PDF.
pub struct InvoicePdf {
    pub number: String,
    pub bytes: Vec<u8>,
}

async fn invoice_of(
    core: &Core,
    account_uuid: Uuid,
    number: &str,
) -> Result<InvoiceRow, Error<InvoiceRefused>> {
    store::billing::invoice_by_number(&core.db, account_uuid, number.trim())
        .await?
        .ok_or(Error::Refused(InvoiceRefused::InvoiceMissing))
}

/// The charges stored with an invoice; unreadable ones are a broken row, never no charges.
fn charge_groups(row: &InvoiceRow) -> Result<Vec<ChargeGroup>, Error<InvoiceRefused>> {
    serde_json::from_str(&row.charges).map_err(|e| Error::Failed(e.into()))
}

async fn detail_of(
    core: &Core,
    invoice: InvoiceRow,
) -> Result<InvoiceDetail, Error<InvoiceRefused>> {
    let groups = charge_groups(&invoice)?;
    let days = store::billing::usage_days(
        &core.db,
        invoice.location_uuid,
        invoice.billing_period_start,
        invoice.billing_period_end,
    )
    .await?;
    let payments = store::billing::payments_of_invoice(&core.db, invoice.uuid).await?;
    let refunds = store::billing::refunds_of_invoice(&core.db, invoice.uuid).await?;
    Ok(InvoiceDetail {
        invoice,
        groups,
        days,
        payments,
        refunds,
    })
}

/// The account's invoice `number` with its charges, period and payments.
pub async fn invoice_detail(
    core: &Core,
    account_uuid: Uuid,
    number: &str,
) -> Result<InvoiceDetail, Error<InvoiceRefused>> {
    let invoice = invoice_of(core, account_uuid, number).await?;
    detail_of(core, invoice).await
}

/// The account's invoice `number` as a PDF, for a request of the account.
pub async fn invoice_pdf(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    number: &str,
) -> Result<InvoicePdf, Error<InvoiceRefused>> {
    let invoice = invoice_of(core, account_uuid, number).await?;
    let account = store::accounts::account_of_app(&core.db, app.uuid, account_uuid)
        .await?
        .ok_or(Error::Refused(InvoiceRefused::AccountMissing))?;
    render_pdf(core, app, &account, invoice).await
}

/// The invoice PDF a signed link names (the link itself was checked by the caller).
pub async fn linked_invoice_pdf(
    core: &Core,
    account_uuid: Uuid,
    number: &str,
) -> Result<InvoicePdf, Error<InvoiceRefused>> {
    let missing = || Error::Refused(InvoiceRefused::LinkedInvoiceMissing);
    let account = store::accounts::account_by_uuid(&core.db, account_uuid)
        .await?
        .ok_or_else(missing)?;
    let app = store::apps::app_by_uuid(&core.db, account.app_uuid)
        .await?
        .ok_or_else(missing)?;
    let invoice = store::billing::invoice_by_number(&core.db, account.uuid, number)
        .await?
        .ok_or_else(missing)?;
    render_pdf(core, &app, &account, invoice).await
}

async fn render_pdf(
    core: &Core,
    app: &AppRow,
    account: &AccountRow,
    invoice: InvoiceRow,
) -> Result<InvoicePdf, Error<InvoiceRefused>> {
    let location =
        store::enrollment::location_of_account(&core.db, account.uuid, invoice.location_uuid)
            .await?
            .ok_or(Error::Refused(InvoiceRefused::LocationMissing))?;
    let tdu = store::market::tdus(&core.db)
        .await?
        .into_iter()
        .find(|t| t.name == location.tdu);
    let card = store::payments::current_payment_method(&core.db, account.uuid).await?;
    let contracts = store::enrollment::billing_contracts_of_location(&core.db, &location).await?;
    let contract = contract_on(
        &contracts,
        |c| c.start_date,
        |c| c.end_date,
        invoice.billing_period_end,
    );
    let reads = store::billing::meter_reads_within(
        &core.db,
        location.uuid,
        invoice.billing_period_start,
        invoice.billing_period_end,
    )
    .await?;
    let detail = detail_of(core, invoice).await?;
    let logo = super::apps::uploaded_logo(&core.db, app).await?;
    let deposit = store::credit_reviews::latest_deposit(&core.db, account.uuid).await?;
    let doc = documents::invoice_document(InvoiceRecords {
        app,
        account,
        location: &location,
        tdu: tdu.as_ref(),
        invoice: &detail.invoice,
        groups: detail.groups,
        days: detail.days,
        payments: &detail.payments,
        card: card.as_ref(),
        contract,
        reads: &reads,
        provider: &core.config.provider,
        logo: logo.as_ref().map(|l| l.bytes.as_slice()),
        deposit: deposit.as_ref(),
    });
    Ok(InvoicePdf {
        number: detail.invoice.number,
        bytes: pdf::render(&doc),
    })
}

/// Pays the account's invoice `number` now with the saved card: the attempt, declined or not,
/// is recorded with its events (`record_payment`). A request sent twice at
/// once charges with the same key, so the processor answers the same payment, and the second
/// request answers the payment the first recorded.
pub async fn pay_invoice(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    number: &str,
) -> Result<(InvoiceRow, PaymentRow), Error<InvoiceRefused>> {
    let invoice = invoice_of(core, account_uuid, number).await?;
    if !invoice.status.is_payable() {
        return Err(Error::Refused(InvoiceRefused::NotPayable {
            number: invoice.number,
            status: invoice.status.to_string(),
        }));
    }
    let card = store::payments::current_payment_method(&core.db, account_uuid)
        .await?
        .ok_or(Error::Refused(InvoiceRefused::NoCard))?;
    let attempts = store::billing::payments_of_invoice(&core.db, invoice.uuid).await?;
    let refused = |e| Error::Refused(InvoiceRefused::Processor(e));
    let processor = core.processor_for(app).await.map_err(refused)?;
    let key = format!("invoice-{}-customer-{}", invoice.uuid, attempts.len() + 1);
    let charged = charge_invoice(&processor, &invoice, &card.id, key)
        .await
        .map_err(refused)?;
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Error::Refused(InvoiceRefused::AccountMissing))?;
    if let Charged::Succeeded {
        processor_payment_id,
    } = &charged
    {
        let recorded = store::billing::payments_of_invoice(&mut tx, invoice.uuid)
            .await?
            .into_iter()
            .find(|p| p.processor_payment_id.as_ref() == Some(processor_payment_id));
        if let Some(p) = recorded {
            return Ok((invoice, p));
        }
    }
    let payment = record_payment(
        &mut tx,
        core,
        &clock,
        app,
        &account,
        &invoice,
        charged,
        PaymentInitiator::Customer,
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    Ok((invoice, payment))
}

/// How a charge of an invoice ended.
pub enum Charged {
    Succeeded {
        processor_payment_id: String,
    },
    Failed {
        failure_code: String,
    },
    /// The card's bank wants the customer to confirm it: recorded as failed
    /// (`authentication_required`) until the processor's webhook says they did.
    NeedsAuthentication {
        processor_payment_id: String,
    },
}

/// The failure code of a payment waiting for the customer's authentication.
pub const AUTHENTICATION_REQUIRED: &str = "authentication_required";

/// Charges an invoice's total to the card `payment_method_id`: how it ended, or why the
/// processor could not say. The same `idempotency_key` never charges twice.
pub async fn charge_invoice(
    processor: &Processor,
    invoice: &InvoiceRow,
    payment_method_id: &str,
    idempotency_key: String,
) -> Result<Charged, ProcessorError> {
    let request = ChargeRequest {
        account_uuid: invoice.account_uuid,
        payment_method_id: payment_method_id.to_owned(),
        amount_cents: invoice.total_cents,
        idempotency_key,
    };
    match processor.charge(&request).await {
        Ok(ChargeOutcome::Succeeded { payment_id }) => Ok(Charged::Succeeded {
            processor_payment_id: payment_id,
        }),
        Ok(ChargeOutcome::Declined { decline_code }) => Ok(Charged::Failed {
            failure_code: decline_code,
        }),
        Ok(ChargeOutcome::NeedsAuthentication { payment_id }) => Ok(Charged::NeedsAuthentication {
            processor_payment_id: payment_id,
        }),
        Err(ProcessorError::NotFound) => Ok(Charged::Failed {
            failure_code: "payment_method_missing".to_owned(),
        }),
        Err(e) => Err(e),
    }
}

/// Records one payment attempt of an invoice in `tx`: the payment row, and on success the
/// invoice paid with `account.payment_successful` and `invoice.paid`; on failure
/// `account.payment_failed` and an e-mail asking the customer to pay or update the card.
#[allow(clippy::too_many_arguments)]
pub async fn record_payment(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice: &InvoiceRow,
    charged: Charged,
    initiated_by: PaymentInitiator,
    when: DateTime<Utc>,
) -> store::Result<PaymentRow> {
    let (status, failure_code, processor_payment_id) = match charged {
        Charged::Succeeded {
            processor_payment_id,
        } => (PaymentStatus::Succeeded, None, Some(processor_payment_id)),
        Charged::Failed { failure_code } => (PaymentStatus::Failed, Some(failure_code), None),
        Charged::NeedsAuthentication {
            processor_payment_id,
        } => (
            PaymentStatus::Failed,
            Some(AUTHENTICATION_REQUIRED.to_owned()),
            Some(processor_payment_id),
        ),
    };
    let payment = PaymentRow {
        uuid: Uuid::new_v4(),
        invoice_uuid: invoice.uuid,
        account_uuid: account.uuid,
        amount_cents: invoice.total_cents,
        status,
        initiated_by,
        failure_code,
        processor_payment_id,
        attempted_at: when,
        refunded_cents: 0,
        disputed_at: None,
    };
    store::billing::insert_payment(tx, &payment).await?;
    let now = clock.now();
    let event = |event: Event| NewEvent::of(app.uuid, &event, now);
    let attempt = PaymentAttempt {
        account_uuid: account.uuid,
        location_uuid: invoice.location_uuid,
        invoice_number: invoice.number.clone(),
        payment_uuid: payment.uuid,
        amount_cents: payment.amount_cents,
        failure_code: payment.failure_code.clone(),
    };
    if payment.status == PaymentStatus::Succeeded {
        store::billing::set_invoice_status(tx, invoice.uuid, InvoiceStatus::Paid, Some(when), when)
            .await?;
        store::events::insert_event(tx, &event(Event::PaymentSuccessful(attempt))).await?;
        store::events::insert_event(
            tx,
            &event(Event::InvoicePaid {
                account_uuid: account.uuid,
                location_uuid: invoice.location_uuid,
                invoice_number: invoice.number.clone(),
                total_cents: invoice.total_cents,
                paid_at: when,
            }),
        )
        .await?;
        // Every payment is acknowledged with a receipt.
        let card = store::payments::current_payment_method(&mut *tx, account.uuid).await?;
        mail::queue_to_account(
            tx,
            clock,
            app,
            account,
            &Template::PaymentReceipt(PaymentReceipt {
                first_name: account.first_name.clone(),
                amount_cents: payment.amount_cents,
                card: card.map(|c| crate::domain::billing::card_name(&c.brand, &c.last4)),
                invoice_number: Some(invoice.number.clone()),
                deposit: false,
                paid_on: market_date(when),
                reference: payment
                    .processor_payment_id
                    .clone()
                    .unwrap_or_else(|| payment.uuid.to_string()),
                balance_cents: Some((invoice.total_cents - payment.amount_cents).max(0)),
            }),
        )
        .await?;
        super::disconnection::after_payment(tx, clock, app, account, invoice).await?;
    } else if payment.failure_code.as_deref() == Some(AUTHENTICATION_REQUIRED)
        && payment.processor_payment_id.is_some()
    {
        store::events::insert_event(tx, &event(Event::PaymentFailed(attempt))).await?;
        // The payment waits at the processor: the customer confirms it on a hosted page.
        super::follow_up::mail_with_link(
            tx,
            core,
            clock,
            app,
            account,
            LinkPurpose::AuthenticatePayment,
            Some(&payment.uuid.to_string()),
            |link| {
                Template::AuthenticatePayment(AuthenticatePayment {
                    first_name: account.first_name.clone(),
                    invoice_number: invoice.number.clone(),
                    total_cents: invoice.total_cents,
                    due_date: invoice.payment_due_date,
                    link,
                })
            },
        )
        .await?;
    } else {
        store::events::insert_event(tx, &event(Event::PaymentFailed(attempt))).await?;
        // When auto-pay next charges the card (`auto_pay`, on the same rule): on the due date
        // when it has not run yet, else after its first failures.
        let payments = store::billing::payments_of_invoice(&mut *tx, invoice.uuid).await?;
        let auto_failures: Vec<&PaymentRow> = payments
            .iter()
            .filter(|p| {
                p.initiated_by == PaymentInitiator::AutoPay && p.status == PaymentStatus::Failed
            })
            .collect();
        let retry_on = match auto_failures.iter().map(|p| p.attempted_at).max() {
            None => {
                (market_date(when) <= invoice.payment_due_date).then_some(invoice.payment_due_date)
            }
            Some(last) => {
                auto_pay_retry_after(u32::try_from(auto_failures.len()).unwrap_or(u32::MAX))
                    .map(|wait| market_date(last + wait))
                    .filter(|day| *day >= market_date(when))
            }
        };
        super::follow_up::mail_with_link(
            tx,
            core,
            clock,
            app,
            account,
            LinkPurpose::UpdateCard,
            Some(&invoice.number),
            |link| {
                Template::PaymentFailed(PaymentFailed {
                    first_name: account.first_name.clone(),
                    invoice_number: invoice.number.clone(),
                    total_cents: invoice.total_cents,
                    due_date: invoice.payment_due_date,
                    retry_on,
                    link: Some(link),
                })
            },
        )
        .await?;
    }
    Ok(payment)
}

/// How an auto-pay run ended.
pub enum AutoPaid {
    /// Charged, declined or nothing to charge: what was written is in the transaction, to commit
    /// with the job's end.
    Done(Tx),
    /// This app cannot take cards; nothing written.
    CannotCharge(ProcessorError),
    /// The processor could not be reached; nothing written, trying later may work.
    Unreachable(ProcessorError),
}

/// Auto-pay of the invoice of `payload` (due today): charges the saved card for an invoice still
/// to be paid and records the attempt; a decline schedules the next try 2, 4 and 6 days later.
/// Without a card the invoice waits for the customer and turns past due.
pub async fn auto_pay(
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &InvoicePayload,
) -> anyhow::Result<AutoPaid> {
    let mut tx = core.db.begin().await?;
    let invoice = store::billing::invoice(&mut tx, payload.invoice_uuid).await?;
    let earlier = store::billing::payments_of_invoice(&mut tx, payload.invoice_uuid).await?;
    tx.commit().await?;
    let Some(invoice) = invoice.filter(|i| i.status.is_payable()) else {
        return Ok(AutoPaid::Done(core.db.begin().await?));
    };
    let (Some(app), Some(card)) = (
        store::apps::app_by_uuid(&core.db, payload.app_uuid).await?,
        store::payments::current_payment_method(&core.db, account_uuid).await?,
    ) else {
        return Ok(AutoPaid::Done(core.db.begin().await?));
    };
    let failures = earlier
        .iter()
        .filter(|p| {
            p.initiated_by == PaymentInitiator::AutoPay && p.status == PaymentStatus::Failed
        })
        .count();
    let processor = match core.processor_for(&app).await {
        Ok(p) => p,
        Err(e) => return Ok(AutoPaid::CannotCharge(e)),
    };
    let key = format!("invoice-{}-auto-{}", invoice.uuid, failures + 1);
    let charged = match charge_invoice(&processor, &invoice, &card.id, key).await {
        Ok(charged) => charged,
        Err(e) => return Ok(AutoPaid::Unreachable(e)),
    };
    let when = payload.at.min(clock.now());
    let mut tx = core.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return Ok(AutoPaid::Done(tx));
    };
    let failed = matches!(charged, Charged::Failed { .. });
    // Waiting for the customer at the processor: charging again would only ask again.
    let waits_for_customer = matches!(charged, Charged::NeedsAuthentication { .. });
    // Paid meanwhile by the customer: a decline no longer matters, while a success is still
    // recorded so that no money goes unaccounted.
    let still_payable = store::billing::invoice(&mut tx, invoice.uuid)
        .await?
        .map(|i| i.status)
        .is_some_and(InvoiceStatus::is_payable);
    if (failed || waits_for_customer) && !still_payable {
        return Ok(AutoPaid::Done(tx));
    }
    record_payment(
        &mut tx,
        core,
        clock,
        &app,
        &account,
        &invoice,
        charged,
        PaymentInitiator::AutoPay,
        when,
    )
    .await?;
    if failed {
        let next_failures = u32::try_from(failures + 1).unwrap_or(u32::MAX);
        if let Some(wait) = auto_pay_retry_after(next_failures) {
            schedule_invoice_job(&mut tx, clock, Job::AutoPay, &invoice, when + wait).await?;
        }
    }
    Ok(AutoPaid::Done(tx))
}

/// How a past-due run ended.
#[derive(Debug, PartialEq, Eq)]
pub enum PastDue {
    /// Decided: marked past due (written in the transaction), or nothing to do.
    Decided,
    /// The invoice's auto-pay of the due date has not ended yet (running, or waiting for a
    /// worker): nothing written, decide again once it has.
    AutoPayPending,
}

/// The day after the due date, in `tx`: an invoice still open turns past due
/// (`invoice.past_due`, and an e-mail). The decision is taken under the account's lock, which
/// auto-pay also takes to record its charge, and only once the invoice's auto-pay that was due
/// by now has ended: a charge in flight is never overtaken by a notice that it is unpaid.
pub async fn past_due(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &InvoicePayload,
) -> store::Result<PastDue> {
    // Through `tx`: a second connection while it is open could wait on a pool it fills.
    let Some(app) = store::apps::app_in(&mut *tx, payload.app_uuid).await? else {
        return Ok(PastDue::Decided);
    };
    let Some(account) =
        store::accounts::account_of_app_for_update(tx, app.uuid, account_uuid).await?
    else {
        return Ok(PastDue::Decided);
    };
    // The invoice's auto-pay scheduled up to this decision (the due date's; a try after a
    // decline is scheduled days later and does not count) must have ended.
    let pending =
        store::jobs::account_jobs_unfinished(&mut *tx, account_uuid, JobKind::AutoPay.as_str())
            .await?;
    let of_this_invoice = |p: &String| {
        serde_json::from_str::<InvoicePayload>(p)
            .is_ok_and(|p| p.invoice_uuid == payload.invoice_uuid && p.at <= payload.at)
    };
    if pending.iter().any(of_this_invoice) {
        return Ok(PastDue::AutoPayPending);
    }
    let Some(invoice) = store::billing::invoice(&mut *tx, payload.invoice_uuid)
        .await?
        .filter(|i| i.status == InvoiceStatus::Open)
    else {
        return Ok(PastDue::Decided);
    };
    let now = clock.now();
    let when = payload.at.min(now);
    store::billing::set_invoice_status(tx, invoice.uuid, InvoiceStatus::PastDue, None, when)
        .await?;
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app.uuid,
            &Event::InvoicePastDue {
                account_uuid: account.uuid,
                location_uuid: invoice.location_uuid,
                invoice_number: invoice.number.clone(),
                total_cents: invoice.total_cents,
                payment_due_date: invoice.payment_due_date,
            },
            now,
        ),
    )
    .await?;
    // A bill carrying a payment plan's instalment ends the plan; every past-due bill is sent
    // its written disconnection notice.
    super::disconnection::instalment_missed(tx, clock, &app, &account, &invoice).await?;
    let notice =
        super::disconnection::issue_notice(tx, core, clock, &app, &account, &invoice).await?;
    if notice == super::disconnection::Notice::FinalBill {
        // The final bill's written notice is its past-due e-mail: no next bill will carry a
        // late fee, and nothing will be disconnected.
        return Ok(PastDue::Decided);
    }
    let late_fee_cents = super::collections::upcoming_late_fee(tx, app.uuid, &invoice).await?;
    let number = Some(invoice.number.as_str());
    super::follow_up::mail_with_bill_link(tx, core, clock, &app, &account, number, |link| {
        Template::PastDue(PastDueNotice {
            late_fee_cents,
            first_name: account.first_name.clone(),
            invoice_number: invoice.number.clone(),
            total_cents: invoice.total_cents,
            due_date: invoice.payment_due_date,
            link: Some(link),
        })
    })
    .await?;
    Ok(PastDue::Decided)
}
