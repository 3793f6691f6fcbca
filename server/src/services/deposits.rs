//! Deposits: the most one may be for an account (the rule of `domain::deposits`, on the
//! estimate of its next twelve bills); paying the deposit a credit review asked for with the
//! saved card, through the app's processor, at once or half now and the rest on the next two
//! bills; the operator's waiver; where it stands with its interest to date; and its lines on
//! bills (instalments, the refund after 12 on-time payments, the final bill's application).

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

use super::{audit::Actor, Error};
use crate::{
    adapters::payments::{
        ChargeOutcome, ChargeRequest, PaymentProcessor, ProcessorError, RefundOutcome,
        RefundRequest,
    },
    clock::AccountClock,
    domain::{
        billing::{Charge, ChargeGroup},
        deposits::{
            instalments, interest_to_date, paid_on_time, refund_earned, refund_line_cents, waiver,
            why_not_waived, Waiver, WaiverFacts, INSTALMENT_BILLS,
        },
        events::Event,
        hosted::LinkPurpose,
        jobs::PayoutPayload,
        market::market_date,
        status::CreditState,
        users::Member,
        FieldError,
    },
    mail::{
        self,
        templates::{CreditReviewMail, DepositPaidOut, PaymentReceipt, Template},
    },
    outbox::Job,
    state::Core,
    store::{
        self, apps::AppRow, billing::InvoiceRow, credit_reviews::DepositRow,
        deposits::DepositLineRow, events::NewEvent, Tx,
    },
};

/// The name of the bill's group of deposit lines.
pub const DEPOSIT_GROUP: &str = "Deposit";

/// A deposit as the customer sees it on a day: its row, the interest it holds on that day,
/// and what its instalments still leave to bill.
#[derive(Debug, Clone)]
pub struct DepositView {
    pub row: DepositRow,
    pub interest_cents: i64,
    pub instalments_due_cents: i64,
}

/// The day from which a held deposit's interest is not accrued yet.
fn accrued_from(row: &DepositRow, today: NaiveDate) -> NaiveDate {
    row.interest_through
        .or(row.paid_at.map(market_date))
        .unwrap_or(today)
}

fn view_of(
    row: DepositRow,
    lines: &[DepositLineRow],
    rate: Decimal,
    today: NaiveDate,
) -> DepositView {
    let interest_cents = if row.status == "paid" {
        interest_to_date(
            row.interest_cents,
            row.paid_cents,
            rate,
            accrued_from(&row, today),
            today,
        )
    } else {
        row.interest_cents
    };
    let instalments_due_cents = lines
        .iter()
        .filter(|l| l.kind == "instalment" && l.invoice_uuid.is_none())
        .map(|l| l.amount_cents)
        .sum();
    DepositView {
        row,
        interest_cents,
        instalments_due_cents,
    }
}

impl DepositView {
    /// What the final bill left of the deposit that has not gone back to the customer yet.
    pub fn owed_cents(&self) -> i64 {
        crate::domain::deposits::owed_cents(
            self.row.refund_reason.as_deref(),
            self.row.refund_left_cents,
        )
    }
}

/// The account's latest deposit with its interest to date on the account's clock, at the
/// deployment's yearly rate.
pub async fn view(core: &Core, account_uuid: Uuid) -> store::Result<Option<DepositView>> {
    let Some(row) = store::credit_reviews::latest_deposit(&core.db, account_uuid).await? else {
        return Ok(None);
    };
    let today = core
        .clock
        .for_account(&core.db, account_uuid)
        .await?
        .today();
    let lines = store::deposits::lines_of_deposit(&core.db, row.uuid).await?;
    Ok(Some(view_of(
        row,
        &lines,
        core.config.deposit_interest_percent,
        today,
    )))
}

/// Why a deposit was not paid; nothing was written.
#[derive(Debug)]
pub enum DepositRefused {
    /// The account has no deposit asked of it.
    NoDeposit,
    AccountMissing,
    /// No card on file to charge.
    NoCard,
    /// The card was declined, with the processor's code.
    Declined(String),
    Processor(ProcessorError),
}

/// The account's latest deposit, if one was asked.
pub async fn deposit_of(core: &Core, account_uuid: Uuid) -> store::Result<Option<DepositRow>> {
    store::credit_reviews::latest_deposit(&core.db, account_uuid).await
}

