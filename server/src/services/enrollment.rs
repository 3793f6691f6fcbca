//! The enrollment's use cases, shared by the handlers (`http::enrollment`, `http::identity`),
//! the pipeline's jobs (`jobs::pipeline`) and the operator's worklist. Before finalize:
//! confirming the address, accepting a plan, the identity, the billing address, finalizing.
//! The pipeline's steps: `verify`, `submit_to_utility`, `simulated_utility_answer`,
//! `start_service`, `end_service`, and what they share (applying the utility's answer,
//! `apply_answer`, `record_utility_answer`; starting service, `activate_locations`); sending a
//! verified enrollment to the utility after its credit check is `follow_up::submit_when_ready`. After:
//! cancelling (`cancel_service`, `cancel_location`), the location's contracts and documents,
//! and the sandbox's simulated market events (`simulate`). Renewal is in `services::renewal`.

use uuid::Uuid;

use app::api::{market::PlanRatesOut, PostalAddress, UpdateAccountIn};

use crate::{
    adapters::utility::UtilityGateway,
    clock::AccountClock,
    domain::{
        account::{ParseContext, Profile},
        billing::BillingError,
        documents::{
            contract_in_force, location_documents, ContractTerms, DocumentKind, LocationDocument,
            NoticeTerms,
        },
        enrollment::{
            acceptance_confirms_address, accepted_by, check_cancellation, check_start_date,
            client_agent_accepted_every_plan, contract_end, enroller, expired_price, missing_steps,
            prior_acceptance, start_of_market_day, start_still_kept, ContractStatus,
            EnrollmentFacts, EnrollmentSimulation, EnrollmentType, LocationStatus, PriorAcceptance,
            StartDateOutOfRange, UtilityAnswer, UtilityRecord,
        },
        events::Event,
        market::{parse_cutoff, same_day_move_in, start_window, BusinessCalendar, Enroller, EsiId},
        status::{Cancellation, CreditState, UtilityState, VerificationState},
        FieldError,
    },
    mail::{
        self,
        templates::{Brand, LetterOfAuthorization, ServiceNotice, Template, UtilityContact},
        NewEmail,
    },
    outbox::{self, Job},
    state::Core,
    store::{
        self,
        apps::AppRow,
        enrollment::{
            BillingAddressRow, ConfirmedAddressRow, ContractRow, EnrollmentRow, LocationRow,
        },
        events::NewEvent,
        payments::CardRow,
        Tx,
    },
};

use super::{
    plans::{self, PlansRefused, PricedPlan},
    Error::{self, Failed, Refused},
};

/// The locked account and its enrollment (unless cancelled).
pub async fn locked(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
) -> store::Result<Option<(store::accounts::AccountRow, EnrollmentRow)>> {
    let Some(row) = store::accounts::account_of_app_for_update(tx, app, account).await? else {
        return Ok(None);
    };
    Ok(store::enrollment::enrollment(&mut *tx, account)
        .await?
        .filter(|e| e.cancellation.is_none())
        .map(|e| (row, e)))
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
        progress_mail(
            tx,
            clock,
            app,
            location,
            Some(start),
            Template::ServiceScheduled,
        )
        .await?;
        if gateway.starts_service_itself() {
            let at = start_of_market_day(start).max(now);
            let job = Job::ServiceStart { app_uuid: app };
            outbox::enqueue(tx, clock, &job, Some(location.account_uuid), at).await?;
        }
    }
    Ok(())
}

/// Service starts at the account's locations, in `tx`: each becomes active with its usage
/// history, billing starts, the events are written and its pending contracts turn active, each
/// with its end scheduled (`follow_up::schedule_contract_end`; a location already active keeps a
/// queued renewal pending until its own start). The
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
    let mut locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    for location in locations.iter_mut().filter(|l| !l.is_service_active) {
        location.is_service_active = true;
        location.has_usage_history = true;
        location.status = LocationStatus::Active;
        let start = start
            .or(location.service_start_date)
            .unwrap_or(clock.today());
        location.service_start_date = Some(start);
        location.updated_at = now;
        store::enrollment::update_location(tx, location).await?;
        super::billing::start_billing(tx, clock, app, location, start).await?;
        progress_mail(
            tx,
            clock,
            app,
            location,
            Some(start),
            Template::ServiceActive,
        )
        .await?;
        for event in [
            Event::ServiceActive {
                account_uuid: account,
                location_uuid: location.uuid,
                service_start_date: location.service_start_date,
            },
            Event::UsageHistoryAvailable {
                account_uuid: account,
                location_uuid: location.uuid,
            },
        ] {
            store::events::insert_event(tx, &NewEvent::of(app, &event, now)).await?;
        }
        for c in contracts
            .iter()
            .filter(|c| c.location_uuid == location.uuid)
        {
            if store::enrollment::set_status_of_contract(
                tx,
                c.uuid,
                ContractStatus::Pending,
                ContractStatus::Active,
            )
            .await?
            {
                super::follow_up::schedule_contract_end(tx, clock, app, c).await?;
            }
        }
    }
    Ok(())
}

/// Why the operator's record of the utility's answer was refused; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum UtilityAnswerRefused {
    #[error("no such submission")]
    NotFound,
    /// The answer does not apply to the submission as it stands (already answered, the
    /// enrollment cancelled, service started before the utility accepted).
    #[error("{0}")]
    DoesNotApply(String),
}

