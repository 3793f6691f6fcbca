//! Renewing a location's fixed contract, on the account's clock. From 90 days before the
//! contract in force ends, renewal plans are priced as for a new customer, each starting the
//! day after that end (`request_renewal_plans`); accepting one queues a pending contract for
//! that day (`accept_renewal`), and on that day a job makes it active and ends the contract it
//! renews (`start_renewal`).

use crate::{
    domain::{
        documents::contract_in_force,
        enrollment::{
            accepted_by, check_renewal, enroller, renewal_eligible, renewal_queued, renewal_start,
            start_of_market_day, ContractStatus, RenewalRefusal, StartDateOutOfRange,
        },
        events::Event,
    },
    outbox::{self, JobKind, NewJob},
    state::Core,
    store::{self, apps::AppRow, enrollment::ContractRow, events::NewEvent, Tx},
};
use chrono::NaiveDate;
use uuid::Uuid;

use super::{
    enrollment::{location_with_contracts, new_contract},
    plans::{self, PlansRefused, PricedPlan},
    Error::{self, Failed, Refused},
};

/// Why a renewal was refused; nothing was written.
#[derive(Debug)]
pub enum RenewalRefused {
    LocationNotFound,
    /// No active fixed-term contract inside its renewal window.
    NotEligible,
    /// A renewal is already queued for the location.
    AlreadyAccepted,
    /// No plan of this app for this account has this id.
    PlanNotFound,
    /// The plan was priced for another meter (or another utility's area).
    PricedForAnotherMeter,
    PlanExpired,
    TermsNotAccepted,
    /// Renewals start on the day after the contract in force ends, and only then.
    StartDateOutOfRange(StartDateOutOfRange),
    /// Pricing refused the location's meter.
    Plans(PlansRefused),
}

impl From<RenewalRefusal> for RenewalRefused {
    fn from(why: RenewalRefusal) -> Self {
        match why {
            RenewalRefusal::NotEligible => RenewalRefused::NotEligible,
            RenewalRefusal::AlreadyAccepted => RenewalRefused::AlreadyAccepted,
            RenewalRefusal::TermsNotAccepted => RenewalRefused::TermsNotAccepted,
            RenewalRefusal::StartDateOutOfRange(range) => {
                RenewalRefused::StartDateOutOfRange(range)
            }
        }
    }
}

/// The contract in force among a location's contracts, with its status and end date as the
/// renewal rules read them.
fn in_force(contracts: &[ContractRow]) -> Option<&ContractRow> {
    contract_in_force(contracts, |c| c.status, |c| c.start_date)
}

fn terms(c: &ContractRow) -> (ContractStatus, Option<NaiveDate>) {
    (c.status, c.end_date)
}

/// Prices the renewal plans of a location inside its renewal window (each starting the day
/// after its contract ends) and announces them (`location.renewal_plan_requested`).
pub async fn request_renewal_plans(
    core: &Core,
    app: &AppRow,
    account: Uuid,
    location_uuid: Uuid,
) -> Result<Vec<PricedPlan>, Error<RenewalRefused>> {
    let (location, contracts) = location_with_contracts(&core.db, account, location_uuid)
        .await?
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let today = core.clock.for_account(&core.db, account).await?.today();
    let end = in_force(&contracts)
        .filter(|c| renewal_eligible(Some(terms(c)), today))
        .and_then(|c| c.end_date)
        .ok_or(Refused(RenewalRefused::NotEligible))?;
    plans::request_renewal_plans(
        core,
        app,
        account,
        location.uuid,
        &location.esi_id,
        renewal_start(end),
    )
    .await
    .map_err(|e| match e {
        Refused(why) => Refused(RenewalRefused::Plans(why)),
        Failed(e) => Failed(e),
    })
}

/// A renewal acceptance as the request gave it, parsed.
pub struct AcceptRenewal<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub plan_uuid: Uuid,
    pub start: NaiveDate,
    pub terms_accepted: bool,
}

/// The payload of the job that starts a renewal.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RenewalStartPayload {
    pub app_uuid: Uuid,
    pub contract_uuid: Uuid,
}

