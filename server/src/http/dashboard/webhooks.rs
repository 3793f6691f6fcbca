//! An app's webhook endpoints in the dashboard: adding one (its signing secret shown once),
//! enabling and disabling, sending a test event, the delivery log (with the start of each
//! answer), redelivering one event, and recovering every delivery that failed since a date.
//! Everything goes through `services::webhooks`, the functions behind the API's own endpoints,
//! scoped to an app the member may see.

use app::api::{
    background::{CreateWebhookEndpointIn, UpdateWebhookEndpointIn},
    Patch,
};
use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    routing::{get, post},
    Form, Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, member_app, see_other, views, CsrfForm, Dash, PageError, PageResult};
use crate::{
    http::{error::ApiError, AppState},
    services::{self, webhooks::WebhookRefused},
    store::{
        self,
        apps::AppRow,
        webhooks::{DeliveryRow, EndpointRow},
    },
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard/apps/{app}/webhooks", post(create_endpoint))
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}",
            get(endpoint_page),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/enabled",
            post(set_enabled),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/test",
            post(send_test),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/rotate",
            post(rotate_secret),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/reveal",
            post(reveal_secret),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/redeliver",
            post(redeliver),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/recover",
            post(recover_failed),
        )
}

/// The app's endpoints for its page (at most 50, newest first).
pub async fn endpoints(state: &AppState, app: Uuid) -> Result<Vec<EndpointRow>, ApiError> {
    let mut rows = store::webhooks::endpoints_of_app(&state.db, app, 50, 0).await?;
    rows.truncate(50);
    Ok(rows)
}

/// A refusal as the page says it; a failure is a 500.
fn refusal(e: services::Error<WebhookRefused>) -> Result<(StatusCode, String), PageError> {
    match e {
        services::Error::Refused(WebhookRefused::EndpointNotFound) => {
            Err(ApiError::not_found("webhook endpoint").into())
        }
        services::Error::Refused(why) => {
            let e: ApiError = why.into();
            Ok((
                StatusCode::UNPROCESSABLE_ENTITY,
                e.body(String::new()).error.message,
            ))
        }
        services::Error::Failed(e) => Err(ApiError::internal(e).into()),
    }
}

/// A refusal as the API says it, shown as a page.
fn page_error(e: services::Error<WebhookRefused>) -> PageError {
    PageError::from(ApiError::from(e))
}

/// The new endpoint form: its fields, and one `event_types` per ticked event type (none:
/// every event).
#[derive(Default)]
struct EndpointForm {
    csrf: String,
    url: String,
    event_types: Vec<String>,
    description: String,
}

impl EndpointForm {
    fn from_pairs(pairs: Vec<(String, String)>) -> EndpointForm {
        let mut form = EndpointForm::default();
        for (name, value) in pairs {
            match name.as_str() {
                "csrf" => form.csrf = value,
                "url" => form.url = value,
                "description" => form.description = value,
                "event_types" => form.event_types.extend(
                    value
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                ),
                _ => {}
            }
        }
        form
    }
}

async fn create_endpoint(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> PageResult {
    let form = EndpointForm::from_pairs(pairs);
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let input = CreateWebhookEndpointIn {
        url: form.url.trim().to_owned(),
        event_types: form.event_types,
        description: Some(form.description.trim().to_owned()).filter(|d| !d.is_empty()),
        disabled: false,
    };
    match services::webhooks::create_endpoint(
        &state,
        app.uuid,
        app.environment_kind(),
        input,
        Some(&dash.actor()),
    )
    .await
    {
        Ok(endpoint) => Ok(html(
            StatusCode::CREATED,
            secret_shown(&dash.nav(), &app, &endpoint),
        )),
        Err(e) => {
            let (status, why) = refusal(e)?;
            let page = super::render_app(&state, &dash, &app, None, Some(&why)).await?;
            Ok(html(status, page))
        }
    }
}

fn secret_shown(nav: &views::Nav, app: &AppRow, endpoint: &EndpointRow) -> String {
    secret_page(nav, app, endpoint, "Webhook endpoint added")
}

fn secret_page(nav: &views::Nav, app: &AppRow, endpoint: &EndpointRow, heading: &str) -> String {
    secret_page_saying(
        nav,
        app,
        endpoint,
        heading,
        "Copy it and keep it secret. A member of the app can show it again from the endpoint's page (each look is in the audit log).",
    )
}

fn secret_page_saying(
    nav: &views::Nav,
    app: &AppRow,
    endpoint: &EndpointRow,
    heading: &str,
    note: &'static str,
) -> String {
    let href = format!("/dashboard/apps/{}/webhooks/{}", app.uuid, endpoint.uuid);
    let secret = endpoint.secret.clone();
    let url = endpoint.url.clone();
    let body = view! {
        <section class="card">
            <h1>{heading.to_owned()}</h1>
            <p>"Deliveries to " <code>{url}</code> " are signed with this secret. " {note}</p>
            <label for="token">"Signing secret"</label>
            <input id="token" class="secret" type="text" readonly value=secret/>
            {views::copy_button("token")}
            <p><a href=href>"Continue to the endpoint"</a></p>
        </section>
    }
    .into_any();
    views::document(heading, Some(nav), body)
}

async fn endpoint_of(
    state: &AppState,
    app: &AppRow,
    endpoint: Uuid,
) -> Result<EndpointRow, ApiError> {
    store::webhooks::endpoint_of_app(&state.db, app.uuid, endpoint)
        .await?
        .ok_or_else(|| ApiError::not_found("webhook endpoint"))
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "enabled" => "The endpoint is enabled.",
        "disabled" => "The endpoint is disabled.",
        "test" => "A test event was sent; its delivery shows below once attempted.",
        "redeliver" => "The event will be delivered again.",
        _ => return None,
    })
}

