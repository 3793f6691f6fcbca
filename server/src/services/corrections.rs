//! Corrections of a bill, as the operator makes them in the dashboard: the bill is cancelled
//! (voided, its number kept), a credit note numbered in the same sequence cancels its amount,
//! and a new bill carries the lines recomputed with the corrected consumption (and the
//! cancelled bill's late-fee and payment-plan lines unchanged). What was paid on the cancelled
//! bill counts toward the new one: an overpayment is a credit on the next bill
//! (`credit_lines`) or, as the operator chooses, refunded to the card the bill was paid with
//! through the app's processor (`refund_overpayment`, before the correction's transaction, which
//! records the refunds on their payments); an amount still due is the new bill's, which a
//! payment plan may spread.
//! The customer is e-mailed the corrected bill and why; `invoice.corrected` and
//! `invoice.created` announce it. Every number is taken in the transaction that stores its
//! invoice, so the sequence stays without gaps.

use uuid::Uuid;

use super::{
    audit::{self, Actor},
    Error,
};
use crate::{
    adapters::payments::{PaymentProcessor, ProcessorError, RefundOutcome, RefundRequest},
    domain::{
        billing::{
            self, contract_on, invoice_number, payment_due_date, BillingError, Charge, ChargeGroup,
            InvoiceInput, InvoiceStatus, PaymentInitiator, PaymentStatus, StoredCycle,
        },
        collections::LATE_FEE_GROUP,
        corrections::{
            parse_kwh, parse_reason, settle, split_overpayment, Overpayment, Settlement,
            CREDITS_GROUP, CREDIT_NOTE_GROUP, PAID_GROUP, REFUNDED_GROUP,
        },
        disconnection::PAYMENT_PLAN_GROUP,
        events::Event,
        FieldError,
    },
    mail::templates::{CollectionsMail, Template},
    state::Core,
    store::{
        self,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow, RefundRow},
        corrections::{CorrectionRow, CreditRow},
        events::NewEvent,
        Tx,
    },
};

/// Why a bill was not corrected; nothing was written.
#[derive(Debug)]
pub enum CorrectionRefused {
    Field(FieldError),
    InvoiceMissing,
    /// Cancelled already.
    Voided,
    /// A credit note is not corrected; its bill is.
    CreditNote,
    LocationMissing,
    /// The stored rates or charges cannot be read.
    Unbillable(BillingError),
    /// A refund was asked for, but nothing overpaid was paid by a card that can take it back.
    NotPaidByCard,
    /// The processor would not refund it, in its own words.
    RefundRefused(String),
    /// The processor could not be asked.
    Processor(ProcessorError),
}

impl From<FieldError> for Error<CorrectionRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(CorrectionRefused::Field(e))
    }
}

/// The bills a correction wrote.
pub struct Corrected {
    pub credit_note: InvoiceRow,
    pub invoice: InvoiceRow,
    /// Refunded to the card.
    pub refunded_cents: i64,
}

fn refused<T>(why: CorrectionRefused) -> Result<T, Error<CorrectionRefused>> {
    Err(Error::Refused(why))
}

/// What correcting a bill to a consumption comes to, before anything is written.
struct Assessment {
    original: InvoiceRow,
    location: store::enrollment::LocationRow,
    groups: Vec<ChargeGroup>,
    corrected_total: i64,
    /// Paid on the bill, net of what was refunded since.
    paid_cents: i64,
    settlement: Settlement,
    /// Its card payments with something left to refund, newest first.
    card_payments: Vec<PaymentRow>,
}

