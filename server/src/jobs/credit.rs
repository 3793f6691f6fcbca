//! The credit check job: `services::follow_up::schedule_credit_check` hands an account's latest
//! credit-check submission to a `credit.check` job on the account's clock; the job runs
//! `services::credit::run_check` (the bureau's answer, the status, the customer's e-mail, the
//! retries of frozen files and bureau errors that `domain::credit` rules) and ends in the
//! transaction that recorded the answer.
//!
//! Triggers: a client agent enrollment runs the check as soon as its last prerequisite
//! (address, identity, credit submission, payment method) is met, which
//! `services::follow_up::refresh_status` sees
//! as the move to `enrollment_pending_client_agent`; standard enrollments run it after
//! finalize, once verification passed.

use anyhow::Context;
use uuid::Uuid;

use crate::{
    jobs::JobContext,
    outbox::Outcome,
    services::credit::{run_check, CheckRun},
};

/// The job: one soft check of the submission `credit_check_uuid`.
#[tracing::instrument(skip_all, fields(account = ?ctx.job.account_uuid))]
pub async fn run(ctx: &JobContext, app_uuid: Uuid, credit_check_uuid: Uuid) -> anyhow::Result<()> {
    let account_uuid = ctx
        .job
        .account_uuid
        .context("a credit check without account")?;
    let run = run_check(
        &ctx.state,
        &ctx.clock,
        (app_uuid, credit_check_uuid),
        account_uuid,
        ctx.job.uuid,
        ctx.attempt(),
    )
    .await?;
    match run {
        CheckRun::Superseded => Ok(ctx.finish_alone(&Outcome::Done).await?),
        CheckRun::AccountNotFound => Ok(ctx
            .finish_alone(&Outcome::Failed("account not found".into()))
            .await?),
        CheckRun::Answered { mut tx, outcome } => {
            if ctx.finish(&mut tx, &outcome).await? {
                tx.commit().await?;
                ctx.state.account_changed(account_uuid);
            }
            Ok(())
        }
    }
}