async fn endpoint_page(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Query(done): Query<RecoveredDone>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let recovered = done.queued.map(|n| {
        format!(
            "{n} failed deliver{} queued again.",
            if n == 1 { "y was" } else { "ies were" }
        )
    });
    let notice = match done.done.as_deref() {
        Some("recovered") => recovered.as_deref(),
        other => done_message(other),
    };
    render_endpoint(&state, &dash, &app, &endpoint, StatusCode::OK, notice, None).await
}

/// The query after a change: what was done, and how many deliveries a recover queued.
#[derive(Deserialize)]
struct RecoveredDone {
    done: Option<String>,
    queued: Option<u32>,
}

async fn render_endpoint(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    endpoint: &EndpointRow,
    status: StatusCode,
    notice: Option<&str>,
    error: Option<&str>,
) -> PageResult {
    let mut deliveries =
        store::webhooks::deliveries_of_endpoint(&state.db, endpoint.uuid, 100, 0).await?;
    deliveries.truncate(100);
    let payloads =
        services::webhooks::delivery_payloads(state, app.uuid, app.environment_kind(), &deliveries)
            .await?;
    Ok(html(
        status,
        endpoint_view(dash, app, endpoint, &deliveries, &payloads, notice, error),
    ))
}

fn endpoint_view(
    dash: &Dash,
    app: &AppRow,
    endpoint: &EndpointRow,
    deliveries: &[DeliveryRow],
    payloads: &std::collections::HashMap<Uuid, String>,
    notice: Option<&str>,
    error: Option<&str>,
) -> String {
    let nav = dash.nav();
    let base = format!("/dashboard/apps/{}/webhooks/{}", app.uuid, endpoint.uuid);
    let types = endpoint.event_type_list();
    let types = if types.is_empty() {
        "every event".to_owned()
    } else {
        types.join(", ")
    };
    let state = match (&endpoint.disabled, &endpoint.disabled_reason) {
        (true, Some(why)) => format!("disabled ({why})"),
        (true, None) => "disabled".to_owned(),
        (false, _) => "enabled".to_owned(),
    };
    let (toggle_value, toggle_label) = if endpoint.disabled {
        ("false", "Enable")
    } else {
        ("true", "Disable")
    };
    let rows = deliveries
        .iter()
        .map(|d| {
            let when = views::time(d.attempted_at);
            let kind = d.event_type.clone();
            let status = d.status.to_string();
            let code = d
                .response_status
                .map_or_else(|| "-".to_owned(), |c| c.to_string());
            let error = d.error.clone().unwrap_or_default();
            let excerpt = d.response_excerpt.clone().unwrap_or_default();
            let event = d.event_uuid.to_string();
            let attempt = d.attempt.to_string();
            // What was sent: the event's body as delivered.
            let payload = payloads.get(&d.event_uuid).cloned().map(|body| {
                view! {
                    <details class="payload" data-testid="delivery-payload">
                        <summary>"Payload"</summary>
                        <pre><code>{body}</code></pre>
                    </details>
                }
            });
            view! {
                <tr>
                    <td>{when}</td>
                    <td>{kind} {payload}</td>
                    <td>{attempt}</td>
                    <td>{status}</td>
                    <td>{code}</td>
                    <td><code class="detail">{excerpt}</code></td>
                    <td>{error}</td>
                    <td>
                        <form method="post" action=format!("{base}/redeliver") class="inline">
                            {views::csrf_field(&nav.csrf)}
                            <input type="hidden" name="event" value=event/>
                            <button type="submit">"Redeliver"</button>
                        </form>
                    </td>
                </tr>
            }
        })
        .collect_view();
    let empty = deliveries
        .is_empty()
        .then(|| view! { <p>"No deliveries yet."</p> });
    let back = format!("/dashboard/apps/{}", app.uuid);
    let url = endpoint.url.clone();
    let body = view! {
        <p><a href=back>"← Back to the app"</a></p>
        <h1>"Webhook endpoint"</h1>
        {views::messages(notice, error)}
        <section class="card">
            <p><code>{url}</code></p>
            <p>"Events: " {types}</p>
            <p>"State: " {state}</p>
            <form method="post" action=format!("{base}/enabled") class="inline">
                {views::csrf_field(&nav.csrf)}
                <input type="hidden" name="disabled" value=toggle_value/>
                <button type="submit">{toggle_label}</button>
            </form>
            " "
            <form method="post" action=format!("{base}/test") class="inline">
                {views::csrf_field(&nav.csrf)}
                <button type="submit">"Send a test event"</button>
            </form>
            " "
            <form method="post" action=format!("{base}/rotate") class="inline">
                {views::csrf_field(&nav.csrf)}
                <button type="submit">"Rotate the signing secret"</button>
            </form>
            " "
            <form method="post" action=format!("{base}/reveal") class="inline">
                {views::csrf_field(&nav.csrf)}
                <button type="submit">"Show the signing secret"</button>
            </form>
        </section>
        <section class="card">
            <h2>"Recover failed deliveries"</h2>
            <p>"Sends again every event whose delivery to this endpoint failed for good since the day you choose (from 00:00 UTC). Deliveries still waiting for a retry are left to it."</p>
            <form method="post" action=format!("{base}/recover")>
                {views::csrf_field(&nav.csrf)}
                <label for="since">"Failed since (YYYY-MM-DD)"</label>
                <input id="since" name="since" type="date" required/>
                <button type="submit">"Recover failed deliveries"</button>
            </form>
        </section>
        <h2>"Deliveries"</h2>
        {empty}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"Attempted"</th><th scope="col">"Event"</th><th scope="col">"Attempt"</th>
                    <th scope="col">"Status"</th><th scope="col">"Response"</th><th scope="col">"Answer (start)"</th>
                    <th scope="col">"Error"</th>
                    <th scope="col"><span class="sr-only">"Actions"</span></th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any();
    views::document("Webhook endpoint", Some(&nav), body)
}

#[derive(Deserialize)]
struct EnabledForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    disabled: String,
}