/// The bill `found` corrected to `kwh`, read in `tx`; refused when it cannot be corrected.
async fn assess(
    tx: &mut Tx,
    found: &InvoiceRow,
    account_uuid: Uuid,
    kwh: rust_decimal::Decimal,
) -> store::Result<Result<Assessment, CorrectionRefused>> {
    let Some(original) = store::billing::invoice(&mut *tx, found.uuid).await? else {
        return Ok(Err(CorrectionRefused::InvoiceMissing));
    };
    if original.status == InvoiceStatus::Voided {
        return Ok(Err(CorrectionRefused::Voided));
    }
    if store::corrections::is_credit_note(&mut *tx, original.uuid).await? {
        return Ok(Err(CorrectionRefused::CreditNote));
    }
    let Some(location) = store::enrollment::locations_of_account(&mut *tx, account_uuid)
        .await?
        .into_iter()
        .find(|l| l.uuid == original.location_uuid)
    else {
        return Ok(Err(CorrectionRefused::LocationMissing));
    };
    let groups = match corrected_groups(tx, &location, &original, kwh).await? {
        Ok(groups) => groups,
        Err(why) => return Ok(Err(CorrectionRefused::Unbillable(why))),
    };
    let corrected_total: i64 = groups.iter().map(|g| g.total_cents).sum();
    let mut payments: Vec<PaymentRow> = if original.status == InvoiceStatus::Paid {
        store::billing::payments_of_invoice(&mut *tx, original.uuid)
            .await?
            .into_iter()
            .filter(|p| p.status == PaymentStatus::Succeeded)
            .collect()
    } else {
        Vec::new()
    };
    let paid_cents: i64 = payments
        .iter()
        .map(|p| p.amount_cents - p.refunded_cents)
        .sum();
    payments.retain(|p| {
        p.processor_payment_id.is_some()
            && p.initiated_by != PaymentInitiator::PaymentPlan
            && p.amount_cents > p.refunded_cents
    });
    payments.sort_by_key(|p| std::cmp::Reverse(p.attempted_at));
    Ok(Ok(Assessment {
        settlement: settle(corrected_total, paid_cents),
        original,
        location,
        groups,
        corrected_total,
        paid_cents,
        card_payments: payments,
    }))
}

/// A refund the processor made for a correction, to be recorded with it.
struct MadeRefund {
    payment_uuid: Uuid,
    cents: i64,
    refund_id: String,
}

/// Refunds through the app's processor what correcting `found` to `kwh` leaves overpaid, from
/// the bill's card payments (newest first). Nothing is written here: the processor is asked
/// outside any transaction, and the correction records the refunds. The same correction sent
/// again uses the same idempotency keys, so the processor refunds once.
async fn refund_overpayment(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    found: &InvoiceRow,
    kwh: rust_decimal::Decimal,
) -> Result<Vec<MadeRefund>, Error<CorrectionRefused>> {
    let mut tx = core.db.begin().await?;
    let assessed = assess(&mut tx, found, account_uuid, kwh).await?;
    // Read only: nothing of it is kept.
    drop(tx);
    let a = assessed.map_err(Error::Refused)?;
    if a.settlement.credit_cents == 0 {
        return Ok(Vec::new());
    }
    let refundable: Vec<(usize, i64)> = a
        .card_payments
        .iter()
        .enumerate()
        .map(|(i, p)| (i, p.amount_cents - p.refunded_cents))
        .collect();
    let (split, _credited) = split_overpayment(a.settlement.credit_cents, &refundable);
    if split.is_empty() {
        return refused(CorrectionRefused::NotPaidByCard);
    }
    let processor = core
        .processor_for(app)
        .await
        .map_err(|e| Error::Refused(CorrectionRefused::Processor(e)))?;
    let mut made = Vec::new();
    for (i, cents) in split {
        let payment = &a.card_payments[i];
        let request = RefundRequest {
            payment_id: payment.processor_payment_id.clone().unwrap_or_default(),
            amount_cents: cents,
            idempotency_key: format!("correction-{}-{}-{}", a.original.uuid, payment.uuid, cents),
        };
        let refund_id = match processor.refund(&request).await {
            Ok(RefundOutcome::Refunded { refund_id }) => refund_id,
            Ok(RefundOutcome::Refused { reason }) => {
                return refused(CorrectionRefused::RefundRefused(reason))
            }
            Err(ProcessorError::NotFound) => return refused(CorrectionRefused::NotPaidByCard),
            Err(e) => return refused(CorrectionRefused::Processor(e)),
        };
        made.push(MadeRefund {
            payment_uuid: payment.uuid,
            cents,
            refund_id,
        });
    }
    Ok(made)
}

