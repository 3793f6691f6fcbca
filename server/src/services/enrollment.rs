//! The enrollment's use cases after finalize, shared by the pipeline's jobs (`jobs::pipeline`),
//! the handlers and the operator's worklist: sending a verified enrollment to the utility
//! (`credit_passed`), applying the utility's answer (`apply_answer`, `record_utility_answer`),
//! starting service at the account's locations (`activate_locations`), cancelling a location
//! (`cancel_location`) and the sandbox's simulated market events (`simulate`).

use uuid::Uuid;

use app::api::market::PlanRatesOut;

use super::Error::{self, Failed, Refused};
use crate::{
    adapters::utility::UtilityGateway,
    domain::{
        enrollment::{
            acceptance_confirms_address, check_start_date, contract_end, start_of_market_day,
            EnrollmentSimulation, EnrollmentType, StartDateOutOfRange, SubmissionStatus,
            UtilityAnswer, UtilityRecord,
        },
        market::{BusinessCalendar, Enroller, EsiId},
        status::{Cancellation, UtilityState, VerificationState},
    },
    mail::{
        self,
        templates::{Brand, LetterOfAuthorization, Template},
        NewEmail,
    },
    state::Core,
    store::{
        self,
        apps::AppRow,
        enrollment::{ConfirmedAddressRow, ContractRow, EnrollmentRow, LocationRow},
        events::NewEvent,
        Tx,
    },
};
use crate::{
    clock::AccountClock,
    outbox::{enqueue_account_job as schedule, JobKind},
};

/// The locked account and its enrollment (unless cancelled).
pub async fn locked(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
) -> anyhow::Result<Option<(store::accounts::AccountRow, EnrollmentRow)>> {
    let Some(row) = store::accounts::account_of_app_for_update(tx, app, account).await? else {
        return Ok(None);
    };
    Ok(store::enrollment::enrollment_tx(tx, account)
        .await?
        .filter(|e| e.cancellation.is_none())
        .map(|e| (row, e)))
}

/// Called when a credit check passes: a finalized, verified enrollment goes to the utility.
pub async fn credit_passed(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    clock: &AccountClock,
) -> store::Result<()> {
    let ready = store::enrollment::enrollment_tx(tx, account)
        .await?
        .is_some_and(|e| {
            e.cancellation.is_none()
                && e.verification == VerificationState::Passed.as_str()
                && e.utility == UtilityState::NotSubmitted.as_str()
        });
    if ready {
        schedule(tx, clock, JobKind::UtilitySubmit, app, account, clock.now()).await?;
    }
    Ok(())
}

/// The utility's answer to the enrollment, in `tx`: an acceptance sets the location's start
/// date, and when the gateway starts service by itself, schedules it. The caller refreshes the
/// status.
#[allow(clippy::too_many_arguments)]
pub async fn apply_answer(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    e: &mut EnrollmentRow,
    location: &mut LocationRow,
    answer: UtilityAnswer,
    start: chrono::NaiveDate,
    gateway: UtilityGateway,
) -> store::Result<()> {
    let now = clock.now();
    e.utility = match answer {
        UtilityAnswer::Accepted => UtilityState::Accepted,
        UtilityAnswer::SwitchHold => UtilityState::SwitchHold,
        UtilityAnswer::Deactivated => UtilityState::Deactivated,
        UtilityAnswer::Rejected => UtilityState::Rejected,
    }
    .as_str()
    .to_owned();
    e.updated_at = now;
    store::enrollment::update_enrollment(tx, e).await?;
    if answer == UtilityAnswer::Accepted {
        location.service_start_date = Some(start);
        location.updated_at = now;
        store::enrollment::update_location(tx, location).await?;
        if gateway.starts_service_itself() {
            let at = start_of_market_day(start).max(now);
            schedule(
                tx,
                clock,
                JobKind::ServiceStart,
                app,
                location.account_uuid,
                at,
            )
            .await?;
        }
    }
    Ok(())
}