async fn set_enabled(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<EnabledForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let disabled = form.disabled == "true";
    let input = UpdateWebhookEndpointIn {
        disabled: Patch::Value(disabled),
        ..UpdateWebhookEndpointIn::default()
    };
    let base = format!("/dashboard/apps/{}/webhooks/{}", app.uuid, endpoint.uuid);
    match services::webhooks::update_endpoint(
        &state,
        app.uuid,
        app.environment_kind(),
        endpoint.uuid,
        input,
        Some(&dash.actor()),
    )
    .await
    {
        Ok(_) => {
            let done = if disabled { "disabled" } else { "enabled" };
            Ok(see_other(&format!("{base}?done={done}")))
        }
        Err(e) => Err(page_error(e)),
    }
}

async fn send_test(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    services::webhooks::send_test(&state, app.uuid, endpoint.uuid)
        .await
        .map_err(page_error)?;
    Ok(see_other(&format!(
        "/dashboard/apps/{}/webhooks/{}?done=test",
        app.uuid, endpoint.uuid
    )))
}

#[derive(Deserialize)]
struct RedeliverForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    event: String,
}

async fn redeliver(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<RedeliverForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let event = Uuid::parse_str(form.event.trim()).map_err(|_| ApiError::not_found("event"))?;
    services::webhooks::redeliver_event(&state, app.uuid, event, Some(endpoint.uuid))
        .await
        .map_err(page_error)?;
    Ok(see_other(&format!(
        "/dashboard/apps/{}/webhooks/{}?done=redeliver",
        app.uuid, endpoint.uuid
    )))
}

/// A new signing secret, shown once; the old one keeps signing beside it for a while.
async fn rotate_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let rotated =
        services::webhooks::rotate_secret(&state, app.uuid, endpoint.uuid, Some(&dash.actor()))
            .await
            .map_err(page_error)?;
    Ok(html(
        StatusCode::CREATED,
        secret_page(&dash.nav(), &app, &rotated, "Signing secret rotated"),
    ))
}

/// Shows the endpoint's signing secret again to a member of the app (audited).
async fn reveal_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let shown = services::webhooks::reveal_secret(&state, app.uuid, endpoint.uuid, &dash.actor())
        .await
        .map_err(page_error)?;
    Ok(html(
        StatusCode::OK,
        secret_page_saying(
            &dash.nav(),
            &app,
            &shown,
            "Signing secret",
            "Keep it secret: this look is in the app's audit log.",
        ),
    ))
}

#[derive(Deserialize)]
struct RecoverForm {
    #[serde(default)]
    csrf: String,
    /// A day, `YYYY-MM-DD`: failures from its start (UTC) on are recovered.
    #[serde(default)]
    since: String,
}

async fn recover_failed(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<RecoverForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let endpoint = endpoint_of(&state, &app, endpoint).await?;
    let Ok(day) = chrono::NaiveDate::parse_from_str(form.since.trim(), "%Y-%m-%d") else {
        return render_endpoint(
            &state,
            &dash,
            &app,
            &endpoint,
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
            Some("Choose the day to recover from, as YYYY-MM-DD."),
        )
        .await;
    };
    let since = crate::domain::market::start_of_market_day(day);
    let queued = services::webhooks::recover_failed(
        &state,
        app.uuid,
        endpoint.uuid,
        since,
        Some(&dash.actor()),
    )
    .await
    .map_err(page_error)?;
    Ok(see_other(&format!(
        "/dashboard/apps/{}/webhooks/{}?done=recovered&queued={queued}",
        app.uuid, endpoint.uuid
    )))
}
