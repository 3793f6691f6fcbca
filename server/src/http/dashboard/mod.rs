//! The dashboard at `/dashboard`: server-rendered pages and plain HTML forms (POST, then a
//! redirect) for the platform's operators and partners' members. Who is signed in lives in the
//! dashboard's browser session (`websession`, cookie `sb_dashboard`); every form carries the
//! session's CSRF token, checked first. A member of one organisation never sees another's apps:
//! every app (and what hangs off it) is looked up through `member_app`, which answers 404 for
//! any app the member may not see. Changes go through the same `services` functions as the CLI.

mod accounts;
mod audit;
mod credit_review;
mod funnel;
mod logo;
mod plan_groups;
mod refunds;
mod requests;
mod reset;
mod sandbox;
mod shown;
mod utility;
mod views;
mod weather;
mod webhooks;

use app::api::Environment;
use axum::{
    extract::{FromRequestParts, Path, Query, Request, State},
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
    Form, Router,
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
    services::{
        self,
        apps::{AppRefused, BrandingChange, SupportInput},
        audit::Actor,
    },
    store::{self, apps::AppRow, users::UserRow},
};

/// The session key of the signed-in user's id.
const USER_KEY: &str = "dashboard_user";
/// The session key of the user's session generation at sign-in: a password reset raises the
/// user's, which ends every session signed in before it.
const GENERATION_KEY: &str = "dashboard_generation";
/// Failed sign-ins one e-mail may have in the window (`ratelimit::SIGN_IN_WINDOW`).
const SIGN_IN_FAILURES_PER_EMAIL: u32 = 5;
/// Failed sign-ins one client address may have in the window.
const SIGN_IN_FAILURES_PER_IP: u32 = 20;

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

/// The API answers from memory for a moment; drop that, so that a change made here (a revoked
/// key, a new brand) shows on the API at once.
fn app_changed(state: &AppState) {
    state.http.caches.principals.clear();
}

// ---------------------------------------------------------------------------------------------
// Signing in and out

#[derive(Deserialize)]
struct SignInForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

async fn sign_in_page(
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
async fn signed_in_user(state: &AppState, session: &Session) -> ApiResult<Option<UserRow>> {
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

async fn sign_in(
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

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn sign_out(session: Session, Form(form): Form<CsrfForm>) -> PageResult {
    websession::check_csrf(&session, Some(&form.csrf)).await?;
    websession::sign_out(&session).await?;
    Ok(see_other("/dashboard/sign-in"))
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
}

async fn password_page(dash: Dash) -> PageResult {
    Ok(html(StatusCode::OK, views::password(&dash.nav(), None)))
}

async fn change_password(
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

// ---------------------------------------------------------------------------------------------
// Apps

#[derive(Deserialize)]
struct Done {
    done: Option<String>,
}

/// What a `?done=` after a redirect says (only these fixed texts are ever shown).
fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "password" => "Your password was changed.",
        "branding" => "The brand was saved.",
        "logo" => "The logo was uploaded.",
        "origins" => "The allowed origins were saved.",
        "support" => "The support contacts were saved.",
        "renewal" => "The renewal link was saved.",
        "landing" => "The landing text was saved.",
        "late_fee" => "The late fee was saved.",
        "keys" => "The payment keys were saved.",
        "webhook_secret" => "The webhook signing secret was saved.",
        "revoked" => "The key was revoked.",
        _ => return None,
    })
}

async fn home(State(state): State<AppState>, dash: Dash, Query(done): Query<Done>) -> PageResult {
    let page = apps_list(
        &state,
        &dash,
        &views::Typed::default(),
        done_message(done.done.as_deref()),
        None,
    )
    .await?;
    Ok(html(StatusCode::OK, page))
}

async fn apps_list(
    state: &AppState,
    dash: &Dash,
    typed: &views::Typed,
    notice: Option<&str>,
    error: Option<&str>,
) -> ApiResult<String> {
    let member = dash.member();
    let apps = match member.role {
        Role::Operator => store::apps::apps_of(&state.db, None).await?,
        Role::Partner => match member.organisation {
            Some(org) => store::apps::apps_of(&state.db, Some(org)).await?,
            None => Vec::new(),
        },
    };
    let organisations = if member.is_operator() {
        store::users::organisations(&state.db).await?
    } else {
        Vec::new()
    };
    Ok(views::apps(
        &dash.nav(),
        &apps,
        &organisations,
        typed,
        notice,
        error,
    ))
}

#[derive(Deserialize)]
struct CreateAppForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    environment: String,
    /// The operator's choice of owner (blank: the platform's own).
    #[serde(default)]
    organisation: String,
}