/// Pays the account's required deposit with its saved card: the charge (its key names the
/// deposit, the card and the part paid, so a request sent twice charges once), then in one
/// transaction the deposit paid, `account.deposit_paid`, the credit check passed and the
/// refreshed status (the enrollment goes on). With `in_instalments`, half is charged now and
/// the rest is billed in two lines on the next two bills; the deposit counts as paid from the
/// first half. A deposit no longer required is answered as it is.
pub async fn pay_deposit(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    in_instalments: bool,
) -> Result<DepositView, Error<DepositRefused>> {
    let deposit = deposit_of(core, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::NoDeposit))?;
    if deposit.status != "required" {
        return view(core, account_uuid)
            .await?
            .ok_or(Error::Refused(DepositRefused::NoDeposit));
    }
    let (now_cents, later) = if in_instalments {
        let (now, rest) = instalments(deposit.amount_cents);
        (now, rest.to_vec())
    } else {
        (deposit.amount_cents, Vec::new())
    };
    let card = store::payments::current_payment_method(&core.db, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::NoCard))?;
    let processor = core
        .processor_for(app)
        .await
        .map_err(|e| Error::Refused(DepositRefused::Processor(e)))?;
    let charged = processor
        .charge(&ChargeRequest {
            account_uuid,
            payment_method_id: card.id.clone(),
            amount_cents: now_cents,
            idempotency_key: format!(
                "deposit-{}-card-{}-{}",
                deposit.uuid,
                card.id,
                if in_instalments {
                    "first-half"
                } else {
                    "whole"
                }
            ),
        })
        .await;
    let reference = match charged {
        Ok(ChargeOutcome::Succeeded { payment_id }) => payment_id,
        Ok(ChargeOutcome::Declined { decline_code }) => {
            return Err(Error::Refused(DepositRefused::Declined(decline_code)))
        }
        // Paid from the flow, on the customer's own session: a card that wants the bank's
        // check there is refused like a decline, and another card can be tried.
        Ok(ChargeOutcome::NeedsAuthentication { .. }) => {
            return Err(Error::Refused(DepositRefused::Declined(
                "authentication_required".to_owned(),
            )))
        }
        Err(ProcessorError::NotFound) => return Err(Error::Refused(DepositRefused::NoCard)),
        Err(e) => return Err(Error::Refused(DepositRefused::Processor(e))),
    };
    let clock = core.clock.for_account(&core.db, account_uuid).await?;
    let now = clock.now();
    let mut tx = core.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::AccountMissing))?;
    if store::credit_reviews::mark_deposit_paid(&mut tx, deposit.uuid, now_cents, &reference, now)
        .await?
    {
        for (i, amount_cents) in later.iter().enumerate().filter(|(_, c)| **c > 0) {
            store::deposits::insert_line(
                &mut tx,
                &DepositLineRow {
                    uuid: Uuid::new_v4(),
                    deposit_uuid: deposit.uuid,
                    account_uuid,
                    kind: "instalment".to_owned(),
                    seq: i as i32 + 1,
                    amount_cents: *amount_cents,
                    invoice_uuid: None,
                    created_at: now,
                },
            )
            .await?;
        }
        // The deposit's payment is acknowledged with a receipt like any other.
        mail::queue_to_account(
            &mut tx,
            &clock,
            app,
            &account,
            &Template::PaymentReceipt(PaymentReceipt {
                first_name: account.first_name.clone(),
                amount_cents: now_cents,
                card: Some(crate::domain::billing::card_name(&card.brand, &card.last4)),
                invoice_number: None,
                deposit: true,
                paid_on: crate::domain::market::market_date(now),
                reference,
                balance_cents: None,
            }),
        )
        .await?;
        store::events::insert_event(
            &mut tx,
            &NewEvent::of(
                app.uuid,
                &Event::DepositPaid {
                    account_uuid,
                    deposit_uuid: deposit.uuid,
                    amount_cents: now_cents,
                },
                now,
            ),
        )
        .await?;
        // The deposit stands in for the credit the check did not show.
        if let Some(check) = store::credit::latest_credit_check(&mut tx, account_uuid).await? {
            if check.status != CreditState::Passed {
                store::credit::set_credit_check_answer(
                    &mut tx,
                    check.uuid,
                    CreditState::Passed,
                    now,
                )
                .await?;
                super::follow_up::submit_when_ready(&mut tx, app.uuid, account_uuid, &clock)
                    .await?;
            }
        }
        super::follow_up::refresh_status(&mut tx, &core.clock, app.uuid, account_uuid, now).await?;
    }
    tx.commit().await?;
    core.account_changed(account_uuid);
    view(core, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::NoDeposit))
}

