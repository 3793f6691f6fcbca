//! Sandbox test clocks: moving one account's clock forward runs that account's jobs that fall
//! due on the way, in time order, each at its own instant.
//!
//! An account's jobs are stored with due times on the service clock; the account's clock is the
//! service clock plus an offset. Moving the account ahead by `d` adds `d` to the offset and
//! moves its queued jobs `d` earlier, so that each keeps its instant on the account's clock.
//! Moving step by step (to the next job, run it, then on) lets a job's own follow-ups (a retry
//! five seconds later) run inside the same advance.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::queue::{lease, run_claimed};
use crate::{state::Core, store};

/// Upper bound of jobs one advance runs, against a handler that reschedules itself forever.
const MAX_JOBS_PER_ADVANCE: usize = 100_000;

/// Longest wait for the account's jobs that background workers are running (their follow-ups
/// may fall due inside the advance).
const WAIT_FOR_RUNNING: std::time::Duration = std::time::Duration::from_secs(30);

/// Moves the account's clock to `target` (an instant on the account's clock, not before its
/// present), running what falls due on the way. Returns how many jobs ran.
pub async fn advance_account(
    state: &Core,
    account_uuid: Uuid,
    target: DateTime<Utc>,
) -> store::Result<usize> {
    let target_ms = target.timestamp_millis();
    let mut ran = 0;
    let waiting_since = std::time::Instant::now();
    while ran < MAX_JOBS_PER_ADVANCE {
        let service_now_ms = state.clock.now().timestamp_millis();
        // Counted before looking for a due job as well as after: a job a background worker
        // finishes in between may have queued a follow-up that the look missed.
        let running_before =
            store::jobs::account_jobs_running(&state.db, account_uuid, service_now_ms).await?;
        let mut tx = state.db.begin().await?;
        let offset = store::jobs::account_offset_ms(&mut tx, account_uuid).await?;
        let Some((job_uuid, due_ms)) =
            store::jobs::next_account_job(&mut tx, account_uuid, target_ms - offset).await?
        else {
            tx.commit().await?;
            // A background worker may be running one of the account's jobs right now (one
            // emitted on the way, due at once): wait for it, then look again.
            let running =
                store::jobs::account_jobs_running(&state.db, account_uuid, service_now_ms).await?;
            if running + running_before > 0 && waiting_since.elapsed() < WAIT_FOR_RUNNING {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
            break;
        };
        let step = (due_ms - service_now_ms).max(0);
        if step > 0 {
            store::jobs::set_account_offset_ms(&mut tx, account_uuid, offset + step).await?;
            store::jobs::shift_account_jobs(&mut tx, account_uuid, step).await?;
        }
        let lease_until = service_now_ms + lease(state).num_milliseconds();
        let job = store::jobs::claim_one(
            &mut tx,
            job_uuid,
            service_now_ms,
            lease_until,
            Uuid::new_v4(),
        )
        .await?;
        tx.commit().await?;
        if let Some(job) = job {
            run_claimed(state.clone(), job).await;
            ran += 1;
        }
    }
    let service_now_ms = state.clock.now().timestamp_millis();
    let mut tx = state.db.begin().await?;
    let offset = store::jobs::account_offset_ms(&mut tx, account_uuid).await?;
    let step = target_ms - (service_now_ms + offset);
    if step > 0 {
        store::jobs::set_account_offset_ms(&mut tx, account_uuid, offset + step).await?;
        store::jobs::shift_account_jobs(&mut tx, account_uuid, step).await?;
    }
    tx.commit().await?;
    state.account_changed(account_uuid);
    Ok(ran)
}
