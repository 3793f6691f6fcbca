//! Live payments after the charge: the card processor's webhooks to a live app (signature
//! checked with the app's signing secret, each event handled once) reconcile what the processor
//! says happened to a payment (it succeeded after all, it failed after all, it was refunded, it
//! is disputed) into the payment, its invoice and our own events; and the operator refunds a
//! succeeded payment, in full or in part, from the dashboard.

use chrono::Utc;
use uuid::Uuid;

use super::{audit::Actor, Error};
use crate::{
    adapters::payments::{PaymentProcessor, ProcessorError, RefundOutcome, RefundRequest},
    clock::AccountClock,
    config::CardProcessorOrigins,
    domain::{
        billing::{InvoiceStatus, PaymentStatus},
        events::{Event, PaymentAttempt},
        hosted::LinkPurpose,
        market::market_date,
        processor_events::{self, PaymentChange, SignatureError},
    },
    mail::templates::{PaymentFailed, Template},
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow, RefundRow},
        events::NewEvent,
        Tx,
    },
};

/// A payment the card's bank wants its customer to confirm, as the page for it shows it.
pub enum Authentication {
    /// Waiting: what the processor's component confirms it with.
    Waiting {
        app: Box<AppRow>,
        invoice_number: String,
        amount_cents: i64,
        publishable_key: String,
        client_secret: String,
        processor: CardProcessorOrigins,
    },
    /// Nothing is left to confirm: it went through, or it no longer waits at the processor.
    Settled { app: Box<AppRow>, paid: bool },
    /// No such payment of the account waiting for it, or the processor cannot be asked now.
    Unavailable { app: Option<Box<AppRow>> },
}

/// The payment `payment_uuid` of the account, for the page where the customer confirms it
/// with their bank: the processor's client secret of a payment still waiting for it (asked of
/// the processor each time, never stored).
pub async fn payment_to_authenticate(
    core: &Core,
    account_uuid: Uuid,
    payment_uuid: Uuid,
) -> store::Result<Authentication> {
    let Some(account) = store::accounts::account_by_uuid(&core.db, account_uuid).await? else {
        return Ok(Authentication::Unavailable { app: None });
    };
    let Some(app) = store::apps::app_by_uuid(&core.db, account.app_uuid).await? else {
        return Ok(Authentication::Unavailable { app: None });
    };
    let app = Box::new(app);
    let payment = store::billing::payment_of_account(&core.db, account.uuid, payment_uuid).await?;
    let invoice = match &payment {
        Some(p) => store::billing::invoice(&core.db, p.invoice_uuid).await?,
        None => None,
    };
    let (Some(payment), Some(invoice)) = (payment, invoice) else {
        return Ok(Authentication::Unavailable { app: Some(app) });
    };
    if payment.status == PaymentStatus::Succeeded || invoice.status == InvoiceStatus::Paid {
        return Ok(Authentication::Settled { app, paid: true });
    }
    let waiting = payment.failure_code.as_deref() == Some(super::invoices::AUTHENTICATION_REQUIRED);
    let (Some(payment_id), true) = (payment.processor_payment_id.as_deref(), waiting) else {
        return Ok(Authentication::Unavailable { app: Some(app) });
    };
    let (Ok(processor), Some(origins)) =
        (core.processor_for(&app).await, core.config.card_processor())
    else {
        return Ok(Authentication::Unavailable { app: Some(app) });
    };
    Ok(match processor.authentication_secret(payment_id).await {
        Ok(Some(client_secret)) => Authentication::Waiting {
            invoice_number: invoice.number,
            amount_cents: payment.amount_cents,
            publishable_key: app.payment_publishable_key.clone(),
            client_secret,
            processor: origins,
            app,
        },
        Ok(None) => Authentication::Settled { app, paid: false },
        Err(_) => Authentication::Unavailable { app: Some(app) },
    })
}

/// Why a delivery of the processor's webhook was refused; nothing was written.
#[derive(Debug)]
pub enum ProcessorWebhookRefused {
    /// No live app of this id.
    AppMissing,
    /// The app has no signing secret of the processor's webhooks.
    SecretMissing,
    /// The signature header is missing, wrong or too old.
    Signature(SignatureError),
    /// Signed, but not an event we can read.
    Unreadable,
}

