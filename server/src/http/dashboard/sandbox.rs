//! A sandbox account's buttons in the dashboard: moving its clock forward by days, and
//! simulating an outside event (a credit bureau's, the utility's, the market's, a bill or a
//! declined payment). The same services and clock hold as the API's
//! `/v1/account/sandbox/advance-clock` and `/simulate`; each is CSRF-checked and audited. A
//! live account's are refused (403), another organisation's account is a 404.

use app::api::Environment;
use axum::{
    extract::{Path, State},
    routing::post,
    Form, Router,
};
use serde::Deserialize;
use uuid::Uuid;

use super::{Dash, PageResult};
use crate::{
    domain::jobs::advance_target,
    http::{
        error::{ApiError, ErrorCode},
        sandbox::{advance_account, simulate_event},
        AppState,
    },
    services,
    store::{accounts::AccountRow, apps::AppRow},
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/dashboard/accounts/{account}/sandbox/advance-clock",
            post(advance_clock),
        )
        .route(
            "/dashboard/accounts/{account}/sandbox/simulate",
            post(simulate),
        )
}

/// The account if the member may see it (else 404) and it is a sandbox app's (else 403).
async fn sandbox_account(
    state: &AppState,
    dash: &Dash,
    account: Uuid,
) -> Result<(AppRow, AccountRow), ApiError> {
    let (app, account) = services::dashboard::visible_account(&state.db, dash.member(), account)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    if Environment::parse(&app.environment) != Some(Environment::Sandbox) {
        return Err(ApiError::new(
            ErrorCode::SandboxOnly,
            "Only a sandbox account's clock and events can be simulated",
        ));
    }
    Ok((app, account))
}

/// A refusal shown on the account's page, with its status.
async fn refused(state: &AppState, dash: &Dash, account: Uuid, e: ApiError) -> PageResult {
    let status = e.code().status();
    if status.is_server_error() {
        return Err(e.into());
    }
    let message = e.body(String::new()).error.message;
    super::accounts::render(state, dash, account, status, None, Some(&message)).await
}

#[derive(Deserialize)]
struct AdvanceForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    days: String,
}

async fn advance_clock(
    State(state): State<AppState>,
    dash: Dash,
    Path(account): Path<Uuid>,
    Form(form): Form<AdvanceForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let (_, account) = sandbox_account(&state, &dash, account).await?;
    let days = form.days.trim().parse::<i64>().ok();
    // The range is checked before the clock is held; the target is taken under the hold, so
    // that a concurrent advance applies before or after this one, never from the same present.
    if let Err(e) = advance_target(state.clock.now(), None, days) {
        return refused(&state, &dash, account.uuid, e.into()).await;
    }
    let moved = advance_account(&state, account.uuid, None, days).await?;
    services::dashboard::audit_sandbox_action(
        &state,
        &dash.actor(),
        account.uuid,
        "account.sandbox_clock_advanced",
        serde_json::json!({"days": days, "from": moved.before, "to": moved.target, "jobs_run": moved.jobs_run}),
    )
    .await?;
    Ok(super::accounts::account_done(&account, "advanced"))
}

#[derive(Deserialize)]
struct SimulateForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    event: String,
}

async fn simulate(
    State(state): State<AppState>,
    dash: Dash,
    Path(account): Path<Uuid>,
    Form(form): Form<SimulateForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let (app, account) = sandbox_account(&state, &dash, account).await?;
    let event = form.event.trim().to_owned();
    if let Err(e) = simulate_event(&state, &app, account.uuid, &event).await {
        return refused(&state, &dash, account.uuid, e).await;
    }
    services::dashboard::audit_sandbox_action(
        &state,
        &dash.actor(),
        account.uuid,
        "account.sandbox_event_simulated",
        serde_json::json!({"event": event}),
    )
    .await?;
    Ok(super::accounts::account_done(&account, "simulated"))
}