/// Service starts at the account's locations, in `tx`: each becomes active with its usage
/// history, billing starts, the events are written and the pending contracts turn active. The
/// start date is `start` when given, else the location's accepted one, else today. The caller
/// refreshes the status.
pub async fn activate_locations(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
    start: Option<chrono::NaiveDate>,
) -> store::Result<()> {
    let now = clock.now();
    let mut locations = store::enrollment::locations_of_account_tx(tx, account).await?;
    for location in locations.iter_mut().filter(|l| !l.is_service_active) {
        location.is_service_active = true;
        location.has_usage_history = true;
        location.status = "active".to_owned();
        let start = start
            .or(location.service_start_date)
            .unwrap_or(clock.today());
        location.service_start_date = Some(start);
        location.updated_at = now;
        store::enrollment::update_location(tx, location).await?;
        super::billing::start_billing(tx, clock, app, location, start).await?;
        for (kind, data) in [
            (
                "location.service_active",
                serde_json::json!({
                    "account_uuid": account,
                    "location_uuid": location.uuid,
                    "service_start_date": location.service_start_date,
                }),
            ),
            (
                "location.usage_history_available",
                serde_json::json!({"account_uuid": account, "location_uuid": location.uuid}),
            ),
        ] {
            store::events::insert_event(
                tx,
                &NewEvent {
                    app_uuid: app,
                    account_uuid: Some(account),
                    kind,
                    data,
                    created_at: now,
                },
            )
            .await?;
        }
    }
    store::enrollment::set_contract_status(tx, account, "pending", "active").await?;
    Ok(())
}

/// Records what the utility answered to a live submission (the operator's worklist), in `tx`,
/// moving the enrollment as the simulator's answers move a sandbox one. `Err` says why the
/// answer does not apply; nothing is written then.
pub async fn record_utility_answer(
    tx: &mut Tx,
    clock: &AccountClock,
    submission_uuid: Uuid,
    record: &UtilityRecord,
) -> anyhow::Result<Result<store::utility::SubmissionRow, String>> {
    let now = clock.now();
    let Some(peek) = store::utility::submission_tx(tx, submission_uuid).await? else {
        return Ok(Err(format!("no submission {submission_uuid}")));
    };
    let (app, account) = (peek.app_uuid, peek.account_uuid);
    // The account's lock first, as every change of an enrollment takes it; then the
    // submission as it stands under that lock.
    let Some((_, mut e)) = locked(tx, app, account).await? else {
        return Ok(Err("the enrollment was cancelled or deleted".to_owned()));
    };
    let Some(mut submission) = store::utility::submission_tx(tx, submission_uuid).await? else {
        return Ok(Err(format!("no submission {submission_uuid}")));
    };
    let current = SubmissionStatus::parse(&submission.status).unwrap_or(SubmissionStatus::Pending);
    let next = match record.next_status(current) {
        Ok(next) => next,
        Err(why) => return Ok(Err(why)),
    };
    let mut locations = store::enrollment::locations_of_account_tx(tx, account).await?;
    let Some(location) = locations
        .iter_mut()
        .find(|l| l.uuid == submission.location_uuid)
    else {
        return Ok(Err("the submission's location is gone".to_owned()));
    };
    match record.answer() {
        Some(answer) => {
            let waiting = [UtilityState::Submitted, UtilityState::SwitchHold];
            if !waiting.iter().any(|w| w.as_str() == e.utility) {
                return Ok(Err(format!(
                    "the enrollment is not waiting for the utility ({})",
                    e.utility
                )));
            }
            let start = match record {
                UtilityRecord::Accepted { start_date } => *start_date,
                _ => clock.today(),
            };
            apply_answer(
                tx,
                clock,
                app,
                &mut e,
                location,
                answer,
                start,
                UtilityGateway::Worklist,
            )
            .await?;
            if let UtilityRecord::Accepted { start_date } = record {
                submission.start_date = Some(*start_date);
            }
            if let UtilityRecord::Rejected { reason } = record {
                submission.reason = Some(reason.clone());
            }
            submission.answered_at = Some(now);
        }
        None => {
            if e.utility != UtilityState::Accepted.as_str() {
                return Ok(Err(
                    "the utility has not accepted this enrollment".to_owned()
                ));
            }
            activate_locations(tx, clock, app, account, None).await?;
            submission.activated_at = Some(now);
        }
    }
    submission.status = next.as_str().to_owned();
    store::utility::update_submission(tx, &submission).await?;
    store::status::update_status(tx, app, account, now).await?;
    Ok(Ok(submission))
}

