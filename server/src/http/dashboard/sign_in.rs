//! Signing in and out of the dashboard, with the failed attempts limited per e-mail and per
//! client address, and changing one's own password.

use axum::{
    extract::{Query, State},
    http::{HeaderValue, StatusCode},
    Form,
};
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{html, see_other, session_error, views, CsrfForm, Dash, Done, PageResult};
use crate::http::{
    error::{ApiError, ApiResult},
    extract::ClientIp,
    websession::{self},
    AppState,
};
use crate::{
    services::{self},
    store::{self, users::UserRow},
};

/// The session key of the signed-in user's id.
pub(super) const USER_KEY: &str = "dashboard_user";
/// The session key of the user's session generation at sign-in: a password reset raises the
/// user's, which ends every session signed in before it.
pub(super) const GENERATION_KEY: &str = "dashboard_generation";
/// Failed sign-ins one e-mail may have in the window (`ratelimit::SIGN_IN_WINDOW`).
pub(super) const SIGN_IN_FAILURES_PER_EMAIL: u32 = 5;
/// Failed sign-ins one client address may have in the window.
pub(super) const SIGN_IN_FAILURES_PER_IP: u32 = 20;

#[derive(Deserialize)]
pub(super) struct SignInForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

pub(super) async fn sign_in_page(
    State(state): State<AppState>,
    session: Session,
    Query(done): Query<Done>,
) -> PageResult {
    if signed_in_user(&state, &session).await?.is_some() {
        return Ok(see_other("/dashboard"));
    }
    let csrf = websession::csrf_token(&session).await?;
    let notice = match done.done.as_deref() {
        Some("reset") => Some("Your password was reset. Sign in with the new one."),
        _ => None,
    };
    Ok(html(
        StatusCode::OK,
        views::sign_in(&csrf, "", notice, None),
    ))
}

/// The user signed in to this session. A session signed in before the user's password was
/// reset (an older session generation) has ended: it is deleted, and nobody is signed in.
pub(super) async fn signed_in_user(
    state: &AppState,
    session: &Session,
) -> ApiResult<Option<UserRow>> {
    let Some(uuid) = session.get::<Uuid>(USER_KEY).await.map_err(session_error)? else {
        return Ok(None);
    };
    let Some(user) = store::users::user_by_uuid(&state.db, uuid).await? else {
        return Ok(None);
    };
    let generation = session
        .get::<i32>(GENERATION_KEY)
        .await
        .map_err(session_error)?
        .unwrap_or(0);
    if generation != user.session_generation {
        websession::sign_out(session).await?;
        return Ok(None);
    }
    Ok(Some(user))
}

pub(super) async fn sign_in(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    session: Session,
    Form(form): Form<SignInForm>,
) -> PageResult {
    websession::check_csrf(&session, Some(&form.csrf)).await?;
    let email = form.email.trim().to_lowercase();
    let failures = &state.http.limiter.sign_in_failures;
    let throttled = state.config.rate_limits.enabled;
    let keys = [
        (format!("email:{email}"), SIGN_IN_FAILURES_PER_EMAIL),
        (format!("ip:{ip}"), SIGN_IN_FAILURES_PER_IP),
    ];
    let now = std::time::Instant::now();
    if throttled {
        let wait = keys
            .iter()
            .filter_map(|(key, limit)| failures.refused(key.clone(), *limit, now))
            .max();
        if let Some(wait) = wait {
            let minutes = wait.as_secs().div_ceil(60).max(1);
            let csrf = websession::csrf_token(&session).await?;
            let message = format!(
                "Too many failed sign-ins. Try again in {minutes} minute{}.",
                if minutes == 1 { "" } else { "s" }
            );
            let mut response = html(
                StatusCode::TOO_MANY_REQUESTS,
                views::sign_in(&csrf, &email, None, Some(&message)),
            );
            if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
                response
                    .headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, v);
            }
            return Ok(response);
        }
    }
    let user = services::users::sign_in(&state.db, &email, &form.password).await?;
    let Some(user) = user else {
        if throttled {
            for (key, _) in keys {
                failures.failed(key, now);
            }
        }
        let csrf = websession::csrf_token(&session).await?;
        return Ok(html(
            StatusCode::UNAUTHORIZED,
            views::sign_in(
                &csrf,
                &email,
                None,
                Some("The e-mail or the password is not right."),
            ),
        ));
    };
    websession::signed_in(&session).await?;
    session
        .insert(USER_KEY, user.uuid)
        .await
        .map_err(session_error)?;
    session
        .insert(GENERATION_KEY, user.session_generation)
        .await
        .map_err(session_error)?;
    Ok(see_other("/dashboard"))
}

pub(super) async fn sign_out(session: Session, Form(form): Form<CsrfForm>) -> PageResult {
    websession::check_csrf(&session, Some(&form.csrf)).await?;
    websession::sign_out(&session).await?;
    Ok(see_other("/dashboard/sign-in"))
}

#[derive(Deserialize)]
pub(super) struct PasswordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
}

pub(super) async fn password_page(dash: Dash) -> PageResult {
    Ok(html(StatusCode::OK, views::password(&dash.nav(), None)))
}

pub(super) async fn change_password(
    State(state): State<AppState>,
    dash: Dash,
    Form(form): Form<PasswordForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    match services::users::change_password(
        &state.db,
        &state.clock,
        &dash.user,
        &form.current,
        &form.new,
    )
    .await
    {
        Ok(()) => Ok(see_other("/dashboard?done=password")),
        Err(services::Error::Refused(why)) => Ok(html(
            StatusCode::UNPROCESSABLE_ENTITY,
            views::password(&dash.nav(), Some(&why.to_string())),
        )),
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e).into()),
    }
}
