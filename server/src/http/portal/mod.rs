//! Hosted pages and the customer portal, first-party on this service's origin, branded per app:
//!
//! - `/hosted/link?token=...`: an e-mail's single-use link. Its GET spends nothing (mail
//!   scanners fetch links before the customer does): it shows the app's page with one button, a
//!   CSRF-checked POST to the same address, which spends the link and opens the flow of its
//!   purpose full-page (or the frozen-credit page); a spent or expired one offers a fresh link
//!   by e-mail.
//! - `/go/<app-slug>`: hosted sign-up: the partner's landing text, name and e-mail, a one-time
//!   code, then the account is created and the enrollment flow opens full-page; an address that
//!   already has an account in the app is signed in to it instead, never given a second one.
//! - `/go/<app-slug>/portal`: the portal's sign-in, per app: an e-mailed code signs in to that
//!   app's accounts of the address only (choosing one when it has several there); an address's
//!   accounts at other apps are never listed. `/portal` is the signed-in home (signed out, it
//!   sends the browser to the sign-in of the app it last used, else says where to sign in);
//!   the portal's own pages (`pages`) show usage, bills, the billing address, documents,
//!   renewal and support, and buttons open the card, billing, documents and renewal flows
//!   full-page.
//!
//! Every page wears the brand of the app it speaks for (name, colour, logo, support contacts),
//! never the platform's; a page that cannot know the app (a link that is not ours, an unknown
//! slug) wears no brand at all.
//!
//! Plain server-rendered HTML forms (POST, then a redirect), no script of their own. Every form
//! carries the session's CSRF token; every page is `no-store`, may not be framed, and has a
//! strict Content-Security-Policy.

mod chart;
mod links;
pub(crate) mod pages;
mod render;
mod sign_in;
mod sign_up;

use axum::{
    http::{
        header::{self, HeaderValue},
        StatusCode,
    },
    middleware::{self, Next},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use leptos::prelude::*;
use links::{
    authenticate_page, credit_page, deposit_page, done_page, link_page, open_link, pay_deposit,
    resend_link, retry_credit,
};
use render::{page, paragraph};
use serde::Deserialize;
use sign_in::{
    choose_account, choose_page, portal_code, portal_code_page, portal_home, portal_open,
    portal_sign_in, portal_sign_in_page, portal_sign_out,
};
use sign_up::{confirm_page, confirm_sign_up, landing, renewal_page, start_sign_up};
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    branded::Brand,
    error::{ApiError, ApiResult},
    websession::{self, SessionKind},
    AppState,
};
use crate::{
    services::hosted::{self as hosted_service, HostedRefused},
    store::apps::AppRow,
};

