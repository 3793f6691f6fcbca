//! Sandbox-only routes of this area: an account's test clock
//! (`POST /v1/account/sandbox/advance-clock`), simulated events
//! (`POST /v1/account/sandbox/simulate`) and the e-mails the service sent with their
//! attachments (`GET /v1/app/sandbox/emails`, `.../{email_uuid}/attachments/{attachment_uuid}`).
//! Live apps get 403 `sandbox_only`.

use app::api::{
    background::{
        AdvanceClockIn, AdvanceClockOut, Email, EmailAttachment, SimulateIn, SimulateOut,
    },
    Environment, ErrorEnvelope, List, Timestamp,
};
use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    accounts,
    auth::{AccountPrincipal, AppPrincipal},
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{credit::parse_simulation, documents::attachment_file_name, jobs::advance_target},
    jobs::sandbox::{advance_held, ClockHold},
    services, store,
    store::apps::AppRow,
    webhooks::render_event,
};

pub fn account_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(advance_clock))
        .routes(routes!(simulate))
        .routes(routes!(delete_enrollment))
        .routes(routes!(seed_demo_data))
}

pub fn app_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(list_emails))
        .routes(routes!(email_attachment))
}

fn require_sandbox(app: &AppRow) -> ApiResult<()> {
    if Environment::parse(&app.environment) == Some(Environment::Sandbox) {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::SandboxOnly,
            "This call exists only for sandbox apps",
        ))
    }
}