/// What became of a trusted delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Handled now (whether or not it changed one of our payments).
    Handled,
    /// This event was handled before: nothing changed.
    AlreadyHandled,
}

fn refused<T>(why: ProcessorWebhookRefused) -> Result<T, Error<ProcessorWebhookRefused>> {
    Err(Error::Refused(why))
}

/// One delivery of the processor's webhook to the live app `app_uuid`: trusted only when
/// `signature` matches `body` under the app's secret and was made within the tolerance of the
/// real time (the processor's clock, not an account's); an event already handled changes
/// nothing; the payment it names, if it is one of the app's, is reconciled.
pub async fn receive_webhook(
    core: &Core,
    app_uuid: Uuid,
    signature: Option<&str>,
    body: &[u8],
) -> Result<Received, Error<ProcessorWebhookRefused>> {
    let Some(app) = store::apps::app_by_uuid(&core.db, app_uuid)
        .await?
        .filter(|a| a.environment == app::api::Environment::Live.as_str())
    else {
        return refused(ProcessorWebhookRefused::AppMissing);
    };
    let Some(secret) = store::payments::app_webhook_secret_sealed(&core.db, app.uuid)
        .await?
        .and_then(|sealed| core.pii.open(&sealed).ok())
    else {
        return refused(ProcessorWebhookRefused::SecretMissing);
    };
    let Some(signature) = signature else {
        return refused(ProcessorWebhookRefused::Signature(
            SignatureError::Malformed,
        ));
    };
    if let Err(why) = processor_events::verify(signature, body, &secret, Utc::now()) {
        return refused(ProcessorWebhookRefused::Signature(why));
    }
    let delivery = processor_events::parse(body)
        .map_err(|_| Error::Refused(ProcessorWebhookRefused::Unreadable))?;
    let payment_id = match &delivery.change {
        PaymentChange::Succeeded { payment_id }
        | PaymentChange::Failed { payment_id, .. }
        | PaymentChange::Refunded { payment_id, .. }
        | PaymentChange::Disputed { payment_id, .. } => Some(payment_id.clone()),
        PaymentChange::CardSaved {
            customer_id,
            payment_method_id,
        } => {
            // Before the event counts as handled: a processor that cannot be read now gets an
            // error, and its retry attaches the card.
            card_saved(core, &app, customer_id, payment_method_id).await?;
            None
        }
        PaymentChange::Other => None,
    };
    let mut tx = core.db.begin().await?;
    if !store::payments::record_processor_event(
        &mut tx,
        app.uuid,
        &delivery.id,
        &delivery.kind,
        core.clock.now(),
    )
    .await?
    {
        return Ok(Received::AlreadyHandled);
    }
    let payment = match &payment_id {
        Some(id) => store::billing::payment_by_processor_id(&mut tx, app.uuid, id).await?,
        None => None,
    };
    let Some(payment) = payment else {
        tx.commit().await?;
        return Ok(Received::Handled);
    };
    let clock = core
        .clock
        .for_account(&core.db, payment.account_uuid)
        .await?;
    let account =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, payment.account_uuid).await?;
    let invoice = store::billing::invoice(&mut tx, payment.invoice_uuid).await?;
    let (Some(account), Some(invoice)) = (account, invoice) else {
        tx.commit().await?;
        return Ok(Received::Handled);
    };
    let changed = Reconcile {
        core,
        clock: &clock,
        app: &app,
        account: &account,
        invoice: &invoice,
        payment: &payment,
    }
    .apply(&mut tx, &delivery.change)
    .await?;
    tx.commit().await?;
    if changed {
        core.account_changed(account.uuid);
    }
    Ok(Received::Handled)
}

/// A card the processor saved for the customer of one of the app's accounts becomes the
/// account's card, as `ensure-payment-method-added` would make it (with the change notice when
/// it replaces another): a customer whose flow closed before it told us keeps the card they
/// gave. Another customer's card, or one the processor no longer has, changes nothing.
async fn card_saved(
    core: &Core,
    app: &AppRow,
    customer_id: &str,
    payment_method_id: &str,
) -> Result<(), Error<ProcessorWebhookRefused>> {
    let Some(account_uuid) =
        store::payments::account_of_processor_customer(&core.db, app.uuid, customer_id).await?
    else {
        return Ok(());
    };
    match super::billing::ensure_card(core, app, account_uuid, payment_method_id).await {
        Ok(_) | Err(Error::Refused(ProcessorError::NotFound)) => Ok(()),
        Err(Error::Refused(e)) => Err(Error::Failed(anyhow::anyhow!(
            "the saved card could not be read from the processor: {e}"
        ))),
        Err(Error::Failed(e)) => Err(Error::Failed(e)),
    }
}

