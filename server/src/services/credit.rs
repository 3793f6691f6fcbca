//! The soft credit check: recording a submission (`submit_check`) and running the `credit.check`
//! job that `follow_up::schedule_credit_check` starts for the latest one on the account's clock
//! (`run_check`, which `jobs::credit` calls). A check the bureau does not approve for good opens
//! a credit review with the most a deposit of the account may be (`max_deposit_for`); the
//! operator's decision on it (`decide_review`) approves the check, asks for a deposit or
//! declines it.

use chrono::NaiveDate;
use serde_json::json;
use uuid::Uuid;

use anyhow::Context as _;

use super::{audit::Actor, Error};
use crate::{
    adapters::credit::{
        bureau_for, sandbox_requires_deposit, CreditAnswer, ServiceAddress, SoftCheck,
    },
    clock::AccountClock,
    domain::{
        account::Ssn,
        credit::{
            next_attempt_in, notice_for, parse_decision, review_cause, CreditNotice, ReviewCause,
            ReviewDecision, ReviewStatus,
        },
        deposits::{
            contract_price, estimated_bills, max_deposit_cents, monthly_kwh, DEFAULT_CENTS_PER_KWH,
        },
        events::Event,
        hosted::LinkPurpose,
        status::CreditState,
        users::Member,
        FieldError,
    },
    mail::{self, templates::CreditReviewMail, Template},
    outbox::Outcome,
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        credit_reviews::{CreditReviewRow, Decision, NewReview},
        events::NewEvent,
        Db, Tx,
    },
};
/// Why a credit-check submission was not recorded.
#[derive(Debug)]
pub enum SubmitCheckRefused {
    AccountNotFound,
    /// The app is live and not ready (`apps::readiness`): the steps after the check could not
    /// succeed, so the SSN is not taken.
    AppNotReady(Vec<crate::domain::apps::ReadinessItem>),
}

/// Records the customer's SSN (sealed) and consent as a new submission, in one transaction, and
/// refreshes the status: a client agent enrollment runs the check once every prerequisite is met
/// (standard ones after finalize).
pub async fn submit_check(
    state: &Core,
    app: Uuid,
    account: Uuid,
    ssn: &Ssn,
) -> Result<CreditState, Error<SubmitCheckRefused>> {
    let now = state.clock.now();
    let app_row = store::apps::app_by_uuid(&state.db, app)
        .await?
        .ok_or(Error::Refused(SubmitCheckRefused::AccountNotFound))?;
    let readiness = super::apps::readiness(&state.db, &app_row).await?;
    if !readiness.is_open() {
        return Err(Error::Refused(SubmitCheckRefused::AppNotReady(
            readiness.missing,
        )));
    }
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
            status: CreditState::Submitted,
        },
    )
    .await?;
    // The new submission is the one that counts: reviews of older ones are moot.
    store::credit_reviews::withdraw_open_reviews(&mut tx, account, None, now).await?;
    super::follow_up::refresh_status(&mut tx, &state.clock, app, account, now).await?;
    tx.commit().await?;
    Ok(CreditState::Submitted)
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

