//! Flow links: `flow-login` hands the partner a single-use link (10 minutes); opening it
//! (`/flow/login?token=...`) spends the token and opens a flow session whose bearer token the
//! page keeps in its window's name (no cookie, no storage, so flows work in cross-site iframes
//! where third-party cookies and storage are blocked). The session may call only its scope's endpoints.

use app::api::{ErrorEnvelope, FlowLoginIn, FlowLoginOut, Timestamp};
use axum::{
    extract::State,
    http::{header, HeaderValue, StatusCode},
    response::{Html, IntoResponse, Response},
    routing::get,
    Router,
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    auth::AppPrincipal,
    error::ApiResult,
    extract::{Json, Path, Query},
    routes, ApiRouter, AppState,
};
use crate::services::flows;

/// `flow-login`, under `/v1/app`.
pub fn app_router() -> ApiRouter {
    ApiRouter::new().routes(routes!(create_flow_login))
}

/// Where flow links land.
pub fn page_router() -> Router<AppState> {
    Router::new().route("/flow/login", get(open_flow_link))
}

#[derive(Debug, Deserialize)]
pub struct ScopeQuery {
    scope: Option<String>,
}

/// Create a pre-authenticated link to an embedded flow.
#[utoipa::path(
    post, path = "/v1/app/accounts/{account_uuid}/flow-login", tag = "accounts",
    params(("account_uuid" = Uuid, Path), ("scope" = Option<String>, Query, description = "Alternative to the body's scope")),
    request_body = FlowLoginIn,
    responses(
        (status = 200, description = "The link", body = FlowLoginOut),
        (status = 400, description = "Missing or unknown scope", body = ErrorEnvelope),
        (status = 404, description = "No such account, or no such plan group, in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn create_flow_login(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
    Query(query): Query<ScopeQuery>,
    Json(input): Json<FlowLoginIn>,
) -> ApiResult<axum::Json<FlowLoginOut>> {
    let scope = input.scope.or(query.scope);
    let login = flows::create_flow_login(
        &state,
        principal.app.uuid,
        account_uuid,
        scope.as_deref(),
        input.plan_group_uuid,
    )
    .await?;
    Ok(axum::Json(FlowLoginOut {
        login_link: format!(
            "{}/flow/login?token={}",
            state.config.public_url(),
            login.token
        ),
        scope: login.scope.as_str().to_owned(),
        expires_at: Timestamp(login.expires_at),
    }))
}

#[derive(Debug, Deserialize)]
pub struct LinkQuery {
    token: Option<String>,
}

/// Opens a flow link: spends its token, opens a flow session, and sends the page to its flow
/// with the session token in the URL fragment (never sent to a server, removed by the page).
pub async fn open_flow_link(
    State(state): State<AppState>,
    axum::extract::Query(query): axum::extract::Query<LinkQuery>,
) -> Response {
    match open(&state, query.token.as_deref().unwrap_or("")).await {
        Ok(Some(location)) => {
            let mut r = StatusCode::SEE_OTHER.into_response();
            let headers = r.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&location) {
                headers.insert(header::LOCATION, v);
            }
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            r
        }
        Ok(None) => link_expired_page(),
        Err(e) => e.into_response(),
    }
}

async fn open(state: &AppState, token: &str) -> ApiResult<Option<String>> {
    let opened = flows::open_flow_link(state, token).await?;
    Ok(opened.map(|o| {
        format!(
            "/flow/{}?app={}#session={}",
            o.scope, o.app_uuid, o.session_token
        )
    }))
}

/// What a customer sees when a flow link was already used or is too old. The host hears
/// `service-flow-close` with `reason: "expired"` (to any origin: the link no longer says which
/// app it was for, and the message carries nothing else), so that it can open a new link.
fn link_expired_page() -> Response {
    let html = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>This link has expired</title><link rel="stylesheet" href="/pkg/switchboard.css"><link rel="icon" href="/favicon.svg"></head>
<body><main class="page" data-testid="link-expired">
<h1>This link has expired</h1>
<p>For your security, each link works once and only for a few minutes.</p>
<p>Close this window and open it again from the app you came from.</p>
</main>
<script>(()=>{const m={type:"service-flow-close",reason:"expired"};if(parent!==window)parent.postMessage(m,"*");const w=window.ReactNativeWebView;if(w&&w.postMessage)w.postMessage(JSON.stringify(m))})()</script>
</body></html>"#;
    let mut r = (StatusCode::GONE, Html(html)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}
