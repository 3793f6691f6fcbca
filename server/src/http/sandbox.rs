//! Sandbox-only routes of this area: an account's test clock
//! (`POST /v1/account/sandbox/advance-clock`) and the e-mails the service sent
//! (`GET /v1/app/sandbox/emails`). Live apps get 403 `sandbox_only`.

use app::api::{
    background::{AdvanceClockIn, AdvanceClockOut, Email},
    Environment, ErrorEnvelope, List, Timestamp,
};
use axum::{extract::State, routing::get, routing::post, Router};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    accounts,
    auth::{AccountPrincipal, AppPrincipal},
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Query},
    pagination::Page,
    AppState,
};
use crate::{
    domain::jobs::advance_target, jobs::sandbox::advance_account, store, store::apps::AppRow,
    webhooks::render_event,
};

pub fn account_router() -> Router<AppState> {
    Router::new().route("/sandbox/advance-clock", post(advance_clock))
}

pub fn app_router() -> Router<AppState> {
    Router::new().route("/sandbox/emails", get(list_emails))
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
    let account_uuid = principal.account_uuid;
    let before = state
        .clock
        .for_account(&state.db, account_uuid)
        .await?
        .now();
    let target = advance_target(before, input.to.map(|t| t.0), input.days)?;
    advance_account(&state, account_uuid, target).await?;
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
    Ok(axum::Json(AdvanceClockOut {
        account: accounts::render(&row, &principal.app, true)?,
        clock: Timestamp(after),
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
    let rows = store::emails::emails_of_app(
        &state.db,
        principal.app.uuid,
        q.account_uuid,
        page.limit,
        page.offset,
    )
    .await?;
    let emails = rows
        .into_iter()
        .map(|e| Email {
            uuid: e.uuid,
            account_uuid: e.account_uuid,
            template: e.template,
            to: e.to_address,
            subject: e.subject,
            text: e.text_body,
            html: e.html_body,
            status: e.status,
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