// ---------------------------------------------------------------------------------------------
// The operator's waiver

/// Why a waiver was not recorded; nothing was written.
#[derive(Debug)]
pub enum WaiveRefused {
    /// No such review, or one this member may not see.
    NotFound,
    /// The review asked for no deposit, or it was paid or waived already.
    NoDepositRequired,
    /// The form's values, or facts that waive nothing (why).
    Field(FieldError),
}

impl std::fmt::Display for WaiveRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaiveRefused::NotFound => f.write_str("no such credit review"),
            WaiveRefused::NoDepositRequired => {
                f.write_str("no deposit of this review waits to be paid: nothing to waive")
            }
            WaiveRefused::Field(e) => f.write_str(&e.message),
        }
    }
}

/// The operator's waiver form, as typed.
pub struct WaiverInput<'a> {
    /// `senior`, `family_violence` or `good_credit_letter`.
    pub waiver: &'a str,
    /// The family-violence certificate was received (for `family_violence`).
    pub certificate: bool,
    /// The months of on-time payments the previous provider's letter covers.
    pub letter_months: &'a str,
}

fn field(name: &str, message: &str) -> Error<WaiveRefused> {
    Error::Refused(WaiveRefused::Field(FieldError::invalid(name, message)))
}

/// Records the operator's waiver of the deposit review `review_uuid` asked for, when the facts
/// recorded waive it under the rule (`domain::deposits::waiver`: the account's date of birth
/// and its own past-due bills for age; the certificate; the letter's months), in one
/// transaction: the deposit `waived` (why, by whom), the check passed and the enrollment on
/// (`enrollment::credit_passed`, the refreshed status), the audit entry `deposit.waived` and
/// the customer's e-mail.
pub async fn waive_deposit(
    core: &Core,
    actor: &Actor,
    member: &Member,
    review_uuid: Uuid,
    input: &WaiverInput<'_>,
) -> Result<Waiver, Error<WaiveRefused>> {
    let review = super::credit::review_for(&core.db, member, review_uuid)
        .await
        .map_err(|e| match e {
            Error::Refused(_) => Error::Refused(WaiveRefused::NotFound),
            Error::Failed(e) => Error::Failed(e),
        })?;
    let claimed = Waiver::parse(input.waiver.trim())
        .ok_or_else(|| field("waiver", "choose why no deposit may be asked"))?;
    let letter_months =
        match claimed {
            Waiver::GoodCreditLetter => {
                Some(input.letter_months.trim().parse::<u32>().map_err(|_| {
                    field("letter_months", "the months the letter covers, as a number")
                })?)
            }
            _ => None,
        };
    let app = store::apps::app_by_uuid(&core.db, review.app_uuid)
        .await?
        .ok_or(Error::Refused(WaiveRefused::NotFound))?;
    let clock = core
        .clock
        .for_account(&core.db, review.account_uuid)
        .await?;
    let now = clock.now();
    let mut tx = core.db.begin().await?;
    let account =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, review.account_uuid)
            .await?
            .ok_or(Error::Refused(WaiveRefused::NotFound))?;
    let deposit = store::credit_reviews::latest_deposit(&mut tx, account.uuid)
        .await?
        .filter(|d| d.review_uuid == Some(review.uuid) && d.status == "required")
        .ok_or(Error::Refused(WaiveRefused::NoDepositRequired))?;
    let facts = WaiverFacts {
        date_of_birth: account.date_of_birth,
        has_past_due_balance: store::deposits::has_past_due_bill(&mut tx, account.uuid).await?,
        has_family_violence_certificate: claimed == Waiver::FamilyViolence && input.certificate,
        good_credit_letter_months: letter_months,
    };
    if waiver(&facts, clock.today()) != Some(claimed) {
        let name = match claimed {
            Waiver::Senior => "waiver",
            Waiver::FamilyViolence => "certificate",
            Waiver::GoodCreditLetter => "letter_months",
        };
        return Err(field(name, why_not_waived(claimed, &facts)));
    }
    if !store::deposits::waive(&mut tx, deposit.uuid, claimed.as_str(), actor.name(), now).await? {
        return Err(Error::Refused(WaiveRefused::NoDepositRequired));
    }
    // A waived deposit stands in for the credit the check did not show, as a paid one does.
    if let Some(check) = store::credit::latest_credit_check(&mut tx, account.uuid).await? {
        if check.status != CreditState::Passed {
            store::credit::set_credit_check_answer(&mut tx, check.uuid, CreditState::Passed, now)
                .await?;
            super::follow_up::submit_when_ready(&mut tx, app.uuid, account.uuid, &clock).await?;
        }
    }
    super::audit::record(
        &mut tx,
        actor,
        "deposit.waived",
        &format!("account {}", account.uuid),
        json!({
            "deposit": deposit.uuid,
            "review": review.uuid,
            "app": app.uuid,
            "waiver": claimed.as_str(),
            "amount_cents": deposit.amount_cents,
        }),
        now,
    )
    .await?;
    super::follow_up::refresh_status(&mut tx, &core.clock, app.uuid, account.uuid, now).await?;
    super::follow_up::mail_with_link(
        &mut tx,
        core,
        &clock,
        &app,
        &account,
        LinkPurpose::CreditReview,
        None,
        |link| Template::CreditReviewed {
            first_name: account.first_name.clone(),
            decision: CreditReviewMail::DepositWaived {
                waiver: claimed.describe().to_owned(),
            },
            link,
        },
    )
    .await?;
    tx.commit().await?;
    core.account_changed(account.uuid);
    Ok(claimed)
}

