//! What a change writes in its own transaction so that its consequences happen exactly when it
//! commits: the jobs it schedules (`enqueue`, one `JobKind` naming every kind), and how a job run
//! ends (`JobRun`, `Outcome`). E-mails (`mail::queue`) and events
//! (`store::events`) ride on the same transaction.
//!
//! A later feature adds a job kind by adding a `JobKind` variant here and its arm in
//! `jobs::dispatch`. A handler reads what it needs, does its outside work, then writes its
//! results and calls `JobRun::finish` in one transaction, so that a job's effects commit
//! exactly once even when its lease was lost to another worker.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{
    clock::{AccountClock, Clock},
    store::{self, jobs::JobRow, Db, Tx},
};

/// Every kind of job, by the name stored in `jobs.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobKind {
    /// One attempt at delivering one event to one webhook endpoint.
    WebhookDelivery,
    /// Hands one e-mail of the outbox to SMTP (or keeps it).
    SendEmail,
    /// One soft credit check of an account's latest submission (`jobs::credit`).
    CreditCheck,
    /// Identity verification after finalize (`jobs::pipeline`).
    EnrollmentVerify,
    /// Submission of the enrollment to the utility.
    UtilitySubmit,
    /// The utility's answer to the submission.
    UtilityAnswer,
    /// Service starts on the start date.
    ServiceStart,
    /// A scheduled cancellation ends service on its final service date.
    ServiceEnd,
    /// A cycle's meter read and its invoice (`jobs::cycle`).
    MeterRead,
    /// Auto-pay of an invoice on its due date.
    AutoPay,
    /// An unpaid invoice turns past due.
    PastDue,
    /// An accepted renewal takes over from the contract it renews, on its start date.
    RenewalStart,
    /// One expiration notice of a fixed contract (`jobs::renewal`).
    RenewalNotice,
    /// A fixed contract nobody renewed rolls onto month-to-month the day after it ends.
    RenewalRollover,
    /// A disconnection notice's date: the utility is asked to disconnect if the bill is still
    /// unpaid (`jobs::collections`).
    Disconnect,
    /// The simulated utility carries out a disconnection or reconnection it was asked for.
    UtilityServiceOrder,
    /// What a final bill left of a deposit goes back to the card (`jobs::cycle`).
    DepositPayout,
    /// A flow session's end: its `flow.session_ended` summary once it is over
    /// (`services::flows::end_session`).
    FlowSessionEnd,
}

impl JobKind {
    pub const ALL: &'static [JobKind] = &[
        JobKind::WebhookDelivery,
        JobKind::SendEmail,
        JobKind::CreditCheck,
        JobKind::EnrollmentVerify,
        JobKind::UtilitySubmit,
        JobKind::UtilityAnswer,
        JobKind::ServiceStart,
        JobKind::ServiceEnd,
        JobKind::MeterRead,
        JobKind::AutoPay,
        JobKind::PastDue,
        JobKind::RenewalStart,
        JobKind::RenewalNotice,
        JobKind::RenewalRollover,
        JobKind::Disconnect,
        JobKind::UtilityServiceOrder,
        JobKind::DepositPayout,
        JobKind::FlowSessionEnd,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::WebhookDelivery => store::events::WEBHOOK_DELIVERY_JOB,
            JobKind::SendEmail => "email.send",
            JobKind::CreditCheck => "credit.check",
            JobKind::EnrollmentVerify => "enrollment.verify",
            JobKind::UtilitySubmit => "utility.submit",
            JobKind::UtilityAnswer => "utility.answer",
            JobKind::ServiceStart => "service.start",
            JobKind::ServiceEnd => "service.end",
            JobKind::MeterRead => store::billing::BILLING_JOB_KINDS[0],
            JobKind::AutoPay => store::billing::BILLING_JOB_KINDS[1],
            JobKind::PastDue => store::billing::BILLING_JOB_KINDS[2],
            JobKind::RenewalStart => store::enrollment::RENEWAL_START_JOB_KIND,
            JobKind::RenewalNotice => store::renewal::RENEWAL_NOTICE_JOB_KIND,
            JobKind::RenewalRollover => store::renewal::RENEWAL_ROLLOVER_JOB_KIND,
            JobKind::Disconnect => "collections.disconnect",
            JobKind::UtilityServiceOrder => "collections.utility_order",
            JobKind::DepositPayout => "deposit.payout",
            JobKind::FlowSessionEnd => "flow.session_end",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        Self::ALL.iter().copied().find(|k| k.as_str() == s)
    }
}

