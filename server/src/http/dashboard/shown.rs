//! A secret the dashboard shows once (a new app's first key, a new key, a webhook endpoint's
//! signing secret when it is added, rotated or asked for again). The form that made it answers
//! with a redirect, so a reload never makes a second one; the secret waits for the page after
//! the redirect in the dashboard session, sealed with the service's data key, and the first
//! view of `GET /dashboard/shown` takes it out. It is never in a URL, so it stays out of the
//! browser's history and the server's logs.

use axum::{extract::State, http::StatusCode, routing::get, Router};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;
use uuid::Uuid;

use super::{html, see_other, session_error, views, Dash, PageResult};
use crate::http::{
    error::{ApiError, ApiResult},
    AppState,
};

/// The session key of the secret waiting to be shown.
const SHOWN_KEY: &str = "dashboard_shown";

pub fn routes() -> Router<AppState> {
    Router::new().route("/dashboard/shown", get(shown_page))
}

/// What was made, which decides the page's words and where it continues.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub(super) enum Made {
    /// A new app and its first key.
    App,
    /// Another key of an app.
    Key,
    /// A webhook endpoint and its signing secret.
    Endpoint,
    /// A webhook endpoint's new signing secret.
    Rotated,
    /// A webhook endpoint's signing secret, asked for again.
    Revealed,
}

/// The secret waiting in the session, sealed.
#[derive(Serialize, Deserialize)]
struct Waiting {
    made: Made,
    app: Uuid,
    endpoint: Option<Uuid>,
    /// The key's name or the endpoint's URL.
    label: String,
    sealed: String,
}

/// What a form made, to be shown once on the page after its redirect.
pub(super) struct Secret<'a> {
    pub made: Made,
    pub app: Uuid,
    pub endpoint: Option<Uuid>,
    pub label: &'a str,
    pub secret: &'a str,
}

/// Keeps `secret` for the next view of `/dashboard/shown` and answers with the redirect there.
pub(super) async fn show_once(
    state: &AppState,
    session: &Session,
    secret: Secret<'_>,
) -> PageResult {
    let waiting = Waiting {
        made: secret.made,
        app: secret.app,
        endpoint: secret.endpoint,
        label: secret.label.to_owned(),
        sealed: state.pii.seal_text(secret.secret),
    };
    session
        .insert(SHOWN_KEY, waiting)
        .await
        .map_err(session_error)?;
    Ok(see_other("/dashboard/shown"))
}

async fn take(state: &AppState, session: &Session) -> ApiResult<Option<(Waiting, String)>> {
    let Some(waiting) = session
        .remove::<Waiting>(SHOWN_KEY)
        .await
        .map_err(session_error)?
    else {
        return Ok(None);
    };
    let secret = state
        .pii
        .open_text(&waiting.sealed)
        .map_err(ApiError::internal)?;
    Ok(Some((waiting, secret)))
}

async fn shown_page(State(state): State<AppState>, dash: Dash) -> PageResult {
    let nav = dash.nav();
    let Some((waiting, secret)) = take(&state, &dash.session).await? else {
        return Ok(html(StatusCode::OK, nothing_waiting(&nav)));
    };
    let app_href = format!("/dashboard/apps/{}", waiting.app);
    let endpoint_href = waiting
        .endpoint
        .map(|e| format!("{app_href}/webhooks/{e}"))
        .unwrap_or_else(|| app_href.clone());
    let label = waiting.label;
    let once = "It is shown only now: copy it and keep it secret. Reloading this page will not show it again.";
    let again = "Copy it and keep it secret. A member of the app can show it again from the endpoint's page (each look is in the audit log).";
    let (heading, about, field, href, back): (&str, String, &str, String, &str) = match waiting.made
    {
        Made::App => (
            "Your app was created",
            format!("This is the app's first API key (AppToken), named “{label}”. {once}"),
            "API key",
            app_href,
            "Continue to the app",
        ),
        Made::Key => (
            "A new key was created",
            format!("This is the new API key (AppToken) “{label}”. {once}"),
            "API key",
            app_href,
            "Continue to the app",
        ),
        Made::Endpoint => (
            "Webhook endpoint added",
            format!("Deliveries to {label} are signed with this secret. {again}"),
            "Signing secret",
            endpoint_href,
            "Continue to the endpoint",
        ),
        Made::Rotated => (
            "Signing secret rotated",
            format!(
                "Deliveries to {label} are signed with this new secret, and with the old one beside it for 24 hours, so that your receiver can switch over. {again}"
            ),
            "Signing secret",
            endpoint_href,
            "Continue to the endpoint",
        ),
        Made::Revealed => (
            "Signing secret",
            format!(
                "Deliveries to {label} are signed with this secret. Keep it secret: this look is in the app's audit log."
            ),
            "Signing secret",
            endpoint_href,
            "Continue to the endpoint",
        ),
    };
    let body = view! {
        <section class="card">
            <h1>{heading}</h1>
            <p>{about}</p>
            <label for="token">{field}</label>
            <input id="token" class="secret" type="text" readonly value=secret/>
            {views::copy_button("token")}
            <p><a href=href>{back}</a></p>
        </section>
    }
    .into_any();
    Ok(html(
        StatusCode::OK,
        views::document(heading, Some(&nav), body),
    ))
}

/// A second view (a reload, the back button): the secret is gone, and the page says so.
fn nothing_waiting(nav: &views::Nav) -> String {
    let body = view! {
        <section class="card">
            <h1>"Nothing to show"</h1>
            <p>"A key or a signing secret is shown once, on the page right after it was made, and this one was shown already. If it was not copied, make a new key (and revoke the old one) or, for a webhook endpoint, show its signing secret again from the endpoint's page."</p>
            <p><a href="/dashboard">"Back to your apps"</a></p>
        </section>
    }
    .into_any();
    views::document("Nothing to show", Some(nav), body)
}
