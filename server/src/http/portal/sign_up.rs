//! The hosted sign-up at `/go/<app-slug>`: the partner's landing text, name and e-mail, a
//! one-time code, then the account is created and the enrollment flow opens full-page (an
//! address already a customer of the app is signed in instead); and the lasting renewal address
//! printed on expiration notices.

use axum::{extract::State, http::StatusCode, response::Response, Form};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    app_or_404, code_form, no_sign_up_page, refusal,
    render::{alert, form, input, page, paragraph},
    see_other, sign_in, sign_in_path, signed_in_to, CodeForm, SIGN_UP,
};
use crate::{
    http::{
        branded::Brand,
        error::{ApiError, ApiResult},
        extract::{ClientIp, Path},
        websession, AppState,
    },
    services::{
        self,
        hosted::{self as hosted_service, PendingSignUp, SignedUp},
    },
    store::apps::AppRow,
};

/// The app of a sign-up page: a live app's stays unpublished until it is ready.
async fn sign_up_app_or_404(state: &AppState, slug: &str) -> ApiResult<Result<AppRow, Response>> {
    Ok(hosted_service::sign_up_app_of_slug(state, slug)
        .await?
        .ok_or_else(no_sign_up_page))
}

#[derive(Debug, Default, Deserialize)]
pub struct SignUpForm {
    csrf: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
}

fn sign_up_page(
    status: StatusCode,
    app: &AppRow,
    csrf: &str,
    given: &SignUpForm,
    error: Option<&str>,
) -> Response {
    let value = |v: &Option<String>| v.clone().unwrap_or_default();
    let fields = view! {
        {input("first_name", "First name", "text", "given-name", value(&given.first_name))}
        {input("last_name", "Last name", "text", "family-name", value(&given.last_name))}
        {input("email", "E-mail", "email", "email", value(&given.email))}
    };
    let sign_in = sign_in_path(app);
    page(
        status,
        &Brand::of(app),
        &format!("Get your electricity with {}", app.display_name),
        "sign-up",
        view! {
            {landing_text(app)}
            {error.map(alert)}
            {form(format!("/go/{}", app.slug), csrf, fields, "Continue")}
            <p class="hint">
                "We e-mail you a code to confirm your address before anything else."
            </p>
            <p class="hint">"Already a customer? " <a href=sign_in>"Sign in"</a> "."</p>
        }
        .into_any(),
    )
}

/// The app's own words above the sign-up form (escaped; its line breaks kept by the style),
/// else the general promise.
fn landing_text(app: &AppRow) -> AnyView {
    match app.landing_text.clone().filter(|t| !t.trim().is_empty()) {
        Some(text) => {
            view! { <p class="landing-text" data-testid="landing-text">{text}</p> }.into_any()
        }
        None => paragraph(
            "Choose a plan, and we switch your electricity for you: no interruption, nobody \
             needs to visit.",
        )
        .into_any(),
    }
}

/// The partner's branded landing: name and e-mail.
pub async fn landing(
    State(state): State<AppState>,
    session: Session,
    Path(slug): Path<String>,
) -> ApiResult<Response> {
    let app = match sign_up_app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let csrf = websession::csrf_token(&session).await?;
    Ok(sign_up_page(
        StatusCode::OK,
        &app,
        &csrf,
        &SignUpForm::default(),
        None,
    ))
}

