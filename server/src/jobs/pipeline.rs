//! The enrollment pipeline after finalize, each step a job on the account's clock:
//! verification (a plan whose price expired first cancels it: `expired_pre_active`), then the
//! credit check (`jobs::credit`), then submission to the utility through the app's
//! `UtilityGateway`. In sandbox the utility's answer comes after 2 to 72 business hours (switch
//! holds, deactivated meters and rejects by the magic ESI IDs) and service starts on the start
//! date; a live app's answers and start of service are recorded by an operator
//! (`services::enrollment::record_utility_answer`), which moves the enrollment the same way.
//! Each step is a use case of `services::enrollment`, run in the transaction that finishes the
//! job.

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    jobs::JobContext,
    outbox::Outcome,
    services::{self, enrollment},
    store::{self, Tx},
};

fn account_of(ctx: &JobContext, app: Uuid) -> anyhow::Result<(Uuid, Uuid)> {
    let account = ctx
        .job
        .account_uuid
        .context("an enrollment job without account")?;
    Ok((app, account))
}

/// Commits `tx` with the job's end, unless another worker took the job over.
async fn finish(ctx: &JobContext, mut tx: Tx, account: Uuid) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, &Outcome::Done).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}

async fn begin(ctx: &JobContext) -> store::Result<Tx> {
    ctx.state.db.begin().await
}

pub async fn verify(ctx: &JobContext, app: Uuid) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx, app)?;
    let mut tx = begin(ctx).await?;
    enrollment::verify(&mut tx, &ctx.clock, app, account).await?;
    finish(ctx, tx, account).await
}

pub async fn submit_to_utility(ctx: &JobContext, app: Uuid) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx, app)?;
    let mut tx = begin(ctx).await?;
    enrollment::submit_to_utility(&mut tx, &ctx.state, &ctx.clock, app, account).await?;
    finish(ctx, tx, account).await
}

/// The simulated utility answers a sandbox submission.
pub async fn utility_answer(ctx: &JobContext, app: Uuid) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx, app)?;
    let mut tx = begin(ctx).await?;
    enrollment::simulated_utility_answer(&mut tx, &ctx.state, &ctx.clock, app, account).await?;
    finish(ctx, tx, account).await
}

pub async fn start_service(ctx: &JobContext, app: Uuid) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx, app)?;
    let mut tx = begin(ctx).await?;
    enrollment::start_service(&mut tx, &ctx.clock, app, account).await?;
    finish(ctx, tx, account).await
}

/// A scheduled cancellation falls due on its final service date: the contract ends, the
/// location is deactivated and the account moves to `cancelled/cancelled_post_start`.
pub async fn end_service(
    ctx: &JobContext,
    app: Uuid,
    location_uuid: Uuid,
    reason: &str,
) -> anyhow::Result<()> {
    let (app, account) = account_of(ctx, app)?;
    let mut tx = begin(ctx).await?;
    let ended = enrollment::end_service(
        &mut tx,
        &ctx.state,
        &ctx.clock,
        app,
        account,
        location_uuid,
        reason,
    )
    .await;
    match ended {
        Ok(()) => finish(ctx, tx, account).await,
        // The reason stays on the failed job for the operator; nothing of the end is kept.
        Err(services::Error::Refused(why)) => {
            drop(tx);
            let failed = Outcome::Failed(format!("billing stopped: {why}"));
            Ok(ctx.finish_alone(&failed).await?)
        }
        Err(services::Error::Failed(e)) => Err(e),
    }
}
