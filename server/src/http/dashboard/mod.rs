//! The dashboard at `/dashboard`: server-rendered pages and plain HTML forms (POST, then a
//! redirect) for the platform's operators and partners' members. Who is signed in lives in the
//! dashboard's browser session (`websession`, cookie `sb_dashboard`); every form carries the
//! session's CSRF token, checked first. A member of one organisation never sees another's apps:
//! every app (and what hangs off it) is looked up through `member_app`, which answers 404 for
//! any app the member may not see. Changes go through the same `services` functions as the CLI.

mod accounts;
mod apps;
mod audit;
mod credit_review;
mod funnel;
mod logo;
mod plan_groups;
mod refunds;
mod requests;
mod reset;
mod sandbox;
mod settings;
mod shown;
mod sign_in;
mod tokens;
mod utility;
mod views;
mod weather;
mod webhooks;

use axum::{
    extract::{FromRequestParts, Request},
    http::{
        header::{
            CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY,
            X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
        },
        request::Parts,
        HeaderValue, StatusCode,
    },
    middleware::{self, Next},
    response::{Html, IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    error::{ApiError, ApiResult, ErrorCode},
    extract::ClientIp,
    websession::{self, SessionKind},
    AppState,
};
use crate::{
    domain::users::{Member, Role},
    services::{self, apps::AppRefused, audit::Actor},
    store::{self, apps::AppRow, users::UserRow},
};
use apps::{after_change, app_page, create_app, home, render_app_typed};
use settings::{
    set_branding, set_landing, set_late_fee, set_origins, set_payment_keys,
    set_payment_webhook_secret, set_renewal, set_support,
};
use sign_in::{change_password, password_page, sign_in, sign_in_page, sign_out, signed_in_user};
use tokens::{create_token, revoke_page, revoke_token};

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/dashboard", get(home))
        .route("/dashboard/", get(home))
        .route("/dashboard/sign-in", get(sign_in_page).post(sign_in))
        .route("/dashboard/sign-out", post(sign_out))
        .route(
            "/dashboard/password",
            get(password_page).post(change_password),
        )
        .route("/dashboard/apps", post(create_app))
        .route("/dashboard/apps/{app}", get(app_page))
        .route("/dashboard/apps/{app}/branding", post(set_branding))
        .route("/dashboard/apps/{app}/logo", post(logo::upload_logo))
        .route("/dashboard/apps/{app}/origins", post(set_origins))
        .route("/dashboard/apps/{app}/support", post(set_support))
        .route("/dashboard/apps/{app}/renewal", post(set_renewal))
        .route("/dashboard/apps/{app}/landing", post(set_landing))
        .route("/dashboard/apps/{app}/late-fee", post(set_late_fee))
        .route("/dashboard/apps/{app}/payment-keys", post(set_payment_keys))
        .route(
            "/dashboard/apps/{app}/payment-webhook-secret",
            post(set_payment_webhook_secret),
        )
        .route("/dashboard/apps/{app}/tokens", post(create_token))
        .route(
            "/dashboard/apps/{app}/tokens/revoke",
            get(revoke_page).post(revoke_token),
        )
        .merge(shown::routes())
        .merge(audit::routes())
        .merge(webhooks::routes())
        .merge(accounts::routes())
        .merge(reset::routes())
        .merge(sandbox::routes())
        .merge(refunds::routes())
        .merge(plan_groups::routes())
        .merge(requests::routes())
        .merge(credit_review::routes())
        .merge(weather::routes())
        .merge(utility::routes())
        .merge(funnel::routes())
        .layer(websession::layer(state, SessionKind::Dashboard))
        .layer(middleware::from_fn(page_headers))
        .route("/dashboard/assets/dashboard.css", get(stylesheet))
        .route("/dashboard/assets/copy.js", get(copy_script))
}

/// Dashboard pages load nothing but their own stylesheet and copy script, may not be framed,
/// and are never cached (they show secrets once and per-user data).
async fn page_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let h = response.headers_mut();
    let pdf = h
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/pdf"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if pdf {
        // The browser's own PDF viewer shows these; a page policy would stop it.
        return response;
    }
    // A page with a policy of its own (a sent e-mail, sandboxed) keeps it.
    if !h.contains_key(CONTENT_SECURITY_POLICY) {
        h.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; \
                 form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        );
    }
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    response
}