/// Takes the name and address and e-mails the code.
pub async fn start_sign_up(
    State(state): State<AppState>,
    session: Session,
    ClientIp(ip): ClientIp,
    Path(slug): Path<String>,
    Form(f): Form<SignUpForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let app = match sign_up_app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let given = |v: &Option<String>| v.clone().unwrap_or_default();
    match hosted_service::start_sign_up(
        &state,
        &app,
        &given(&f.first_name),
        &given(&f.last_name),
        &given(&f.email),
        &ip,
    )
    .await
    {
        Ok(pending) => {
            session
                .insert(SIGN_UP, &pending)
                .await
                .map_err(ApiError::internal)?;
            Ok(see_other(&format!("/go/{slug}/confirm")))
        }
        Err(services::Error::Refused(why)) => {
            let (status, message) = refusal(&why);
            let csrf = websession::csrf_token(&session).await?;
            Ok(sign_up_page(status, &app, &csrf, &f, Some(&message)))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

fn confirm_sign_up_page(
    status: StatusCode,
    app: &AppRow,
    email: &str,
    csrf: &str,
    error: Option<&str>,
) -> Response {
    let again = format!("/go/{}", app.slug);
    page(
        status,
        &Brand::of(app),
        "Check your e-mail",
        "confirm-code",
        view! {
            {paragraph(format!(
                "We sent a six-digit code to {email}. Type it here; it works for 10 minutes."
            ))}
            {error.map(alert)}
            {code_form(format!("/go/{}/confirm", app.slug), csrf)}
            <p class="hint"><a href=again>"Use another address or send a new code"</a></p>
        }
        .into_any(),
    )
}

async fn pending_sign_up(session: &Session, app: &AppRow) -> ApiResult<Option<PendingSignUp>> {
    Ok(session
        .get::<PendingSignUp>(SIGN_UP)
        .await
        .map_err(ApiError::internal)?
        .filter(|p| p.app_uuid == app.uuid))
}

/// Asks for the code sent.
pub async fn confirm_page(
    State(state): State<AppState>,
    session: Session,
    Path(slug): Path<String>,
) -> ApiResult<Response> {
    let app = match sign_up_app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let Some(pending) = pending_sign_up(&session, &app).await? else {
        return Ok(see_other(&format!("/go/{slug}")));
    };
    let csrf = websession::csrf_token(&session).await?;
    Ok(confirm_sign_up_page(
        StatusCode::OK,
        &app,
        &pending.email,
        &csrf,
        None,
    ))
}

/// Checks the code, creates the account, signs the customer in and opens enrollment; an address
/// that already has an account in the app is signed in to it (choosing among several) instead.
pub async fn confirm_sign_up(
    State(state): State<AppState>,
    session: Session,
    Path(slug): Path<String>,
    Form(f): Form<CodeForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let app = match sign_up_app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let Some(pending) = pending_sign_up(&session, &app).await? else {
        return Ok(see_other(&format!("/go/{slug}")));
    };
    match hosted_service::finish_sign_up(&state, &pending, f.code.as_deref().unwrap_or_default())
        .await
    {
        Ok(SignedUp::Created { account, location }) => {
            sign_in(&session, account.uuid, app.uuid).await?;
            Ok(see_other(&location))
        }
        Ok(SignedUp::Existing(accounts)) => signed_in_to(&session, &accounts, app.uuid).await,
        Err(services::Error::Refused(why)) => {
            let (status, message) = refusal(&why);
            let csrf = websession::csrf_token(&session).await?;
            Ok(confirm_sign_up_page(
                status,
                &app,
                &pending.email,
                &csrf,
                Some(&message),
            ))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

/// The lasting renewal address printed on expiration notices
/// (`domain::renewal::hosted_renewal_path`): the e-mail's button opens the
/// renewal directly; here the customer signs in to the portal to renew.
pub async fn renewal_page(
    State(state): State<AppState>,
    Path((slug, _location)): Path<(String, Uuid)>,
) -> ApiResult<Response> {
    let app = match app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let sign_in = sign_in_path(&app);
    Ok(page(
        StatusCode::OK,
        &Brand::of(&app),
        "Renew your electricity plan",
        "renew",
        view! {
            <p>
                "Sign in with your e-mail address to see your renewal plans: we e-mail you a \
                 code, no password needed."
            </p>
            <p><a href=sign_in>"Sign in to renew"</a></p>
        }
        .into_any(),
    ))
}