/// The operator records the utility's answer to a live submission from the dashboard's
/// worklist: the enrollment moves on as with `record_utility_answer`, and the audit log says
/// who recorded what, in the same transaction.
pub async fn record_utility_answer_as(
    db: &store::Db,
    clock: &crate::clock::Clock,
    actor: &super::audit::Actor,
    submission_uuid: Uuid,
    record: &UtilityRecord,
) -> Result<store::utility::SubmissionRow, Error<UtilityAnswerRefused>> {
    let Some(submission) = store::utility::submission(db, submission_uuid).await? else {
        return Err(Refused(UtilityAnswerRefused::NotFound));
    };
    let clock = clock.for_account(db, submission.account_uuid).await?;
    let mut tx = db.begin().await?;
    let recorded = record_utility_answer(&mut tx, &clock, submission_uuid, record)
        .await
        .map_err(Failed)?
        .map_err(|why| Refused(UtilityAnswerRefused::DoesNotApply(why)))?;
    super::audit::record(
        &mut tx,
        actor,
        "utility.answer_recorded",
        &format!("account:{}", recorded.account_uuid),
        serde_json::json!({
            "submission_uuid": recorded.uuid,
            "esi_id": recorded.esi_id,
            "status": recorded.status.as_str(),
            "start_date": recorded.start_date,
            "reason": recorded.reason,
        }),
        clock.now(),
    )
    .await?;
    tx.commit().await?;
    Ok(recorded)
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
    let Some(peek) = store::utility::submission(&mut *tx, submission_uuid).await? else {
        return Ok(Err(format!("no submission {submission_uuid}")));
    };
    let (app, account) = (peek.app_uuid, peek.account_uuid);
    // The account's lock first, as every change of an enrollment takes it; then the
    // submission as it stands under that lock.
    let Some((_, mut e)) = locked(tx, app, account).await? else {
        return Ok(Err("the enrollment was cancelled or deleted".to_owned()));
    };
    let Some(mut submission) = store::utility::submission(&mut *tx, submission_uuid).await? else {
        return Ok(Err(format!("no submission {submission_uuid}")));
    };
    let current = submission.status;
    let next = match record.next_status(current) {
        Ok(next) => next,
        Err(why) => return Ok(Err(why)),
    };
    let mut locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
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
    submission.status = next;
    store::utility::update_submission(tx, &submission).await?;
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
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
        status: LocationStatus::Pending,
        service_start_date: None,
        final_service_date: None,
        is_service_active: false,
        has_usage_history: false,
        created_at: now,
        updated_at: now,
        is_disconnected: false,
    };
    let contract = new_contract(location.uuid, account_uuid, plan, start, accepted_by, now)?;
    Ok((location, contract))
}

/// The pending Contract of a plan accepted for a location, starting on `start`.
pub fn new_contract(
    location_uuid: Uuid,
    account_uuid: Uuid,
    plan: &store::market::PlanRow,
    start: chrono::NaiveDate,
    accepted_by: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<ContractRow, serde_json::Error> {
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
        location_uuid,
        account_uuid,
        plan_uuid: plan.uuid,
        plan_name: plan.name.clone(),
        plan_type: plan.plan_type.clone(),
        term_months: plan.term_months,
        start_date: start,
        end_date: contract_end(start, term_months, &plan.plan_type),
        rates: serde_json::to_string(&rates)?,
        tos_version: plan.tos_version.clone(),
        status: ContractStatus::Pending,
        accepted_at: now,
        accepted_by: accepted_by.to_owned(),
        created_at: now,
    };
    Ok(contract)
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
        &NewEvent::of(
            app,
            &Event::PlanAccepted {
                account_uuid: contract.account_uuid,
                location_uuid: location.uuid,
                plan_uuid: contract.plan_uuid,
                contract_uuid: contract.uuid,
                service_start_date: contract.start_date,
                accepted_by: contract.accepted_by.clone(),
            },
            now,
        ),
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
    let calendar = state.business_calendar().await?;
    let same_day = same_day_start_open(state, &plan.tdu, now, calendar).await?;
    let documents =
        super::documents::render_contract_documents(state, app, &plan, &plan.tos_version).await?;
    let mut tx = state.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(AcceptPlanRefused::AccountNotFound))?;
    let enroller = enroller(account.client_agent_accepted_at);
    let enrollment_type = check_start_date(
        start,
        (plan.earliest_start_date, plan.latest_start_date),
        clock.today(),
        enroller,
        input.requested_type,
        calendar,
        same_day,
    )
    .map_err(|range| Refused(AcceptPlanRefused::StartDateOutOfRange(range)))?;
    let finalized = store::enrollment::enrollment(&mut tx, account_uuid)
        .await?
        .map(|e| e.cancellation.as_deref().and_then(Cancellation::parse));
    // An acceptance that can no longer be finalized (its price expired, or its start date can
    // no longer be kept) gives way to this one.
    let pending_expired = pending_price_expired(&mut tx, account_uuid, now)
        .await?
        .is_some()
        || pending_start_passed(&mut tx, &account, &clock, calendar)
            .await?
            .is_some();
    match prior_acceptance(finalized, account.has_accepted_plan, pending_expired) {
        PriorAcceptance::Nothing => {}
        PriorAcceptance::Replace => {
            store::enrollment::discard_unstarted_acceptance(&mut tx, account_uuid).await?;
        }
        PriorAcceptance::AlreadyFinalized => {
            return Err(Refused(AcceptPlanRefused::AlreadyFinalized));
        }
        PriorAcceptance::PlanAlreadyAccepted => {
            return Err(Refused(AcceptPlanRefused::PlanAlreadyAccepted));
        }
    }
    let (location, contract) = new_location_and_contract(
        app.uuid,
        account_uuid,
        address,
        &plan,
        start,
        enrollment_type,
        accepted_by(enroller),
        now,
    )
    .map_err(|e| Failed(e.into()))?;
    record_plan_accepted(&mut tx, app.uuid, &location, &contract, now).await?;
    super::documents::store_contract_documents(&mut tx, &contract, documents, now).await?;
    let confirmed = store::enrollment::confirmed_address(&mut tx, account_uuid).await?;
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
        let loa = crate::documents::loa::LoaDocument {
            brand_name: app.display_name.clone(),
            brand_color: app.primary_color.clone(),
            provider_name: state.config.provider.name.clone(),
            customer_name: format!("{} {}", letter.first_name, letter.last_name),
            service_address: letter.service_address.clone(),
            esi_id: letter.esi_id.clone(),
            plan_name: letter.plan_name.clone(),
            energy_cents_per_kwh: letter.energy_cents_per_kwh.clone(),
            term_months: letter.term_months,
            start_date: letter.start_date,
            authorized_at: letter.authorized_at,
            accepted_at: letter.accepted_at,
            cancel_contact: crate::documents::contacts(app)
                .first()
                .cloned()
                .unwrap_or_else(|| "reply to the e-mail that carried this letter".to_owned()),
        };
        super::documents::store_loa(&mut tx, &contract, &loa, now).await?;
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
    super::follow_up::refresh_status(&mut tx, &state.clock, app.uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(PlanAccepted { location, contract })
}

