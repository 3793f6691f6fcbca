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
use crate::{http::AppState, store};

/// Upper bound of jobs one advance runs, against a handler that reschedules itself forever.
const MAX_JOBS_PER_ADVANCE: usize = 100_000;

/// Moves the account's clock to `target` (an instant on the account's clock, not before its
/// present), running what falls due on the way. Returns how many jobs ran.
pub async fn advance_account(
    state: &AppState,
    account_uuid: Uuid,
    target: DateTime<Utc>,
) -> store::Result<usize> {
    let target_ms = target.timestamp_millis();
    let mut ran = 0;
    while ran < MAX_JOBS_PER_ADVANCE {
        let service_now_ms = state.clock.now().timestamp_millis();
        let mut tx = state.db.begin().await?;
        let offset = store::jobs::account_offset_ms_tx(&mut tx, account_uuid).await?;
        let Some((job_uuid, due_ms)) =
            store::jobs::next_account_job(&mut tx, account_uuid, target_ms - offset).await?
        else {
            tx.commit().await?;
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
    let offset = store::jobs::account_offset_ms_tx(&mut tx, account_uuid).await?;
    let step = target_ms - (service_now_ms + offset);
    if step > 0 {
        store::jobs::set_account_offset_ms(&mut tx, account_uuid, offset + step).await?;
        store::jobs::shift_account_jobs(&mut tx, account_uuid, step).await?;
    }
    tx.commit().await?;
    Ok(ran)
}
