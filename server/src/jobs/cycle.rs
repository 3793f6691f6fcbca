//! The billing cycle's jobs on the account's clock: on each cycle's read date the read and its
//! invoice, then auto-pay on the due date, 16 days later, retried after a decline, and the
//! invoice turning past due the day after its due date when unpaid; after a final bill, what it
//! left of a deposit paid back to the card. Each runs its use case with its payload and ends in
//! the same transaction.

use anyhow::Context as _;
use uuid::Uuid;

use crate::{
    domain::jobs::backoff,
    domain::jobs::{InvoicePayload, PayoutPayload, ReadPayload},
    jobs::JobContext,
    outbox::{Job, Outcome},
    services::{
        billing,
        deposits::{self, PaidOut},
        invoices::{self, AutoPaid, PastDue},
        Error,
    },
    store::Tx,
};

/// The job's end, committed with `tx` unless another worker took the job over.
async fn finish(
    ctx: &JobContext,
    mut tx: Tx,
    outcome: &Outcome,
    account: Uuid,
) -> anyhow::Result<()> {
    if ctx.finish(&mut tx, outcome).await? {
        tx.commit().await?;
        ctx.state.account_changed(account);
    }
    Ok(())
}

/// The cycle's read: bills it and schedules the next read while service lasts. A cycle whose
/// stored data cannot be read fails the job with the reason, since retrying cannot repair it.
pub async fn meter_read(ctx: &JobContext, payload: &ReadPayload) -> anyhow::Result<()> {
    let account_uuid = ctx
        .job
        .account_uuid
        .context("a meter read without account")?;
    match billing::read_meter(&ctx.state, &ctx.clock, account_uuid, payload).await {
        Ok(tx) => finish(ctx, tx, &Outcome::Done, account_uuid).await,
        Err(Error::Refused(why)) => {
            let failed = Outcome::Failed(format!("billing stopped: {why}"));
            Ok(ctx.finish_alone(&failed).await?)
        }
        Err(Error::Failed(e)) => Err(e),
    }
}

/// Several claimed cycle reads billed in one transaction (`billing::read_meters`), the jobs
/// ended in it in one statement. Answers false, with nothing kept, when they cannot all end
/// that way (a job that is not a read, a refusal, an error, a lease lost): the caller then runs
/// each alone (`meter_read`), which records each one's own outcome.
pub async fn meter_reads(ctxs: &[JobContext]) -> anyhow::Result<bool> {
    let Some(first) = ctxs.first() else {
        return Ok(true);
    };
    let mut payloads = Vec::with_capacity(ctxs.len());
    for ctx in ctxs {
        match (
            Job::from_stored(&ctx.job.kind, &ctx.job.payload),
            ctx.job.account_uuid,
        ) {
            (Ok(Job::MeterRead(read)), Some(account)) => payloads.push((account, read)),
            _ => return Ok(false),
        }
    }
    let reads: Vec<billing::DueRead<'_>> = ctxs
        .iter()
        .zip(&payloads)
        .map(|(ctx, (account_uuid, payload))| billing::DueRead {
            clock: &ctx.clock,
            account_uuid: *account_uuid,
            payload,
        })
        .collect();
    let Ok(mut tx) = billing::read_meters(&first.state, &reads).await else {
        return Ok(false);
    };
    let runs: Vec<&crate::outbox::JobRun> = ctxs.iter().map(|ctx| &ctx.run).collect();
    if crate::outbox::complete_all(&mut tx, &runs).await?.len() != runs.len() {
        return Ok(false);
    }
    tx.commit().await?;
    for (account, _) in &payloads {
        first.state.account_changed(*account);
    }
    Ok(true)
}

fn invoice_account(ctx: &JobContext) -> anyhow::Result<Uuid> {
    ctx.job
        .account_uuid
        .context("an invoice job without account")
}

/// Auto-pay on the due date; a processor that cannot be reached is tried again later.
pub async fn auto_pay(ctx: &JobContext, payload: &InvoicePayload) -> anyhow::Result<()> {
    let account_uuid = invoice_account(ctx)?;
    match invoices::auto_pay(&ctx.state, &ctx.clock, account_uuid, payload).await? {
        AutoPaid::Done(tx) => finish(ctx, tx, &Outcome::Done, account_uuid).await,
        AutoPaid::CannotCharge(e) => Ok(ctx.finish_alone(&Outcome::Failed(e.to_string())).await?),
        AutoPaid::Unreachable(e) => {
            tracing::warn!(error = %e, "auto-pay could not reach the processor");
            let retry = ctx.now() + backoff(ctx.attempt());
            Ok(ctx
                .finish_alone(&Outcome::RetryAt(retry, "processor unavailable".into()))
                .await?)
        }
    }
}

/// What a final bill left of a deposit goes back to the card; an unreachable processor is
/// tried again later.
pub async fn deposit_payout(ctx: &JobContext, payload: &PayoutPayload) -> anyhow::Result<()> {
    let account_uuid = ctx
        .job
        .account_uuid
        .context("a deposit payout without account")?;
    match deposits::pay_out(&ctx.state, &ctx.clock, account_uuid, payload).await? {
        PaidOut::Done(Some(tx)) => finish(ctx, tx, &Outcome::Done, account_uuid).await,
        PaidOut::Done(None) => Ok(ctx.finish_alone(&Outcome::Done).await?),
        PaidOut::Unreachable(e) => {
            tracing::warn!(error = %e, "a deposit's payout could not reach the processor");
            let retry = ctx.now() + backoff(ctx.attempt());
            Ok(ctx
                .finish_alone(&Outcome::RetryAt(retry, "processor unavailable".into()))
                .await?)
        }
    }
}

/// The day after the due date: an invoice still open turns past due. While the invoice's
/// auto-pay of the due date is still under way (another worker runs it), the decision waits
/// for it a little, then, if it is still not over, is taken again a second later.
pub async fn past_due(ctx: &JobContext, payload: &InvoicePayload) -> anyhow::Result<()> {
    let account_uuid = invoice_account(ctx)?;
    let waiting_since = std::time::Instant::now();
    loop {
        let mut tx = ctx.state.db.begin().await?;
        match invoices::past_due(&mut tx, &ctx.state, &ctx.clock, account_uuid, payload).await? {
            PastDue::Decided => return finish(ctx, tx, &Outcome::Done, account_uuid).await,
            PastDue::AutoPayPending if waiting_since.elapsed() < WAIT_FOR_AUTO_PAY => {
                drop(tx);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            PastDue::AutoPayPending => {
                let again = ctx.now() + chrono::Duration::seconds(1);
                let waiting = Outcome::RetryAt(again, "waiting for the due date's auto-pay".into());
                return finish(ctx, tx, &waiting, account_uuid).await;
            }
        }
    }
}

/// How long a past-due decision waits in place for an auto-pay under way.
const WAIT_FOR_AUTO_PAY: std::time::Duration = std::time::Duration::from_secs(3);