/// The Location and the pending Contract a plan acceptance creates.
#[allow(clippy::too_many_arguments)]
pub fn new_location_and_contract(
    app_uuid: Uuid,
    account_uuid: Uuid,
    address: store::market::ServiceAddressRow,
    plan: &store::market::PlanRow,
    start: chrono::NaiveDate,
    enrollment_type: EnrollmentType,
    accepted_by: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(LocationRow, ContractRow), serde_json::Error> {
    let location = LocationRow {
        uuid: Uuid::new_v4(),
        app_uuid,
        account_uuid,
        esi_id: address.esi_id.clone(),
        address_1: address.address_1,
        address_2: address.address_2,
        city: address.city,
        state: address.state,
        postal_code: address.postal_code,
        tdu: address.tdu,
        enrollment_type: enrollment_type.as_str().to_owned(),
        status: "pending".to_owned(),
        service_start_date: None,
        final_service_date: None,
        is_service_active: false,
        has_usage_history: false,
        created_at: now,
        updated_at: now,
    };
    let term_months = u32::try_from(plan.term_months).unwrap_or(1);
    let rates = PlanRatesOut {
        energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
        base_charge_cents_per_month: plan.base_charge_cents_per_month,
        tdu_fixed_cents_per_month: plan.tdu_fixed_cents_per_month,
        tdu_cents_per_kwh: plan.tdu_cents_per_kwh.clone(),
        solar_buyback_cents_per_kwh: plan.solar_buyback_cents_per_kwh.clone(),
        early_termination_fee_cents: plan.early_termination_fee_cents,
    };
    let contract = ContractRow {
        uuid: Uuid::new_v4(),
        location_uuid: location.uuid,
        account_uuid,
        plan_uuid: plan.uuid,
        plan_name: plan.name.clone(),
        plan_type: plan.plan_type.clone(),
        term_months: plan.term_months,
        start_date: start,
        end_date: contract_end(start, term_months, &plan.plan_type),
        rates: serde_json::to_string(&rates)?,
        tos_version: plan.tos_version.clone(),
        status: "pending".to_owned(),
        accepted_at: now,
        accepted_by: accepted_by.to_owned(),
        created_at: now,
    };
    Ok((location, contract))
}

/// A plan accepted for a meter, in `tx`: the new Location, its pending Contract and
/// `enrollment.plan_accepted`.
pub async fn record_plan_accepted(
    tx: &mut Tx,
    app: Uuid,
    location: &LocationRow,
    contract: &ContractRow,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    store::enrollment::insert_location(tx, location).await?;
    store::enrollment::insert_contract(tx, contract).await?;
    store::events::insert_event(
        tx,
        &NewEvent {
            app_uuid: app,
            account_uuid: Some(contract.account_uuid),
            kind: "enrollment.plan_accepted",
            data: serde_json::json!({
                "account_uuid": contract.account_uuid,
                "location_uuid": location.uuid,
                "plan_uuid": contract.plan_uuid,
                "contract_uuid": contract.uuid,
                "service_start_date": contract.start_date,
                "accepted_by": contract.accepted_by,
            }),
            created_at: now,
        },
    )
    .await?;
    Ok(())
}

/// A plan acceptance as the request gave it, parsed.
pub struct AcceptPlan<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Uuid,
    pub plan_uuid: Uuid,
    pub start: chrono::NaiveDate,
    /// `None`: a move-in when the date is early enough for a move-in only, else a switch.
    pub requested_type: Option<EnrollmentType>,
    /// `None`: the meter the plan was priced for, else the confirmed address's.
    pub esi_id: Option<EsiId>,
}