/// The operator cancels the account's bill `number` and issues it again with `kwh_raw` kWh
/// consumed in its period, telling the customer `reason_raw`; what it leaves overpaid is
/// credited on the next bill or, `overpayment_raw` `refund`, refunded to the card the bill was
/// paid with (through the app's processor, recorded on the payment); audited.
#[allow(clippy::too_many_arguments)]
pub async fn reissue(
    core: &Core,
    actor: &Actor,
    app: &AppRow,
    account_uuid: Uuid,
    number: &str,
    kwh_raw: &str,
    reason_raw: &str,
    overpayment_raw: &str,
) -> Result<Corrected, Error<CorrectionRefused>> {
    let kwh = parse_kwh("kwh", kwh_raw)?;
    let reason = parse_reason("reason", reason_raw)?;
    let overpayment = Overpayment::parse("overpayment", overpayment_raw)?;
    let Some(found) = store::billing::invoice_by_number(&core.db, account_uuid, number.trim())
        .await?
        .filter(|i| i.app_uuid == app.uuid)
    else {
        return refused(CorrectionRefused::InvoiceMissing);
    };
    let refunds = match overpayment {
        Overpayment::Refund => refund_overpayment(core, app, account_uuid, &found, kwh).await?,
        Overpayment::Credit => Vec::new(),
    };
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let mut tx = core.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return refused(CorrectionRefused::InvoiceMissing);
    };
    let Assessment {
        original,
        location,
        groups,
        corrected_total,
        paid_cents,
        settlement,
        card_payments,
    } = assess(&mut tx, &found, account_uuid, kwh)
        .await?
        .map_err(Error::Refused)?;
    let now = clock.now();
    let today = clock.today();
    // The refunds the processor made, as much of each as the overpayment still covers.
    let mut refunded_cents = 0;
    for made in &refunds {
        let Some(payment) = card_payments.iter().find(|p| p.uuid == made.payment_uuid) else {
            continue;
        };
        let cents = made
            .cents
            .min(payment.amount_cents - payment.refunded_cents)
            .min(settlement.credit_cents - refunded_cents);
        if cents <= 0 {
            continue;
        }
        store::billing::insert_refund(
            &mut tx,
            &RefundRow {
                uuid: Uuid::new_v4(),
                payment_uuid: payment.uuid,
                account_uuid,
                amount_cents: cents,
                processor_refund_id: Some(made.refund_id.clone()),
                source: "correction".to_owned(),
                reason: Some(reason.clone()),
                created_at: now,
            },
        )
        .await?;
        store::events::insert_event(
            &mut tx,
            &NewEvent::of(
                app.uuid,
                &Event::PaymentRefunded {
                    account_uuid,
                    location_uuid: original.location_uuid,
                    invoice_number: original.number.clone(),
                    payment_uuid: payment.uuid,
                    amount_cents: cents,
                    refunded_cents: payment.refunded_cents + cents,
                    source: "correction".to_owned(),
                },
                now,
            ),
        )
        .await?;
        refunded_cents += cents;
    }
    let credit_cents = settlement.credit_cents - refunded_cents;
    store::billing::void_invoice(&mut tx, original.uuid, now).await?;

    let credit_note = InvoiceRow {
        uuid: Uuid::new_v4(),
        number: invoice_number(store::counters::next_value(&mut tx, "invoice_number").await?),
        invoice_date: today,
        payment_due_date: today,
        total_cents: -original.total_cents,
        charges: to_json(&[ChargeGroup {
            name: CREDIT_NOTE_GROUP.to_owned(),
            total_cents: -original.total_cents,
            charges: vec![Charge {
                description: format!("Cancels {}", original.number),
                quantity: rust_decimal::Decimal::ONE,
                unit: "bill".to_owned(),
                rate: rust_decimal::Decimal::new(-original.total_cents, 2),
                amount_cents: -original.total_cents,
            }],
        }])?,
        status: InvoiceStatus::Paid,
        paid_at: Some(now),
        voided_at: None,
        created_at: now,
        updated_at: now,
        ..original.clone()
    };
    store::billing::insert_invoice(&mut tx, &credit_note).await?;

    let mut new_groups = groups;
    if paid_cents > 0 {
        new_groups.push(ChargeGroup {
            name: PAID_GROUP.to_owned(),
            total_cents: -paid_cents,
            charges: vec![Charge {
                description: format!("Paid on {}", original.number),
                quantity: rust_decimal::Decimal::ONE,
                unit: "payment".to_owned(),
                rate: rust_decimal::Decimal::new(-paid_cents, 2),
                amount_cents: -paid_cents,
            }],
        });
    }
    if refunded_cents > 0 {
        // What went back to the card no longer counts as paid.
        new_groups.push(ChargeGroup {
            name: REFUNDED_GROUP.to_owned(),
            total_cents: refunded_cents,
            charges: vec![Charge {
                description: format!("Refunded to the card that paid {}", original.number),
                quantity: rust_decimal::Decimal::ONE,
                unit: "refund".to_owned(),
                rate: rust_decimal::Decimal::new(refunded_cents, 2),
                amount_cents: refunded_cents,
            }],
        });
    }
    let calendar = core.business_calendar().await?;
    let settled = settlement.due_cents == 0;
    let invoice = InvoiceRow {
        uuid: Uuid::new_v4(),
        number: invoice_number(store::counters::next_value(&mut tx, "invoice_number").await?),
        invoice_date: today,
        payment_due_date: payment_due_date(today, calendar),
        total_cents: corrected_total - paid_cents + refunded_cents,
        total_kwh: kwh.to_string(),
        charges: to_json(&new_groups)?,
        status: if settled {
            InvoiceStatus::Paid
        } else {
            InvoiceStatus::Open
        },
        paid_at: settled.then_some(now),
        voided_at: None,
        created_at: now,
        updated_at: now,
        ..original.clone()
    };
    store::billing::insert_invoice(&mut tx, &invoice).await?;
    if credit_cents > 0 {
        store::corrections::insert_credit(
            &mut tx,
            &CreditRow {
                uuid: Uuid::new_v4(),
                account_uuid,
                source_invoice_uuid: invoice.uuid,
                amount_cents: credit_cents,
                applied_invoice_uuid: None,
                created_at: now,
            },
        )
        .await?;
    }
    store::corrections::insert_correction(
        &mut tx,
        &CorrectionRow {
            uuid: Uuid::new_v4(),
            account_uuid,
            original_invoice_uuid: original.uuid,
            credit_note_invoice_uuid: credit_note.uuid,
            reissued_invoice_uuid: invoice.uuid,
            reason: reason.clone(),
            created_at: now,
        },
    )
    .await?;
    if !settled {
        super::follow_up::schedule_payment_jobs(&mut tx, &clock, &invoice).await?;
    }
    for event in [
        Event::InvoiceCorrected {
            account_uuid,
            location_uuid: location.uuid,
            original_invoice_number: original.number.clone(),
            credit_note_number: credit_note.number.clone(),
            invoice_number: invoice.number.clone(),
            reason: reason.clone(),
            total_cents: corrected_total,
            paid_cents,
            due_cents: settlement.due_cents,
            credit_cents,
            refunded_cents,
        },
        Event::InvoiceCreated {
            account_uuid,
            location_uuid: location.uuid,
            invoice_number: invoice.number.clone(),
            total_cents: invoice.total_cents,
            invoice_date: invoice.invoice_date,
            payment_due_date: invoice.payment_due_date,
            status: invoice.status.to_string(),
        },
    ] {
        store::events::insert_event(&mut tx, &NewEvent::of(app.uuid, &event, now)).await?;
    }
    let number = Some(invoice.number.as_str());
    super::follow_up::mail_with_bill_link(&mut tx, core, &clock, app, &account, number, |link| {
        Template::Collections(CollectionsMail::Corrected {
            first_name: account.first_name.clone(),
            original_number: original.number.clone(),
            credit_note_number: credit_note.number.clone(),
            invoice_number: invoice.number.clone(),
            reason: reason.clone(),
            total_cents: corrected_total,
            due_cents: settlement.due_cents,
            credit_cents,
            refunded_cents,
            due_date: invoice.payment_due_date,
            link: Some(link),
        })
    })
    .await?;
    // A notice of the cancelled bill no longer stands.
    super::disconnection::reconnect_if_settled(&mut tx, &clock, app, account_uuid).await?;
    audit::record(
        &mut tx,
        actor,
        "invoice.corrected",
        &format!("account:{account_uuid}"),
        serde_json::json!({
            "original": original.number,
            "credit_note": credit_note.number,
            "invoice": invoice.number,
            "kwh": kwh.to_string(),
            "reason": reason,
            "overpayment": overpayment.as_str(),
            "refunded_cents": refunded_cents,
            "credit_cents": credit_cents,
        }),
        now,
    )
    .await?;
    tx.commit().await?;
    core.account_changed(account_uuid);
    Ok(Corrected {
        credit_note,
        invoice,
        refunded_cents,
    })
}

