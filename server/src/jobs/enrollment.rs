//! The enrollment pipeline after finalize, each step a job on the account's clock:
//! verification (a plan whose price expired first cancels it: `expire_pre_active`), then the
//! credit check (`jobs::credit`), then submission to the utility through the app's
//! `UtilityGateway`. In sandbox the utility's answer comes after 2 to 72 business hours (switch
//! holds, deactivated meters and rejects by the magic ESI IDs) and service starts on the start
//! date; a live app's answers and start of service are recorded by an operator
//! (`record_utility_answer`), which moves the enrollment the same way.

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    adapters::utility::UtilityGateway,
    domain::{
        enrollment::{
            start_of_market_day, EnrollmentSimulation, SubmissionStatus, UtilityAnswer,
            UtilityRecord,
        },
        market::BusinessCalendar,
        status::{Cancellation, CreditState, UtilityState, VerificationState},
    },
    http::enrollment::schedule,
    store::{
        self,
        enrollment::{EnrollmentRow, LocationRow},
        events::NewEvent,
        Tx,
    },
};
use crate::{
    clock::AccountClock,
    jobs::JobContext,
    outbox::{JobKind, Outcome},
};

#[derive(serde::Deserialize)]
struct Payload {
    app_uuid: Uuid,
}

fn account_of(ctx: &JobContext) -> anyhow::Result<(Uuid, Uuid)> {
    let payload: Payload = serde_json::from_str(&ctx.job.payload)?;
    let account = ctx
        .job
        .account_uuid
        .context("an enrollment job without account")?;
    Ok((payload.app_uuid, account))
}

/// Commits `tx` with the job's end, unless another worker took the job over.
async fn finish(ctx: &JobContext, mut tx: Tx, account: Uuid) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, &Outcome::Done).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}

/// Locks the account and reads its enrollment; `None` when there is nothing to do.
async fn enrollment(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
) -> anyhow::Result<Option<EnrollmentRow>> {
    Ok(locked(tx, app, account).await?.map(|(_, e)| e))
}

/// The locked account and its enrollment (unless cancelled).
async fn locked(
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

pub async fn verify(ctx: &JobContext) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx)?;
    let now = ctx.now();
    let mut tx = ctx.state.db.begin().await?;
    let Some((row, mut e)) = locked(&mut tx, app, account).await? else {
        return finish(ctx, tx, account).await;
    };
    if VerificationState::parse(&e.verification) != Some(VerificationState::Pending) {
        return finish(ctx, tx, account).await;
    }
    let contracts = store::enrollment::contracts_of_account_tx(&mut tx, account).await?;
    let mut expired = false;
    for c in contracts.iter().filter(|c| c.status == "pending") {
        if let Some(plan) = store::market::plan_by_uuid(&ctx.state.db, c.plan_uuid).await? {
            expired |= plan.expires_at <= now;
        }
    }
    e.updated_at = now;
    if expired {
        e.cancellation = Some(Cancellation::ExpiredPreActive.as_str().to_owned());
        store::enrollment::update_enrollment(&mut tx, &e).await?;
        store::enrollment::set_contract_status(&mut tx, account, "pending", "cancelled").await?;
    } else {
        e.verification = VerificationState::Passed.as_str().to_owned();
        store::enrollment::update_enrollment(&mut tx, &e).await?;
        let credit = store::credit::latest_credit_check(&mut tx, account)
            .await?
            .and_then(|c| CreditState::parse(&c.status))
            .unwrap_or_default();
        if credit == CreditState::Passed {
            schedule(
                &mut tx,
                &ctx.clock,
                JobKind::UtilitySubmit,
                app,
                account,
                now,
            )
            .await?;
        } else {
            super::credit::schedule_credit_check(&mut tx, &row, &ctx.clock).await?;
        }
    }
    store::status::refresh_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
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

async fn calendar(ctx: &JobContext) -> anyhow::Result<BusinessCalendar> {
    Ok(BusinessCalendar::new(
        store::market::federal_holidays(&ctx.state.db).await?,
    ))
}

/// The utility of the app's environment; an app that cannot be read as sandbox never meets the
/// simulator.
async fn gateway_of(ctx: &JobContext, app: Uuid) -> anyhow::Result<UtilityGateway> {
    let environment = store::apps::app_by_uuid(&ctx.state.db, app)
        .await?
        .and_then(|a| app::api::Environment::parse(&a.environment))
        .unwrap_or(app::api::Environment::Live);
    Ok(UtilityGateway::for_environment(environment))
}

/// The start date the customer accepted for `location`.
fn accepted_start(
    contracts: &[store::enrollment::ContractRow],
    location: &LocationRow,
) -> Option<chrono::NaiveDate> {
    contracts
        .iter()
        .find(|c| c.location_uuid == location.uuid && c.status == "pending")
        .map(|c| c.start_date)
}

