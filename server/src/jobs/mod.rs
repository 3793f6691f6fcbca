//! Background work: the durable job queue (`queue`), the dispatch of each `outbox::JobKind` to
//! its handler (`dispatch`), the handlers of the enrollment, credit, billing, renewal and flow session jobs,
//! the sandbox accounts' clocks (`sandbox`), and the deletion of old finished work
//! (`retention`). Use cases that handlers share with the HTTP layer live in `services`; nothing
//! here is called from `http` except running an account's due jobs.

pub mod collections;
pub mod credit;
pub mod cycle;
pub mod flows;
pub mod pipeline;
pub mod queue;
pub mod renewal;
pub mod retention;
pub mod sandbox;

use crate::{
    outbox::{JobKind, JobRun, Outcome},
    state::Core,
};

/// What a running job knows: the core state and its run (row, clock), which it derefs to.
pub struct JobContext {
    pub state: Core,
    pub run: JobRun,
}

impl std::ops::Deref for JobContext {
    type Target = JobRun;

    fn deref(&self) -> &JobRun {
        &self.run
    }
}

/// Runs one claimed job with the handler of its kind.
pub async fn dispatch(ctx: &JobContext) -> anyhow::Result<()> {
    let Some(kind) = JobKind::parse(&ctx.job.kind) else {
        ctx.finish_alone(&Outcome::Failed(format!(
            "unknown job kind {}",
            ctx.job.kind
        )))
        .await?;
        return Ok(());
    };
    match kind {
        JobKind::WebhookDelivery => {
            crate::webhooks::deliver(&ctx.run, &ctx.state.webhooks, &ctx.state.pii).await
        }
        JobKind::SendEmail => crate::mail::send(&ctx.run, &ctx.state.mailer).await,
        JobKind::CreditCheck => credit::run(ctx).await,
        JobKind::EnrollmentVerify => pipeline::verify(ctx).await,
        JobKind::UtilitySubmit => pipeline::submit_to_utility(ctx).await,
        JobKind::UtilityAnswer => pipeline::utility_answer(ctx).await,
        JobKind::ServiceStart => pipeline::start_service(ctx).await,
        JobKind::ServiceEnd => pipeline::end_service(ctx).await,
        JobKind::MeterRead => cycle::meter_read(ctx).await,
        JobKind::AutoPay => cycle::auto_pay(ctx).await,
        JobKind::PastDue => cycle::past_due(ctx).await,
        JobKind::RenewalStart => renewal::start(ctx).await,
        JobKind::RenewalNotice => renewal::notice(ctx).await,
        JobKind::RenewalRollover => renewal::rollover(ctx).await,
        JobKind::Disconnect => collections::disconnect(ctx).await,
        JobKind::UtilityServiceOrder => collections::service_order(ctx).await,
        JobKind::DepositPayout => cycle::deposit_payout(ctx).await,
        JobKind::FlowSessionEnd => flows::session_end(ctx).await,
    }
}