/// Session keys: the signed-in portal customer, a sign-up waiting for its code, the address a
/// portal code went to and the app it signs in to, the account a frozen-credit link opened, and
/// the accounts to choose from.
const CUSTOMER: &str = "customer";
const SIGN_UP: &str = "sign_up";
const PORTAL_EMAIL: &str = "portal_email";
/// The app whose portal the session signs in to (kept while signed in, so that a signed-out
/// `/portal` goes back to that app's sign-in).
const PORTAL_APP: &str = "portal_app";
const CREDIT_ACCOUNT: &str = "credit_account";
const CREDIT_UNFREEZE: &str = "credit_unfreeze";
/// The account and the payment an authentication link opened.
const AUTH_ACCOUNT: &str = "authenticate_account";
const AUTH_PAYMENT: &str = "authenticate_payment";
/// The account whose deposit a deposit link opened.
const DEPOSIT_ACCOUNT: &str = "deposit_account";
/// The accounts of the address signed in with, when it has several to choose from.
const CHOICES: &str = "portal_choices";

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/hosted/link", get(link_page).post(open_link))
        .route("/hosted/link/resend", post(resend_link))
        .route("/hosted/credit", get(credit_page).post(retry_credit))
        .route("/hosted/authenticate", get(authenticate_page))
        .route("/hosted/deposit", get(deposit_page).post(pay_deposit))
        .route("/hosted/done", get(done_page))
        .route("/go/{app_slug}", get(landing).post(start_sign_up))
        .route(
            "/go/{app_slug}/confirm",
            get(confirm_page).post(confirm_sign_up),
        )
        .route("/go/{app_slug}/renew/{location_uuid}", get(renewal_page))
        .route(
            "/go/{app_slug}/portal",
            get(portal_sign_in_page).post(portal_sign_in),
        )
        .route("/portal", get(portal_home))
        .route("/portal/code", get(portal_code_page).post(portal_code))
        .route("/portal/choose", get(choose_page).post(choose_account))
        .route("/portal/open/{scope}", post(portal_open))
        .route("/portal/sign-out", post(portal_sign_out))
        .route("/portal/usage", get(pages::usage_page))
        .route("/portal/invoices", get(pages::invoices_page))
        .route("/portal/invoices/{number}", get(pages::invoice_page))
        .route("/portal/invoices/{number}/pdf", get(pages::invoice_pdf))
        .route("/portal/invoices/{number}/pay", post(pages::pay_invoice))
        .route("/portal/payment-plan", post(pages::accept_payment_plan))
        .route(
            "/portal/billing-address",
            get(pages::billing_address_page).post(pages::set_billing_address),
        )
        .route("/portal/documents", get(pages::documents_page))
        .route("/portal/documents/{document}", get(pages::document_pdf))
        .route("/portal/renewal", get(pages::renewal_page))
        .route("/portal/support", get(pages::support_page))
        .layer(websession::layer(state, SessionKind::Customer))
        .layer(middleware::from_fn(security_headers))
        .route("/portal/assets/portal.css", get(stylesheet))
        .route("/portal/assets/authenticate.js", get(authenticate_script))
}

/// The authentication page's own script (`authenticate_page`).
async fn authenticate_script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("authenticate.js"),
    )
        .into_response()
}

/// The hosted pages' own styles, beside the flows' stylesheet they share (kept out of that
/// one, which every flow bundle loads).
async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        include_str!("../../../../style/portal.css"),
    )
        .into_response()
}

/// Hosted pages are never framed, cached or referred from, and run no script.
async fn security_headers(req: axum::extract::Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    let pdf = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/pdf"));
    // A PDF is shown by the browser's own viewer, which a page policy would stop.
    if !pdf && !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(BASE_POLICY),
        );
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// What a hosted page may load: its own stylesheet and images (a partner's logo over https),
/// forms posted to this origin only, no script, never framed.
const BASE_POLICY: &str = "default-src 'none'; style-src 'self'; img-src 'self' https: data:; \
    form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn see_other(location: &str) -> Response {
    Redirect::to(location).into_response()
}

/// What a refusal says to a person on a hosted page, and its status.
fn refusal(why: &HostedRefused) -> (StatusCode, String) {
    match why {
        HostedRefused::Field(e) => (StatusCode::BAD_REQUEST, e.message.clone()),
        HostedRefused::TooMany => (
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests for now. Wait an hour and try again.".to_owned(),
        ),
        HostedRefused::CodeWrong => (
            StatusCode::BAD_REQUEST,
            "That is not the code we sent. Check it and try again.".to_owned(),
        ),
        HostedRefused::CodeVoid => (
            StatusCode::BAD_REQUEST,
            "This code no longer works. Ask for a new one.".to_owned(),
        ),
        HostedRefused::NotFound => (
            StatusCode::NOT_FOUND,
            "This page no longer exists.".to_owned(),
        ),
    }
}

#[derive(Debug, Deserialize)]
pub struct CsrfForm {
    csrf: Option<String>,
}

/// Where a customer of `app` signs in to the portal.
fn sign_in_path(app: &AppRow) -> String {
    format!("/go/{}/portal", app.slug)
}