pub async fn submit_to_utility(ctx: &JobContext) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx)?;
    let now = ctx.now();
    let cal = calendar(ctx).await?;
    let gateway = gateway_of(ctx, app).await?;
    let mut tx = ctx.state.db.begin().await?;
    let Some(mut e) = enrollment(&mut tx, app, account).await? else {
        return finish(ctx, tx, account).await;
    };
    if e.utility != UtilityState::NotSubmitted.as_str() {
        return finish(ctx, tx, account).await;
    }
    let locations = store::enrollment::locations_of_account_tx(&mut tx, account).await?;
    let contracts = store::enrollment::contracts_of_account_tx(&mut tx, account).await?;
    let Some(location) = locations.first() else {
        return finish(ctx, tx, account).await;
    };
    e.utility = UtilityState::Submitted.as_str().to_owned();
    e.updated_at = now;
    store::enrollment::update_enrollment(&mut tx, &e).await?;
    let requested = accepted_start(&contracts, location);
    gateway
        .submit(&mut tx, &ctx.clock, &cal, location, requested)
        .await?;
    store::status::refresh_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
}

/// The simulated utility answers a sandbox submission.
pub async fn utility_answer(ctx: &JobContext) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx)?;
    let now = ctx.now();
    let gateway = gateway_of(ctx, app).await?;
    let mut tx = ctx.state.db.begin().await?;
    let Some(mut e) = enrollment(&mut tx, app, account).await? else {
        return finish(ctx, tx, account).await;
    };
    if e.utility != UtilityState::Submitted.as_str() {
        return finish(ctx, tx, account).await;
    }
    let mut locations = store::enrollment::locations_of_account_tx(&mut tx, account).await?;
    let contracts = store::enrollment::contracts_of_account_tx(&mut tx, account).await?;
    let Some(location) = locations.first_mut() else {
        return finish(ctx, tx, account).await;
    };
    let Some(answer) = gateway.simulated_answer(&location.esi_id) else {
        return finish(ctx, tx, account).await;
    };
    let start = accepted_start(&contracts, location).unwrap_or_else(|| ctx.clock.today());
    apply_answer(
        &mut tx, &ctx.clock, app, &mut e, location, answer, start, gateway,
    )
    .await?;
    store::status::refresh_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
}

/// The utility's answer to the enrollment, in `tx`: an acceptance sets the location's start
/// date, and when the gateway starts service by itself, schedules it. The caller refreshes the
/// status.
#[allow(clippy::too_many_arguments)]
async fn apply_answer(
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

pub async fn start_service(ctx: &JobContext) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx)?;
    let now = ctx.now();
    let mut tx = ctx.state.db.begin().await?;
    let Some(e) = enrollment(&mut tx, app, account).await? else {
        return finish(ctx, tx, account).await;
    };
    if e.utility != UtilityState::Accepted.as_str() {
        return finish(ctx, tx, account).await;
    }
    activate(&mut tx, &ctx.clock, app, account).await?;
    store::status::refresh_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
}

/// Service starts at the account's locations, in `tx`: each becomes active with its usage
/// history, billing starts, the events are written and the pending contracts turn active. The
/// caller refreshes the status.
async fn activate(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    account: Uuid,
) -> store::Result<()> {
    let now = clock.now();
    let mut locations = store::enrollment::locations_of_account_tx(tx, account).await?;
    for location in locations.iter_mut().filter(|l| !l.is_service_active) {
        location.is_service_active = true;
        location.has_usage_history = true;
        location.status = "active".to_owned();
        let start = location.service_start_date.unwrap_or(clock.today());
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
            activate(tx, clock, app, account).await?;
            submission.activated_at = Some(now);
        }
    }
    submission.status = next.as_str().to_owned();
    store::utility::update_submission(tx, &submission).await?;
    store::status::refresh_status(tx, app, account, now).await?;
    Ok(Ok(submission))
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
    store::status::refresh_status(tx, app, account, now).await?;
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

#[derive(serde::Deserialize)]
struct EndPayload {
    location_uuid: Uuid,
    reason: String,
}

/// A scheduled cancellation falls due on its final service date: the contract ends, the
/// location is deactivated and the account moves to `cancelled/cancelled_post_start`.
pub async fn end_service(ctx: &JobContext) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx)?;
    let payload: EndPayload = serde_json::from_str(&ctx.job.payload)?;
    let now = ctx.now();
    let app_row = store::apps::app_by_uuid(&ctx.state.db, app).await?;
    let account_row = store::accounts::account_of_app(&ctx.state.db, app, account).await?;
    let mut tx = ctx.state.db.begin().await?;
    let Some(mut e) = enrollment(&mut tx, app, account).await? else {
        return finish(ctx, tx, account).await;
    };
    let locations = store::enrollment::locations_of_account_tx(&mut tx, account).await?;
    let Some(mut location) = locations
        .into_iter()
        .find(|l| l.uuid == payload.location_uuid && l.status != "cancelled")
    else {
        return finish(ctx, tx, account).await;
    };
    let final_date = location.final_service_date.unwrap_or(ctx.clock.today());
    // The final bill: the last read covers the days through the final service date.
    if location.is_service_active {
        if let (Some(app_row), Some(account_row)) = (app_row, account_row) {
            super::billing::bill_cycle(
                &mut tx,
                &ctx.clock,
                &app_row,
                &account_row,
                &location,
                final_date,
                final_date,
                now,
            )
            .await?;
        }
    }
    cancel_location(
        &mut tx,
        app,
        &mut e,
        &mut location,
        final_date,
        &payload.reason,
        now,
    )
    .await?;
    store::enrollment::update_enrollment(&mut tx, &e).await?;
    store::status::refresh_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
}
