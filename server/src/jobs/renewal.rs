//! The start of an accepted renewal on its start date (`services::renewal::start_renewal`),
//! run in the transaction that finishes the job.

use anyhow::Context as _;

use crate::{
    jobs::JobContext,
    outbox::Outcome,
    services::renewal::{self, RenewalStartPayload},
};

pub async fn start(ctx: &JobContext) -> anyhow::Result<()> {
    let payload: RenewalStartPayload = serde_json::from_str(&ctx.job.payload)?;
    let account = ctx
        .job
        .account_uuid
        .context("a renewal job without account")?;
    let mut tx = ctx.state.db.begin().await?;
    renewal::start_renewal(&mut tx, payload.app_uuid, account, payload.contract_uuid).await?;
    if ctx.finish(&mut tx, &Outcome::Done).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}