// ---------------------------------------------------------------------------------------------
// Lines on bills

/// What a bill being issued does to the account's deposit: its lines (the `Deposit` group),
/// and what `mark_billed` records once the bill has its number.
#[derive(Debug, Default)]
pub struct DepositBilling {
    pub group: Option<ChargeGroup>,
    deposit: Option<Uuid>,
    /// Instalment lines this bill carries.
    instalments: Vec<Uuid>,
    /// The held deposit's interest accrued through the bill's day, and what it holds after
    /// the bill's instalments.
    accrued: Option<(i64, NaiveDate, i64)>,
    /// The refund that starts on this bill: `refunded` or `applied`, why, the deposit held,
    /// its interest, and what comes back in all.
    starts: Option<(&'static str, &'static str, i64, i64, i64)>,
    /// The refund credit this bill takes, and what is left for the next bills.
    credit: Option<(i64, i64, i32)>,
    /// On the final bill, what the bill could not take: it goes back to the card.
    pay_out: bool,
}

/// The deposit lines of the bill of the account being issued on `today` for
/// `bill_cents` (the bill's total before them), in `tx`: the instalments still to bill; the
/// interest accrued to date; once the refund is earned (12 bills in a row paid on time, the
/// sandbox's simulation) or on the final bill (`is_final`), the deposit with its interest as a
/// credit, never more than the bill (the rest goes on the next bills).
pub async fn bill_lines(
    tx: &mut Tx,
    rate: Decimal,
    today: NaiveDate,
    account_uuid: Uuid,
    is_final: bool,
    bill_cents: i64,
) -> store::Result<DepositBilling> {
    let Some(d) = store::credit_reviews::latest_deposit(&mut *tx, account_uuid).await? else {
        return Ok(DepositBilling::default());
    };
    let lines = store::deposits::lines_of_deposit(&mut *tx, d.uuid).await?;
    let mut billing = DepositBilling {
        deposit: Some(d.uuid),
        ..DepositBilling::default()
    };
    let mut charges = Vec::new();
    let mut held = d.paid_cents;
    if d.status == "paid" {
        // One instalment a bill, the lowest still unbilled first.
        if let Some(l) = lines
            .iter()
            .filter(|l| l.kind == "instalment" && l.invoice_uuid.is_none())
            .min_by_key(|l| l.seq)
        {
            charges.push(Charge {
                description: format!("Deposit instalment {} of {INSTALMENT_BILLS}", l.seq),
                quantity: Decimal::ONE,
                unit: "instalment".to_owned(),
                rate: Decimal::new(l.amount_cents, 2),
                amount_cents: l.amount_cents,
            });
            billing.instalments.push(l.uuid);
            held += l.amount_cents;
        }
    }
    let charged: i64 = charges.iter().map(|c| c.amount_cents).sum();
    let mut left = 0;
    let mut reason = if d.refund_reason.as_deref() == Some("final_bill") {
        "final_bill"
    } else {
        "on_time_payments"
    };
    if d.status == "paid" {
        let interest = interest_to_date(
            d.interest_cents,
            d.paid_cents,
            rate,
            accrued_from(&d, today),
            today,
        );
        billing.accrued = Some((interest, today, held));
        let earned = is_final || d.refund_due || {
            let bills = store::deposits::bills_paid(&mut *tx, account_uuid).await?;
            let on_time: Vec<bool> = bills
                .iter()
                .filter_map(|b| paid_on_time(b.payment_due_date, b.paid_at.map(market_date), today))
                .collect();
            refund_earned(&on_time)
        };
        if earned {
            let (status, why) = if is_final {
                ("applied", "final_bill")
            } else {
                ("refunded", "on_time_payments")
            };
            reason = why;
            left = held + interest;
            billing.starts = Some((status, why, held, interest, left));
        }
    } else if matches!(d.status.as_str(), "refunded" | "applied") {
        left = d.refund_left_cents;
    }
    if left > 0 {
        let credit = refund_line_cents(left, bill_cents + charged);
        if credit > 0 {
            let seq = lines.iter().filter(|l| l.kind == "refund").count() as i32 + 1;
            charges.push(Charge {
                description: if reason == "final_bill" {
                    "Deposit with its interest, applied to the final bill".to_owned()
                } else {
                    "Deposit refund with its interest".to_owned()
                },
                quantity: Decimal::ONE,
                unit: "credit".to_owned(),
                rate: Decimal::new(-credit, 2),
                amount_cents: -credit,
            });
            billing.credit = Some((credit, left - credit, seq));
        }
    }
    // No bill comes after the final one: what it could not take goes back to the card.
    let still_left = billing.credit.map_or(left, |(_, rest, _)| rest);
    billing.pay_out = is_final && still_left > 0;
    if !charges.is_empty() {
        billing.group = Some(ChargeGroup {
            name: DEPOSIT_GROUP.to_owned(),
            total_cents: charges.iter().map(|c| c.amount_cents).sum(),
            charges,
        });
    }
    Ok(billing)
}