/// Why a simulated event of the enrollment could not apply: it is not finalized (or has no
/// location).
#[derive(Debug)]
pub struct NotFinalized;

/// Applies a simulated utility or market event to the account's enrollment, in `tx`; jobs it
/// schedules run when the caller advances the account's clock to now.
pub async fn simulate(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    clock: &AccountClock,
    event: EnrollmentSimulation,
) -> store::Result<Result<(), NotFinalized>> {
    use EnrollmentSimulation as E;
    let now = clock.now();
    store::accounts::account_of_app_for_update(tx, app, account).await?;
    let Some(mut e) = store::enrollment::enrollment(&mut *tx, account).await? else {
        return Ok(Err(NotFinalized));
    };
    let mut locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(location) = locations.first_mut() else {
        return Ok(Err(NotFinalized));
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
                let job = Job::UtilitySubmit { app_uuid: app };
                outbox::enqueue(tx, clock, &job, Some(account), now).await?;
            }
        }
        E::UtilityAccepted | E::ServiceActive => {
            e.verification = VerificationState::Passed.as_str().to_owned();
            e.utility = UtilityState::Accepted.as_str().to_owned();
            let start = match event {
                E::ServiceActive => clock.today(),
                _ => contracts
                    .iter()
                    .find(|c| c.status == ContractStatus::Pending)
                    .map_or_else(|| clock.today(), |c| c.start_date),
            };
            location.service_start_date = Some(start);
            store::enrollment::update_location(tx, location).await?;
            if event == E::UtilityAccepted {
                progress_mail(
                    tx,
                    clock,
                    app,
                    location,
                    Some(start),
                    Template::ServiceScheduled,
                )
                .await?;
            }
            let at = start_of_market_day(start).max(now);
            let job = Job::ServiceStart { app_uuid: app };
            outbox::enqueue(tx, clock, &job, Some(account), at).await?;
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
                &NewEvent::of(
                    app,
                    &Event::UsageHistoryAvailable {
                        account_uuid: account,
                        location_uuid: location.uuid,
                    },
                    now,
                ),
            )
            .await?;
        }
    }
    store::enrollment::update_enrollment(tx, &e).await?;
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
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
    location.status = LocationStatus::Cancelled;
    location.final_service_date = Some(final_service_date);
    location.updated_at = now;
    store::enrollment::update_location(tx, location).await?;
    store::enrollment::set_status_of_account_contracts(
        tx,
        account,
        ContractStatus::Active,
        ContractStatus::Ended,
    )
    .await?;
    store::enrollment::set_status_of_account_contracts(
        tx,
        account,
        ContractStatus::Pending,
        ContractStatus::Cancelled,
    )
    .await?;
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app,
            &Event::ServiceCanceled {
                account_uuid: account,
                location_uuid: location.uuid,
                final_service_date: location.final_service_date,
                reason: reason.to_owned(),
            },
            now,
        ),
    )
    .await?;
    Ok(())
}

/// The start date the customer accepted for `location`: its pending contract's.
/// The customer's e-mail about the enrollment's progress at `location` (received, scheduled,
/// active), in `tx`, with the utility's outage number once the utility is involved.
async fn progress_mail(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    location: &LocationRow,
    start_date: Option<chrono::NaiveDate>,
    template: fn(ServiceNotice) -> Template,
) -> store::Result<()> {
    progress_mail_with_documents(tx, clock, app, location, start_date, template, None).await
}

