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

use super::{
    html, member_app, refusal_or_404, see_other,
    shown::{self, Made},
    views, CsrfForm, Dash, PageError, PageResult,
};
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
            get(disable_page).post(set_enabled),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/test",
            post(send_test),
        )
        .route(
            "/dashboard/apps/{app}/webhooks/{endpoint}/rotate",
            get(rotate_page).post(rotate_secret),
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
    let missing = |why: &WebhookRefused| matches!(why, WebhookRefused::EndpointNotFound);
    let e: ApiError = refusal_or_404(e, missing, "webhook endpoint")?.into();
    Ok((
        StatusCode::UNPROCESSABLE_ENTITY,
        e.body(String::new()).error.message,
    ))
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
    let typed_url = form.url.clone();
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
        Ok(endpoint) => show_secret(&state, &dash, &app, &endpoint, Made::Endpoint).await,
        Err(e) => {
            // A refused URL is said beside the URL field; anything else above the page.
            let about_url = matches!(
                &e,
                services::Error::Refused(WebhookRefused::UrlNotAllowed(_))
            ) || matches!(&e, services::Error::Refused(WebhookRefused::Field(f)) if f.param == "url");
            let (status, why) = refusal(e)?;
            let page = if about_url {
                let refill = views::Refill {
                    webhook_url: views::Typed::refused(&typed_url, why),
                    ..views::Refill::default()
                };
                super::render_app_typed(&state, &dash, &app, None, None, &refill).await?
            } else {
                let refill = views::Refill {
                    webhook_url: views::Typed {
                        value: typed_url,
                        error: None,
                    },
                    ..views::Refill::default()
                };
                super::render_app_typed(&state, &dash, &app, None, Some(&why), &refill).await?
            };
            Ok(html(status, page))
        }
    }
}

/// The endpoint's signing secret, shown once on the page after the redirect.
async fn show_secret(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    endpoint: &EndpointRow,
    made: Made,
) -> PageResult {
    shown::show_once(
        state,
        &dash.session,
        shown::Secret {
            made,
            app: app.uuid,
            endpoint: Some(endpoint.uuid),
            label: &endpoint.url,
            secret: &endpoint.secret,
        },
    )
    .await
}

/// The app `app`, if this member may see it, and its endpoint `endpoint`; a 404 otherwise.
async fn member_endpoint(
    state: &AppState,
    dash: &Dash,
    app: Uuid,
    endpoint: Uuid,
) -> Result<(AppRow, EndpointRow), ApiError> {
    let app = member_app(state, dash, app).await?;
    let endpoint = store::webhooks::endpoint_of_app(&state.db, app.uuid, endpoint)
        .await?
        .ok_or_else(|| ApiError::not_found("webhook endpoint"))?;
    Ok((app, endpoint))
}

