//! Background work: the durable job queue (`queue`), the dispatch of each `outbox::Job` to
//! its handler with its payload (`dispatch`), the handlers of the enrollment, credit, billing, renewal and flow session jobs,
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
    domain::jobs::StoredJobError,
    outbox::{Job, JobRun, Outcome},
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

/// Runs one claimed job with the handler of its kind. A kind nobody knows fails the job; a
/// payload that does not read is an error, retried as any failing handler is.
pub async fn dispatch(ctx: &JobContext) -> anyhow::Result<()> {
    let job = match Job::from_stored(&ctx.job.kind, &ctx.job.payload) {
        Ok(job) => job,
        Err(unknown @ StoredJobError::UnknownKind(_)) => {
            ctx.finish_alone(&Outcome::Failed(unknown.to_string()))
                .await?;
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    match &job {
        Job::WebhookDelivery {
            endpoint_uuid,
            event_uuid,
        } => {
            let (webhooks, pii) = (&ctx.state.webhooks, &ctx.state.pii);
            crate::webhooks::deliver(&ctx.run, webhooks, pii, (*endpoint_uuid, *event_uuid)).await
        }
        Job::SendEmail {
            email_uuid,
            event_on_send,
        } => crate::mail::send(&ctx.run, &ctx.state.mailer, *email_uuid, event_on_send).await,
        Job::CreditCheck {
            app_uuid,
            credit_check_uuid,
        } => credit::run(ctx, *app_uuid, *credit_check_uuid).await,
        Job::EnrollmentVerify { app_uuid } => pipeline::verify(ctx, *app_uuid).await,
        Job::UtilitySubmit { app_uuid } => pipeline::submit_to_utility(ctx, *app_uuid).await,
        Job::UtilityAnswer { app_uuid } => pipeline::utility_answer(ctx, *app_uuid).await,
        Job::ServiceStart { app_uuid } => pipeline::start_service(ctx, *app_uuid).await,
        Job::ServiceEnd {
            app_uuid,
            location_uuid,
            reason,
        } => pipeline::end_service(ctx, *app_uuid, *location_uuid, reason).await,
        Job::MeterRead(read) => cycle::meter_read(ctx, read).await,
        Job::AutoPay(invoice) => cycle::auto_pay(ctx, invoice).await,
        Job::PastDue(invoice) => cycle::past_due(ctx, invoice).await,
        Job::RenewalStart(contract) => renewal::start(ctx, contract).await,
        Job::RenewalNotice(notice) => renewal::notice(ctx, notice).await,
        Job::RenewalRollover(contract) => renewal::rollover(ctx, contract).await,
        Job::Disconnect(notice) => collections::disconnect(ctx, notice).await,
        Job::UtilityServiceOrder(order) => collections::service_order(ctx, order).await,
        Job::DepositPayout(deposit) => cycle::deposit_payout(ctx, deposit).await,
        Job::FlowSessionEnd(session) => flows::session_end(ctx, session).await,
    }
}