/// A progress e-mail that also carries the documents of `contract` no e-mail carried yet
/// (the EFL, TOS and YRAC accepted with it, and its LOA when the LOA's own e-mail did not).
async fn progress_mail_with_documents(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    location: &LocationRow,
    start_date: Option<chrono::NaiveDate>,
    template: fn(ServiceNotice) -> Template,
    contract: Option<Uuid>,
) -> store::Result<()> {
    let (Some(app_row), Some(account)) = (
        store::apps::app_in(&mut *tx, app).await?,
        store::accounts::account_of_app_for_update(tx, app, location.account_uuid).await?,
    ) else {
        return Ok(());
    };
    let utility = store::market::tdu(&mut *tx, &location.tdu)
        .await?
        .map(|t| UtilityContact {
            name: t.display_name,
            outage_phone: t.outage_phone,
        });
    let address = match &location.address_2 {
        Some(unit) if !unit.trim().is_empty() => format!("{} {unit}", location.address_1),
        _ => location.address_1.clone(),
    };
    let notice = ServiceNotice {
        first_name: account.first_name.clone(),
        service_address: Some(format!(
            "{address}, {}, {} {}",
            location.city, location.state, location.postal_code
        )),
        start_date,
        utility,
        attached: Vec::new(),
    };
    let Some(contract) = contract else {
        mail::queue_to_account(tx, clock, &app_row, &account, &template(notice)).await?;
        return Ok(());
    };
    let kinds = store::documents::unsent_documents_of_contract(&mut *tx, contract).await?;
    let notice = ServiceNotice {
        attached: crate::domain::documents::titles_in_contract_order(&kinds),
        ..notice
    };
    let email = mail::queue_to_account(tx, clock, &app_row, &account, &template(notice)).await?;
    store::documents::attach_contract_documents(tx, contract, email).await?;
    Ok(())
}

fn accepted_start(contracts: &[ContractRow], location_uuid: Uuid) -> Option<chrono::NaiveDate> {
    contracts
        .iter()
        .find(|c| c.location_uuid == location_uuid && c.status == ContractStatus::Pending)
        .map(|c| c.start_date)
}

/// The utility of the app's environment; an app that cannot be read as sandbox never meets the
/// simulator.
async fn gateway_of(state: &Core, app: Uuid) -> store::Result<UtilityGateway> {
    let environment = store::apps::app_by_uuid(&state.db, app)
        .await?
        .map_or(app::api::Environment::Live, |a| a.environment_kind());
    Ok(UtilityGateway::for_environment(environment))
}

/// The pipeline's first step, in `tx`: a pending verification passes (then the credit check
/// runs, or the utility submission when it already passed), unless a pending contract's plan
/// price had expired when the enrollment was finalized, which cancels the enrollment
/// (`expired_pre_active`; finalize refuses such an enrollment, and a new acceptance replaces a
/// cancelled one). A price that expires after finalize holds: the customer accepted it in time.
pub async fn verify(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    let now = clock.now();
    let Some((row, mut e)) = locked(tx, app, account).await? else {
        return Ok(());
    };
    if VerificationState::parse(&e.verification) != Some(VerificationState::Pending) {
        return Ok(());
    }
    let expired = pending_price_expired(tx, account, e.finalized_at)
        .await?
        .is_some();
    e.updated_at = now;
    if expired {
        e.cancellation = Some(Cancellation::ExpiredPreActive.as_str().to_owned());
        store::enrollment::update_enrollment(tx, &e).await?;
        store::enrollment::set_status_of_account_contracts(
            tx,
            account,
            ContractStatus::Pending,
            ContractStatus::Cancelled,
        )
        .await?;
    } else {
        e.verification = VerificationState::Passed.as_str().to_owned();
        store::enrollment::update_enrollment(tx, &e).await?;
        let credit = store::credit::latest_credit_check(tx, account)
            .await?
            .and_then(|c| CreditState::parse(&c.status))
            .unwrap_or_default();
        if credit == CreditState::Passed {
            super::follow_up::submit_when_ready(tx, app, account, clock).await?;
        } else {
            super::follow_up::schedule_credit_check(tx, &row, clock).await?;
        }
    }
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}

/// Submits a verified enrollment's first location to the utility of the app's environment, in
/// `tx`, with the start date the customer accepted.
pub async fn submit_to_utility(
    tx: &mut Tx,
    state: &Core,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    let now = clock.now();
    let calendar = state.business_calendar().await?;
    let gateway = gateway_of(state, app).await?;
    let Some((_, mut e)) = locked(tx, app, account).await? else {
        return Ok(());
    };
    if e.utility != UtilityState::NotSubmitted.as_str() {
        return Ok(());
    }
    let locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(location) = locations.first() else {
        return Ok(());
    };
    e.utility = UtilityState::Submitted.as_str().to_owned();
    e.updated_at = now;
    store::enrollment::update_enrollment(tx, &e).await?;
    let requested = accepted_start(&contracts, location.uuid);
    if let Some(answer_at) = gateway
        .submit(tx, clock, calendar, location, requested)
        .await?
    {
        let job = Job::UtilityAnswer { app_uuid: app };
        outbox::enqueue(tx, clock, &job, Some(account), answer_at).await?;
    }
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}