/// Move this account's clock forward, running in time order everything that falls due on the
/// way; answers the account and the events emitted.
#[utoipa::path(
    post, path = "/v1/account/sandbox/advance-clock", tag = "sandbox",
    request_body = AdvanceClockIn,
    responses(
        (status = 200, description = "The account after the move and the events emitted", body = AdvanceClockOut),
        (status = 400, description = "Neither or both of to and days, or out of range", body = ErrorEnvelope),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn advance_clock(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<AdvanceClockIn>,
) -> ApiResult<axum::Json<AdvanceClockOut>> {
    require_sandbox(&principal.app)?;
    let moved = advance_account(
        &state,
        principal.account_uuid,
        input.to.map(|t| t.0),
        input.days,
    )
    .await?;
    let (account, clock, events) = aftermath(&state, &principal, moved.before).await?;
    Ok(axum::Json(AdvanceClockOut {
        account,
        clock,
        events,
    }))
}

/// Sandbox reset: removes the account's locations, contracts, enrollment, confirmed and billing
/// addresses, invoices with their payments, meter reads and usage (and the enrollment and
/// billing jobs still pending), so the account can enroll again. The
/// account's status is derived anew and historized: `not_enrolled/unresolved` when no identity
/// check or payment method remains, else the next step (`missing_address`). Its status history,
/// events, credit checks and payment methods stay. Answers the account.
#[utoipa::path(
    post, path = "/v1/account/sandbox/delete-enrollment", tag = "sandbox",
    responses(
        (status = 200, description = "The account after the reset", body = app::api::Account),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn delete_enrollment(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<app::api::Account>> {
    require_sandbox(&principal.app)?;
    let now =
        services::sandbox::delete_enrollment(&state, principal.app.uuid, principal.account_uuid)
            .await?;
    state.account_changed(principal.account_uuid);
    let (account, _, _) = aftermath(&state, &principal, now).await?;
    Ok(axum::Json(account))
}

/// Demo data: finalizes the utility side at once. Without a location yet, confirms the first
/// address of the directory (the account's confirmed address when it has one) and accepts the
/// first plan priced for it; fills a missing phone, date of birth, credit check (passed) and
/// payment method (a test card); marks verification and credit passed, the utility accepted and
/// service active since 95 days ago (the contract starts then, outside the usual start-date
/// window), with the events `location.service_active` and `location.usage_history_available`:
/// the account is `active/active`. The location gets the utility's 12 months of usage history
/// before that start and the usage since; each billing cycle since is read and invoiced
/// (`invoice.created`), and invoices already due are paid by auto-pay
/// (`account.payment_successful`, `invoice.paid`): the newest is usually still open.
/// Answers the account.
#[utoipa::path(
    post, path = "/v1/account/sandbox/seed-demo-data", tag = "sandbox",
    responses(
        (status = 200, description = "The account, active", body = app::api::Account),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
        (status = 409, description = "The address directory is empty or the app has no plan (`enrollment_incomplete`), or the enrollment is cancelled (`service_not_active`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn seed_demo_data(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<app::api::Account>> {
    require_sandbox(&principal.app)?;
    let account_uuid = principal.account_uuid;
    let hold = ClockHold::acquire(&state, account_uuid).await?;
    let before = state
        .clock
        .for_account(&state.db, account_uuid)
        .await?
        .now();
    let now = services::sandbox::seed_demo_data(&state, &principal.app, account_uuid).await?;
    state.account_changed(account_uuid);
    // The cycles since service started: reads, invoices, auto-pay of those already due.
    advance_held(&state, &hold, now).await?;
    hold.release().await?;
    let (account, _, _) = aftermath(&state, &principal, before).await?;
    Ok(axum::Json(account))
}

/// What a sandbox call answers: the account as it is now, its clock, and the events emitted on
/// its clock since `before`.
async fn aftermath(
    state: &AppState,
    principal: &AccountPrincipal,
    before: chrono::DateTime<chrono::Utc>,
) -> ApiResult<(
    app::api::Account,
    Timestamp,
    Vec<app::api::background::Event>,
)> {
    let account_uuid = principal.account_uuid;
    let after = state
        .clock
        .for_account(&state.db, account_uuid)
        .await?
        .now();
    let events = store::events::account_events_between(&state.db, account_uuid, before, after)
        .await?
        .iter()
        .map(|e| render_event(e, Environment::Sandbox))
        .collect();
    let row = store::accounts::account_of_app(&state.db, principal.app.uuid, account_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    Ok((
        accounts::render(state, &row, &principal.app, true).await?,
        Timestamp(after),
        events,
    ))
}

/// Simulate an outside event on this account. The credit events act on the latest credit-check
/// submission as the credit bureau would: `credit_check_frozen`, `credit_declined`,
/// `credit_not_found` and `credit_check_error` (a provider error, then success on retry) run
/// the check at once; `credit_check_unfrozen` lifts the freeze, and the scheduled retry (every
/// 6 hours on the account's clock, see advance-clock) then passes; `deposit_required` has the
/// check declined and its credit review ask at once for the largest deposit the rule allows
/// (`account.deposit_required`, as the SSN ending 0005 does). The utility and market events
/// (`switch_hold`, `switch_hold_lifted`, `verification_hold`, `meter_deactivated`,
/// `utility_blocked`, `utility_accepted`, `service_active`, `service_canceled`,
/// `customer_switched_away`, `usage_history_available`) act on a finalized enrollment. The
/// billing events act on an active service: `invoice_generated` reads the meter off-cycle
/// through today and issues the invoice at once (`invoice.created`, auto-pay on its due date);
/// `payment_failed` records a declined charge (`card_declined`) of the newest unpaid invoice
/// (`account.payment_failed` and the e-mail to the customer; the invoice stays unpaid). The
/// collections events: `invoice_past_due` turns the newest open invoice past due now (with its
/// disconnection notice); `service_disconnected` has the newest pending disconnection asked of
/// the utility and carried out now, whatever its date; `service_reconnected` carries out a
/// pending reconnection now; `payment_plan_missed` turns the bill with the running payment
/// plan's newest instalment past due, which ends the plan. `deposit_refund_due` earns a held
/// deposit back now, whatever the payments: the next bill credits it with its interest
/// (`account.deposit_refunded`). Answers the account and the events emitted.
#[utoipa::path(
    post, path = "/v1/account/sandbox/simulate", tag = "sandbox",
    request_body = SimulateIn,
    responses(
        (status = 200, description = "The account after the event and the events emitted", body = SimulateOut),
        (status = 400, description = "Not an event name (`parameter_invalid`)", body = ErrorEnvelope),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
        (status = 409, description = "No credit check submitted, or (utility events) no finalized enrollment yet (`enrollment_incomplete`); billing events: no active service (`service_not_active`), the meter already read through today (`nothing_to_bill`), no unpaid invoice (`invoice_not_payable`); collections events: no open invoice, or no plan instalment on an open bill (`invoice_not_payable`), nothing waiting for the utility (`nothing_pending`); `deposit_refund_due`: no deposit held (`nothing_pending`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn simulate(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<SimulateIn>,
) -> ApiResult<axum::Json<SimulateOut>> {
    require_sandbox(&principal.app)?;
    let simulated =
        simulate_event(&state, &principal.app, principal.account_uuid, &input.event).await?;
    let (account, clock, events) = aftermath(&state, &principal, simulated.before).await?;
    Ok(axum::Json(SimulateOut {
        event: input.event,
        account,
        clock,
        events,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EmailsQuery {
    /// Only e-mails of this account.
    account_uuid: Option<Uuid>,
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
}

/// The e-mails the service sent for the app's accounts, newest first.
#[utoipa::path(
    get, path = "/v1/app/sandbox/emails", tag = "sandbox",
    params(EmailsQuery),
    responses(
        (status = 200, description = "A page of e-mails", body = List<Email>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn list_emails(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(q): Query<EmailsQuery>,
) -> ApiResult<axum::Json<List<Email>>> {
    require_sandbox(&principal.app)?;
    let page = Page::parse(q.limit, q.offset)?;
    let rows = services::sandbox::outbox(
        &state,
        principal.app.uuid,
        q.account_uuid,
        page.limit,
        page.offset,
    )
    .await?;
    let emails = rows
        .into_iter()
        .map(|(e, attachments)| Email {
            attachments: attachments
                .into_iter()
                .map(|a| EmailAttachment {
                    filename: attachment_file_name(a.kind, &a.version),
                    content_type: a.content_type,
                    size_bytes: u64::try_from(a.size_bytes).unwrap_or(0),
                    sha256: a.sha256,
                    url: format!("/v1/app/sandbox/emails/{}/attachments/{}", e.uuid, a.uuid),
                    uuid: a.uuid,
                })
                .collect(),
            uuid: e.uuid,
            account_uuid: e.account_uuid,
            template: e.template,
            to: e.to_address,
            subject: e.subject,
            text: e.text_body,
            html: e.html_body,
            status: e.status.to_string(),
            created_at: Timestamp(e.created_at),
            sent_at: e.sent_at.map(Timestamp),
        })
        .collect();
    let account = q.account_uuid.map(|u| u.to_string());
    Ok(axum::Json(page.list(
        emails,
        "/v1/app/sandbox/emails",
        &[("account_uuid", account.as_deref())],
    )))
}

/// One attachment of a sent e-mail, as the message carried it.
#[utoipa::path(
    get, path = "/v1/app/sandbox/emails/{email_uuid}/attachments/{attachment_uuid}",
    tag = "sandbox",
    params(("email_uuid" = Uuid, Path), ("attachment_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The attached document", content_type = "application/pdf", body = Vec<u8>),
        (status = 403, description = "A live app (`sandbox_only`)", body = ErrorEnvelope),
        (status = 404, description = "No such e-mail of the app, or no such attachment of it", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn email_attachment(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path((email_uuid, attachment_uuid)): Path<(Uuid, Uuid)>,
) -> ApiResult<Response> {
    require_sandbox(&principal.app)?;
    let document = services::sandbox::outbox_attachment(
        &state,
        principal.app.uuid,
        email_uuid,
        attachment_uuid,
    )
    .await?
    .ok_or_else(|| ApiError::not_found("attachment"))?;
    let filename = attachment_file_name(document.kind, &document.version);
    Ok((
        [
            (header::CONTENT_TYPE, document.content_type),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{filename}\""),
            ),
        ],
        document.bytes,
    )
        .into_response())
}

/// Where an account's clock was and where it went.
pub(crate) struct Advanced {
    pub before: DateTime<Utc>,
    pub target: DateTime<Utc>,
    /// The account's jobs that fell due and ran.
    pub jobs_run: usize,
}

/// Moves a sandbox account's clock to `to` or by `days`, running the jobs that fall due, for
/// the API and the dashboard alike. The present is read and moved under the account's clock
/// hold: a concurrent advance of the account applies before or after this one, never from the
/// same present.
pub(crate) async fn advance_account(
    state: &AppState,
    account_uuid: Uuid,
    to: Option<DateTime<Utc>>,
    days: Option<i64>,
) -> ApiResult<Advanced> {
    let hold = ClockHold::acquire(state, account_uuid).await?;
    let before = state
        .clock
        .for_account(&state.db, account_uuid)
        .await?
        .now();
    let target = advance_target(before, to, days)?;
    let jobs_run = advance_held(state, &hold, target).await?;
    hold.release().await?;
    state.account_changed(account_uuid);
    Ok(Advanced {
        before,
        target,
        jobs_run,
    })
}

/// Applies the simulated event named `event` to a sandbox account under its clock hold and
/// runs what it scheduled, for the API and the dashboard alike; a refused event changes
/// nothing.
pub(crate) async fn simulate_event(
    state: &AppState,
    app: &AppRow,
    account_uuid: Uuid,
    event: &str,
) -> ApiResult<services::sandbox::Simulated> {
    let hold = ClockHold::acquire(state, account_uuid).await?;
    let simulated = match services::sandbox::simulate(
        state,
        app,
        account_uuid,
        parse_simulation(event),
    )
    .await
    {
        Ok(simulated) => simulated,
        Err(e) => {
            hold.release().await?;
            return Err(e.into());
        }
    };
    advance_held(state, &hold, simulated.at).await?;
    hold.release().await?;
    state.account_changed(account_uuid);
    Ok(simulated)
}
