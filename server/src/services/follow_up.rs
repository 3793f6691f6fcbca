//! What a change sets off, written in the change's own transaction: the account's status
//! refreshed (`refresh_status`, the one way to derive and store it), the credit check scheduled
//! (`schedule_credit_check`), the enrollment sent to the utility once verified and approved
//! (`submit_when_ready`), a contract's end scheduled (`schedule_contract_end`), an invoice's
//! jobs queued (`schedule_payment_jobs`, `schedule_invoice_job`), and the single-use link an e-mail carries
//! (`email_link`), or the e-mail queued with it (`mail_with_link`). Other jobs are queued where they arise, each a `Job` handed to
//! `outbox::enqueue`.
//!
//! It imports no other service, so that every use case may call it: a use case that needs what
//! another one's change sets off calls it here instead of calling back into that use case.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{
    clock::{AccountClock, Clock},
    domain::{
        billing::auto_pay_at,
        credit::should_run,
        enrollment::{enroller, start_of_market_day, ContractStatus},
        events::Event,
        hosted::{link_path, LinkPurpose, LINK_TTL},
        jobs::{ContractPayload, InvoicePayload, NoticePayload},
        market::Enroller,
        renewal::{notice_schedule, notice_send_at, rollover_at},
        status::{
            derive_status, AccountStatus, CreditState, StatusFacts, StatusReason, UtilityState,
            VerificationState,
        },
        tokens,
    },
    mail::{self, Template},
    outbox::{self, Job},
    state::Core,
    store::{
        self, accounts::AccountRow, apps::AppRow, billing::InvoiceRow, enrollment::ContractRow,
        hosted_links::NewHostedLink, Tx,
    },
};

