//! The pipeline after finalize: identity verification (`verify`), the utility submission
//! (`submit_to_utility`) and its answer, simulated or recorded by the operator (`apply_answer`,
//! `record_utility_answer`), starting service at switch or move-in (`activate_locations`,
//! `start_service`), a scheduled end of service (`end_service`), and the sandbox's simulated
//! market events (`simulate`). Sending a verified enrollment to the utility after its credit
//! check is `follow_up::submit_when_ready`.

use uuid::Uuid;

use crate::{
    adapters::utility::UtilityGateway,
    clock::AccountClock,
    domain::{
        billing::BillingError,
        enrollment::{
            start_of_market_day, ContractStatus, EnrollmentSimulation, LocationStatus,
            UtilityAnswer, UtilityRecord,
        },
        events::Event,
        status::{Cancellation, CreditState, UtilityState, VerificationState},
    },
    mail::templates::Template,
    outbox::{self, Job},
    services::{
        audit, billing, follow_up,
        Error::{self, Failed, Refused},
    },
    state::Core,
    store::{
        self,
        enrollment::{EnrollmentRow, LocationRow},
        events::NewEvent,
        Tx,
    },
};

use super::{
    accepted_start, cancel_location, cancel_pending_contracts, locked, pending_price_expired,
    progress_mail,
};

/// The account's enrollment, locked in `tx` (`locked`), while the utility's part of it is
/// at `utility`; `None` otherwise.
async fn locked_at(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    utility: UtilityState,
) -> store::Result<Option<EnrollmentRow>> {
    Ok(locked(tx, app, account)
        .await?
        .map(|(_, e)| e)
        .filter(|e| e.utility == utility))
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
    };
    e.updated_at = now;
    store::enrollment::update_enrollment(tx, e).await?;
    if answer == UtilityAnswer::Accepted {
        location.updated_at = now;
        set_service_start(tx, clock, app, location, start, true).await?;
        if gateway.starts_service_itself() {
            schedule_service_start(tx, clock, app, location.account_uuid, start, now).await?;
        }
    }
    Ok(())
}

/// The start date the utility accepted for `location`, in `tx`, with the customer's
/// service-scheduled e-mail when `tell`.
async fn set_service_start(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    location: &mut LocationRow,
    start: chrono::NaiveDate,
    tell: bool,
) -> store::Result<()> {
    location.service_start_date = Some(start);
    store::enrollment::update_location(tx, location).await?;
    if tell {
        let template = Template::ServiceScheduled;
        progress_mail(tx, clock, app, location, Some(start), template, None).await?;
    }
    Ok(())
}

/// The job that starts the account's service at the start of the market day `start` (at once
/// when that is past), in `tx`.
async fn schedule_service_start(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
    start: chrono::NaiveDate,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<()> {
    let at = start_of_market_day(start).max(now);
    let job = Job::ServiceStart { app_uuid: app };
    outbox::enqueue(tx, clock, &job, Some(account), at).await?;
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
        billing::start_billing(tx, clock, app, location, start).await?;
        let template = Template::ServiceActive;
        progress_mail(tx, clock, app, location, Some(start), template, None).await?;
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
                follow_up::schedule_contract_end(tx, clock, app, c).await?;
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
    actor: &audit::Actor,
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
    audit::record(
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
            if !waiting.contains(&e.utility) {
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
            if e.utility != UtilityState::Accepted {
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
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(Ok(submission))
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
        E::SwitchHold => e.utility = UtilityState::SwitchHold,
        E::MeterDeactivated => e.utility = UtilityState::Deactivated,
        E::UtilityBlocked => e.utility = UtilityState::Rejected,
        E::VerificationHold => e.verification = VerificationState::Hold,
        E::SwitchHoldLifted => {
            if e.utility == UtilityState::SwitchHold {
                e.utility = UtilityState::NotSubmitted;
                let job = Job::UtilitySubmit { app_uuid: app };
                outbox::enqueue(tx, clock, &job, Some(account), now).await?;
            }
        }
        E::UtilityAccepted | E::ServiceActive => {
            e.verification = VerificationState::Passed;
            e.utility = UtilityState::Accepted;
            let start = match event {
                E::ServiceActive => clock.today(),
                _ => contracts
                    .iter()
                    .find(|c| c.status == ContractStatus::Pending)
                    .map_or_else(|| clock.today(), |c| c.start_date),
            };
            let scheduled_mail = event == E::UtilityAccepted;
            set_service_start(tx, clock, app, location, start, scheduled_mail).await?;
            schedule_service_start(tx, clock, app, account, start, now).await?;
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
            billing::store_history(tx, location, start).await?;
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
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(Ok(()))
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
    if e.verification != VerificationState::Pending {
        return Ok(());
    }
    let expired = pending_price_expired(tx, account, e.finalized_at)
        .await?
        .is_some();
    e.updated_at = now;
    if expired {
        e.cancellation = Some(Cancellation::ExpiredPreActive);
        store::enrollment::update_enrollment(tx, &e).await?;
        cancel_pending_contracts(tx, account).await?;
    } else {
        e.verification = VerificationState::Passed;
        store::enrollment::update_enrollment(tx, &e).await?;
        let credit = store::credit::latest_credit_check(tx, account)
            .await?
            .map_or(CreditState::NotSubmitted, |c| c.status);
        if credit == CreditState::Passed {
            follow_up::submit_when_ready(tx, app, account, clock).await?;
        } else {
            follow_up::schedule_credit_check(tx, &row, clock).await?;
        }
    }
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
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
    let Some(mut e) = locked_at(tx, app, account, UtilityState::NotSubmitted).await? else {
        return Ok(());
    };
    let locations = store::enrollment::locations_of_account(&mut *tx, account).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account).await?;
    let Some(location) = locations.first() else {
        return Ok(());
    };
    e.utility = UtilityState::Submitted;
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
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
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
    let Some(mut e) = locked_at(tx, app, account, UtilityState::Submitted).await? else {
        return Ok(());
    };
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
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}

/// Service starts, in `tx`, at the locations of an enrollment the utility accepted.
pub async fn start_service(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    if locked_at(tx, app, account, UtilityState::Accepted)
        .await?
        .is_none()
    {
        return Ok(());
    }
    activate_locations(tx, clock, app, account, None).await?;
    follow_up::refresh_status(tx, clock.service(), app, account, clock.now()).await?;
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
            billing::final_bill(
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
    follow_up::refresh_status(tx, clock.service(), app, account, now).await?;
    Ok(())
}
