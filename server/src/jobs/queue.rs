//! The workers: claim due jobs in batches, run them concurrently, and retry the ones whose
//! handler failed unexpectedly. Any number of worker processes may share one database. Each
//! process's workers are one instance that heartbeats (`job_workers`): when a process dies, the
//! others take its jobs over as soon as its heartbeats stop (`jobs.dead_after_ms`), instead of
//! waiting for the leases to end. They also run the retention passes (`retention`).

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration as StdDuration,
};

use chrono::Duration;
use tokio::{sync::watch, task::JoinSet};
use uuid::Uuid;

use super::{dispatch, JobContext};
use crate::{
    domain::jobs::{backoff, JobKind},
    outbox::{JobRun, Outcome},
    state::Core,
    store::{self, jobs::JobRow},
};

/// Running workers of one process: one instance, which heartbeats while it lives.
pub struct Workers {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    heartbeat: tokio::task::JoinHandle<()>,
    retention: tokio::task::JoinHandle<()>,
    instance: Uuid,
    db: store::Db,
}

impl Workers {
    /// Starts the workers of this process.
    pub fn spawn(state: Core) -> Workers {
        let (stop, stopped) = watch::channel(false);
        let instance = Uuid::new_v4();
        let (alive, beating) = tokio::sync::oneshot::channel();
        let heartbeat = tokio::spawn(heartbeat(state.clone(), instance, alive));
        let retention = tokio::spawn(super::retention::run(state.clone()));
        let db = state.db.clone();
        let task = tokio::spawn(async move {
            // Claims name the instance only once its first heartbeat is stored.
            if beating.await.is_ok() {
                work(state, instance, stopped).await;
            }
        });
        Workers {
            stop,
            task,
            heartbeat,
            retention,
            instance,
            db,
        }
    }

    /// This instance, as its claims name it.
    pub fn instance(&self) -> Uuid {
        self.instance
    }

    /// Stops claiming and waits for the jobs in flight to end.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        self.heartbeat.abort();
        self.retention.abort();
        let forgotten = async {
            let mut tx = self.db.begin().await?;
            store::jobs::forget_workers(&mut tx, 0, Some(self.instance)).await?;
            tx.commit().await
        };
        if let Err(e) = forgotten.await {
            tracing::warn!(error = %e, "removing the worker instance failed");
        }
    }

    /// Stops at once, abandoning the jobs in flight as a crash would: the instance stops
    /// heartbeating, and other workers take its jobs over.
    pub fn kill(self) {
        self.heartbeat.abort();
        self.retention.abort();
        self.task.abort();
    }
}

/// Wall-clock milliseconds: heartbeats tell whether a process lives, whatever the service
/// clock (which tests move) says.
fn wall_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// How long an instance may stay silent before its jobs are taken over.
pub(crate) fn dead_after_ms(state: &Core) -> i64 {
    i64::try_from(state.config.jobs.dead_after_ms).unwrap_or(5_000)
}

/// Stores the instance's heartbeat every `jobs.heartbeat_ms` (signalling `alive` after the
/// first), and forgets instances silent for a day.
async fn heartbeat(state: Core, instance: Uuid, alive: tokio::sync::oneshot::Sender<()>) {
    let every = StdDuration::from_millis(state.config.jobs.heartbeat_ms.max(10));
    let started_at = chrono::Utc::now();
    let mut alive = Some(alive);
    loop {
        let beat = async {
            let mut tx = state.db.begin().await?;
            let now = wall_ms();
            store::jobs::heartbeat(&mut tx, instance, now, started_at).await?;
            store::jobs::forget_workers(&mut tx, now - 86_400_000, None).await?;
            tx.commit().await
        };
        match beat.await {
            Ok(()) => {
                if let Some(a) = alive.take() {
                    let _ = a.send(());
                }
            }
            Err(e) => tracing::warn!(error = %e, "storing the worker heartbeat failed"),
        }
        tokio::time::sleep(every).await;
    }
}

/// Jobs in flight: a task running several jobs (`batches`) counts each of them until it ends,
/// however it ends.
struct InFlight(Arc<AtomicUsize>, usize);

