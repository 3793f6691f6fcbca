//! The account's status after a change: derived from the facts and stored with its history
//! (`store::status::update_status`), plus what a new status sets off.

use app::api::{AccountStatus, StatusReason};
use uuid::Uuid;

use super::credit::schedule_credit_check;
use crate::{
    clock::Clock,
    store::{self, Tx},
};
/// Refreshes the account's status (`store::status::update_status`); when that completes a
/// client agent enrollment's prerequisites, the credit check runs at once, in the same
/// transaction. Every request that may complete a prerequisite calls this.
pub async fn refresh_status(
    tx: &mut Tx,
    clock: &Clock,
    app_uuid: Uuid,
    account_uuid: Uuid,
    now: chrono::DateTime<chrono::Utc>,
) -> store::Result<Option<(AccountStatus, StatusReason)>> {
    let changed = store::status::update_status(tx, app_uuid, account_uuid, now).await?;
    if let Some((_, StatusReason::EnrollmentPendingClientAgent)) = changed {
        if let Some(row) =
            store::accounts::account_of_app_for_update(tx, app_uuid, account_uuid).await?
        {
            // Through the transaction: a second connection from the pool while this one is
            // held can wait for the pool to time out when every connection is held the same way.
            let clock = clock.for_account(&mut *tx, account_uuid).await?;
            schedule_credit_check(tx, &row, &clock).await?;
        }
    }
    Ok(changed)
}