/// A payment of ours, with its invoice and account, and what the processor now says of it.
struct Reconcile<'a> {
    core: &'a Core,
    clock: &'a AccountClock,
    app: &'a AppRow,
    account: &'a AccountRow,
    invoice: &'a InvoiceRow,
    payment: &'a PaymentRow,
}

impl Reconcile<'_> {
    fn attempt(&self, failure_code: Option<String>) -> PaymentAttempt {
        PaymentAttempt {
            account_uuid: self.account.uuid,
            location_uuid: self.invoice.location_uuid,
            invoice_number: self.invoice.number.clone(),
            payment_uuid: self.payment.uuid,
            amount_cents: self.payment.amount_cents,
            failure_code,
        }
    }

    async fn event(&self, tx: &mut Tx, event: Event) -> store::Result<()> {
        store::events::insert_event(tx, &NewEvent::of(self.app.uuid, &event, self.clock.now()))
            .await
            .map(|_| ())
    }

    /// The payment's outcome becomes `status` (with the processor's failure code), in `tx`;
    /// false when it was that already.
    async fn settle(
        &self,
        tx: &mut Tx,
        status: PaymentStatus,
        failure_code: Option<&str>,
    ) -> store::Result<bool> {
        if self.payment.status == status {
            return Ok(false);
        }
        store::billing::set_payment_outcome(tx, self.payment.uuid, status, failure_code).await?;
        Ok(true)
    }

    /// Writes the change in `tx`: true when something of ours changed.
    async fn apply(&self, tx: &mut Tx, change: &PaymentChange) -> store::Result<bool> {
        let now = self.clock.now();
        let (payment, invoice) = (self.payment, self.invoice);
        match change {
            PaymentChange::Succeeded { .. } => {
                if !self.settle(tx, PaymentStatus::Succeeded, None).await? {
                    return Ok(false);
                }
                self.event(tx, Event::PaymentSuccessful(self.attempt(None)))
                    .await?;
                if invoice.status.is_payable() {
                    store::billing::set_invoice_status(
                        tx,
                        invoice.uuid,
                        InvoiceStatus::Paid,
                        Some(now),
                        now,
                    )
                    .await?;
                    self.event(
                        tx,
                        Event::InvoicePaid {
                            account_uuid: self.account.uuid,
                            location_uuid: invoice.location_uuid,
                            invoice_number: invoice.number.clone(),
                            total_cents: invoice.total_cents,
                            paid_at: now,
                        },
                    )
                    .await?;
                }
                Ok(true)
            }
            PaymentChange::Failed { failure_code, .. } => {
                if !self
                    .settle(tx, PaymentStatus::Failed, Some(failure_code))
                    .await?
                {
                    return Ok(false);
                }
                // The invoice this payment had settled is owed again.
                if invoice.status == InvoiceStatus::Paid {
                    let status = if market_date(now) > invoice.payment_due_date {
                        InvoiceStatus::PastDue
                    } else {
                        InvoiceStatus::Open
                    };
                    store::billing::set_invoice_status(tx, invoice.uuid, status, None, now).await?;
                }
                self.event(
                    tx,
                    Event::PaymentFailed(self.attempt(Some(failure_code.clone()))),
                )
                .await?;
                super::follow_up::mail_with_link(
                    tx,
                    self.core,
                    self.clock,
                    self.app,
                    self.account,
                    LinkPurpose::UpdateCard,
                    Some(&invoice.number),
                    |link| {
                        Template::PaymentFailed(PaymentFailed {
                            first_name: self.account.first_name.clone(),
                            invoice_number: invoice.number.clone(),
                            total_cents: invoice.total_cents,
                            due_date: invoice.payment_due_date,
                            retry_on: None,
                            link: Some(link),
                        })
                    },
                )
                .await?;
                Ok(true)
            }
            PaymentChange::Refunded { refunded_cents, .. } => {
                // The processor says how much is refunded in all: what we have not recorded
                // yet is a refund made at the processor.
                let total = (*refunded_cents).min(payment.amount_cents);
                let more = total - payment.refunded_cents;
                if more <= 0 {
                    return Ok(false);
                }
                record_refund(tx, self, more, None, "processor", None).await?;
                Ok(true)
            }
            PaymentChange::Disputed { amount_cents, .. } => {
                if !store::billing::set_payment_disputed(tx, payment.uuid, now).await? {
                    return Ok(false);
                }
                self.event(
                    tx,
                    Event::PaymentDisputed {
                        account_uuid: self.account.uuid,
                        location_uuid: invoice.location_uuid,
                        invoice_number: invoice.number.clone(),
                        payment_uuid: payment.uuid,
                        amount_cents: *amount_cents,
                    },
                )
                .await?;
                Ok(true)
            }
            PaymentChange::CardSaved { .. } | PaymentChange::Other => Ok(false),
        }
    }
}

