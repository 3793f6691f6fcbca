//! What a change writes in its own transaction so that its consequences happen exactly when it
//! commits: the jobs it schedules (`enqueue`, each a `Job`: its kind and payload in one value,
//! declared in `domain::jobs`), and how a job run ends (`JobRun`, `Outcome`). E-mails
//! (`mail::queue`) and events (`store::events`) ride on the same transaction.
//!
//! A later feature adds a job kind by adding a `Job` variant and its arm in `jobs::dispatch`. A
//! handler reads what it needs, does its outside work, then writes its results and calls
//! `JobRun::finish` in one transaction, so that a job's effects commit exactly once even when
//! its lease was lost to another worker.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{
    clock::{AccountClock, Clock},
    store::{self, jobs::JobRow, Db, Tx},
};

pub use crate::domain::jobs::{Job, JobKind};

/// Schedules `job` in the caller's transaction, due `run_at` on `clock` (the clock of
/// `account_uuid`, whose sandbox advances run it): it exists only if that transaction commits.
pub async fn enqueue(
    tx: &mut Tx,
    clock: &AccountClock,
    job: &Job,
    account_uuid: Option<Uuid>,
    run_at: DateTime<Utc>,
) -> store::Result<Uuid> {
    let (kind, payload) = job.stored().map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    store::jobs::insert_job(
        tx,
        &store::jobs::NewJob {
            kind,
            payload: &payload,
            account_uuid,
            run_at_ms: clock.to_service_time(run_at).timestamp_millis(),
            max_attempts: job.max_attempts(),
            created_at: clock.now(),
        },
    )
    .await
}

/// Records in `tx` that each of `runs` ended done, in one statement; answers the jobs whose
/// lease still held (the others were taken over by another worker, and their effects must not
/// be written).
pub async fn complete_all(tx: &mut Tx, runs: &[&JobRun]) -> store::Result<Vec<Uuid>> {
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    let jobs: Vec<(Uuid, Uuid)> = runs
        .iter()
        .map(|r| (r.job.uuid, r.job.lease_token.unwrap_or_else(Uuid::nil)))
        .collect();
    store::jobs::complete_all(tx, &jobs, first.service_clock.now()).await
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