fn to_json(groups: &[ChargeGroup]) -> store::Result<String> {
    serde_json::to_string(groups).map_err(|e| sqlx::Error::Encode(Box::new(e)))
}

/// The cancelled bill's lines recomputed with `kwh` consumed over its period (the contract
/// in force on its last day, the delivery charges and taxes as stored), with its late-fee and
/// payment-plan lines as they were.
async fn corrected_groups(
    tx: &mut Tx,
    location: &store::enrollment::LocationRow,
    original: &InvoiceRow,
    kwh: rust_decimal::Decimal,
) -> store::Result<Result<Vec<ChargeGroup>, BillingError>> {
    let contracts = store::enrollment::billing_contracts_of_location(&mut *tx, location).await?;
    let contract = contract_on(
        &contracts,
        |c| c.start_date,
        |c| c.end_date,
        original.billing_period_end,
    )
    .or(contracts.last());
    let delivery =
        store::market::tdu_charges_on(&mut *tx, &location.tdu, original.billing_period_end).await?;
    let gross_receipts =
        store::market::city_gross_receipts_percent(tx, &location.city, &location.state).await?;
    // Days the location was disconnected stay unbilled in the corrected bill.
    let off = super::usage::disconnected_days(
        &mut *tx,
        location,
        original.billing_period_start,
        original.billing_period_end,
    )
    .await?;
    let generation = original
        .generation_kwh
        .parse::<rust_decimal::Decimal>()
        .unwrap_or_default();
    let input = match InvoiceInput::from_stored(&StoredCycle {
        period_start: original.billing_period_start,
        period_end: original.billing_period_end,
        consumption_kwh: kwh,
        generation_kwh: generation,
        contract_rates: contract.map(|c| c.rates.as_str()),
        periods: Vec::new(),
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
    let mut groups = billing::compute(&input).groups;
    let kept: Vec<ChargeGroup> = serde_json::from_str::<Vec<ChargeGroup>>(&original.charges)
        .unwrap_or_default()
        .into_iter()
        .filter(|g| {
            g.name == LATE_FEE_GROUP || g.name == PAYMENT_PLAN_GROUP || g.name == CREDITS_GROUP
        })
        .collect();
    groups.extend(kept);
    Ok(Ok(groups))
}

/// The credits the account's next bill applies, as one group of negative lines, with the
/// credits they are.
pub async fn credit_lines(
    tx: &mut Tx,
    account_uuid: Uuid,
) -> store::Result<(Option<ChargeGroup>, Vec<Uuid>)> {
    let credits = store::corrections::unapplied_credits(&mut *tx, account_uuid).await?;
    if credits.is_empty() {
        return Ok((None, Vec::new()));
    }
    let mut charges = Vec::new();
    for c in &credits {
        let source = store::billing::invoice(&mut *tx, c.source_invoice_uuid)
            .await?
            .map(|i| i.number)
            .unwrap_or_default();
        charges.push(Charge {
            description: format!("Credit from the corrected bill {source}"),
            quantity: rust_decimal::Decimal::ONE,
            unit: "credit".to_owned(),
            rate: rust_decimal::Decimal::new(-c.amount_cents, 2),
            amount_cents: -c.amount_cents,
        });
    }
    Ok((
        Some(ChargeGroup {
            name: CREDITS_GROUP.to_owned(),
            total_cents: charges.iter().map(|c| c.amount_cents).sum(),
            charges,
        }),
        credits.iter().map(|c| c.uuid).collect(),
    ))
}

/// The credits are lines of the bill `invoice_uuid`, in `tx`.
pub async fn mark_applied(tx: &mut Tx, credits: &[Uuid], invoice_uuid: Uuid) -> store::Result<()> {
    for c in credits {
        store::corrections::apply_credit(tx, *c, invoice_uuid).await?;
    }
    Ok(())
}