/// Runs one soft check of the account's submission `credit_check_uuid`, for the job `job_uuid`
/// (its `attempt`-th try): opens the SSN, asks the bureau of the app's environment outside any
/// transaction, then records the answer unless another job took over meanwhile.
pub async fn run_check(
    state: &Core,
    clock: &AccountClock,
    (app_uuid, credit_check_uuid): (Uuid, Uuid),
    account_uuid: Uuid,
    job_uuid: Uuid,
    attempt: u32,
) -> anyhow::Result<CheckRun> {
    let mut tx = state.db.begin().await?;
    let check = store::credit::latest_credit_check(&mut tx, account_uuid).await?;
    tx.commit().await?;
    let Some(check) = check.filter(|c| c.uuid == credit_check_uuid && c.job_uuid == Some(job_uuid))
    else {
        return Ok(CheckRun::Superseded);
    };
    let (Some(app), Some(account)) = (
        store::apps::app_by_uuid(&state.db, app_uuid).await?,
        store::accounts::account_of_app(&state.db, app_uuid, account_uuid).await?,
    ) else {
        return Ok(CheckRun::AccountNotFound);
    };
    let environment = app.environment_kind();

    let ssn = state
        .pii
        .open(&check.ssn_ciphertext)
        .context("the sealed SSN does not open")?;
    let service_address = store::enrollment::confirmed_address(&state.db, account.uuid)
        .await?
        .map(|a| ServiceAddress {
            line_1: a.address_1,
            line_2: a.address_2,
            city: a.city,
            state: a.state,
            postal_code: a.postal_code,
        });
    let request = SoftCheck {
        reference: check.uuid,
        ssn: String::from_utf8(ssn).context("the sealed SSN is not text")?,
        first_name: account.first_name.clone(),
        last_name: account.last_name.clone(),
        date_of_birth: account.date_of_birth,
        service_address,
    };
    let answer = bureau_for(environment, &state.db, &state.config.credit_bureau)
        .soft_check(&request)
        .await;
    // The sandbox's "deposit required" (its SSN, or the simulation): its review is decided at
    // once, as if by the operator, with the largest deposit the rule allows.
    let auto_deposit = environment == app::api::Environment::Sandbox && {
        let mut tx = state.db.begin().await?;
        let file = store::credit::sandbox_credit_file(&mut tx, check.uuid)
            .await?
            .unwrap_or_default();
        drop(tx);
        sandbox_requires_deposit(&request.ssn, &file)
    };
    drop(request);

    let now = clock.now();
    let before = check.status;
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
    store::credit::set_credit_check_answer(&mut tx, check.uuid, after, now).await?;
    let retry = next_attempt_in(after, attempt);
    if after == CreditState::Passed {
        store::credit_reviews::withdraw_review_of_check(&mut tx, check.uuid, now).await?;
        super::follow_up::submit_when_ready(&mut tx, app.uuid, account.uuid, clock).await?;
    }
    if let Some(cause) = review_cause(after, retry) {
        let max_deposit_cents = max_deposit_for(&mut tx, account.uuid, now.date_naive()).await?;
        let opened = store::credit_reviews::open_review(
            &mut tx,
            &NewReview {
                app_uuid: app.uuid,
                account_uuid: account.uuid,
                credit_check_uuid: check.uuid,
                cause,
                max_deposit_cents,
                created_at: now,
            },
        )
        .await?;
        if let Some(review_uuid) = opened.filter(|_| auto_deposit) {
            let decision = ReviewDecision::RequireDeposit {
                amount_cents: max_deposit_cents.max(1),
            };
            let actor = Actor::System;
            store::credit_reviews::decide(
                &mut tx,
                review_uuid,
                &decision_row(&decision, &actor, now),
            )
            .await?;
            let answered = store::credit::CreditCheckRow {
                status: after,
                ..check.clone()
            };
            apply_decision(
                &mut tx,
                state,
                clock,
                &actor,
                &app,
                &account,
                (review_uuid, cause),
                &answered,
                decision,
            )
            .await?;
        }
    }
    super::follow_up::refresh_status(&mut tx, clock.service(), app.uuid, account.uuid, now).await?;
    if let Some(notice) = notice_for(before, after).filter(|_| !auto_deposit) {
        let first_name = account.first_name.clone();
        match (notice, &answer) {
            (CreditNotice::Frozen, CreditAnswer::Frozen { unfreeze_url }) => {
                let purpose = LinkPurpose::CreditFrozen;
                let target = Some(unfreeze_url.as_str());
                super::follow_up::mail_with_link(
                    &mut tx,
                    state,
                    clock,
                    &app,
                    &account,
                    purpose,
                    target,
                    |link| Template::CreditFrozen {
                        first_name,
                        unfreeze_url: unfreeze_url.clone(),
                        retry_url: Some(link),
                    },
                )
                .await?;
            }
            (notice, _) => {
                let template = match notice {
                    CreditNotice::Approved => Template::CreditApproved { first_name },
                    _ => Template::CreditNotApproved {
                        first_name,
                        not_found: notice == CreditNotice::NotFound,
                    },
                };
                mail::queue_to_account(&mut tx, clock, &app, &account, &template).await?;
            }
        }
    }
    let outcome = match retry {
        Some(wait) => Outcome::RetryAt(now + wait, format!("credit check {}", after.as_str())),
        None => Outcome::Done,
    };
    Ok(CheckRun::Answered { tx, outcome })
}

/// The most a deposit of the account may be on `today`, in cents: its meter's estimated usage
/// (a standard home's when no address is confirmed) at its newest contract's price (a typical
/// price when none was accepted yet).
pub async fn max_deposit_for(
    tx: &mut Tx,
    account_uuid: Uuid,
    today: NaiveDate,
) -> store::Result<i64> {
    let address = store::enrollment::confirmed_address(&mut *tx, account_uuid).await?;
    let contracts = store::enrollment::contracts_of_account(&mut *tx, account_uuid).await?;
    let (cents_per_kwh, fixed) = contracts
        .iter()
        .max_by_key(|c| c.accepted_at)
        .and_then(|c| contract_price(&c.rates))
        .unwrap_or((DEFAULT_CENTS_PER_KWH, 0));
    let kwh = monthly_kwh(address.as_ref().map(|a| a.esi_id.as_str()), today);
    Ok(max_deposit_cents(&estimated_bills(
        &kwh,
        cents_per_kwh,
        fixed,
    )))
}

