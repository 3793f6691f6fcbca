//! Starting an account's soft credit check: the `credit.check` job for its latest submission,
//! on the account's clock (`jobs::credit` runs it).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::{
    clock::AccountClock,
    domain::{credit::should_run, status::CreditState},
    outbox::{self, JobKind, NewJob},
    store::{self, accounts::AccountRow, Tx},
};
/// Attempts the queue allows when the handler itself fails (database down); the check's own
/// retries are ruled by `domain::credit`.
const MAX_ATTEMPTS: i32 = 1_000;
#[derive(Serialize, Deserialize)]
pub struct Payload {
    pub app_uuid: Uuid,
    pub credit_check_uuid: Uuid,
}
/// Schedules the soft check of the account's latest submission, due at once on `clock`, unless
/// it already answered for good. Returns the job, or `None` when there is nothing to check.
pub async fn schedule_credit_check(
    tx: &mut Tx,
    account: &AccountRow,
    clock: &AccountClock,
) -> store::Result<Option<Uuid>> {
    start_check(tx, account, clock, false).await
}
/// Runs the check of the latest submission again whatever it answered before (sandbox
/// simulations).
pub async fn rerun_credit_check(
    tx: &mut Tx,
    account: &AccountRow,
    clock: &AccountClock,
) -> store::Result<Option<Uuid>> {
    start_check(tx, account, clock, true).await
}
async fn start_check(
    tx: &mut Tx,
    account: &AccountRow,
    clock: &AccountClock,
    force: bool,
) -> store::Result<Option<Uuid>> {
    let Some(check) = store::credit::latest_credit_check(tx, account.uuid).await? else {
        return Ok(None);
    };
    let state = CreditState::parse(&check.status).unwrap_or_default();
    if !force && !should_run(state) {
        return Ok(None);
    }
    let job = outbox::enqueue(
        tx,
        clock,
        &NewJob {
            kind: JobKind::CreditCheck,
            payload: &Payload {
                app_uuid: account.app_uuid,
                credit_check_uuid: check.uuid,
            },
            account_uuid: Some(account.uuid),
            run_at: clock.now(),
            max_attempts: MAX_ATTEMPTS,
        },
    )
    .await?;
    // The new job runs the check; any older one stands down when it sees this.
    store::credit::set_credit_check_job(tx, check.uuid, job, CreditState::Pending.as_str()).await?;
    store::status::update_status(tx, account.app_uuid, account.uuid, clock.now()).await?;
    Ok(Some(job))
}