impl InFlight {
    fn hold(count: &Arc<AtomicUsize>, jobs: usize) -> InFlight {
        count.fetch_add(jobs, Ordering::SeqCst);
        InFlight(count.clone(), jobs)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::SeqCst);
    }
}

async fn work(state: Core, instance: Uuid, mut stopped: watch::Receiver<bool>) {
    let concurrency = state.config.jobs.concurrency.max(1);
    let poll = StdDuration::from_millis(state.config.jobs.poll_interval_ms.max(1));
    // Dropping the set (when this task is aborted) aborts the jobs in flight with it.
    let mut running = JoinSet::new();
    let in_flight = Arc::new(AtomicUsize::new(0));
    loop {
        if *stopped.borrow() {
            break;
        }
        while running.try_join_next().is_some() {}
        let free = concurrency.saturating_sub(in_flight.load(Ordering::SeqCst));
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
        let free = concurrency.saturating_sub(in_flight.load(Ordering::SeqCst));
        if free == 0 {
            continue;
        }
        match claim(&state, Some(instance), free).await {
            Ok(jobs) if !jobs.is_empty() => {
                for batch in batches(jobs) {
                    let held = InFlight::hold(&in_flight, batch.len());
                    let state = state.clone();
                    running.spawn(async move {
                        run_batch(state, batch).await;
                        drop(held);
                    });
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

/// Claims up to `limit` due jobs for the worker `instance`: due ones, those whose lease ended,
/// and those of instances that stopped heartbeating. Without an instance (a one-off run) the
/// leases last their full time.
pub async fn claim(
    state: &Core,
    instance: Option<Uuid>,
    limit: usize,
) -> store::Result<Vec<JobRow>> {
    let now = state.clock.now();
    let lease = now + lease(state);
    let mut tx = state.db.begin().await?;
    let jobs = store::jobs::claim_due(
        &mut tx,
        &store::jobs::Claim {
            now_ms: now.timestamp_millis(),
            lease_until_ms: lease.timestamp_millis(),
            lease_token: Uuid::new_v4(),
            instance,
            alive_since_ms: wall_ms() - dead_after_ms(state),
        },
        i64::try_from(limit).unwrap_or(100),
    )
    .await?;
    tx.commit().await?;
    Ok(jobs)
}

pub(crate) fn lease(state: &Core) -> Duration {
    Duration::seconds(i64::try_from(state.config.jobs.lease_seconds).unwrap_or(60))
}

/// Cycle reads billed in one transaction (`cycle::meter_reads`): their invoice numbers are
/// one block at its end, so a cycle day's run takes the number counter once per batch.
const READS_PER_TRANSACTION: usize = 16;

/// E-mails whose jobs end in one transaction (`mail::send_all`): a cycle day's run sends one
/// for each invoice.
const EMAILS_PER_TRANSACTION: usize = 16;

/// The claimed jobs grouped as they run: the cycle reads by `READS_PER_TRANSACTION`, in the
/// order of their accounts (so that two batches lock accounts in one order), the e-mails by
/// `EMAILS_PER_TRANSACTION`, every other job alone.
fn batches(jobs: Vec<JobRow>) -> Vec<Vec<JobRow>> {
    let (mut reads, others): (Vec<JobRow>, Vec<JobRow>) = jobs
        .into_iter()
        .partition(|j| j.kind == JobKind::MeterRead.as_str() && j.account_uuid.is_some());
    let (emails, others): (Vec<JobRow>, Vec<JobRow>) = others
        .into_iter()
        .partition(|j| j.kind == JobKind::SendEmail.as_str());
    reads.sort_by_key(|j| j.account_uuid);
    let mut groups: Vec<Vec<JobRow>> = others.into_iter().map(|j| vec![j]).collect();
    for (jobs, size) in [
        (reads, READS_PER_TRANSACTION),
        (emails, EMAILS_PER_TRANSACTION),
    ] {
        let mut jobs = jobs.into_iter().peekable();
        while jobs.peek().is_some() {
            groups.push(jobs.by_ref().take(size).collect());
        }
    }
    groups
}

/// Runs a group of `batches`: several cycle reads or e-mails together, or, when they cannot
/// all end together, each alone; any other job alone.
async fn run_batch(state: Core, mut jobs: Vec<JobRow>) {
    if jobs.len() == 1 {
        if let Some(job) = jobs.pop() {
            run_claimed(state, job).await;
        }
        return;
    }
    let ctxs: Vec<JobContext> = jobs
        .into_iter()
        .map(|job| context(state.clone(), job))
        .collect();
    let started = std::time::Instant::now();
    let emails = ctxs
        .first()
        .is_some_and(|c| c.job.kind == JobKind::SendEmail.as_str());
    let outcome = if emails {
        let runs: Vec<&JobRun> = ctxs.iter().map(|ctx| &ctx.run).collect();
        crate::mail::send_all(&runs, &state.mailer).await
    } else {
        super::cycle::meter_reads(&ctxs).await
    };
    match outcome {
        Ok(true) => {
            let each = started.elapsed().as_secs_f64() / ctxs.len() as f64;
            for ctx in &ctxs {
                if emails {
                    if let Some(account) = ctx.job.account_uuid {
                        ctx.state.account_changed(account);
                    }
                }
                metrics::histogram!("job_duration_seconds", "kind" => ctx.job.kind.clone())
                    .record(each);
                metrics::counter!("jobs_run_total", "kind" => ctx.job.kind.clone(), "result" => "handled")
                    .increment(1);
            }
        }
        // E-mails may have gone out to SMTP: each job is retried later, as a failing job
        // alone is, rather than run again at once.
        Err(e) if emails => {
            tracing::warn!(error = %e, "a batch of e-mails failed");
            for ctx in &ctxs {
                metrics::counter!("jobs_run_total", "kind" => ctx.job.kind.clone(), "result" => "error")
                    .increment(1);
                record_failure(ctx, &e).await;
            }
        }
        outcome => {
            if let Err(e) = outcome {
                tracing::warn!(error = %e, "a batch of jobs failed; each runs alone");
            }
            for ctx in ctxs {
                run_context(ctx).await;
            }
        }
    }
}

fn context(state: Core, job: JobRow) -> JobContext {
    let clock = state
        .clock
        .with_offset(Duration::milliseconds(job.clock_offset_ms.unwrap_or(0)));
    JobContext {
        run: JobRun {
            db: state.db.clone(),
            service_clock: state.clock.clone(),
            job,
            clock,
        },
        state,
    }
}

/// Runs a claimed job to its end (handler errors become retries with backoff).
pub async fn run_claimed(state: Core, job: JobRow) {
    run_context(context(state, job)).await;
}

#[tracing::instrument(skip_all, fields(job = %ctx.job.uuid, kind = %ctx.job.kind, attempt = ctx.job.attempts))]
async fn run_context(ctx: JobContext) {
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
        tracing::warn!(error = %e, "job failed");
        record_failure(&ctx, &e).await;
    }
}

/// A handler that failed unexpectedly: the job is retried with backoff, or given up once its
/// attempts are spent.
async fn record_failure(ctx: &JobContext, e: &anyhow::Error) {
    let outcome = if ctx.job.attempts >= ctx.job.max_attempts {
        Outcome::Failed(e.to_string())
    } else {
        Outcome::RetryAt(ctx.now() + backoff(ctx.attempt()), e.to_string())
    };
    if let Err(e) = ctx.finish_alone(&outcome).await {
        tracing::warn!(error = %e, "recording a job failure failed");
    }
}

/// Runs every job due now, one batch after another, until none is left; returns how many ran.
/// For tests and operators; the workers do the same in the background.
pub async fn run_due(state: &Core) -> store::Result<usize> {
    let mut ran = 0;
    loop {
        let jobs = claim(state, None, 64).await?;
        if jobs.is_empty() {
            return Ok(ran);
        }
        ran += jobs.len();
        let mut set = JoinSet::new();
        for batch in batches(jobs) {
            set.spawn(run_batch(state.clone(), batch));
        }
        while set.join_next().await.is_some() {}
    }
}