// ---------------------------------------------------------------------------------------------
// The credit review queue

/// Why a decision on a review was not recorded; nothing was written.
#[derive(Debug)]
pub enum ReviewRefused {
    /// No such review, or one this member may not see.
    NotFound,
    /// Someone decided already (or a later answer settled it).
    AlreadyDecided(ReviewStatus),
    /// The customer submitted their details again since: the newer check counts.
    Superseded,
    /// The form's values: which one, and why.
    Field(FieldError),
}

impl std::fmt::Display for ReviewRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReviewRefused::NotFound => f.write_str("no such credit review"),
            ReviewRefused::AlreadyDecided(status) => {
                write!(f, "this review was decided already ({status})")
            }
            ReviewRefused::Superseded => f.write_str(
                "the customer submitted their details again since: a newer check counts",
            ),
            ReviewRefused::Field(e) => f.write_str(&e.message),
        }
    }
}

/// How many reviews the queue's page lists at most.
pub const REVIEWS_LISTED: i64 = 200;

/// The reviews this member may see: every app's for the operator, their organisation's apps'
/// for a partner.
pub async fn reviews_for(db: &Db, member: &Member) -> store::Result<Vec<CreditReviewRow>> {
    if member.is_operator() {
        return store::credit_reviews::reviews_of(db, None, REVIEWS_LISTED).await;
    }
    match member.organisation {
        Some(org) => store::credit_reviews::reviews_of(db, Some(org), REVIEWS_LISTED).await,
        None => Ok(Vec::new()),
    }
}

/// The review `uuid` if this member may see it; any other is `NotFound`, like one that does
/// not exist.
pub async fn review_for(
    db: &Db,
    member: &Member,
    uuid: Uuid,
) -> Result<CreditReviewRow, Error<ReviewRefused>> {
    store::credit_reviews::review_by_uuid(db, uuid)
        .await?
        .filter(|r| member.may_see(r.organisation_uuid))
        .ok_or(Error::Refused(ReviewRefused::NotFound))
}

/// The operator's form, as typed.
pub struct DecisionInput<'a> {
    /// `approve`, `deposit` or `decline`.
    pub decision: &'a str,
    /// The deposit in dollars (for `deposit`).
    pub deposit: &'a str,
    /// Why (for `decline`; the customer reads it).
    pub reason: &'a str,
}

/// Records the operator's decision on an open review, in one transaction: the review, the
/// check's state (passed on approval, declined on a decline), the deposit asked for, the
/// account's events (`account.credit_reviewed`, and `account.deposit_required`), the audit
/// entry, the refreshed status (an approval lets the enrollment go on: the utility submission
/// is scheduled when it waited for the check), and the customer's e-mail with a single-use
/// link. Nothing is written when it is refused.
pub async fn decide_review(
    core: &Core,
    actor: &Actor,
    member: &Member,
    uuid: Uuid,
    input: &DecisionInput<'_>,
) -> Result<ReviewStatus, Error<ReviewRefused>> {
    let seen = review_for(&core.db, member, uuid).await?;
    let mut tx = core.db.begin().await?;
    // Lock the account, as the check's job does, so a running check and a decision never
    // interleave.
    let account =
        store::accounts::account_of_app_for_update(&mut tx, seen.app_uuid, seen.account_uuid)
            .await?
            .ok_or(Error::Refused(ReviewRefused::NotFound))?;
    let review = store::credit_reviews::review_by_uuid(&mut tx, uuid)
        .await?
        .ok_or(Error::Refused(ReviewRefused::NotFound))?;
    if review.status != ReviewStatus::Open {
        return Err(Error::Refused(ReviewRefused::AlreadyDecided(review.status)));
    }
    let check = store::credit::latest_credit_check(&mut tx, account.uuid)
        .await?
        .filter(|c| c.uuid == review.credit_check_uuid)
        .ok_or(Error::Refused(ReviewRefused::Superseded))?;
    let decision = parse_decision(
        input.decision,
        input.deposit,
        input.reason,
        review.max_deposit_cents,
    )
    .map_err(|e| Error::Refused(ReviewRefused::Field(e)))?;
    let app = store::apps::app_by_uuid(&core.db, review.app_uuid)
        .await?
        .ok_or(Error::Refused(ReviewRefused::NotFound))?;
    let clock = core
        .clock
        .for_account(&core.db, account.uuid)
        .await
        .map_err(|e| Error::Failed(e.into()))?;
    let now = clock.now();

    let decided =
        store::credit_reviews::decide(&mut tx, review.uuid, &decision_row(&decision, actor, now))
            .await?;
    if !decided {
        return Err(Error::Refused(ReviewRefused::AlreadyDecided(
            ReviewStatus::Withdrawn,
        )));
    }
    let status = decision.status();
    apply_decision(
        &mut tx,
        core,
        &clock,
        actor,
        &app,
        &account,
        (review.uuid, review.cause),
        &check,
        decision,
    )
    .await?;
    tx.commit().await?;
    core.account_changed(account.uuid);
    Ok(status)
}

