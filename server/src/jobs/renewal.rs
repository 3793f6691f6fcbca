//! The renewal jobs, each run in the transaction that finishes it: the start of an accepted
//! renewal on its start date (`services::renewal::start_renewal`), an expiration notice
//! (`send_notice`) and the month-to-month rollover the day after a contract ends (`roll_over`).

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    domain::jobs::{ContractPayload, NoticePayload},
    jobs::JobContext,
    outbox::Outcome,
    services::{renewal, Error},
    store::Tx,
};

fn account_of(ctx: &JobContext) -> anyhow::Result<Uuid> {
    ctx.job
        .account_uuid
        .context("a renewal job without account")
}

/// The job's end, committed with `tx` unless another worker took the job over.
async fn finish(ctx: &JobContext, mut tx: Tx, account: Uuid) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, &Outcome::Done).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}

pub async fn start(ctx: &JobContext, payload: &ContractPayload) -> anyhow::Result<()> {
    let account = account_of(ctx)?;
    let mut tx = ctx.state.db.begin().await?;
    renewal::start_renewal(
        &mut tx,
        &ctx.clock,
        payload.app_uuid,
        account,
        payload.contract_uuid,
    )
    .await?;
    finish(ctx, tx, account).await
}

/// One expiration notice. Pricing the month-to-month plan of a final notice may be refused
/// (the meter left the directory): the job fails with the reason, since retrying cannot
/// repair it.
pub async fn notice(ctx: &JobContext, payload: &NoticePayload) -> anyhow::Result<()> {
    let account = account_of(ctx)?;
    let mut tx = ctx.state.db.begin().await?;
    match renewal::send_notice(&mut tx, &ctx.state, &ctx.clock, account, payload).await {
        Ok(()) => finish(ctx, tx, account).await,
        Err(Error::Refused(why)) => {
            drop(tx);
            let failed = Outcome::Failed(format!("the notice was not sent: {why:?}"));
            Ok(ctx.finish_alone(&failed).await?)
        }
        Err(Error::Failed(e)) => Err(e),
    }
}

/// The month-to-month rollover the day after a fixed contract ends.
pub async fn rollover(ctx: &JobContext, payload: &ContractPayload) -> anyhow::Result<()> {
    let account = account_of(ctx)?;
    let mut tx = ctx.state.db.begin().await?;
    match renewal::roll_over(&mut tx, &ctx.state, &ctx.clock, account, payload).await {
        Ok(()) => finish(ctx, tx, account).await,
        Err(Error::Refused(why)) => {
            drop(tx);
            let failed = Outcome::Failed(format!("the rollover did not happen: {why:?}"));
            Ok(ctx.finish_alone(&failed).await?)
        }
        Err(Error::Failed(e)) => Err(e),
    }
}