/// The simulated utility answers a sandbox submission, in `tx` (a live gateway has no simulated
/// answer: its answers are recorded by `record_utility_answer`).
pub async fn simulated_utility_answer(
    tx: &mut Tx,
    state: &Core,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    let now = clock.now();
    let gateway = gateway_of(state, app).await?;
    let Some((_, mut e)) = locked(tx, app, account).await? else {
        return Ok(());
    };
    if e.utility != UtilityState::Submitted.as_str() {
        return Ok(());
    }
    let mut locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(location) = locations.first_mut() else {
        return Ok(());
    };
    let Some(answer) = gateway.simulated_answer(&location.esi_id) else {
        return Ok(());
    };
    let start = accepted_start(&contracts, location.uuid).unwrap_or_else(|| clock.today());
    apply_answer(tx, clock, app, &mut e, location, answer, start, gateway).await?;
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}

/// Service starts, in `tx`, at the locations of an enrollment the utility accepted.
pub async fn start_service(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    let Some((_, e)) = locked(tx, app, account).await? else {
        return Ok(());
    };
    if e.utility != UtilityState::Accepted.as_str() {
        return Ok(());
    }
    activate_locations(tx, clock, app, account, None).await?;
    super::follow_up::refresh_status(tx, clock.service(), app, account, clock.now()).await?;
    Ok(())
}

/// A scheduled cancellation falls due, in `tx`: the final bill (the last read covers the days
/// through the final service date), then the location is cancelled with its contract ended.
/// Refused, with nothing to keep, when the final bill's stored data cannot be read: service
/// never ends without its bill.
pub async fn end_service(
    tx: &mut Tx,
    state: &Core,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
    location_uuid: Uuid,
    reason: &str,
) -> Result<(), Error<BillingError>> {
    let now = clock.now();
    let app_row = store::apps::app_by_uuid(&state.db, app).await?;
    let account_row = store::accounts::account_of_app(&state.db, app, account).await?;
    let Some((_, mut e)) = locked(tx, app, account).await? else {
        return Ok(());
    };
    let locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let Some(mut location) = locations
        .into_iter()
        .find(|l| l.uuid == location_uuid && l.status != LocationStatus::Cancelled)
    else {
        return Ok(());
    };
    let final_date = location.final_service_date.unwrap_or(clock.today());
    if location.is_service_active {
        if let (Some(app_row), Some(account_row)) = (app_row, account_row) {
            super::billing::final_bill(
                tx,
                state,
                clock,
                &app_row,
                &account_row,
                &location,
                final_date,
                now,
            )
            .await?;
        }
    }
    cancel_location(tx, app, &mut e, &mut location, final_date, reason, now).await?;
    store::enrollment::update_enrollment(tx, &e).await?;
    super::follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}

/// Why the service address could not be confirmed.
#[derive(Debug)]
pub enum ConfirmAddressRefused {
    EsiIdNotFound,
}

/// Confirms the meter's service address from the address directory, in one transaction, and
/// refreshes the status (it may be a client agent enrollment's last prerequisite).
pub async fn confirm_address(
    state: &Core,
    app: Uuid,
    account: Uuid,
    esi: &EsiId,
) -> Result<(), Error<ConfirmAddressRefused>> {
    let address = store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or(Refused(ConfirmAddressRefused::EsiIdNotFound))?;
    let now = state.clock.for_account(&state.db, account).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_confirmed_address(&mut tx, account, &(&address).into(), now).await?;
    super::follow_up::refresh_status(&mut tx, &state.clock, app, account, now).await?;
    tx.commit().await?;
    Ok(())
}

/// Whether the utility `tdu` still starts a move-in today at `now`.
async fn same_day_start_open(
    state: &Core,
    tdu: &str,
    now: chrono::DateTime<chrono::Utc>,
    calendar: &BusinessCalendar,
) -> store::Result<bool> {
    let cutoff = store::market::tdu(&state.db, tdu)
        .await?
        .and_then(|t| parse_cutoff(t.same_day_cutoff.as_deref()));
    Ok(same_day_move_in(now, cutoff, calendar))
}

/// The dates a pending contract may start on now, when its accepted start date can no longer
/// be kept: it has passed, or it is today and its utility's same-day cut-off has passed.
async fn pending_start_passed(
    tx: &mut Tx,
    account: &store::accounts::AccountRow,
    clock: &AccountClock,
    calendar: &BusinessCalendar,
) -> store::Result<Option<StartDateOutOfRange>> {
    let (now, today) = (clock.now(), clock.today());
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account.uuid).await?;
    for c in contracts
        .iter()
        .filter(|c| c.status == ContractStatus::Pending)
    {
        let Some(plan) = store::market::plan_by_uuid_in(&mut *tx, c.plan_uuid).await? else {
            continue;
        };
        let cutoff = store::market::tdu(&mut *tx, &plan.tdu)
            .await?
            .and_then(|t| parse_cutoff(t.same_day_cutoff.as_deref()));
        let same_day = same_day_move_in(now, cutoff, calendar);
        if !start_still_kept(c.start_date, today, same_day) {
            let window = start_window(
                today,
                enroller(account.client_agent_accepted_at),
                calendar,
                same_day,
            );
            return Ok(Some(StartDateOutOfRange {
                earliest: window.earliest.max(plan.earliest_start_date),
                latest: window.latest.min(plan.latest_start_date),
            }));
        }
    }
    Ok(None)
}