/// The decision's row: its status, deposit and reason, by whom and when.
fn decision_row<'a>(
    decision: &'a ReviewDecision,
    actor: &'a Actor,
    now: chrono::DateTime<chrono::Utc>,
) -> Decision<'a> {
    let (deposit_cents, reason) = match decision {
        ReviewDecision::Approve => (None, None),
        ReviewDecision::RequireDeposit { amount_cents } => (Some(*amount_cents), None),
        ReviewDecision::Decline { reason } => (None, Some(reason.as_str())),
    };
    Decision {
        status: decision.status(),
        deposit_cents,
        reason,
        decided_by: actor.name(),
        decided_by_user_uuid: actor.user(),
        decided_at: now,
    }
}

/// What a decision recorded on review `review` (its id and cause) does, in `tx`: the check's
/// state, the deposit, the events, the audit entry, the status and the customer's e-mail.
#[allow(clippy::too_many_arguments)]
async fn apply_decision(
    tx: &mut Tx,
    core: &Core,
    clock: &AccountClock,
    actor: &Actor,
    app: &store::apps::AppRow,
    account: &AccountRow,
    (review_uuid, cause): (Uuid, ReviewCause),
    check: &store::credit::CreditCheckRow,
    decision: ReviewDecision,
) -> store::Result<()> {
    let now = clock.now();
    let status = decision.status();
    let (deposit_cents, reason) = match &decision {
        ReviewDecision::Approve => (None, None),
        ReviewDecision::RequireDeposit { amount_cents } => (Some(*amount_cents), None),
        ReviewDecision::Decline { reason } => (None, Some(reason.as_str())),
    };
    let before = check.status;
    let after = decision.credit_state(before);
    if after != before {
        store::credit::set_credit_check_answer(tx, check.uuid, after, now).await?;
    }
    if after == CreditState::Passed {
        super::follow_up::submit_when_ready(tx, app.uuid, account.uuid, clock).await?;
    }
    if let Some(amount_cents) = deposit_cents {
        let deposit_uuid = store::credit_reviews::insert_deposit(
            tx,
            app.uuid,
            account.uuid,
            review_uuid,
            amount_cents,
            now,
        )
        .await?;
        store::events::insert_event(
            tx,
            &NewEvent::of(
                app.uuid,
                &Event::DepositRequired {
                    account_uuid: account.uuid,
                    deposit_uuid,
                    amount_cents,
                },
                now,
            ),
        )
        .await?;
    }
    store::events::insert_event(
        tx,
        &NewEvent::of(
            app.uuid,
            &Event::CreditReviewed {
                account_uuid: account.uuid,
                review_uuid,
                decision: status.as_str().to_owned(),
                cause: cause.as_str().to_owned(),
                deposit_cents,
                reason: reason.map(str::to_owned),
            },
            now,
        ),
    )
    .await?;
    super::audit::record(
        tx,
        actor,
        &format!("credit_review.{status}"),
        &format!("account {}", account.uuid),
        json!({
            "review": review_uuid,
            "app": app.uuid,
            "cause": cause,
            "deposit_cents": deposit_cents,
            "reason": reason,
        }),
        now,
    )
    .await?;
    super::follow_up::refresh_status(tx, &core.clock, app.uuid, account.uuid, now).await?;
    let (mail_decision, purpose) = match decision {
        ReviewDecision::Approve => (CreditReviewMail::Approved, LinkPurpose::CreditReview),
        // The link opens the deposit's page, which pays it with the card on file.
        ReviewDecision::RequireDeposit { amount_cents } => (
            CreditReviewMail::DepositRequired { amount_cents },
            LinkPurpose::Deposit,
        ),
        ReviewDecision::Decline { reason } => (
            CreditReviewMail::Declined { reason },
            LinkPurpose::CreditReview,
        ),
    };
    super::follow_up::mail_with_link(tx, core, clock, app, account, purpose, None, |link| {
        Template::CreditReviewed {
            first_name: account.first_name.clone(),
            decision: mail_decision,
            link,
        }
    })
    .await?;
    Ok(())
}
