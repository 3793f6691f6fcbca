//! Flow links: `flow-login` hands the partner a single-use link (10 minutes); opening it
//! (`/flow/login?token=...`) spends the token and opens a flow session whose bearer token the
//! page keeps in its window's name (no cookie, no storage, so flows work in cross-site iframes
//! where third-party cookies and storage are blocked). The session may call only its scope's endpoints.

use app::api::{
    ErrorEnvelope, FlowEventIn, FlowEventOut, FlowFunnelOut, FlowFunnelStep, FlowLoginIn,
    FlowLoginOut, Timestamp,
};
use axum::{
    extract::{FromRequestParts, State},
    http::{header, request::Parts, HeaderValue, StatusCode},
    response::{Html, IntoResponse, Response},
    routing::get,
    Router,
};
use serde::Deserialize;
use uuid::Uuid;

use super::{
    auth::{AccountPrincipal, AppPrincipal},
    branded::{self, support_contacts, Brand, Shell},
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        self,
        flow_events::{percent_text, Funnel},
    },
    services::flows::{self, FlowEventRefused, FunnelPeriod, LinkOpening},
    store::apps::AppRow,
};

/// `flow-login` and `flow-funnel`, under `/v1/app`.
pub fn app_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(create_flow_login))
        .routes(routes!(flow_funnel))
}

/// `flow-events`, under `/v1/account` (flow sessions only).
pub fn account_router() -> ApiRouter {
    ApiRouter::new().routes(routes!(record_flow_event))
}

