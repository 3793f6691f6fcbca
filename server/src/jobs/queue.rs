//! The workers: claim due jobs in batches, run them concurrently, and retry the ones whose
//! handler failed unexpectedly. Any number of worker processes may share one database.

use std::time::Duration as StdDuration;

use chrono::Duration;
use tokio::{sync::watch, task::JoinSet};
use uuid::Uuid;

use super::{dispatch, JobContext};
use crate::{
    domain::jobs::backoff,
    outbox::{JobRun, Outcome},
    state::Core,
    store::{self, jobs::JobRow},
};

/// Running workers of one process.
pub struct Workers {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Workers {
    /// Starts the workers of this process.
    pub fn spawn(state: Core) -> Workers {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(work(state, stopped));
        Workers { stop, task }
    }

    /// Stops claiming and waits for the jobs in flight to end.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }

    /// Stops at once, abandoning the jobs in flight as a crash would: their leases run out and
    /// other workers take them over.
    pub fn kill(self) {
        self.task.abort();
    }
}

async fn work(state: Core, mut stopped: watch::Receiver<bool>) {
    let concurrency = state.config.jobs.concurrency.max(1);
    let poll = StdDuration::from_millis(state.config.jobs.poll_interval_ms.max(1));
    // Dropping the set (when this task is aborted) aborts the jobs in flight with it.
    let mut running = JoinSet::new();
    loop {
        if *stopped.borrow() {
            break;
        }
        while running.try_join_next().is_some() {}
        let free = concurrency.saturating_sub(running.len());
        if free == 0 {
            tokio::select! {
                _ = running.join_next() => {}
                _ = stopped.changed() => {}
            }
            continue;
        }
        if free < concurrency.div_ceil(4) {
            // Nearly full: let a few more slots free up (or 10 ms pass) so that claims come in
            // batches rather than one round trip per finished job.
            tokio::select! {
                _ = running.join_next() => {}
                () = tokio::time::sleep(StdDuration::from_millis(10)) => {}
            }
            while running.try_join_next().is_some() {}
        }
        let free = concurrency.saturating_sub(running.len());
        match claim(&state, free).await {
            Ok(jobs) if !jobs.is_empty() => {
                for job in jobs {
                    running.spawn(run_claimed(state.clone(), job));
                }
                continue;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "claiming jobs failed"),
        }
        tokio::select! {
            () = tokio::time::sleep(poll) => {}
            _ = stopped.changed() => {}
        }
    }
    while running.join_next().await.is_some() {}
}

/// Claims up to `limit` due jobs for this worker.
pub async fn claim(state: &Core, limit: usize) -> store::Result<Vec<JobRow>> {
    let now = state.clock.now();
    let lease = now + lease(state);
    let mut tx = state.db.begin().await?;
    let jobs = store::jobs::claim_due(
        &mut tx,
        now.timestamp_millis(),
        lease.timestamp_millis(),
        Uuid::new_v4(),
        i64::try_from(limit).unwrap_or(100),
    )
    .await?;
    tx.commit().await?;
    Ok(jobs)
}

pub(crate) fn lease(state: &Core) -> Duration {
    Duration::seconds(i64::try_from(state.config.jobs.lease_seconds).unwrap_or(60))
}

/// Runs a claimed job to its end (handler errors become retries with backoff).
#[tracing::instrument(skip_all, fields(job = %job.uuid, kind = %job.kind, attempt = job.attempts))]
pub async fn run_claimed(state: Core, job: JobRow) {
    let clock = match job.account_uuid {
        Some(account) => match state.clock.for_account(&state.db, account).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "reading an account clock failed");
                return;
            }
        },
        None => state.clock.with_offset(Duration::zero()),
    };
    let ctx = JobContext {
        run: JobRun {
            db: state.db.clone(),
            service_clock: state.clock.clone(),
            job,
            clock,
        },
        state,
    };
    let started = std::time::Instant::now();
    let result = dispatch(&ctx).await;
    // What the job changed of its account shows at once in this instance's reads.
    if let Some(account) = ctx.job.account_uuid {
        ctx.state.account_changed(account);
    }
    metrics::histogram!("job_duration_seconds", "kind" => ctx.job.kind.clone())
        .record(started.elapsed().as_secs_f64());
    metrics::counter!(
        "jobs_run_total",
        "kind" => ctx.job.kind.clone(),
        "result" => if result.is_ok() { "handled" } else { "error" }
    )
    .increment(1);
    if let Err(e) = result {
        let attempt = ctx.attempt();
        tracing::warn!(error = %e, "job failed");
        let outcome = if ctx.job.attempts >= ctx.job.max_attempts {
            Outcome::Failed(e.to_string())
        } else {
            Outcome::RetryAt(ctx.now() + backoff(attempt), e.to_string())
        };
        if let Err(e) = ctx.finish_alone(&outcome).await {
            tracing::warn!(error = %e, "recording a job failure failed");
        }
    }
}

/// Runs every job due now, one batch after another, until none is left; returns how many ran.
/// For tests and operators; the workers do the same in the background.
pub async fn run_due(state: &Core) -> store::Result<usize> {
    let mut ran = 0;
    loop {
        let jobs = claim(state, 64).await?;
        if jobs.is_empty() {
            return Ok(ran);
        }
        ran += jobs.len();
        let mut set = JoinSet::new();
        for job in jobs {
            set.spawn(run_claimed(state.clone(), job));
        }
        while set.join_next().await.is_some() {}
    }
}
