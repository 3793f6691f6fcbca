//! A forgotten dashboard password: the form that asks for the e-mail (answering the same
//! whether or not it is a user's, so that nobody learns who has an account), and the page of
//! the single-use link e-mailed to the user, which sets a new password and ends every session
//! of the user. Nobody is signed in by a reset: the user signs in afterwards with the new
//! password. Both forms are CSRF-checked on the visitor's (signed-out) session; requests for a
//! link are throttled per e-mail and per client address.

use axum::{
    extract::{Path, State},
    http::{header::RETRY_AFTER, HeaderValue, StatusCode},
    routing::get,
    Form, Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;

use super::{html, see_other, views, ClientIp, PageResult};
use crate::{
    http::{error::ApiError, websession, AppState},
    services::{self, users::UserRefused},
};

/// Link requests one e-mail may make in the window (`ratelimit::PASSWORD_RESET_WINDOW`).
const REQUESTS_PER_EMAIL: u32 = 3;
/// Link requests one client address may make in the window.
const REQUESTS_PER_IP: u32 = 20;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard/forgot", get(forgot_page).post(forgot))
        .route("/dashboard/reset/{token}", get(reset_page).post(reset))
}

fn forgot_view(csrf: &str, notice: Option<&str>, error: Option<&str>) -> String {
    let body = view! {
        <section class="card narrow">
            <h1>"Forgot your password?"</h1>
            {views::messages(notice, error)}
            <p>"Type the e-mail you sign in with: we send a link there that sets a new password."</p>
            <form method="post" action="/dashboard/forgot">
                {views::csrf_field(csrf)}
                <label for="email">"E-mail"</label>
                <input id="email" name="email" type="email" autocomplete="username" required/>
                <button type="submit">"Send the link"</button>
            </form>
            <p><a href="/dashboard/sign-in">"Back to sign in"</a></p>
        </section>
    }
    .into_any();
    views::document("Forgot your password?", None, body)
}

async fn forgot_page(session: Session) -> PageResult {
    let csrf = websession::csrf_token(&session).await?;
    Ok(html(StatusCode::OK, forgot_view(&csrf, None, None)))
}

#[derive(Deserialize)]
struct ForgotForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
}

/// What every accepted request is told, whoever the e-mail belongs to.
const SENT: &str = "If that address has an account, we sent a link to it. \
    The link works once, within an hour.";

async fn forgot(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    session: Session,
    Form(form): Form<ForgotForm>,
) -> PageResult {
    websession::check_csrf(&session, Some(&form.csrf)).await?;
    let email = form.email.trim().to_lowercase();
    let csrf = websession::csrf_token(&session).await?;
    if email.is_empty() {
        return Ok(html(
            StatusCode::UNPROCESSABLE_ENTITY,
            forgot_view(&csrf, None, Some("Type your e-mail.")),
        ));
    }
    // Every request counts, whether or not the e-mail is a user's, so that the throttle tells
    // nothing either.
    if state.config.rate_limits.enabled {
        let requests = &state.http.limiter.password_reset_requests;
        let keys = [
            (format!("email:{email}"), REQUESTS_PER_EMAIL),
            (format!("ip:{ip}"), REQUESTS_PER_IP),
        ];
        let now = std::time::Instant::now();
        let wait = keys
            .iter()
            .filter_map(|(key, limit)| requests.refused(key.clone(), *limit, now))
            .max();
        if let Some(wait) = wait {
            let minutes = wait.as_secs().div_ceil(60).max(1);
            let message = format!(
                "Too many requests for a reset link. Try again in {minutes} minute{}.",
                if minutes == 1 { "" } else { "s" }
            );
            let mut response = html(
                StatusCode::TOO_MANY_REQUESTS,
                forgot_view(&csrf, None, Some(&message)),
            );
            if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
                response.headers_mut().insert(RETRY_AFTER, v);
            }
            return Ok(response);
        }
        for (key, _) in keys {
            requests.failed(key, now);
        }
    }
    services::users::request_password_reset(
        &state.db,
        &state.clock,
        &email,
        &state.config.public_url(),
    )
    .await
    .map_err(ApiError::internal)?;
    Ok(html(StatusCode::OK, forgot_view(&csrf, Some(SENT), None)))
}

fn reset_view(csrf: &str, token: &str, error: Option<&str>) -> String {
    let action = format!("/dashboard/reset/{token}");
    let body = view! {
        <section class="card narrow">
            <h1>"Set a new password"</h1>
            {views::messages(None, error)}
            <p>"Every place you are signed in with the old password is signed out."</p>
            <form method="post" action=action>
                {views::csrf_field(csrf)}
                <label for="new">"New password (at least 12 characters)"</label>
                <input id="new" name="new" type="password" autocomplete="new-password" minlength="12" required/>
                <button type="submit">"Set the password"</button>
            </form>
        </section>
    }
    .into_any();
    views::document("Set a new password", None, body)
}

/// A spent, expired or unknown link: 410, with the way to ask for another.
fn link_gone() -> axum::response::Response {
    let body = view! {
        <section class="card narrow">
            <h1>"This link is not valid anymore"</h1>
            <p>"A reset link works once, within an hour of being sent."</p>
            <p><a href="/dashboard/forgot">"Ask for a new link"</a></p>
        </section>
    }
    .into_any();
    html(
        StatusCode::GONE,
        views::document("This link is not valid anymore", None, body),
    )
}

async fn reset_page(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
) -> PageResult {
    let user = services::users::password_reset_user(&state.db, &state.clock, &token)
        .await
        .map_err(ApiError::internal)?;
    if user.is_none() {
        return Ok(link_gone());
    }
    let csrf = websession::csrf_token(&session).await?;
    Ok(html(StatusCode::OK, reset_view(&csrf, &token, None)))
}

#[derive(Deserialize)]
struct ResetForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    new: String,
}

async fn reset(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
    Form(form): Form<ResetForm>,
) -> PageResult {
    websession::check_csrf(&session, Some(&form.csrf)).await?;
    match services::users::reset_password(&state.db, &state.clock, &token, &form.new).await {
        Ok(_) => Ok(see_other("/dashboard/sign-in?done=reset")),
        Err(services::Error::Refused(UserRefused::LinkInvalid)) => Ok(link_gone()),
        Err(services::Error::Refused(why)) => {
            let csrf = websession::csrf_token(&session).await?;
            Ok(html(
                StatusCode::UNPROCESSABLE_ENTITY,
                reset_view(&csrf, &token, Some(&why.to_string())),
            ))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e).into()),
    }
}