/// Why a plan acceptance was refused; nothing was written.
#[derive(Debug)]
pub enum AcceptPlanRefused {
    PlanNotFound,
    /// No ESI ID given, and neither the plan nor a confirmed address names one.
    EsiIdMissing,
    EsiIdInvalid,
    EsiIdNotFound,
    /// The plan was priced for another meter (or another utility's area).
    PricedForAnotherMeter,
    PlanExpired,
    AccountNotFound,
    StartDateOutOfRange(StartDateOutOfRange),
    AlreadyFinalized,
    PlanAlreadyAccepted,
}

/// What an accepted plan created.
pub struct PlanAccepted {
    pub location: LocationRow,
    pub contract: ContractRow,
}

/// Accepts a plan for a meter, in one transaction: the Location and its pending Contract
/// (`enrollment.plan_accepted`), the address confirmed when none was, the Letter of
/// Authorization e-mailed for a client agent enrollment, and the account's status refreshed
/// (the confirmed address may be a client agent enrollment's last prerequisite).
pub async fn accept_plan(
    state: &Core,
    input: &AcceptPlan<'_>,
) -> Result<PlanAccepted, Error<AcceptPlanRefused>> {
    let (account_uuid, app, start) = (input.account_uuid, input.app, input.start);
    let plan = store::market::plan_by_uuid(&state.db, input.plan_uuid)
        .await?
        .filter(|p| p.app_uuid == app.uuid)
        .filter(|p| p.account_uuid.is_none_or(|a| a == account_uuid))
        .ok_or(Refused(AcceptPlanRefused::PlanNotFound))?;
    // Without an ESI ID: the meter the plan was priced for, else the confirmed address's.
    let esi = match input.esi_id.clone() {
        Some(esi) => esi,
        None => {
            let fallback = match plan.esi_id.clone() {
                Some(esi) => Some(esi),
                None => store::enrollment::confirmed_address(&state.db, account_uuid)
                    .await?
                    .map(|a| a.esi_id),
            };
            let fallback = fallback.ok_or(Refused(AcceptPlanRefused::EsiIdMissing))?;
            EsiId::parse(&fallback).ok_or(Refused(AcceptPlanRefused::EsiIdInvalid))?
        }
    };
    let address = store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or(Refused(AcceptPlanRefused::EsiIdNotFound))?;
    if plan.esi_id.as_deref().is_some_and(|p| p != esi.as_str()) || plan.tdu != address.tdu {
        return Err(Refused(AcceptPlanRefused::PricedForAnotherMeter));
    }
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let now = clock.now();
    if plan.expires_at <= now {
        return Err(Refused(AcceptPlanRefused::PlanExpired));
    }
    let calendar = BusinessCalendar::new(store::market::federal_holidays(&state.db).await?);
    let mut tx = state.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(AcceptPlanRefused::AccountNotFound))?;
    let enroller = if account.client_agent_accepted_at.is_some() {
        Enroller::ClientAgent
    } else {
        Enroller::Customer
    };
    let enrollment_type = check_start_date(
        start,
        (plan.earliest_start_date, plan.latest_start_date),
        clock.today(),
        enroller,
        input.requested_type,
        &calendar,
    )
    .map_err(|range| Refused(AcceptPlanRefused::StartDateOutOfRange(range)))?;
    if account.is_enrollment_finalized {
        return Err(Refused(AcceptPlanRefused::AlreadyFinalized));
    }
    if account.has_accepted_plan {
        return Err(Refused(AcceptPlanRefused::PlanAlreadyAccepted));
    }
    let (location, contract) = new_location_and_contract(
        app.uuid,
        account_uuid,
        address,
        &plan,
        start,
        enrollment_type,
        match enroller {
            Enroller::ClientAgent => "client_agent",
            Enroller::Customer => "customer",
        },
        now,
    )
    .map_err(|e| Failed(e.into()))?;
    record_plan_accepted(&mut tx, app.uuid, &location, &contract, now).await?;
    let confirmed = store::enrollment::confirmed_address_tx(&mut tx, account_uuid).await?;
    if acceptance_confirms_address(
        confirmed.as_ref().map(|a| a.esi_id.as_str()),
        &location.esi_id,
    ) {
        store::enrollment::insert_confirmed_address(
            &mut tx,
            account_uuid,
            &ConfirmedAddressRow {
                esi_id: location.esi_id.clone(),
                address_1: location.address_1.clone(),
                address_2: location.address_2.clone(),
                city: location.city.clone(),
                state: location.state.clone(),
                postal_code: location.postal_code.clone(),
                tdu: location.tdu.clone(),
            },
            now,
        )
        .await?;
    }
    if enroller == Enroller::ClientAgent {
        // The Letter of Authorization: the customer's record that the partner accepted for them.
        let profile = account.profile().map_err(|e| Failed(e.into()))?;
        let letter = LetterOfAuthorization {
            first_name: profile.first_name,
            last_name: profile.last_name,
            service_address: format!(
                "{}{}, {}, {} {}",
                location.address_1,
                location
                    .address_2
                    .as_deref()
                    .map(|a| format!(" {a}"))
                    .unwrap_or_default(),
                location.city,
                location.state,
                location.postal_code
            ),
            esi_id: location.esi_id.clone(),
            plan_name: plan.name.clone(),
            energy_cents_per_kwh: plan.energy_cents_per_kwh.clone(),
            term_months: plan.term_months,
            start_date: start,
            authorized_at: account.client_agent_accepted_at.unwrap_or(now),
            accepted_at: now,
        };
        mail::queue(
            &mut tx,
            &clock,
            &NewEmail {
                app_uuid: app.uuid,
                account_uuid: Some(account_uuid),
                to: &profile.email,
                template: &Template::LetterOfAuthorization(letter),
                brand: &Brand::of_app(app),
                send_at: None,
                event_on_send: None,
            },
        )
        .await?;
    }
    // The address this acceptance confirmed may be the last prerequisite of a client agent
    // enrollment.
    super::status::refresh_status(
        &mut tx,
        &state.clock,
        &state.db,
        app.uuid,
        account_uuid,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(PlanAccepted { location, contract })
}

