//! Sandbox test clocks: moving one account's clock forward runs that account's jobs that fall
//! due on the way, in time order, each at its own instant.
//!
//! An account's jobs are stored with due times on the service clock; the account's clock is the
//! service clock plus an offset. Moving the account ahead by `d` adds `d` to the offset and
//! moves its queued jobs `d` earlier, so that each keeps its instant on the account's clock.
//! Moving step by step (to the next job, run it, then on) lets a job's own follow-ups (a retry
//! five seconds later) run inside the same advance. One advance moves an account's clock at a
//! time (`ClockHold`): concurrent requests on one account apply in turn.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::queue::{lease, run_claimed};
use crate::{
    state::Core,
    store::{self, Db},
};

/// Upper bound of jobs one advance runs, against a handler that reschedules itself forever.
const MAX_JOBS_PER_ADVANCE: usize = 100_000;

/// Longest wait for the account's jobs that background workers are running (their follow-ups
/// may fall due inside the advance).
const WAIT_FOR_RUNNING: std::time::Duration = std::time::Duration::from_secs(30);

/// How often a waiting advance looks whether the clock is free.
const HOLD_POLL: std::time::Duration = std::time::Duration::from_millis(20);

fn wall_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// The hold of one account's clock by one advance (or simulation, or demo seed): while it is
/// held, nobody else moves that clock, so concurrent requests apply in turn, each from the
/// present the one before left. Held in the database (the clock's row), so it serializes
/// every instance of the service; the hold lasts a job lease past its last use, so that a
/// process that died holding it lets go by itself.
pub struct ClockHold {
    db: Db,
    account_uuid: Uuid,
    token: Uuid,
    hold_ms: i64,
    released: bool,
}

impl ClockHold {
    /// Waits until the account's clock is free, then holds it.
    pub async fn acquire(state: &Core, account_uuid: Uuid) -> store::Result<ClockHold> {
        let hold = ClockHold {
            db: state.db.clone(),
            account_uuid,
            token: Uuid::new_v4(),
            hold_ms: lease(state).num_milliseconds(),
            released: false,
        };
        loop {
            let mut tx = state.db.begin().await?;
            let now = wall_ms();
            let held = store::jobs::hold_account_clock(
                &mut tx,
                account_uuid,
                hold.token,
                now,
                now + hold.hold_ms,
            )
            .await?
            .is_some();
            tx.commit().await?;
            if held {
                return Ok(hold);
            }
            tokio::time::sleep(HOLD_POLL).await;
        }
    }

    /// Extends the hold in `tx` and answers the clock's offset; an error when it was lost
    /// (held past its time by a stalled advance, another took it over).
    async fn renew(&self, tx: &mut store::Tx) -> store::Result<i64> {
        let now = wall_ms();
        store::jobs::hold_account_clock(tx, self.account_uuid, self.token, now, now + self.hold_ms)
            .await?
            .ok_or_else(lost_hold)
    }

    /// Lets go of the clock.
    pub async fn release(mut self) -> store::Result<()> {
        self.released = true;
        release(&self.db, self.account_uuid, self.token).await
    }
}

impl Drop for ClockHold {
    /// A request dropped mid-way (its client went away) lets go of the clock too.
    fn drop(&mut self) {
        if self.released {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let (db, account, token) = (self.db.clone(), self.account_uuid, self.token);
            rt.spawn(async move {
                if let Err(e) = release(&db, account, token).await {
                    tracing::warn!(error = %e, "releasing an account clock failed");
                }
            });
        }
    }
}

async fn release(db: &Db, account_uuid: Uuid, token: Uuid) -> store::Result<()> {
    let mut tx = db.begin().await?;
    store::jobs::release_account_clock(&mut tx, account_uuid, token).await?;
    tx.commit().await
}

fn lost_hold() -> sqlx::Error {
    sqlx::Error::Protocol("the account's clock was taken over by another advance".into())
}

/// Moves the account's clock to `target` (an instant on the account's clock), running what
/// falls due on the way, once no other advance of the account is under way. Returns how many
/// jobs ran.
pub async fn advance_account(
    state: &Core,
    account_uuid: Uuid,
    target: DateTime<Utc>,
) -> store::Result<usize> {
    let hold = ClockHold::acquire(state, account_uuid).await?;
    let ran = advance_held(state, &hold, target).await?;
    hold.release().await?;
    Ok(ran)
}

/// Moves the clock `hold` holds to `target` (not before its present: a target already passed
/// runs what is due and moves nothing), running what falls due on the way; never a job due
/// after `target`. Returns how many jobs ran.
pub async fn advance_held(
    state: &Core,
    hold: &ClockHold,
    target: DateTime<Utc>,
) -> store::Result<usize> {
    let account_uuid = hold.account_uuid;
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
        let offset = hold.renew(&mut tx).await?;
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
            move_clock(&mut tx, hold, offset + step, step).await?;
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
            // On a task of its own, so that it runs to its end even when the request that moves
            // the clock is dropped (its client went away): a job left claimed would keep every
            // later move of this clock waiting for it until its lease ran out.
            if let Err(e) = tokio::spawn(run_claimed(state.clone(), job)).await {
                tracing::warn!(error = %e, "a sandbox clock's job did not finish");
            }
            ran += 1;
        }
    }
    let service_now_ms = state.clock.now().timestamp_millis();
    let mut tx = state.db.begin().await?;
    let offset = hold.renew(&mut tx).await?;
    let step = target_ms - (service_now_ms + offset);
    if step > 0 {
        move_clock(&mut tx, hold, offset + step, step).await?;
    }
    tx.commit().await?;
    state.account_changed(account_uuid);
    Ok(ran)
}

/// Moves the held clock's offset to `offset_ms` (`step` ahead) and its queued jobs `step`
/// earlier, in `tx`.
async fn move_clock(
    tx: &mut store::Tx,
    hold: &ClockHold,
    offset_ms: i64,
    step: i64,
) -> store::Result<()> {
    if !store::jobs::set_account_offset_ms(tx, hold.account_uuid, hold.token, offset_ms).await? {
        return Err(lost_hold());
    }
    store::jobs::shift_account_jobs(tx, hold.account_uuid, step).await
}