async fn stylesheet() -> Response {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../../../style/dashboard.css"),
    )
        .into_response()
}

async fn copy_script() -> Response {
    (
        [
            (CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("copy.js"),
    )
        .into_response()
}

/// A dashboard failure: the API's error, shown as a small page.
pub struct PageError(ApiError);

impl<E: Into<ApiError>> From<E> for PageError {
    fn from(e: E) -> Self {
        PageError(e.into())
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        self.0.as_page().into_response()
    }
}

type PageResult = Result<Response, PageError>;

fn session_error(e: tower_sessions::session::Error) -> ApiError {
    ApiError::internal(anyhow::anyhow!("dashboard session: {e}"))
}

/// The signed-in user of a dashboard request; without one, the request is sent to sign in.
pub struct Dash {
    pub user: UserRow,
    pub session: Session,
    pub csrf: String,
}

impl Dash {
    fn member(&self) -> Member {
        Member {
            role: self.user.role,
            organisation: self.user.organisation_uuid,
        }
    }

    /// Refuses a change only the operator makes; `change` completes "Only the operator ...".
    fn operator_only(&self, change: &'static str) -> Result<(), ApiError> {
        if self.member().is_operator() {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::ScopeDenied,
            format!("Only the operator {change}"),
        ))
    }

    fn actor(&self) -> Actor {
        Actor::User {
            uuid: self.user.uuid,
            email: self.user.email.clone(),
        }
    }

    fn nav(&self) -> views::Nav {
        views::Nav {
            email: self.user.email.clone(),
            organisation: self.user.organisation_name.clone(),
            operator: self.user.role == Role::Operator,
            csrf: self.csrf.clone(),
        }
    }

    /// Checks the form's CSRF token; the first thing every POST does.
    async fn check(&self, submitted: &str) -> ApiResult<()> {
        websession::check_csrf(&self.session, Some(submitted)).await
    }
}

impl FromRequestParts<AppState> for Dash {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let to_sign_in = || Redirect::to("/dashboard/sign-in").into_response();
        let user = signed_in_user(state, &session)
            .await
            .map_err(|e| PageError(e).into_response())?
            .ok_or_else(to_sign_in)?;
        let csrf = websession::csrf_token(&session)
            .await
            .map_err(|e| PageError(e).into_response())?;
        Ok(Dash {
            user,
            session,
            csrf,
        })
    }
}

fn html(status: StatusCode, body: String) -> Response {
    (status, Html(body)).into_response()
}

fn see_other(to: &str) -> Response {
    Redirect::to(to).into_response()
}

/// The app `uuid` if this member may see it; any other (unknown, or another organisation's)
/// is the same 404.
async fn member_app(state: &AppState, dash: &Dash, uuid: Uuid) -> ApiResult<AppRow> {
    store::apps::app_by_uuid(&state.db, uuid)
        .await?
        .filter(|app| dash.member().may_see(app.organisation_uuid))
        .ok_or_else(|| ApiError::not_found("app"))
}

/// A use case's refusal is shown on the page it came from (422); a failure is a 500.
fn refusal(e: services::Error<AppRefused>) -> Result<String, ApiError> {
    match e {
        services::Error::Refused(why) => Ok(why.to_string()),
        services::Error::Failed(e) => Err(ApiError::internal(e)),
    }
}

/// A use case's refusal to show on the page (422), unless `missing` says it is of a thing that
/// does not exist (the 404 of a `what` that does not exist); a failure is a 500.
fn refusal_or_404<R>(
    e: services::Error<R>,
    missing: impl Fn(&R) -> bool,
    what: &str,
) -> Result<R, ApiError> {
    match e {
        services::Error::Refused(why) if missing(&why) => Err(ApiError::not_found(what)),
        services::Error::Refused(why) => Ok(why),
        services::Error::Failed(e) => Err(ApiError::internal(e)),
    }
}

/// The API answers from memory for a moment; drop that, so that a change made here (a revoked
/// key, a new brand) shows on the API at once.
fn app_changed(state: &AppState) {
    state.http.caches.principals.clear();
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

#[derive(Deserialize)]
struct Done {
    done: Option<String>,
}