/// Re-derives the account's status from its facts (`domain::status::derive_status`) and, when it
/// changed, stores it with its history row and `account.status_updated`; when that completes a
/// client agent enrollment's prerequisites, the credit check is scheduled at once. Every change
/// to the facts calls this in its transaction. Returns the new status when it changed.
pub async fn refresh_status(
    tx: &mut Tx,
    clock: &Clock,
    app_uuid: Uuid,
    account_uuid: Uuid,
    now: DateTime<Utc>,
) -> store::Result<Option<(AccountStatus, StatusReason)>> {
    let changed = store_status(tx, app_uuid, account_uuid, now).await?;
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

/// Derives the account's status and stores it when it changed, with its history and event.
async fn store_status(
    tx: &mut Tx,
    app_uuid: Uuid,
    account_uuid: Uuid,
    now: DateTime<Utc>,
) -> store::Result<Option<(AccountStatus, StatusReason)>> {
    let row = store::accounts::account_of_app_for_update(tx, app_uuid, account_uuid)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    let profile = row
        .profile()
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let credit = store::credit::latest_credit_check(tx, account_uuid)
        .await?
        .map_or(CreditState::NotSubmitted, |c| c.status);
    let enrollment = store::enrollment::enrollment(&mut *tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account_uuid).await?;
    let locations = store::enrollment::locations_of_account(&mut *tx, account_uuid).await?;
    let facts = StatusFacts {
        has_confirmed_address: store::enrollment::confirmed_address(&mut *tx, account_uuid)
            .await?
            .is_some(),
        has_accepted_plan: contracts
            .iter()
            .any(|c| matches!(c.status, ContractStatus::Pending | ContractStatus::Active)),
        is_identity_complete: profile.is_identity_complete(),
        has_payment_method: row.has_payment_method,
        is_client_agent_flow: enroller(row.client_agent_accepted_at) == Enroller::ClientAgent,
        is_finalized: enrollment.is_some(),
        credit,
        verification: enrollment
            .as_ref()
            .map_or_else(VerificationState::default, |e| e.verification),
        utility: enrollment
            .as_ref()
            .map_or_else(UtilityState::default, |e| e.utility),
        is_service_active: locations.iter().any(|l| l.is_energized()),
        is_disconnected: locations
            .iter()
            .any(|l| l.is_service_active && l.is_disconnected),
        cancellation: enrollment.as_ref().and_then(|e| e.cancellation),
    };
    let (status, reason) = derive_status(&facts);
    if (status, reason) == (row.status, row.status_reason) {
        return Ok(None);
    }
    store::accounts::update_status(tx, account_uuid, status, reason, now).await?;
    store::accounts::insert_status_history(tx, account_uuid, status, reason, now).await?;
    store::events::insert_event(
        tx,
        &store::events::NewEvent::of(
            app_uuid,
            &Event::StatusUpdated {
                account_uuid,
                status: status.as_str().to_owned(),
                status_reason: reason.as_str().to_owned(),
                previous_status: row.status.as_str().to_owned(),
                previous_status_reason: row.status_reason.as_str().to_owned(),
            },
            now,
        ),
    )
    .await?;
    Ok(Some((status, reason)))
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
    let state = check.status;
    if !force && !should_run(state) {
        return Ok(None);
    }
    let job = outbox::enqueue(
        tx,
        clock,
        &Job::CreditCheck {
            app_uuid: account.app_uuid,
            credit_check_uuid: check.uuid,
        },
        Some(account.uuid),
        clock.now(),
    )
    .await?;
    // The new job runs the check; any older one stands down when it sees this.
    store::credit::set_credit_check_job(tx, check.uuid, job, CreditState::Pending).await?;
    // Stored without `refresh_status`'s own scheduling: this is that scheduling.
    store_status(tx, account.app_uuid, account.uuid, clock.now()).await?;
    Ok(Some(job))
}

/// A finalized, verified enrollment whose credit check passed goes to the utility: its
/// submission is scheduled at once, unless it was cancelled or already submitted.
pub async fn submit_when_ready(
    tx: &mut Tx,
    app: Uuid,
    account: Uuid,
    clock: &AccountClock,
) -> store::Result<()> {
    let ready = store::enrollment::enrollment(&mut *tx, account)
        .await?
        .is_some_and(|e| {
            e.cancellation.is_none()
                && e.verification == VerificationState::Passed
                && e.utility == UtilityState::NotSubmitted
        });
    if ready {
        outbox::enqueue(
            tx,
            clock,
            &Job::UtilitySubmit { app_uuid: app },
            Some(account),
            clock.now(),
        )
        .await?;
    }
    Ok(())
}

/// A fixed contract comes into force, in `tx`: the jobs of its expiration notices
/// (`domain::renewal::notice_schedule`) and of its rollover the day after its end. A contract
/// without an end (month-to-month) has neither.
pub async fn schedule_contract_end(
    tx: &mut Tx,
    clock: &AccountClock,
    app: Uuid,
    contract: &ContractRow,
) -> store::Result<()> {
    let Some(end) = contract.end_date else {
        return Ok(());
    };
    let now = clock.now();
    for notice in notice_schedule(contract.start_date, end, clock.today()) {
        outbox::enqueue(
            tx,
            clock,
            &Job::RenewalNotice(NoticePayload {
                app_uuid: app,
                contract_uuid: contract.uuid,
                days_before: notice.days_before,
                is_final: notice.is_final,
            }),
            Some(contract.account_uuid),
            notice_send_at(notice.send_on).max(now),
        )
        .await?;
    }
    outbox::enqueue(
        tx,
        clock,
        &Job::RenewalRollover(ContractPayload {
            app_uuid: app,
            contract_uuid: contract.uuid,
        }),
        Some(contract.account_uuid),
        rollover_at(end).max(now),
    )
    .await?;
    Ok(())
}

/// An issued invoice left to pay: its auto-pay on the due date (`domain::billing::auto_pay_at`)
/// and its turn past due the day after, unless paid by then.
pub async fn schedule_payment_jobs(
    tx: &mut Tx,
    clock: &AccountClock,
    invoice: &InvoiceRow,
) -> store::Result<()> {
    let due = invoice.payment_due_date;
    schedule_invoice_job(tx, clock, Job::AutoPay, invoice, auto_pay_at(due)).await?;
    let past_due = start_of_market_day(due + chrono::Duration::days(1));
    schedule_invoice_job(tx, clock, Job::PastDue, invoice, past_due).await?;
    Ok(())
}

/// Queues a job of an issued invoice (`job`: `Job::AutoPay` or `Job::PastDue`), due `at` on the
/// account's clock, which its payload keeps as the instant it was meant for.
pub async fn schedule_invoice_job(
    tx: &mut Tx,
    clock: &AccountClock,
    job: fn(InvoicePayload) -> Job,
    invoice: &InvoiceRow,
    at: DateTime<Utc>,
) -> store::Result<Uuid> {
    let payload = InvoicePayload {
        app_uuid: invoice.app_uuid,
        invoice_uuid: invoice.uuid,
        at,
    };
    outbox::enqueue(tx, clock, &job(payload), Some(invoice.account_uuid), at).await
}

/// A single-use link to the hosted page of `purpose`, for the e-mail being queued in `tx`:
/// the full URL (the token appears only there, the table keeps its hash).
pub async fn email_link(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app_uuid: Uuid,
    account_uuid: Uuid,
    purpose: LinkPurpose,
    target: Option<&str>,
) -> store::Result<String> {
    issue_link(
        tx,
        core,
        clock,
        app_uuid,
        account_uuid,
        purpose,
        target,
        None,
    )
    .await
}

/// Queues an e-mail to the account that carries a single-use link to the hosted page of
/// `purpose`: the link is issued first, in the same transaction, and `template` places it.
#[allow(clippy::too_many_arguments)]
pub async fn mail_with_link(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    purpose: LinkPurpose,
    target: Option<&str>,
    template: impl FnOnce(String) -> Template,
) -> store::Result<Uuid> {
    let link = email_link(tx, core, clock, app.uuid, account.uuid, purpose, target).await?;
    mail::queue_to_account(tx, clock, app, account, &template(link)).await
}

/// `mail_with_link` with the link that opens the bill numbered `invoice_number` (the portal's
/// bills when there is none).
pub async fn mail_with_bill_link(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app: &AppRow,
    account: &AccountRow,
    invoice_number: Option<&str>,
    template: impl FnOnce(String) -> Template,
) -> store::Result<Uuid> {
    let (purpose, number) = (LinkPurpose::Invoice, invoice_number);
    mail_with_link(tx, core, clock, app, account, purpose, number, template).await
}

/// A single-use link as `email_link` makes it, replacing the link whose hash is `replaces`
/// when it is a fresh copy of a spent or expired one.
#[allow(clippy::too_many_arguments)]
pub async fn issue_link(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    app_uuid: Uuid,
    account_uuid: Uuid,
    purpose: LinkPurpose,
    target: Option<&str>,
    replaces: Option<&str>,
) -> store::Result<String> {
    let token = tokens::issue_hosted_link_token();
    let now = clock.now();
    store::hosted_links::insert_hosted_link(
        tx,
        &NewHostedLink {
            token_hash: &token.hash,
            app_uuid,
            account_uuid,
            purpose: purpose.as_str(),
            target,
            replaces,
            expires_at: now + LINK_TTL,
            now,
        },
    )
    .await?;
    Ok(format!(
        "{}{}",
        core.config.public_url(),
        link_path(&token.plain)
    ))
}