/// Records, in `tx`, what `bill_lines` put on the bill `invoice` now that it is issued: the
/// instalments billed, the interest accrued, the refund started with
/// `account.deposit_refunded`, the refund credit taken and what is left of it; on a final bill
/// that could not take it all, the job that pays the rest back to the card.
pub async fn mark_billed(
    tx: &mut Tx,
    clock: &AccountClock,
    app_uuid: Uuid,
    invoice: &InvoiceRow,
    billing: DepositBilling,
) -> store::Result<()> {
    let now = clock.now();
    let Some(deposit) = billing.deposit else {
        return Ok(());
    };
    if billing.pay_out {
        crate::outbox::enqueue(
            tx,
            clock,
            &Job::DepositPayout(PayoutPayload {
                app_uuid,
                deposit_uuid: deposit,
            }),
            Some(invoice.account_uuid),
            now,
        )
        .await?;
    }
    for line in &billing.instalments {
        store::deposits::bill_line(tx, *line, invoice.uuid).await?;
    }
    if let Some((interest, through, held)) = billing.accrued {
        store::deposits::set_accrued(tx, deposit, interest, through, held).await?;
    }
    if let Some((status, reason, held, interest, back)) = billing.starts {
        if store::deposits::start_refund(tx, deposit, status, reason, back, now).await? {
            store::events::insert_event(
                tx,
                &NewEvent::of(
                    app_uuid,
                    &Event::DepositRefunded {
                        account_uuid: invoice.account_uuid,
                        deposit_uuid: deposit,
                        amount_cents: held,
                        interest_cents: interest,
                        refunded_cents: back,
                        reason: reason.to_owned(),
                        invoice_number: invoice.number.clone(),
                    },
                    now,
                ),
            )
            .await?;
        }
    }
    if let Some((credit, left, seq)) = billing.credit {
        store::deposits::insert_line(
            tx,
            &DepositLineRow {
                uuid: Uuid::new_v4(),
                deposit_uuid: deposit,
                account_uuid: invoice.account_uuid,
                kind: "refund".to_owned(),
                seq,
                amount_cents: credit,
                invoice_uuid: Some(invoice.uuid),
                created_at: now,
            },
        )
        .await?;
        store::deposits::set_refund_left(tx, deposit, left).await?;
    }
    Ok(())
}