/// When the price of a pending contract's plan expired, if one has by `at` (the earliest).
async fn pending_price_expired(
    tx: &mut Tx,
    account: Uuid,
    at: chrono::DateTime<chrono::Utc>,
) -> store::Result<Option<chrono::DateTime<chrono::Utc>>> {
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let mut expires = Vec::new();
    for c in contracts
        .iter()
        .filter(|c| c.status == ContractStatus::Pending)
    {
        if let Some(plan) = store::market::plan_by_uuid_in(&mut *tx, c.plan_uuid).await? {
            expires.push(plan.expires_at);
        }
    }
    Ok(expired_price(expires, at))
}

/// Why an enrollment could not be finalized; nothing was written.
#[derive(Debug)]
pub enum FinalizeRefused {
    AccountNotFound,
    AlreadyFinalized,
    /// A client agent enrollment whose plan was not accepted by the client agent (the
    /// authorization was not recorded before plans/accept).
    ClientAgentNotRecorded,
    /// The accepted plan's price expired (when): plans must be requested and one accepted
    /// again, which replaces this acceptance.
    PlanExpired(chrono::DateTime<chrono::Utc>),
    /// The accepted start date can no longer be kept (the dates allowed now): a plan must be
    /// accepted again, which replaces this acceptance.
    StartDatePassed(StartDateOutOfRange),
    /// The steps still missing.
    Incomplete(Vec<&'static str>),
}

/// Finalizes the enrollment, in one transaction: the enrollment row, the verification job a
/// minute later, `enrollment.finalized` and the status.
pub async fn finalize(
    state: &Core,
    app: Uuid,
    account_uuid: Uuid,
    is_client_agent: bool,
) -> Result<(), Error<FinalizeRefused>> {
    let clock = state.clock.for_account(&state.db, account_uuid).await?;
    let now = clock.now();
    let mut tx = state.db.begin().await?;
    let account = store::accounts::account_of_app_for_update(&mut tx, app, account_uuid)
        .await?
        .ok_or(Refused(FinalizeRefused::AccountNotFound))?;
    if account.is_enrollment_finalized {
        return Err(Refused(FinalizeRefused::AlreadyFinalized));
    }
    if is_client_agent {
        let contracts = store::enrollment::contracts_of_account(&mut tx, account_uuid).await?;
        let pending = contracts
            .iter()
            .filter(|c| c.status == ContractStatus::Pending)
            .map(|c| c.accepted_by.as_str());
        if !client_agent_accepted_every_plan(account.client_agent_accepted_at.is_some(), pending) {
            return Err(Refused(FinalizeRefused::ClientAgentNotRecorded));
        }
    }
    if let Some(expired_at) = pending_price_expired(&mut tx, account_uuid, now).await? {
        return Err(Refused(FinalizeRefused::PlanExpired(expired_at)));
    }
    let calendar = state.business_calendar().await?;
    if let Some(allowed) = pending_start_passed(&mut tx, &account, &clock, calendar).await? {
        return Err(Refused(FinalizeRefused::StartDatePassed(allowed)));
    }
    let profile = account.profile().map_err(|e| Failed(e.into()))?;
    let missing = missing_steps(&EnrollmentFacts {
        has_confirmed_address: account.has_confirmed_address,
        has_accepted_plan: account.has_accepted_plan,
        is_identity_complete: profile.is_identity_complete(),
        has_credit_check: account.has_credit_check,
        has_payment_method: account.has_payment_method,
        ..Default::default()
    });
    if !missing.is_empty() {
        return Err(Refused(FinalizeRefused::Incomplete(missing)));
    }
    store::enrollment::insert_enrollment(
        &mut tx,
        &EnrollmentRow {
            account_uuid,
            finalized_at: now,
            is_client_agent,
            verification: VerificationState::Pending.as_str().to_owned(),
            utility: UtilityState::NotSubmitted.as_str().to_owned(),
            cancellation: None,
            updated_at: now,
        },
    )
    .await?;
    outbox::enqueue(
        &mut tx,
        &clock,
        &Job::EnrollmentVerify { app_uuid: app },
        Some(account_uuid),
        now + chrono::Duration::minutes(1),
    )
    .await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app,
            &Event::Finalized {
                account_uuid,
                is_client_agent_enrollment: is_client_agent,
            },
            now,
        ),
    )
    .await?;
    let locations = store::enrollment::locations_of_account(&mut tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut tx, account_uuid).await?;
    if let Some(location) = locations.first() {
        let start = accepted_start(&contracts, location.uuid);
        // The copies of what was agreed go with the confirmation.
        let contract = contracts
            .iter()
            .find(|c| c.location_uuid == location.uuid && c.status == ContractStatus::Pending)
            .map(|c| c.uuid);
        progress_mail_with_documents(
            &mut tx,
            &clock,
            app,
            location,
            start,
            Template::EnrollmentReceived,
            contract,
        )
        .await?;
    }
    super::follow_up::refresh_status(&mut tx, clock.service(), app, account_uuid, now).await?;
    tx.commit().await?;
    Ok(())
}