/// Records a refund of `amount_cents` of the payment with `account.payment_refunded`.
async fn record_refund(
    tx: &mut Tx,
    r: &Reconcile<'_>,
    amount_cents: i64,
    processor_refund_id: Option<String>,
    source: &str,
    reason: Option<String>,
) -> store::Result<RefundRow> {
    let refund = RefundRow {
        uuid: Uuid::new_v4(),
        payment_uuid: r.payment.uuid,
        account_uuid: r.account.uuid,
        amount_cents,
        processor_refund_id,
        source: source.to_owned(),
        reason,
        created_at: r.clock.now(),
    };
    store::billing::insert_refund(tx, &refund).await?;
    r.event(
        tx,
        Event::PaymentRefunded {
            account_uuid: r.account.uuid,
            location_uuid: r.invoice.location_uuid,
            invoice_number: r.invoice.number.clone(),
            payment_uuid: r.payment.uuid,
            amount_cents,
            refunded_cents: r.payment.refunded_cents + amount_cents,
            source: source.to_owned(),
        },
    )
    .await?;
    Ok(refund)
}

/// Why a refund was refused; nothing was refunded or written.
#[derive(Debug)]
pub enum RefundRefused {
    /// No such account, or not the caller's to see.
    AccountMissing,
    /// No such payment of the account.
    PaymentMissing,
    /// Only a succeeded payment the processor knows can be refunded.
    NotRefundable,
    /// The amount is not a number of dollars and cents between $0.01 and what is left.
    AmountInvalid { left_cents: i64 },
    /// The processor would not refund it, in its own words.
    ProcessorRefused(String),
    /// The processor could not be asked.
    Processor(ProcessorError),
}