/// The endpoint's page, where every change to it returns.
fn endpoint_path(app: &AppRow, endpoint: &EndpointRow) -> String {
    format!("/dashboard/apps/{}/webhooks/{}", app.uuid, endpoint.uuid)
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
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
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
    let base = endpoint_path(app, endpoint);
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
    // Enabling starts deliveries again at once; disabling stops them, so it is asked first.
    let toggle = if endpoint.disabled {
        let action = format!("{base}/enabled");
        view! {
            <form method="post" action=action class="inline">
                {views::csrf_field(&nav.csrf)}
                <input type="hidden" name="disabled" value="false"/>
                <button type="submit">"Enable"</button>
            </form>
        }
        .into_any()
    } else {
        let href = format!("{base}/enabled?disabled=true");
        view! { <a class="button" href=href>"Disable…"</a> }.into_any()
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
            {toggle}
            " "
            <form method="post" action=format!("{base}/test") class="inline">
                {views::csrf_field(&nav.csrf)}
                <button type="submit">"Send a test event"</button>
            </form>
            " "
            <a class="button" href=format!("{base}/rotate")>"Rotate the signing secret…"</a>
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
    /// `yes` from the confirmation page; disabling without it asks first.
    #[serde(default)]
    confirm: String,
}

/// Asks before an endpoint is disabled, naming it and what stops.
async fn disable_page(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    Ok(confirm_disable(&dash, &app, &endpoint))
}

fn confirm_disable(dash: &Dash, app: &AppRow, endpoint: &EndpointRow) -> axum::response::Response {
    let base = endpoint_path(app, endpoint);
    let types = endpoint.event_type_list();
    let types = if types.is_empty() {
        "every event type".to_owned()
    } else {
        types.join(", ")
    };
    html(
        StatusCode::OK,
        views::confirm(
            &dash.nav(),
            views::Confirm {
                title: format!("Disable the webhook endpoint {}?", endpoint.url),
                effects: vec![
                    format!(
                        "{} stops receiving the events of {} it subscribes to ({types}): nothing is sent to it while it is disabled, retries waiting included.",
                        endpoint.url, app.display_name
                    ),
                    "The events are kept: after enabling it again, “Recover failed deliveries” sends the ones it missed.".to_owned(),
                    "The app's other endpoints keep receiving their events.".to_owned(),
                ],
                action: format!("{base}/enabled"),
                fields: vec![("disabled", "true".to_owned())],
                button: "Disable the endpoint",
                cancel: base,
            },
        ),
    )
}

/// Asks before an endpoint's signing secret is rotated, naming it and what changes.
async fn rotate_page(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    Ok(confirm_rotate(&dash, &app, &endpoint))
}

fn confirm_rotate(dash: &Dash, app: &AppRow, endpoint: &EndpointRow) -> axum::response::Response {
    let base = endpoint_path(app, endpoint);
    html(
        StatusCode::OK,
        views::confirm(
            &dash.nav(),
            views::Confirm {
                title: format!("Rotate the signing secret of {}?", endpoint.url),
                effects: vec![
                    format!(
                        "Deliveries of {} to {} are signed with a new secret from now on, shown to you once on the next page.",
                        app.display_name, endpoint.url
                    ),
                    "For 24 hours they carry a signature with the old secret too; after that a receiver still checking the old secret refuses every delivery.".to_owned(),
                    "Put the new secret in the receiver within those 24 hours.".to_owned(),
                ],
                action: format!("{base}/rotate"),
                fields: Vec::new(),
                button: "Rotate the secret",
                cancel: base,
            },
        ),
    )
}

async fn set_enabled(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<EnabledForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    let disabled = form.disabled == "true";
    if disabled && !endpoint.disabled && form.confirm != "yes" {
        return Ok(confirm_disable(&dash, &app, &endpoint));
    }
    let input = UpdateWebhookEndpointIn {
        disabled: Patch::Value(disabled),
        ..UpdateWebhookEndpointIn::default()
    };
    let base = endpoint_path(&app, &endpoint);
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
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    services::webhooks::send_test(&state, app.uuid, endpoint.uuid)
        .await
        .map_err(page_error)?;
    Ok(see_other(&format!(
        "{}?done=test",
        endpoint_path(&app, &endpoint)
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
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    let event = Uuid::parse_str(form.event.trim()).map_err(|_| ApiError::not_found("event"))?;
    services::webhooks::redeliver_event(&state, app.uuid, event, Some(endpoint.uuid))
        .await
        .map_err(page_error)?;
    Ok(see_other(&format!(
        "{}?done=redeliver",
        endpoint_path(&app, &endpoint)
    )))
}

/// A new signing secret, shown once; the old one keeps signing beside it for a while.
async fn rotate_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<ConfirmForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    if form.confirm != "yes" {
        return Ok(confirm_rotate(&dash, &app, &endpoint));
    }
    let rotated =
        services::webhooks::rotate_secret(&state, app.uuid, endpoint.uuid, Some(&dash.actor()))
            .await
            .map_err(page_error)?;
    show_secret(&state, &dash, &app, &rotated, Made::Rotated).await
}

#[derive(Deserialize)]
struct ConfirmForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    confirm: String,
}

/// Shows the endpoint's signing secret again to a member of the app (audited).
async fn reveal_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path((app, endpoint)): Path<(Uuid, Uuid)>,
    Form(form): Form<CsrfForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
    let shown = services::webhooks::reveal_secret(&state, app.uuid, endpoint.uuid, &dash.actor())
        .await
        .map_err(page_error)?;
    show_secret(&state, &dash, &app, &shown, Made::Revealed).await
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
    let (app, endpoint) = member_endpoint(&state, &dash, app, endpoint).await?;
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
    let base = endpoint_path(&app, &endpoint);
    Ok(see_other(&format!("{base}?done=recovered&queued={queued}")))
}
