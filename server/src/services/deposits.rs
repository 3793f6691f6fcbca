//! Deposits: the most one may be for an account (the rule of `domain::deposits`, on the
//! estimate of its next twelve bills), and paying the deposit a credit review asked for with
//! the saved card, through the app's processor.

use chrono::NaiveDate;
use uuid::Uuid;

use super::Error;
use crate::{
    adapters::payments::{ChargeOutcome, ChargeRequest, PaymentProcessor, ProcessorError},
    domain::{
        deposits::{
            contract_price, estimated_bills, max_deposit_cents, monthly_kwh, DEFAULT_CENTS_PER_KWH,
        },
        events::Event,
        status::CreditState,
    },
    mail::{
        self,
        templates::{PaymentReceipt, Template},
    },
    state::Core,
    store::{self, apps::AppRow, credit_reviews::DepositRow, events::NewEvent, Tx},
};

/// The most a deposit of the account may be on `today`, in cents: its meter's estimated usage
/// (a standard home's when no address is confirmed) at its newest contract's price (a typical
/// price when none was accepted yet).
pub async fn max_deposit_for(
    tx: &mut Tx,
    account_uuid: Uuid,
    today: NaiveDate,
) -> store::Result<i64> {
    let address = store::enrollment::confirmed_address(&mut *tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account_uuid).await?;
    let (cents_per_kwh, fixed) = contracts
        .iter()
        .max_by_key(|c| c.accepted_at)
        .and_then(|c| contract_price(&c.rates))
        .unwrap_or((DEFAULT_CENTS_PER_KWH, 0));
    let kwh = monthly_kwh(address.as_ref().map(|a| a.esi_id.as_str()), today);
    Ok(max_deposit_cents(&estimated_bills(
        &kwh,
        cents_per_kwh,
        fixed,
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
/// deposit and the card, so a request sent twice charges once), then in one transaction the
/// deposit paid, `account.deposit_paid`, the credit check passed and the refreshed status (the
/// enrollment goes on). A deposit already paid is answered as it is.
pub async fn pay_deposit(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<DepositRow, Error<DepositRefused>> {
    let deposit = deposit_of(core, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::NoDeposit))?;
    if deposit.status != "required" {
        return Ok(deposit);
    }
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
            amount_cents: deposit.amount_cents,
            idempotency_key: format!("deposit-{}-card-{}", deposit.uuid, card.id),
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
    if store::credit_reviews::mark_deposit_paid(&mut tx, deposit.uuid, deposit.amount_cents, now)
        .await?
    {
        // The deposit's payment is acknowledged with a receipt like any other.
        mail::queue_to_account(
            &mut tx,
            &clock,
            app,
            &account,
            &Template::PaymentReceipt(PaymentReceipt {
                first_name: account.first_name.clone(),
                amount_cents: deposit.amount_cents,
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
                    amount_cents: deposit.amount_cents,
                },
                now,
            ),
        )
        .await?;
        // The deposit stands in for the credit the check did not show.
        if let Some(check) = store::credit::latest_credit_check(&mut tx, account_uuid).await? {
            if check.status != CreditState::Passed.as_str() {
                store::credit::set_credit_check_answer(
                    &mut tx,
                    check.uuid,
                    CreditState::Passed.as_str(),
                    now,
                )
                .await?;
                super::enrollment::credit_passed(&mut tx, app.uuid, account_uuid, &clock).await?;
            }
        }
        super::status::refresh_status(&mut tx, &core.clock, &core.db, app.uuid, account_uuid, now)
            .await?;
    }
    let paid = store::credit_reviews::latest_deposit(&mut tx, account_uuid)
        .await?
        .ok_or(Error::Refused(DepositRefused::NoDeposit))?;
    tx.commit().await?;
    core.account_changed(account_uuid);
    Ok(paid)
}
