//! The enrollment pipeline after finalize, each step a job on the account's clock:
//! verification (a plan whose price expired first cancels it: `expire_pre_active`), then the
//! credit check (`jobs::credit`), then submission to the utility through the app's
//! `UtilityGateway`. In sandbox the utility's answer comes after 2 to 72 business hours (switch
//! holds, deactivated meters and rejects by the magic ESI IDs) and service starts on the start
//! date; a live app's answers and start of service are recorded by an operator
//! (`services::enrollment::record_utility_answer`), which moves the enrollment the same way.

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    adapters::utility::UtilityGateway,
    domain::{
        market::BusinessCalendar,
        status::{Cancellation, CreditState, UtilityState, VerificationState},
    },
    jobs::JobContext,
    outbox::{enqueue_account_job as schedule, JobKind, Outcome},
    services::{
        credit::schedule_credit_check,
        enrollment::{activate_locations, apply_answer, cancel_location, locked},
    },
    store::{
        self,
        enrollment::{EnrollmentRow, LocationRow},
        Tx,
    },
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
            schedule_credit_check(&mut tx, &row, &ctx.clock).await?;
        }
    }
    store::status::update_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
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
    store::status::update_status(&mut tx, app, account, now).await?;
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
    store::status::update_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
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
    activate_locations(&mut tx, &ctx.clock, app, account, None).await?;
    store::status::update_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
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
    // The final bill: the last read covers the days through the final service date. Stored data
    // it cannot read stops the whole end of service, with the reason on the failed job.
    if location.is_service_active {
        if let (Some(app_row), Some(account_row)) = (app_row, account_row) {
            let billed = crate::services::billing::final_bill(
                &mut tx,
                &ctx.clock,
                &app_row,
                &account_row,
                &location,
                final_date,
                now,
            )
            .await;
            match billed {
                Ok(_) => {}
                Err(crate::services::Error::Refused(why)) => {
                    drop(tx);
                    let failed = Outcome::Failed(format!("billing stopped: {why}"));
                    return Ok(ctx.finish_alone(&failed).await?);
                }
                Err(crate::services::Error::Failed(e)) => return Err(e),
            }
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
    store::status::update_status(&mut tx, app, account, now).await?;
    finish(ctx, tx, account).await
}
