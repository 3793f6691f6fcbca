//! The credit check job: `services::credit::schedule_credit_check` hands an account's latest
//! credit-check submission to a `credit.check` job on the account's clock; the job opens the SSN, asks the
//! bureau, records the answer, refreshes the account's status, e-mails the customer when the
//! answer calls for it, and retries frozen files and bureau errors (`domain::credit`), all in one
//! transaction.
//!
//! Triggers: a client agent enrollment runs the check as soon as its last prerequisite
//! (address, identity, credit submission, payment method) is met, which
//! `services::status::refresh_status` sees
//! as the move to `enrollment_pending_client_agent`; standard enrollments run it after
//! finalize, once verification passed.

use anyhow::Context;

use crate::{
    adapters::credit::{bureau_for, CreditAnswer, SoftCheck},
    domain::{
        credit::{next_attempt_in, notice_for, CreditNotice},
        status::CreditState,
    },
    jobs::JobContext,
    mail::{self, Brand, NewEmail, Template},
    outbox::Outcome,
    services::credit::Payload,
    store,
};

/// The job: one soft check.
#[tracing::instrument(skip_all, fields(account = ?ctx.job.account_uuid))]
pub async fn run(ctx: &JobContext) -> anyhow::Result<()> {
    let state = &ctx.state;
    let payload: Payload = serde_json::from_str(&ctx.job.payload)?;
    let account_uuid = ctx
        .job
        .account_uuid
        .context("a credit check without account")?;
    let mut tx = state.db.begin().await?;
    let check = store::credit::latest_credit_check(&mut tx, account_uuid).await?;
    tx.commit().await?;
    // A newer submission, or a newer job for the same one, took over.
    let Some(check) =
        check.filter(|c| c.uuid == payload.credit_check_uuid && c.job_uuid == Some(ctx.job.uuid))
    else {
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    };
    let (Some(app), Some(account)) = (
        store::apps::app_by_uuid(&state.db, payload.app_uuid).await?,
        store::accounts::account_of_app(&state.db, payload.app_uuid, account_uuid).await?,
    ) else {
        return Ok(ctx
            .finish_alone(&Outcome::Failed("account not found".into()))
            .await?);
    };
    let environment =
        app::api::Environment::parse(&app.environment).unwrap_or(app::api::Environment::Live);

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

    let now = ctx.now();
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
    if !current.is_some_and(|c| c.uuid == check.uuid && c.job_uuid == Some(ctx.job.uuid)) {
        drop(tx);
        return Ok(ctx.finish_alone(&Outcome::Done).await?);
    }
    store::credit::set_credit_check_answer(&mut tx, check.uuid, after.as_str(), now).await?;
    if after == CreditState::Passed {
        crate::services::enrollment::credit_passed(&mut tx, app.uuid, account.uuid, &ctx.clock)
            .await?;
    }
    store::status::update_status(&mut tx, app.uuid, account.uuid, now).await?;
    if let Some(notice) = notice_for(before, after) {
        let template = match (notice, &answer) {
            (CreditNotice::Frozen, CreditAnswer::Frozen { unfreeze_url }) => {
                Template::CreditFrozen {
                    first_name: account.first_name.clone(),
                    unfreeze_url: unfreeze_url.clone(),
                }
            }
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
            &ctx.clock,
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
    let outcome = match next_attempt_in(after, ctx.attempt()) {
        Some(wait) => Outcome::RetryAt(now + wait, format!("credit check {}", after.as_str())),
        None => Outcome::Done,
    };
    if ctx.finish(&mut tx, &outcome).await? {
        tx.commit().await?;
        state.account_changed(account.uuid);
    }
    Ok(())
}