/// Why a simulated event could not apply.
pub enum SimulationRefused {
    /// The enrollment is not finalized (or has no location) yet.
    NotFinalized,
}

/// Applies a simulated utility or market event to the account's enrollment, in `tx`; jobs it
/// schedules run when the caller advances the account's clock to now.
pub async fn simulate(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    clock: &AccountClock,
    event: EnrollmentSimulation,
) -> store::Result<Result<(), SimulationRefused>> {
    use EnrollmentSimulation as E;
    let now = clock.now();
    store::accounts::account_of_app_for_update(tx, app, account).await?;
    let Some(mut e) = store::enrollment::enrollment_tx(tx, account).await? else {
        return Ok(Err(SimulationRefused::NotFinalized));
    };
    let mut locations = store::enrollment::locations_of_account_tx(tx, account).await?;
    let contracts = store::enrollment::contracts_of_account_tx(tx, account).await?;
    let Some(location) = locations.first_mut() else {
        return Ok(Err(SimulationRefused::NotFinalized));
    };
    e.updated_at = now;
    location.updated_at = now;
    match event {
        E::SwitchHold => e.utility = UtilityState::SwitchHold.as_str().to_owned(),
        E::MeterDeactivated => e.utility = UtilityState::Deactivated.as_str().to_owned(),
        E::UtilityBlocked => e.utility = UtilityState::Rejected.as_str().to_owned(),
        E::VerificationHold => e.verification = VerificationState::Hold.as_str().to_owned(),
        E::SwitchHoldLifted => {
            if e.utility == UtilityState::SwitchHold.as_str() {
                e.utility = UtilityState::NotSubmitted.as_str().to_owned();
                schedule(tx, clock, JobKind::UtilitySubmit, app, account, now).await?;
            }
        }
        E::UtilityAccepted | E::ServiceActive => {
            e.verification = VerificationState::Passed.as_str().to_owned();
            e.utility = UtilityState::Accepted.as_str().to_owned();
            let start = match event {
                E::ServiceActive => clock.today(),
                _ => contracts
                    .iter()
                    .find(|c| c.status == "pending")
                    .map_or_else(|| clock.today(), |c| c.start_date),
            };
            location.service_start_date = Some(start);
            store::enrollment::update_location(tx, location).await?;
            let at = start_of_market_day(start).max(now);
            schedule(tx, clock, JobKind::ServiceStart, app, account, at).await?;
        }
        E::ServiceCanceled | E::CustomerSwitchedAway => {
            let reason = if event == E::CustomerSwitchedAway {
                "switched_away"
            } else {
                "canceled"
            };
            cancel_location(tx, app, &mut e, location, clock.today(), reason, now).await?;
        }
        E::UsageHistoryAvailable => {
            location.has_usage_history = true;
            store::enrollment::update_location(tx, location).await?;
            let start = location.service_start_date.unwrap_or_else(|| clock.today());
            super::billing::store_history(tx, location, start).await?;
            store::events::insert_event(
                tx,
                &NewEvent {
                    app_uuid: app,
                    account_uuid: Some(account),
                    kind: "location.usage_history_available",
                    data: serde_json::json!({"account_uuid": account, "location_uuid": location.uuid}),
                    created_at: now,
                },
            )
            .await?;
        }
    }
    store::enrollment::update_enrollment(tx, &e).await?;
    store::status::update_status(tx, app, account, now).await?;
    Ok(Ok(()))
}