async fn create_app(
    State(state): State<AppState>,
    dash: Dash,
    Form(form): Form<CreateAppForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let member = dash.member();
    let kept = views::Typed {
        value: form.name.clone(),
        error: None,
    };
    let environment = match Environment::parse(form.environment.trim()) {
        Some(e) => e,
        None => {
            let page =
                apps_list(&state, &dash, &kept, None, Some("Choose sandbox or live.")).await?;
            return Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page));
        }
    };
    let organisation = if member.is_operator() {
        match form.organisation.trim() {
            "" => None,
            raw => {
                let known = store::users::organisations(&state.db).await?;
                let found = Uuid::parse_str(raw)
                    .ok()
                    .filter(|u| known.iter().any(|o| o.uuid == *u));
                match found {
                    Some(u) => Some(u),
                    None => return Err(ApiError::not_found("organisation").into()),
                }
            }
        }
    } else {
        if environment == Environment::Live {
            let page = apps_list(
                &state,
                &dash,
                &kept,
                None,
                Some("Live apps are created by the operator; ask them for one."),
            )
            .await?;
            return Ok(html(StatusCode::FORBIDDEN, page));
        }
        member.organisation
    };
    match services::apps::create_app(
        &state.db,
        &state.clock,
        &dash.actor(),
        &form.name,
        environment,
        organisation,
    )
    .await
    {
        Ok(created) => {
            shown::show_once(
                &state,
                &dash.session,
                shown::Secret {
                    made: shown::Made::App,
                    app: created.uuid,
                    endpoint: None,
                    label: services::apps::FIRST_KEY_NAME,
                    secret: &created.token,
                },
            )
            .await
        }
        Err(services::Error::Refused(AppRefused::Field(e))) if e.param == "name" => {
            let typed = views::Typed::refused(
                &form.name,
                "Give the app a name of 1 to 100 characters, on one line.",
            );
            let page = apps_list(&state, &dash, &typed, None, None).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = apps_list(&state, &dash, &kept, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

async fn app_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Query(done): Query<Done>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let page = render_app(
        &state,
        &dash,
        &app,
        done_message(done.done.as_deref()),
        None,
    )
    .await?;
    Ok(html(StatusCode::OK, page))
}

async fn render_app(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    notice: Option<&str>,
    error: Option<&str>,
) -> ApiResult<String> {
    render_app_typed(state, dash, app, notice, error, &views::Refill::default()).await
}

/// The app page, with what was typed into its key or webhook form kept after a refusal.
async fn render_app_typed(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    notice: Option<&str>,
    error: Option<&str>,
    refill: &views::Refill,
) -> ApiResult<String> {
    let tokens = store::apps::app_tokens(&state.db, app.uuid).await?;
    let endpoints = webhooks::endpoints(state, app.uuid).await?;
    let flow_url = format!(
        "{}/flow/enrollment?app={}",
        state.config.public_url(),
        app.uuid
    );
    let late_fee = services::collections::late_fee_setting(&state.db, app.uuid).await?;
    let webhook_secret_set =
        services::apps::has_payment_webhook_secret(&state.db, app.uuid).await?;
    let processor_webhook_url = format!(
        "{}/processor/webhooks/{}",
        state.config.public_url(),
        app.uuid
    );
    let readiness = services::apps::readiness(&state.db, app).await?;
    Ok(views::app(
        &dash.nav(),
        &views::AppPage {
            app,
            late_fee_percent: late_fee.map(|p| p.to_wire()),
            tokens: &tokens,
            endpoints: &endpoints,
            flow_url: &flow_url,
            webhook_secret_set,
            processor_webhook_url: &processor_webhook_url,
            operator: dash.member().is_operator(),
            readiness: &readiness,
            key_name: &refill.key_name,
            webhook_url: &refill.webhook_url,
            kept: refill.kept.as_ref(),
            notice,
            error,
        },
    ))
}

/// After a change of `app`: back to its page saying so, or the page again with why not.
async fn after_change<T>(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    result: Result<T, services::Error<AppRefused>>,
    done: &str,
) -> PageResult {
    match result {
        Ok(_) => {
            app_changed(state);
            Ok(see_other(&format!(
                "/dashboard/apps/{}?done={done}",
                app.uuid
            )))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = render_app(state, dash, app, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

/// After a form of the app page (`form`, its `done` name too) changed `app`: back to its page
/// saying so, or the page again with what was typed (`typed`, by field name) in that form and
/// why not beside it, so that nothing typed is lost to one refused value.
async fn after_form<T>(
    state: &AppState,
    dash: &Dash,
    app: &AppRow,
    result: Result<T, services::Error<AppRefused>>,
    form: &'static str,
    typed: Vec<(&'static str, String)>,
) -> PageResult {
    match result {
        Ok(_) => {
            app_changed(state);
            Ok(see_other(&format!(
                "/dashboard/apps/{}?done={form}",
                app.uuid
            )))
        }
        Err(e) => {
            let refill = views::Refill {
                kept: Some(views::Kept {
                    form,
                    values: typed,
                    error: refusal(e)?,
                }),
                ..views::Refill::default()
            };
            let page = render_app_typed(state, dash, app, None, None, &refill).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

#[derive(Deserialize)]
struct BrandingForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    primary_color: String,
    #[serde(default)]
    logo_url: String,
}

fn non_blank(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

async fn set_branding(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<BrandingForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let change = BrandingChange {
        display_name: Some(form.display_name.as_str()),
        primary_color: non_blank(&form.primary_color),
        logo_url: non_blank(&form.logo_url),
    };
    let result =
        services::apps::set_branding(&state.db, &state.clock, &dash.actor(), app.uuid, &change)
            .await;
    let typed = vec![
        ("display_name", form.display_name.clone()),
        ("primary_color", form.primary_color.clone()),
        ("logo_url", form.logo_url.clone()),
    ];
    after_form(&state, &dash, &app, result, "branding", typed).await
}

#[derive(Deserialize)]
struct OriginsForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    origins: String,
}

async fn set_origins(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<OriginsForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = match services::apps::parse_origins(&form.origins) {
        Ok(origins) => {
            services::apps::set_allowed_origins(
                &state.db,
                &state.clock,
                &dash.actor(),
                app.uuid,
                origins,
            )
            .await
        }
        Err(why) => Err(services::Error::Refused(why)),
    };
    let typed = vec![("origins", form.origins.clone())];
    after_form(&state, &dash, &app, result, "origins", typed).await
}

#[derive(Deserialize)]
struct SupportForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    phone: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    hours: String,
    #[serde(default)]
    url: String,
}

async fn set_support(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<SupportForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let input = SupportInput {
        name: &form.name,
        phone: &form.phone,
        email: &form.email,
        hours: &form.hours,
        url: &form.url,
    };
    let result =
        services::apps::set_support(&state.db, &state.clock, &dash.actor(), app.uuid, &input).await;
    let typed = vec![
        ("name", form.name.clone()),
        ("phone", form.phone.clone()),
        ("email", form.email.clone()),
        ("hours", form.hours.clone()),
        ("url", form.url.clone()),
    ];
    after_form(&state, &dash, &app, result, "support", typed).await
}

#[derive(Deserialize)]
struct RenewalForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    renewals_url: String,
}

async fn set_renewal(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<RenewalForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = services::apps::set_renewals_url(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.renewals_url,
    )
    .await;
    let typed = vec![("renewals_url", form.renewals_url.clone())];
    after_form(&state, &dash, &app, result, "renewal", typed).await
}

#[derive(Deserialize)]
struct LandingForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    landing_text: String,
}

async fn set_landing(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<LandingForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result = services::apps::set_landing_text(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.landing_text,
    )
    .await;
    let typed = vec![("landing_text", form.landing_text.clone())];
    after_form(&state, &dash, &app, result, "landing", typed).await
}

#[derive(Deserialize)]
struct LateFeeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    late_fee_percent: String,
}

/// The app's late fee (blank or `off`: none); the operator's to set.
async fn set_late_fee(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<LateFeeForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets the late fee")?;
    let result = services::collections::set_late_fee(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        &form.late_fee_percent,
    )
    .await;
    let typed = vec![("late_fee_percent", form.late_fee_percent.clone())];
    after_form(&state, &dash, &app, result, "late_fee", typed).await
}

#[derive(Deserialize)]
struct PaymentKeysForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    publishable_key: String,
    #[serde(default)]
    secret_key: String,
}

async fn set_payment_keys(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<PaymentKeysForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets a live app's payment keys")?;
    let result = services::apps::set_payment_keys(
        &state.db,
        &state.clock,
        &state.pii,
        &dash.actor(),
        app.uuid,
        &form.publishable_key,
        &form.secret_key,
    )
    .await;
    // The secret key is never written back into the page; the publishable one is no secret.
    let typed = vec![("publishable_key", form.publishable_key.clone())];
    after_form(&state, &dash, &app, result, "keys", typed).await
}

#[derive(Deserialize)]
struct WebhookSecretForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    webhook_secret: String,
}

async fn set_payment_webhook_secret(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<WebhookSecretForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    dash.operator_only("sets a live app's webhook signing secret")?;
    let result = services::apps::set_payment_webhook_secret(
        &state.db,
        &state.clock,
        &state.pii,
        &dash.actor(),
        app.uuid,
        &form.webhook_secret,
    )
    .await;
    after_form(&state, &dash, &app, result, "webhook_secret", Vec::new()).await
}

#[derive(Deserialize)]
struct CreateTokenForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
}

async fn create_token(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<CreateTokenForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    let result =
        services::apps::create_token(&state.db, &state.clock, &dash.actor(), app.uuid, &form.name)
            .await;
    match result {
        Ok(token) => {
            shown::show_once(
                &state,
                &dash.session,
                shown::Secret {
                    made: shown::Made::Key,
                    app: app.uuid,
                    endpoint: None,
                    label: form.name.trim(),
                    secret: &token,
                },
            )
            .await
        }
        Err(services::Error::Refused(AppRefused::Field(e))) if e.param == "name" => {
            let refill = views::Refill {
                key_name: views::Typed::refused(&form.name, e.message),
                ..views::Refill::default()
            };
            let page = render_app_typed(&state, &dash, &app, None, None, &refill).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
        Err(e) => {
            let why = refusal(e)?;
            let page = render_app(&state, &dash, &app, None, Some(&why)).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

#[derive(Deserialize)]
struct RevokeForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    prefix: String,
    /// `yes` from the confirmation page; anything else asks first.
    #[serde(default)]
    confirm: String,
}

#[derive(Deserialize)]
struct RevokeQuery {
    #[serde(default)]
    prefix: String,
}

/// Asks before a key is revoked, naming it and what stops working.
async fn revoke_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Query(query): Query<RevokeQuery>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    confirm_revoke(&state, &dash, &app, &query.prefix).await
}

async fn confirm_revoke(state: &AppState, dash: &Dash, app: &AppRow, prefix: &str) -> PageResult {
    let tokens = store::apps::app_tokens(&state.db, app.uuid).await?;
    let key = tokens
        .iter()
        .find(|t| t.prefix == prefix.trim() && t.revoked_at.is_none())
        .ok_or_else(|| ApiError::not_found("key"))?;
    let others = tokens
        .iter()
        .filter(|t| t.revoked_at.is_none() && t.prefix != key.prefix)
        .count();
    let mut effects = vec![format!(
        "The key “{}” ({}…) of {} stops working at once: every API request made with it is refused.",
        key.name, key.prefix, app.display_name
    )];
    effects.push(match others {
        0 => "It is the app's only active key: every program of the app that calls the API stops until a new key is made and put in its place.".to_owned(),
        1 => "The app's other active key keeps working.".to_owned(),
        n => format!("The app's other {n} active keys keep working."),
    });
    effects.push("A revoked key never works again; this cannot be undone.".to_owned());
    let base = format!("/dashboard/apps/{}", app.uuid);
    Ok(html(
        StatusCode::OK,
        views::confirm(
            &dash.nav(),
            views::Confirm {
                title: format!("Revoke the key “{}”?", key.name),
                effects,
                action: format!("{base}/tokens/revoke"),
                fields: vec![("prefix", key.prefix.clone())],
                button: "Revoke the key",
                cancel: base,
            },
        ),
    ))
}

async fn revoke_token(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Form(form): Form<RevokeForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let app = member_app(&state, &dash, app).await?;
    if form.confirm != "yes" {
        return confirm_revoke(&state, &dash, &app, &form.prefix).await;
    }
    let result = services::apps::revoke_token(
        &state.db,
        &state.clock,
        &dash.actor(),
        Some(app.uuid),
        &form.prefix,
    )
    .await;
    after_change(&state, &dash, &app, result, "revoked").await
}