/// Reads an operator's amount in dollars ("12.34", "$12", "12.5"): cents, or `None`.
pub fn parse_dollars(text: &str) -> Option<i64> {
    let text = text.trim().trim_start_matches('$').replace(',', "");
    let (whole, cents) = match text.split_once('.') {
        Some((w, c)) if (1..=2).contains(&c.len()) => (w, format!("{c:0<2}")),
        Some(_) => return None,
        None => (text.as_str(), "00".to_owned()),
    };
    if whole.is_empty() && cents == "00" {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !(whole.is_empty() || digits(whole)) || !digits(&cents) {
        return None;
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let cents: i64 = cents.parse().ok()?;
    Some(whole * 100 + cents)
}

/// The operator refunds `amount` (dollars; empty: everything not yet refunded) of a succeeded
/// payment of `account_uuid` through the app's processor: the refund recorded on the payment,
/// `account.payment_refunded`, and the audit log, in one transaction. The same refund asked for
/// twice (a form sent again) uses the same idempotency key, so the processor refunds once.
pub async fn refund_payment(
    core: &Core,
    actor: &Actor,
    account_uuid: Uuid,
    payment_uuid: Uuid,
    amount: &str,
    reason: &str,
) -> Result<RefundRow, Error<RefundRefused>> {
    let no = |why| Error::Refused(why);
    let account = store::accounts::account_by_uuid(&core.db, account_uuid)
        .await?
        .ok_or(no(RefundRefused::AccountMissing))?;
    let app = store::apps::app_by_uuid(&core.db, account.app_uuid)
        .await?
        .ok_or(no(RefundRefused::AccountMissing))?;
    let payment = store::billing::payment_of_account(&core.db, account.uuid, payment_uuid)
        .await?
        .ok_or(no(RefundRefused::PaymentMissing))?;
    let Some(processor_payment_id) = payment
        .processor_payment_id
        .clone()
        .filter(|_| payment.status == PaymentStatus::Succeeded)
    else {
        return Err(no(RefundRefused::NotRefundable));
    };
    let left_cents = payment.amount_cents - payment.refunded_cents;
    if left_cents <= 0 {
        return Err(no(RefundRefused::NotRefundable));
    }
    let amount_cents = if amount.trim().is_empty() {
        left_cents
    } else {
        parse_dollars(amount)
            .filter(|c| (1..=left_cents).contains(c))
            .ok_or(no(RefundRefused::AmountInvalid { left_cents }))?
    };
    let reason = reason.trim();
    let reason = (!reason.is_empty()).then(|| reason.chars().take(500).collect::<String>());
    let processor = core
        .processor_for(&app)
        .await
        .map_err(|e| no(RefundRefused::Processor(e)))?;
    let request = RefundRequest {
        payment_id: processor_payment_id,
        amount_cents,
        // What was refunded before and this amount name this refund.
        idempotency_key: format!(
            "refund-{}-{}-{}",
            payment.uuid, payment.refunded_cents, amount_cents
        ),
    };
    let refund_id = match processor.refund(&request).await {
        Ok(RefundOutcome::Refunded { refund_id }) => refund_id,
        Ok(RefundOutcome::Refused { reason }) => {
            return Err(no(RefundRefused::ProcessorRefused(reason)))
        }
        Err(ProcessorError::NotFound) => return Err(no(RefundRefused::NotRefundable)),
        Err(e) => return Err(no(RefundRefused::Processor(e))),
    };
    let clock = core.clock.for_account(&core.db, account.uuid).await?;
    let mut tx = core.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account.uuid)
        .await?
        .ok_or(no(RefundRefused::AccountMissing))?;
    // Read again under the account's lock: a refund the processor's webhook recorded meanwhile
    // counts.
    let payment = store::billing::payment_of_account(&mut tx, account.uuid, payment.uuid)
        .await?
        .ok_or(no(RefundRefused::PaymentMissing))?;
    let invoice = store::billing::invoice(&mut tx, payment.invoice_uuid)
        .await?
        .ok_or(no(RefundRefused::PaymentMissing))?;
    let r = Reconcile {
        core,
        clock: &clock,
        app: &app,
        account: &account,
        invoice: &invoice,
        payment: &payment,
    };
    let amount_cents = amount_cents.min(payment.amount_cents - payment.refunded_cents);
    if amount_cents <= 0 {
        // The webhook of this very refund came first and recorded it.
        return Err(no(RefundRefused::NotRefundable));
    }
    let refund = record_refund(
        &mut tx,
        &r,
        amount_cents,
        Some(refund_id),
        "operator",
        reason.clone(),
    )
    .await?;
    super::audit::record(
        &mut tx,
        actor,
        "payment.refunded",
        &format!("payment:{}", payment.uuid),
        serde_json::json!({
            "account_uuid": account.uuid,
            "invoice_number": invoice.number,
            "amount_cents": amount_cents,
            "refunded_cents": payment.refunded_cents + amount_cents,
            "reason": reason,
        }),
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    core.account_changed(account.uuid);
    Ok(refund)
}

#[cfg(test)]
mod tests {
    use super::parse_dollars;

    #[test]
    fn an_operators_amount_reads_as_cents() {
        assert_eq!(parse_dollars("12.34"), Some(1234));
        assert_eq!(parse_dollars(" $1,012.5 "), Some(101_250));
        assert_eq!(parse_dollars("7"), Some(700));
        assert_eq!(parse_dollars(".99"), Some(99));
        for bad in [
            "",
            "$",
            "1.234",
            "-5",
            "1e3",
            "abc",
            "12.",
            "1.2.3",
            "9999999999",
        ] {
            assert_eq!(parse_dollars(bad), None, "{bad}");
        }
    }
}