/// A job to schedule: what, for which account's clock, and when on that clock.
pub struct NewJob<'a, P: serde::Serialize> {
    pub kind: JobKind,
    pub payload: &'a P,
    /// The account whose clock `run_at` is read on (and whose sandbox advances run the job).
    pub account_uuid: Option<Uuid>,
    /// When it falls due, on `clock` (the account's clock for an account's job).
    pub run_at: DateTime<Utc>,
    pub max_attempts: i32,
}

/// Schedules a job in the caller's transaction: it exists only if that transaction commits.
pub async fn enqueue<P: serde::Serialize>(
    tx: &mut Tx,
    clock: &AccountClock,
    job: &NewJob<'_, P>,
) -> store::Result<Uuid> {
    let payload =
        serde_json::to_value(job.payload).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    store::jobs::insert_job(
        tx,
        &store::jobs::NewJob {
            kind: job.kind.as_str(),
            payload: &payload,
            account_uuid: job.account_uuid,
            run_at_ms: clock.to_service_time(job.run_at).timestamp_millis(),
            max_attempts: job.max_attempts,
            created_at: clock.now(),
        },
    )
    .await
}

/// How a job ended, as its handler decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Run again at this instant of the job's clock.
    RetryAt(DateTime<Utc>, String),
    /// Give up for good.
    Failed(String),
}

/// One run of a job: its row, the database, and its clock (the account's clock for an account's
/// job, so that sandbox accounts live in their own time). `jobs::JobContext` adds the core
/// state; the e-mail and webhook senders run on this alone.
pub struct JobRun {
    pub db: Db,
    /// The service clock, which the queue's due times are read on.
    pub service_clock: Clock,
    pub job: JobRow,
    pub clock: AccountClock,
}

impl JobRun {
    /// Now, on the job's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn attempt(&self) -> u32 {
        u32::try_from(self.job.attempts).unwrap_or(0)
    }

    /// Records the job's end in `tx`; false when its lease was lost (another worker took the
    /// job over), in which case the caller must not commit.
    pub async fn finish(&self, tx: &mut Tx, outcome: &Outcome) -> store::Result<bool> {
        let lease = self.job.lease_token.unwrap_or_else(Uuid::nil);
        let service_now = self.service_clock.now();
        match outcome {
            Outcome::Done => store::jobs::complete(tx, self.job.uuid, lease, service_now).await,
            Outcome::RetryAt(at, why) => {
                let due = self.clock.to_service_time(*at).timestamp_millis();
                store::jobs::reschedule(tx, self.job.uuid, lease, due, Some(why)).await
            }
            Outcome::Failed(why) => {
                store::jobs::fail(tx, self.job.uuid, lease, why, service_now).await
            }
        }
    }

    /// Ends the job in a transaction of its own.
    pub async fn finish_alone(&self, outcome: &Outcome) -> store::Result<()> {
        let mut tx = self.db.begin().await?;
        if self.finish(&mut tx, outcome).await? {
            tx.commit().await?;
        }
        Ok(())
    }
}

/// Schedules one of an account's enrollment jobs (its payload names the app), due `at` on the
/// account's clock.
pub async fn enqueue_account_job(
    tx: &mut Tx,
    clock: &AccountClock,
    kind: JobKind,
    app_uuid: Uuid,
    account_uuid: Uuid,
    at: DateTime<Utc>,
) -> store::Result<Uuid> {
    enqueue(
        tx,
        clock,
        &NewJob {
            kind,
            payload: &serde_json::json!({ "app_uuid": app_uuid }),
            account_uuid: Some(account_uuid),
            run_at: at,
            max_attempts: 20,
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        for kind in JobKind::ALL {
            assert_eq!(JobKind::parse(kind.as_str()), Some(*kind));
        }
        assert_eq!(JobKind::parse("nope"), None);
    }
}