/// Why service could not be cancelled; nothing was written.
#[derive(Debug)]
pub enum CancelServiceRefused {
    /// The final service date or the reason (checked on the account's day).
    Invalid(FieldError),
    AccountNotFound,
    LocationNotFound,
    NotFinalized,
    /// Already cancelled, or its cancellation already scheduled.
    NotActive,
}

/// Cancels service at a location, in one transaction. Before service started it cancels at
/// once (`cancel_location`, final service date today); after, it sets the final service date
/// and schedules `service.end` for that day on the account's clock. Returns the location.
pub async fn cancel_service(
    state: &Core,
    app: Uuid,
    account: Uuid,
    location_uuid: Uuid,
    final_service_date: &str,
    reason: &str,
) -> Result<LocationRow, Error<CancelServiceRefused>> {
    let clock = state.clock.for_account(&state.db, account).await?;
    let (final_date, reason) = check_cancellation(final_service_date, reason, clock.today())
        .map_err(|e| Refused(CancelServiceRefused::Invalid(e)))?;
    let now = clock.now();
    let mut tx = state.db.begin().await?;
    store::accounts::account_of_app_for_update(&mut tx, app, account)
        .await?
        .ok_or(Refused(CancelServiceRefused::AccountNotFound))?;
    let mut location = store::enrollment::locations_of_account(&mut tx, account)
        .await?
        .into_iter()
        .find(|l| l.uuid == location_uuid)
        .ok_or(Refused(CancelServiceRefused::LocationNotFound))?;
    let Some(mut e) = store::enrollment::enrollment(&mut tx, account).await? else {
        return Err(Refused(CancelServiceRefused::NotFinalized));
    };
    if e.cancellation.is_some()
        || location.status == LocationStatus::Cancelled
        || location.final_service_date.is_some()
    {
        return Err(Refused(CancelServiceRefused::NotActive));
    }
    if location.is_service_active {
        location.final_service_date = Some(final_date);
        location.updated_at = now;
        store::enrollment::update_location(&mut tx, &location).await?;
        outbox::enqueue(
            &mut tx,
            &clock,
            &Job::ServiceEnd {
                app_uuid: app,
                location_uuid: location.uuid,
                reason: reason.as_str().to_owned(),
            },
            Some(account),
            start_of_market_day(final_date).max(now),
        )
        .await?;
    } else {
        cancel_location(
            &mut tx,
            app,
            &mut e,
            &mut location,
            clock.today(),
            reason.as_str(),
            now,
        )
        .await?;
        store::enrollment::update_enrollment(&mut tx, &e).await?;
        super::follow_up::refresh_status(&mut tx, clock.service(), app, account, now).await?;
    }
    tx.commit().await?;
    Ok(location)
}

/// The billing address as given, with the service address it may stand for.
pub struct BillingAddress {
    pub billing: BillingAddressRow,
    pub service: Option<ConfirmedAddressRow>,
}

/// The account's billing address: the service address unless another was given; `None` while
/// it is the service address and none is confirmed yet.
pub async fn billing_address(
    db: &store::Db,
    account: Uuid,
) -> store::Result<Option<BillingAddress>> {
    let service = store::enrollment::confirmed_address(db, account).await?;
    let billing = store::enrollment::billing_address(db, account)
        .await?
        .unwrap_or(BillingAddressRow {
            same_as_service_address: true,
            address_1: None,
            address_2: None,
            city: None,
            state: None,
            postal_code: None,
        });
    if billing.same_as_service_address && service.is_none() {
        return Ok(None);
    }
    Ok(Some(BillingAddress { billing, service }))
}

/// What an account chose in enrollment, as its review shows it: the plan of its first
/// location's contract (as it was offered), the card on file and the billing address.
pub struct EnrollmentSummary {
    pub plan: Option<PricedPlan>,
    pub card: Option<CardRow>,
    pub billing: Option<BillingAddress>,
}

/// The account's enrollment choices so far (`EnrollmentSummary`); each part `None` until made.
pub async fn summary(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
) -> Result<EnrollmentSummary, Error<PlansRefused>> {
    let account = store::accounts::account_of_app(&core.db, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(PlansRefused::AccountNotFound))?;
    let location = store::enrollment::locations_of_account(&core.db, account_uuid)
        .await?
        .into_iter()
        .next();
    let contracts = store::enrollment::contracts_of_account(&core.db, account_uuid).await?;
    let plan_uuid = location.and_then(|l| {
        let own: Vec<&ContractRow> = contracts
            .iter()
            .filter(|c| c.location_uuid == l.uuid)
            .collect();
        contract_in_force(&own, |c| c.status, |c| c.start_date).map(|c| c.plan_uuid)
    });
    let plan = match plan_uuid {
        Some(uuid) => plans::accepted_plan(core, &account, uuid).await?,
        None => None,
    };
    Ok(EnrollmentSummary {
        plan,
        card: store::payments::current_payment_method(&core.db, account_uuid).await?,
        billing: billing_address(&core.db, account_uuid).await?,
    })
}

/// Why the billing address was not set.
#[derive(Debug)]
pub enum BillingAddressRefused {
    /// Same as a service address not confirmed yet.
    ServiceAddressNotConfirmed,
}