async fn session_uuid(session: &Session, key: &str) -> ApiResult<Option<Uuid>> {
    session.get::<Uuid>(key).await.map_err(ApiError::internal)
}

async fn app_or_404(state: &AppState, slug: &str) -> ApiResult<Result<AppRow, Response>> {
    Ok(hosted_service::app_of_slug(state, slug)
        .await?
        .ok_or_else(no_sign_up_page))
}

fn no_sign_up_page() -> Response {
    page(
        StatusCode::NOT_FOUND,
        &Brand::neutral(),
        "Page not found",
        "not-found",
        paragraph("There is no sign-up page at this address.").into_any(),
    )
}

#[derive(Debug, Deserialize)]
pub struct CodeForm {
    csrf: Option<String>,
    code: Option<String>,
}

/// The form that takes an e-mailed one-time code.
fn code_form(action: impl Into<String>, csrf: &str) -> AnyView {
    render::form(
        action,
        csrf,
        view! {
            <label for="code">"Code"</label>
            <input id="code" name="code" type="text" inputmode="numeric"
                autocomplete="one-time-code" pattern="[0-9 ]*" required/>
        },
        "Confirm",
    )
}

/// Signs the customer in to `account` of `app` (a fresh session id and CSRF token), forgetting
/// whatever the session held before.
async fn sign_in(session: &Session, account: Uuid, app: Uuid) -> ApiResult<()> {
    signed_in_at(session, app).await?;
    session
        .insert(CUSTOMER, account)
        .await
        .map_err(ApiError::internal)
}

/// A fresh session signed in at `app`'s pages, holding nothing of the session before it.
async fn signed_in_at(session: &Session, app: Uuid) -> ApiResult<()> {
    session.clear().await;
    websession::signed_in(session).await?;
    session
        .insert(PORTAL_APP, app)
        .await
        .map_err(ApiError::internal)
}

/// A confirmed address's accounts in `app` (newest first): one is signed in to and the portal
/// opens; several are offered to choose from, the address signed in as their owner but not
/// yet as one of them.
async fn signed_in_to(session: &Session, accounts: &[Uuid], app: Uuid) -> ApiResult<Response> {
    if let [one] = accounts {
        sign_in(session, *one, app).await?;
        return Ok(see_other("/portal"));
    }
    signed_in_at(session, app).await?;
    session
        .insert(CHOICES, accounts)
        .await
        .map_err(ApiError::internal)?;
    Ok(see_other("/portal/choose"))
}

async fn customer(session: &Session) -> ApiResult<Option<Uuid>> {
    session_uuid(session, CUSTOMER).await
}

/// The app whose portal the session signs in to, if it still exists.
async fn portal_app(state: &AppState, session: &Session) -> ApiResult<Option<AppRow>> {
    Ok(match session_uuid(session, PORTAL_APP).await? {
        Some(uuid) => crate::store::apps::app_by_uuid(&state.db, uuid).await?,
        None => None,
    })
}

/// The accounts an address signed in with may open, when it has several.
async fn choices(session: &Session) -> ApiResult<Vec<Uuid>> {
    Ok(session
        .get::<Vec<Uuid>>(CHOICES)
        .await
        .map_err(ApiError::internal)?
        .unwrap_or_default())
}

impl From<HostedRefused> for ApiError {
    fn from(why: HostedRefused) -> Self {
        let (status, message) = refusal(&why);
        let code = match why {
            HostedRefused::Field(e) => return e.into(),
            HostedRefused::NotFound => super::error::ErrorCode::ResourceMissing,
            HostedRefused::TooMany => super::error::ErrorCode::RateLimited,
            HostedRefused::CodeWrong | HostedRefused::CodeVoid => {
                super::error::ErrorCode::ParameterInvalid
            }
        };
        ApiError::new(code, message).with_status(status).as_page()
    }
}