/// Record an event of the flow session (the flows call it with each `service-flow-event`
/// message they post to their host).
#[utoipa::path(
    post, path = "/v1/account/flow-events", tag = "flows",
    request_body = FlowEventIn,
    responses(
        (status = 200, description = "Recorded: the session's public id", body = FlowEventOut),
        (status = 400, description = "Missing or unknown name, a step or error code that is not a slug, an error code on an event other than error_shown; nothing is recorded", body = ErrorEnvelope),
        (status = 403, description = "Not a flow session (an AccountToken has no flow), whatever the body: `scope_denied`", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn record_flow_event(
    State(state): State<AppState>,
    FlowSession(principal, session): FlowSession,
    Json(input): Json<FlowEventIn>,
) -> ApiResult<axum::Json<FlowEventOut>> {
    let id = flows::record_event(
        &state,
        principal.account_uuid,
        Some(session),
        input.name.as_deref(),
        input.step.as_deref(),
        input.error_code.as_deref(),
    )
    .await?;
    Ok(axum::Json(FlowEventOut {
        flow_session_id: id,
    }))
}

/// The principal of a flow session, with the session's public id. A token without a flow is
/// refused (403 `scope_denied`) before the body is read: what it sent is never judged, so it
/// hears the same answer whatever the body.
pub struct FlowSession(AccountPrincipal, Uuid);

impl<S: Send + Sync> FromRequestParts<S> for FlowSession {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        let principal = AccountPrincipal::from_request_parts(parts, state).await?;
        match principal.flow_session {
            Some(session) => Ok(FlowSession(principal, session)),
            None => Err(FlowEventRefused::NotAFlow.into()),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct FunnelQuery {
    scope: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

/// The funnel of the app's flow sessions of one scope opened over a period: sessions started,
/// the share that reached each step, the completion rate and the median time to complete.
#[utoipa::path(
    get, path = "/v1/app/flow-funnel", tag = "flows",
    params(
        ("scope" = String, Query, description = "`enrollment`, `update-payment-method`, `billing`, `documents` or `renewal`"),
        ("from" = Option<chrono::NaiveDate>, Query, description = "First market day (America/Chicago), YYYY-MM-DD (default: 29 days before `to`). Sessions count on the market day they opened, on the service's clock (never a sandbox account's own)"),
        ("to" = Option<chrono::NaiveDate>, Query, description = "Last market day (America/Chicago), included, YYYY-MM-DD (default: today in the market, on the service's clock); at most 366 days in all"),
    ),
    responses(
        (status = 200, description = "The funnel", body = FlowFunnelOut),
        (status = 400, description = "Missing or unknown scope, a date that is not YYYY-MM-DD, a period backwards or longer than 366 days", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn flow_funnel(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(query): Query<FunnelQuery>,
) -> ApiResult<axum::Json<FlowFunnelOut>> {
    let (scope, period) = flows::funnel_query(
        &state,
        query.scope.as_deref(),
        query.from.as_deref(),
        query.to.as_deref(),
    )
    .map_err(ApiError::from)?;
    let funnel = flows::funnel(&state, principal.app.uuid, scope, &period).await?;
    Ok(axum::Json(funnel_out(scope.as_str(), &period, &funnel)))
}

/// A funnel as the API (and the dashboard) shows it.
pub fn funnel_out(scope: &str, period: &FunnelPeriod, f: &Funnel) -> FlowFunnelOut {
    FlowFunnelOut {
        scope: scope.to_owned(),
        from: period.from,
        to: period.to,
        sessions_started: f.sessions_started,
        steps: f
            .steps
            .iter()
            .map(|s| FlowFunnelStep {
                step: s.step.clone(),
                sessions: s.sessions,
                share_percent: percent_text(s.share_permille),
            })
            .collect(),
        sessions_completed: f.completed,
        completion_percent: percent_text(f.completion_permille),
        median_duration_seconds: f.median_seconds,
    }
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
    params(("account_uuid" = Uuid, Path), ("scope" = Option<String>, Query, description = "Alternative to the body's scope (the same scope when both are given)")),
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
    let login = flows::create_flow_login(
        &state,
        principal.app.uuid,
        account_uuid,
        input.scope.as_deref(),
        query.scope.as_deref(),
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
) -> ApiResult<Response> {
    let token = query.token.as_deref().unwrap_or("");
    Ok(match flows::open_flow_link(&state, token).await? {
        LinkOpening::Opened(o) => {
            let location = format!(
                "/flow/{}?app={}#session={}",
                o.scope, o.app_uuid, o.session_token
            );
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
        LinkOpening::Spent(app) => link_expired_page(app.as_deref()),
    })
}

/// What a customer sees when a flow link was already used or is too old: in the branding of
/// the app that made the link, with its support contacts, framed only where its flows may be.
/// The host hears `service-flow-close` with `reason: "expired"` at the origins its flows post
/// to, so that it can open a new link; a token that is not one of ours gets a plain page.
fn link_expired_page(app: Option<&AppRow>) -> Response {
    use leptos::prelude::*;
    let (brand, targets, framing, back) = match app {
        Some(app) => {
            let origins = app.origins();
            let environment = app.environment_kind();
            (
                Brand::of(app),
                domain::flows::post_message_origins(environment, &origins),
                Some(domain::flows::frame_ancestors(environment, &origins)),
                format!(
                    "Go back to {} and open it again from there.",
                    app.display_name
                ),
            )
        }
        None => (
            Brand {
                name: "Switchboard".to_owned(),
                ..Brand::neutral()
            },
            vec!["*".to_owned()],
            None,
            "Close this window and open it again from the app you came from.".to_owned(),
        ),
    };
    // JSON is safe inside a script once `<` cannot start a closing tag.
    let targets = serde_json::to_string(&targets)
        .unwrap_or_else(|_| "[]".to_owned())
        .replace('<', "\\u003c");
    let script = format!(
        "{bridges}(()=>{{const m={{type:\"service-flow-close\",reason:\"expired\"}};\
         if(parent!==window)for(const o of {targets})parent.postMessage(m,o);\
         switchboardNative(JSON.stringify(m))}})()",
        bridges = app::flow::NATIVE_BRIDGES_SCRIPT,
    );
    let contacts = support_contacts(&brand.contacts, &brand.name, false)
        .map(|lines| view! { <p data-testid="support">"Need help? " {lines}</p> });
    let html = branded::page(
        &brand,
        Shell {
            title: "This link has expired".to_owned(),
            testid: "link-expired",
            hosted_styles: false,
            head: None,
            above: None,
            body: view! {
                <p>"For your security, each link works once and only for a few minutes."</p>
                <p>{back}</p>
                {contacts}
            }
            .into_any(),
            contacts: false,
            // The script is the service's own text and the JSON above, never a value as typed.
            after: Some(view! { <script>{script}</script> }.into_any()),
        },
    );
    let mut r = (StatusCode::GONE, Html(html)).into_response();
    let headers = r.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Some(v) = framing.and_then(|f| HeaderValue::from_str(&f).ok()) {
        headers.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}