/// Ends a location's service (or cancels it before it started) in `tx`: the enrollment's
/// cancellation (`post_start` when service had started, else `pre_start`), the location
/// cancelled with its final service date, its contracts ended or cancelled, and the event
/// `location.service_canceled`. The caller writes the enrollment and refreshes the status.
pub async fn cancel_location(
    tx: &mut Tx,
    app: Uuid,
    e: &mut EnrollmentRow,
    location: &mut LocationRow,
    final_service_date: chrono::NaiveDate,
    reason: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    let account = location.account_uuid;
    let started = location.is_service_active;
    e.cancellation = Some(
        if started {
            Cancellation::PostStart
        } else {
            Cancellation::PreStart
        }
        .as_str()
        .to_owned(),
    );
    e.updated_at = now;
    location.is_service_active = false;
    location.status = "cancelled".to_owned();
    location.final_service_date = Some(final_service_date);
    location.updated_at = now;
    store::enrollment::update_location(tx, location).await?;
    store::enrollment::set_contract_status(tx, account, "active", "ended").await?;
    store::enrollment::set_contract_status(tx, account, "pending", "cancelled").await?;
    store::events::insert_event(
        tx,
        &NewEvent {
            app_uuid: app,
            account_uuid: Some(account),
            kind: "location.service_canceled",
            data: serde_json::json!({
                "account_uuid": account,
                "location_uuid": location.uuid,
                "final_service_date": location.final_service_date,
                "reason": reason,
            }),
            created_at: now,
        },
    )
    .await?;
    Ok(())
}
