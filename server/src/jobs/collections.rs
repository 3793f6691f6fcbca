//! The disconnection jobs, each run in the transaction that finishes it: a notice's date
//! (`services::disconnection::disconnect_due`) and the simulated utility carrying out a
//! disconnection or reconnection (`services::disconnection::complete_service_order`).

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    domain::jobs::{DisconnectPayload, ServiceOrderPayload},
    jobs::JobContext,
    outbox::Outcome,
    services::disconnection,
    store::Tx,
};

fn account_of(ctx: &JobContext) -> anyhow::Result<Uuid> {
    ctx.job
        .account_uuid
        .context("a collections job without account")
}

async fn finish(ctx: &JobContext, mut tx: Tx, account: Uuid) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, &Outcome::Done).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}

pub async fn disconnect(ctx: &JobContext, payload: &DisconnectPayload) -> anyhow::Result<()> {
    let account = account_of(ctx)?;
    let mut tx = ctx.state.db.begin().await?;
    disconnection::disconnect_due(&mut tx, &ctx.clock, account, payload).await?;
    finish(ctx, tx, account).await
}

pub async fn service_order(ctx: &JobContext, payload: &ServiceOrderPayload) -> anyhow::Result<()> {
    let account = account_of(ctx)?;
    let mut tx = ctx.state.db.begin().await?;
    disconnection::complete_service_order(&mut tx, &ctx.state, &ctx.clock, account, payload)
        .await?;
    finish(ctx, tx, account).await
}
