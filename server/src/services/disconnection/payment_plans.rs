//! Deferred payment plans: the offer, accepting one, its instalments on the next bills, and
//! a missed instalment ending it.

use uuid::Uuid;

use super::orders::reconnect_if_settled;
use super::{owed_plan, record, served};
use crate::services::Error;
use crate::{
    clock::AccountClock,
    domain::{
        billing::{Charge, ChargeGroup, InvoiceStatus, PaymentInitiator, PaymentStatus},
        disconnection::{
            instalments, PaymentPlanStatus, PlanReason, DEFAULT_PLAN_MONTHS, PAYMENT_PLAN_GROUP,
        },
        events::Event,
    },
    mail::{
        self,
        templates::{CollectionsMail, Template},
    },
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow},
        disconnections::PaymentPlanRow,
        Tx,
    },
};

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
    record(
        &mut tx,
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
            plan_ended(
                tx,
                clock,
                app,
                account,
                line.plan_uuid,
                PaymentPlanStatus::Completed,
                0,
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
        plan_ended(
            tx,
            clock,
            app,
            account,
            line.plan_uuid,
            PaymentPlanStatus::Defaulted,
            remaining,
        )
        .await?;
    }
    Ok(())
}

/// A plan that ended (completed or defaulted), in `tx`: its event and the customer's e-mail,
/// which say what it leaves due on the next bill.
async fn plan_ended(
    tx: &mut Tx,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    plan_uuid: Uuid,
    status: PaymentPlanStatus,
    remaining_cents: i64,
) -> store::Result<()> {
    record(
        tx,
        app,
        &Event::PaymentPlanEnded {
            account_uuid: account.uuid,
            plan_uuid,
            status: status.as_str().to_owned(),
            remaining_cents,
        },
        clock.now(),
    )
    .await?;
    mail::queue_to_account(
        tx,
        clock,
        app,
        account,
        &Template::Collections(CollectionsMail::PlanEnded {
            first_name: account.first_name.clone(),
            completed: status == PaymentPlanStatus::Completed,
            remaining_cents,
        }),
    )
    .await?;
    Ok(())
}