/// How a payout ended.
pub enum PaidOut {
    /// Recorded in the transaction, which the job finishes and commits; or nothing to pay out
    /// (`None`: nothing left, no card payment to refund, or the processor refused; what is left
    /// stays on the deposit as owed to the customer, on the account's page).
    Done(Option<Tx>),
    /// The processor could not be reached: try again later.
    Unreachable(ProcessorError),
}

/// Pays back to the card the deposit was paid with what the final bill could not take of the
/// deposit and its interest (at most what that payment charged): refunded through the app's
/// processor with an idempotency key (the same payout retried refunds once), then recorded on
/// the deposit with the customer's e-mail, in the transaction returned.
pub async fn pay_out(
    core: &Core,
    clock: &AccountClock,
    account_uuid: Uuid,
    payload: &PayoutPayload,
) -> store::Result<PaidOut> {
    let Some(app) = store::apps::app_by_uuid(&core.db, payload.app_uuid).await? else {
        return Ok(PaidOut::Done(None));
    };
    let Some(d) = store::credit_reviews::latest_deposit(&core.db, account_uuid)
        .await?
        .filter(|d| d.uuid == payload.deposit_uuid)
    else {
        return Ok(PaidOut::Done(None));
    };
    let cents = d.refund_left_cents.min(d.charged_cents - d.paid_out_cents);
    let Some(payment_id) = d.processor_payment_id.clone().filter(|_| cents > 0) else {
        return Ok(PaidOut::Done(None));
    };
    let processor = match core.processor_for(&app).await {
        Ok(p) => p,
        Err(e @ ProcessorError::Unavailable(_)) => return Ok(PaidOut::Unreachable(e)),
        Err(e) => {
            tracing::warn!(error = %e, "a deposit's payout has no processor");
            return Ok(PaidOut::Done(None));
        }
    };
    let refunded = processor
        .refund(&RefundRequest {
            payment_id,
            amount_cents: cents,
            idempotency_key: format!("deposit-payout-{}-{}", d.uuid, d.paid_out_cents),
        })
        .await;
    match refunded {
        Ok(RefundOutcome::Refunded { .. }) => {}
        Ok(RefundOutcome::Refused { reason }) => {
            tracing::warn!(reason = %reason, "the processor refused a deposit's payout");
            return Ok(PaidOut::Done(None));
        }
        Err(ProcessorError::NotFound) => return Ok(PaidOut::Done(None)),
        Err(e) => return Ok(PaidOut::Unreachable(e)),
    }
    let mut tx = core.db.begin().await?;
    let Some(account) =
        store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid).await?
    else {
        return Ok(PaidOut::Done(None));
    };
    store::deposits::record_payout(&mut tx, d.uuid, cents, clock.now()).await?;
    let card = store::payments::current_payment_method(&mut tx, account_uuid).await?;
    mail::queue_to_account(
        &mut tx,
        clock,
        &app,
        &account,
        &Template::DepositPaidOut(DepositPaidOut {
            first_name: account.first_name.clone(),
            amount_cents: cents,
            card: card.map(|c| crate::domain::billing::card_name(&c.brand, &c.last4)),
            paid_on: clock.today(),
        }),
    )
    .await?;
    Ok(PaidOut::Done(Some(tx)))
}

/// `deposit_refund_due` (sandbox): the account's held deposit is earned back now, whatever its
/// payments; the next bill carries the credit. `false` when no deposit is held.
pub async fn simulate_refund_due(tx: &mut Tx, account_uuid: Uuid) -> store::Result<bool> {
    let Some(d) = store::credit_reviews::latest_deposit(&mut *tx, account_uuid).await? else {
        return Ok(false);
    };
    store::deposits::set_refund_due(tx, d.uuid).await
}
