//! The soft credit check: recording a submission (`submit_check`), starting the `credit.check`
//! job for the latest one on the account's clock, and running it (`run_check`, which
//! `jobs::credit` calls).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use anyhow::Context as _;

use super::Error;
use crate::{
    adapters::credit::{bureau_for, CreditAnswer, SoftCheck},
    clock::AccountClock,
    domain::{
        account::Ssn,
        credit::{next_attempt_in, notice_for, should_run, CreditNotice},
        hosted::LinkPurpose,
        status::CreditState,
    },
    mail::{self, Brand, NewEmail, Template},
    outbox::{self, JobKind, NewJob, Outcome},
    state::Core,
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

/// Why a credit-check submission was not recorded.
#[derive(Debug)]
pub enum SubmitCheckRefused {
    AccountNotFound,
}

/// Records the customer's SSN (sealed) and consent as a new submission, in one transaction, and
/// refreshes the status: a client agent enrollment runs the check once every prerequisite is met
/// (standard ones after finalize).
pub async fn submit_check(
    state: &Core,
    app: Uuid,
    account: Uuid,
    ssn: &Ssn,
) -> Result<(), Error<SubmitCheckRefused>> {
    let now = state.clock.now();
    let sealed = state.pii.seal(ssn.digits().as_bytes());
    let mut tx = state.db.begin().await?;
    store::accounts::account_of_app_for_update(&mut tx, app, account)
        .await?
        .ok_or(Error::Refused(SubmitCheckRefused::AccountNotFound))?;
    store::credit::insert_credit_check(
        &mut tx,
        &store::credit::NewCreditCheck {
            account_uuid: account,
            ssn_ciphertext: &sealed,
            ssn_last4: ssn.last4(),
            consented_at: now,
            status: CreditState::Submitted.as_str(),
        },
    )
    .await?;
    super::status::refresh_status(&mut tx, &state.clock, &state.db, app, account, now).await?;
    tx.commit().await?;
    Ok(())
}

/// How a run of the credit check ended.
pub enum CheckRun {
    /// A newer submission, or a newer job for the same one, took over: nothing was written.
    Superseded,
    AccountNotFound,
    /// The bureau's answer is recorded in `tx` (the status refreshed, the utility submission
    /// scheduled when it passed, the customer e-mailed when the answer calls for it); the job
    /// ends with `outcome` in the same transaction.
    Answered {
        tx: Tx,
        outcome: Outcome,
    },
}

/// Runs one soft check of the account's submission `payload` names, for the job `job_uuid`
/// (its `attempt`-th try): opens the SSN, asks the bureau of the app's environment outside any
/// transaction, then records the answer unless another job took over meanwhile.
pub async fn run_check(
    state: &Core,
    clock: &AccountClock,
    payload: &Payload,
    account_uuid: Uuid,
    job_uuid: Uuid,
    attempt: u32,
) -> anyhow::Result<CheckRun> {
    let mut tx = state.db.begin().await?;
    let check = store::credit::latest_credit_check(&mut tx, account_uuid).await?;
    tx.commit().await?;
    let Some(check) =
        check.filter(|c| c.uuid == payload.credit_check_uuid && c.job_uuid == Some(job_uuid))
    else {
        return Ok(CheckRun::Superseded);
    };
    let (Some(app), Some(account)) = (
        store::apps::app_by_uuid(&state.db, payload.app_uuid).await?,
        store::accounts::account_of_app(&state.db, payload.app_uuid, account_uuid).await?,
    ) else {
        return Ok(CheckRun::AccountNotFound);
    };
    let environment = app.environment_kind();

    let ssn = state
        .pii
        .open(&check.ssn_ciphertext)
        .context("the sealed SSN does not open")?;
    let request = SoftCheck {
        reference: check.uuid,
        ssn: String::from_utf8(ssn).context("the sealed SSN is not text")?,
        first_name: account.first_name.clone(),
        last_name: account.last_name.clone(),
        date_of_birth: account.date_of_birth,
    };
    let answer = bureau_for(environment, &state.db)
        .soft_check(&request)
        .await;
    drop(request);

    let now = clock.now();
    let before = CreditState::parse(&check.status).unwrap_or_default();
    let after = answer.state();
    if let CreditAnswer::Error { reason } = &answer {
        tracing::info!(reason = %reason, "the credit bureau could not answer");
    }
    let mut tx = state.db.begin().await?;
    // Lock the account (as submissions and simulations do) and make sure no newer submission or
    // job took over while the bureau was answering.
    store::accounts::account_of_app_for_update(&mut tx, app.uuid, account.uuid).await?;
    let current = store::credit::latest_credit_check(&mut tx, account.uuid).await?;
    if !current.is_some_and(|c| c.uuid == check.uuid && c.job_uuid == Some(job_uuid)) {
        drop(tx);
        return Ok(CheckRun::Superseded);
    }
    store::credit::set_credit_check_answer(&mut tx, check.uuid, after.as_str(), now).await?;
    if after == CreditState::Passed {
        super::enrollment::credit_passed(&mut tx, app.uuid, account.uuid, clock).await?;
    }
    store::status::update_status(&mut tx, app.uuid, account.uuid, now).await?;
    if let Some(notice) = notice_for(before, after) {
        let template = match (notice, &answer) {
            (CreditNotice::Frozen, CreditAnswer::Frozen { unfreeze_url }) => {
                Template::CreditFrozen {
                    first_name: account.first_name.clone(),
                    unfreeze_url: unfreeze_url.clone(),
                    retry_url: Some(
                        super::hosted::email_link(
                            &mut tx,
                            state,
                            clock,
                            app.uuid,
                            account.uuid,
                            LinkPurpose::CreditFrozen,
                            Some(unfreeze_url),
                        )
                        .await?,
                    ),
                }
            }
            (CreditNotice::Approved, _) => Template::CreditApproved {
                first_name: account.first_name.clone(),
            },
            (CreditNotice::NotFound, _) => Template::CreditNotApproved {
                first_name: account.first_name.clone(),
                not_found: true,
            },
            _ => Template::CreditNotApproved {
                first_name: account.first_name.clone(),
                not_found: false,
            },
        };
        mail::queue(
            &mut tx,
            clock,
            &NewEmail {
                app_uuid: app.uuid,
                account_uuid: Some(account.uuid),
                to: &account.email,
                template: &template,
                brand: &Brand::of_app(&app),
                send_at: None,
                event_on_send: None,
            },
        )
        .await?;
    }
    let outcome = match next_attempt_in(after, attempt) {
        Some(wait) => Outcome::RetryAt(now + wait, format!("credit check {}", after.as_str())),
        None => Outcome::Done,
    };
    Ok(CheckRun::Answered { tx, outcome })
}
