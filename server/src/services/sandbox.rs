//! The sandbox's demo data: an account made active since a few cycles ago, with what an
//! enrollment needs (identity, a passed credit check, a test card, a location and its plan).

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use super::{
    billing, enrollment,
    Error::{self, Failed, Refused},
};
use crate::{
    clock::AccountClock,
    domain::{
        enrollment::{contract_end, EnrollmentType},
        status::{CreditState, UtilityState, VerificationState},
        tokens,
    },
    state::Core,
    store::{
        self,
        enrollment::{ConfirmedAddressRow, EnrollmentRow},
        market::{PlanRow, ServiceAddressRow},
    },
};

/// How long ago demo data starts service: about three billing cycles.
const SEED_SERVICE_DAYS: i64 = 95;

/// Why demo data could not be seeded; nothing was written.
#[derive(Debug)]
pub enum SeedRefused {
    AccountNotFound,
    /// A cancelled enrollment must be deleted first.
    EnrollmentCancelled,
}

/// Seeds the account, in one transaction, as active since `SEED_SERVICE_DAYS` ago: identity
/// facts, a passed credit check, a test card, the location and contract of `new_location` (an
/// address and a plan priced for it) when it has none, a finalized enrollment the utility
/// accepted, service active since then. Returns the instant seeded (on the account's clock):
/// the caller runs the account's jobs due by then (the cycles' reads, invoices and auto-pay).
pub async fn seed_demo(
    state: &Core,
    app_uuid: Uuid,
    account_uuid: Uuid,
    clock: &AccountClock,
    new_location: Option<(ServiceAddressRow, PlanRow)>,
) -> Result<DateTime<Utc>, Error<SeedRefused>> {
    let now = clock.now();
    let today = clock.today();
    // Service began a few cycles ago, so that the demo has usage, paid invoices and an open one.
    let start = today - chrono::Duration::days(SEED_SERVICE_DAYS);
    let mut tx = state.db.begin().await?;
    let mut account = store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid)
        .await?
        .ok_or(Refused(SeedRefused::AccountNotFound))?;
    if let Some(e) = store::enrollment::enrollment_tx(&mut tx, account_uuid).await? {
        if e.cancellation.is_some() {
            return Err(Refused(SeedRefused::EnrollmentCancelled));
        }
    }
    // Identity facts.
    let mut profile = account.profile().map_err(|e| Failed(e.into()))?;
    if !profile.is_identity_complete() {
        profile
            .phone
            .get_or_insert_with(|| "+15125550100".to_owned());
        profile
            .date_of_birth
            .get_or_insert_with(|| NaiveDate::from_ymd_opt(1980, 1, 1).unwrap_or_default());
        account
            .set_profile(&profile)
            .map_err(|e| Failed(e.into()))?;
        account.updated_at = now;
        store::accounts::update_account(&mut tx, &account).await?;
    }
    // A passed credit check.
    let credit = store::credit::latest_credit_check(&mut tx, account_uuid).await?;
    if credit.is_none_or(|c| c.status != CreditState::Passed.as_str()) {
        let sealed = state.pii.seal(b"123456789");
        store::credit::insert_credit_check(
            &mut tx,
            &store::credit::NewCreditCheck {
                account_uuid,
                ssn_ciphertext: &sealed,
                ssn_last4: "6789",
                consented_at: now,
                status: CreditState::Passed.as_str(),
            },
        )
        .await?;
    }
    // A test card.
    if !account.has_payment_method {
        let card = store::payments::CardRow {
            id: tokens::payment_method_id(),
            brand: "visa".to_owned(),
            last4: "4242".to_owned(),
            exp_month: 12,
            exp_year: 2099,
            postal_code: None,
            fingerprint: format!("demo-{account_uuid}"),
        };
        store::payments::insert_processor_payment_method(
            &mut tx,
            app_uuid,
            account_uuid,
            &card,
            false,
            now,
        )
        .await?;
        billing::attach_card(&mut tx, app_uuid, account_uuid, &card, now).await?;
    }
    // The location and its contract, starting today.
    if let Some((address, plan)) = new_location {
        if store::enrollment::confirmed_address_tx(&mut tx, account_uuid)
            .await?
            .is_none()
        {
            let confirmed = ConfirmedAddressRow {
                esi_id: address.esi_id.clone(),
                address_1: address.address_1.clone(),
                address_2: address.address_2.clone(),
                city: address.city.clone(),
                state: address.state.clone(),
                postal_code: address.postal_code.clone(),
                tdu: address.tdu.clone(),
            };
            store::enrollment::insert_confirmed_address(&mut tx, account_uuid, &confirmed, now)
                .await?;
        }
        let (location, contract) = enrollment::new_location_and_contract(
            app_uuid,
            account_uuid,
            address,
            &plan,
            start,
            EnrollmentType::MoveIn,
            "customer",
            now,
        )
        .map_err(|e| Failed(e.into()))?;
        enrollment::record_plan_accepted(&mut tx, app_uuid, &location, &contract, now).await?;
    }
    // Finalized, verified, accepted by the utility.
    match store::enrollment::enrollment_tx(&mut tx, account_uuid).await? {
        Some(mut e) => {
            e.verification = VerificationState::Passed.as_str().to_owned();
            e.utility = UtilityState::Accepted.as_str().to_owned();
            e.updated_at = now;
            store::enrollment::update_enrollment(&mut tx, &e).await?;
        }
        None => {
            store::enrollment::insert_enrollment(
                &mut tx,
                &EnrollmentRow {
                    account_uuid,
                    finalized_at: now,
                    is_client_agent: account.client_agent_accepted_at.is_some(),
                    verification: VerificationState::Passed.as_str().to_owned(),
                    utility: UtilityState::Accepted.as_str().to_owned(),
                    cancellation: None,
                    updated_at: now,
                },
            )
            .await?;
        }
    }
    // Service active since `start`: a pending contract moves there too.
    for contract in store::enrollment::contracts_of_account_tx(&mut tx, account_uuid)
        .await?
        .iter()
        .filter(|c| c.status == "pending")
    {
        let term = u32::try_from(contract.term_months).unwrap_or(1);
        let end = contract_end(start, term, &contract.plan_type);
        store::enrollment::set_contract_dates(&mut tx, contract.uuid, start, end).await?;
    }
    enrollment::activate_locations(&mut tx, clock, app_uuid, account_uuid, Some(start)).await?;
    // The pipeline's own steps, if it was running, have nothing left to do.
    store::enrollment::drop_pending_jobs(
        &mut tx,
        account_uuid,
        &store::enrollment::PIPELINE_JOB_KINDS,
    )
    .await?;
    store::status::update_status(&mut tx, app_uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(now)
}