/// Accepts a renewal plan, in one transaction: a pending contract for the location from the
/// day after its contract in force ends, `location.renewal_plan_accepted`, and the job that
/// starts it on that day. Any plan of the app priced for the location's meter will do (a
/// renewal plan, or one the app priced for this account with its own terms). Returns the
/// queued contract.
pub async fn accept_renewal(
    core: &Core,
    input: &AcceptRenewal<'_>,
) -> Result<ContractRow, Error<RenewalRefused>> {
    let (app, account) = (input.app, input.account_uuid);
    let clock = core.clock.for_account(&core.db, account).await?;
    let now = clock.now();
    let plan = store::market::plan_by_uuid(&core.db, input.plan_uuid).await?;
    let mut tx = core.db.begin().await?;
    // The account's lock first, so that of two acceptances racing the second sees the first.
    let account_row = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account)
        .await?
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let location = store::enrollment::locations_of_account(&mut tx, account)
        .await?
        .into_iter()
        .find(|l| l.uuid == input.location_uuid)
        .ok_or(Refused(RenewalRefused::LocationNotFound))?;
    let mut contracts = store::enrollment::contracts_of_account(&mut tx, account).await?;
    contracts.retain(|c| c.location_uuid == location.uuid);
    let current = in_force(&contracts);
    let queued = current
        .is_some_and(|f| renewal_queued(&contracts, |c| c.status, |c| c.start_date, f.start_date));
    let start = check_renewal(
        current.map(terms),
        queued,
        clock.today(),
        input.start,
        input.terms_accepted,
    )
    .map_err(|why| Refused(why.into()))?;
    let plan = plan
        .filter(|p| p.app_uuid == app.uuid)
        .filter(|p| p.account_uuid.is_none_or(|a| a == account))
        .ok_or(Refused(RenewalRefused::PlanNotFound))?;
    if plan.esi_id.as_deref().is_some_and(|e| e != location.esi_id) || plan.tdu != location.tdu {
        return Err(Refused(RenewalRefused::PricedForAnotherMeter));
    }
    if plan.expires_at <= now {
        return Err(Refused(RenewalRefused::PlanExpired));
    }
    let by = accepted_by(enroller(account_row.client_agent_accepted_at));
    let contract = new_contract(location.uuid, account, &plan, start, by, now)
        .map_err(|e| Failed(e.into()))?;
    store::enrollment::insert_contract(&mut tx, &contract).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app.uuid,
            &Event::RenewalPlanAccepted {
                account_uuid: account,
                location_uuid: location.uuid,
                plan_uuid: plan.uuid,
                contract_uuid: contract.uuid,
                service_start_date: start,
                accepted_by: by.to_owned(),
            },
            now,
        ),
    )
    .await?;
    outbox::enqueue(
        &mut tx,
        &clock,
        &NewJob {
            kind: JobKind::RenewalStart,
            payload: &RenewalStartPayload {
                app_uuid: app.uuid,
                contract_uuid: contract.uuid,
            },
            account_uuid: Some(account),
            run_at: start_of_market_day(start).max(now),
            max_attempts: 20,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(contract)
}

/// A renewal's start date arrives, in `tx`: the queued contract becomes active and the
/// location's contract it renews ends. Nothing happens to a renewal that is no longer queued
/// (the location was cancelled, or the enrollment deleted).
pub async fn start_renewal(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    contract_uuid: Uuid,
) -> store::Result<()> {
    if store::accounts::account_of_app_for_update(tx, app, account)
        .await?
        .is_none()
    {
        return Ok(());
    }
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(renewal) = contracts.iter().find(|c| c.uuid == contract_uuid) else {
        return Ok(());
    };
    if !store::enrollment::set_status_of_contract(
        tx,
        renewal.uuid,
        ContractStatus::Pending,
        ContractStatus::Active,
    )
    .await?
    {
        return Ok(());
    }
    for renewed in contracts
        .iter()
        .filter(|c| c.location_uuid == renewal.location_uuid && c.uuid != renewal.uuid)
    {
        store::enrollment::set_status_of_contract(
            tx,
            renewed.uuid,
            ContractStatus::Active,
            ContractStatus::Ended,
        )
        .await?;
    }
    Ok(())
}