/// Sets the billing address (`None`: the service address), in one transaction, with
/// `account.billing_address_updated`.
pub async fn set_billing_address(
    state: &Core,
    app: Uuid,
    account: Uuid,
    address: Option<PostalAddress>,
) -> Result<BillingAddress, Error<BillingAddressRefused>> {
    let service = store::enrollment::confirmed_address(&state.db, account).await?;
    let billing = match address {
        None => {
            if service.is_none() {
                return Err(Refused(BillingAddressRefused::ServiceAddressNotConfirmed));
            }
            BillingAddressRow {
                same_as_service_address: true,
                address_1: None,
                address_2: None,
                city: None,
                state: None,
                postal_code: None,
            }
        }
        Some(a) => BillingAddressRow {
            same_as_service_address: false,
            address_1: Some(a.address_1),
            address_2: a.address_2,
            city: Some(a.city),
            state: Some(a.state),
            postal_code: Some(a.postal_code),
        },
    };
    let now = state.clock.for_account(&state.db, account).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_billing_address(&mut tx, account, &billing, now).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent::of(
            app,
            &Event::BillingAddressUpdated {
                account_uuid: account,
                same_as_service_address: billing.same_as_service_address,
            },
            now,
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(BillingAddress { billing, service })
}

/// The account's location with its contracts; `None` for another account's location.
pub async fn location_with_contracts(
    db: &store::Db,
    account: Uuid,
    location_uuid: Uuid,
) -> store::Result<Option<(LocationRow, Vec<ContractRow>)>> {
    let Some(location) = store::enrollment::location_of_account(db, account, location_uuid).await?
    else {
        return Ok(None);
    };
    let mut contracts = store::enrollment::contracts_of_account(db, account).await?;
    contracts.retain(|c| c.location_uuid == location_uuid);
    Ok(Some((location, contracts)))
}

/// The location's contracts and every document of them (`domain::documents`); `None` for
/// another account's location. A contract whose plan is gone names `default_yrac_version`.
pub async fn documents_of_location(
    db: &store::Db,
    account: Uuid,
    location_uuid: Uuid,
    default_yrac_version: &str,
) -> store::Result<Option<(Vec<ContractRow>, Vec<LocationDocument>)>> {
    let Some((_, contracts)) = location_with_contracts(db, account, location_uuid).await? else {
        return Ok(None);
    };
    let mut terms = Vec::with_capacity(contracts.len());
    for c in &contracts {
        let yrac_version = store::market::plan_by_uuid(db, c.plan_uuid)
            .await?
            .map(|p| p.yrac_version)
            .unwrap_or_else(|| default_yrac_version.to_owned());
        let has_loa =
            store::documents::contract_has_document(db, c.uuid, DocumentKind::Loa).await?;
        let notices = store::renewal::notices_of_contract(db, c.uuid)
            .await?
            .into_iter()
            .map(|n| NoticeTerms {
                uuid: n.uuid,
                sent_on: crate::domain::market::market_date(n.created_at),
                contract_end: n.contract_end,
            })
            .collect();
        terms.push(ContractTerms {
            uuid: c.uuid,
            plan_uuid: c.plan_uuid,
            tos_version: c.tos_version.clone(),
            yrac_version,
            start_date: c.start_date,
            status: c.status,
            has_loa,
            notices,
        });
    }
    Ok(Some((contracts, location_documents(&terms))))
}

/// Why the identity was not updated; nothing was written.
#[derive(Debug)]
pub enum IdentityRefused {
    AccountNotFound,
    Invalid(FieldError),
}

/// Updates the identity fields, in one transaction: when they changed,
/// `enrollment.identity_updated` and the status (identity may be the last prerequisite of a
/// client agent enrollment). Returns the profile.
pub async fn update_identity(
    state: &Core,
    app: &AppRow,
    account: Uuid,
    patch: UpdateAccountIn,
) -> Result<Profile, Error<IdentityRefused>> {
    // The account's own clock: a sandbox account moved ahead is older by as much.
    let clock = state.clock.for_account(&state.db, account).await?;
    let ctx = ParseContext {
        today: clock.today(),
        environment: app.environment_kind(),
    };
    let now = state.clock.now();
    let mut tx = state.db.begin().await?;
    let mut row = store::accounts::account_of_app_for_update(&mut tx, app.uuid, account)
        .await?
        .ok_or(Refused(IdentityRefused::AccountNotFound))?;
    let before = row.profile().map_err(|e| Failed(e.into()))?;
    let profile = before
        .clone()
        .patched(patch, &ctx)
        .map_err(|e| Refused(IdentityRefused::Invalid(e)))?;
    if profile != before {
        row.set_profile(&profile).map_err(|e| Failed(e.into()))?;
        row.updated_at = now;
        store::accounts::update_account(&mut tx, &row).await?;
        store::events::insert_event(
            &mut tx,
            &NewEvent::of(
                app.uuid,
                &Event::IdentityUpdated {
                    account_uuid: row.uuid,
                    is_identity_complete: profile.is_identity_complete(),
                },
                now,
            ),
        )
        .await?;
        super::follow_up::refresh_status(&mut tx, &state.clock, app.uuid, row.uuid, now).await?;
    }
    tx.commit().await?;
    Ok(profile)
}
