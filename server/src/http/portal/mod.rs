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
pub(crate) mod pages;

use app::{
    api::{AccountStatus, StatusReason},
    format::{dollars, html_escape, long_date},
};
use axum::{
    extract::State,
    http::{
        header::{self, HeaderValue},
        StatusCode,
    },
    middleware::{self, Next},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Form, Router,
};
use base64::{engine::general_purpose::STANDARD, Engine};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    error::{ApiError, ApiResult},
    extract::{ClientIp, Path, Query},
    websession::{self, SessionKind},
    AppState,
};
use crate::{
    config::CardProcessorOrigins,
    domain::{
        apps::{brand_color, text_on},
        flows::FlowScope,
        hosted::status_in_words,
    },
    services::{
        self,
        hosted::{
            self as hosted_service, HostedRefused, LinkView, OpenedLink, PendingSignUp, SignedUp,
        },
        live_payments::{self, Authentication},
    },
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

// ---------------------------------------------------------------------------------------------
// Rendering.

/// What a page shows of the app it speaks for.
struct Brand {
    /// Empty on a page that speaks for no app.
    name: String,
    logo: Option<String>,
    /// The brand colour and the text colour that reads on it.
    color: Option<(String, &'static str)>,
    /// The app's support contacts (HTML, escaped), shown at the foot of its pages.
    contacts: Vec<String>,
}

impl Brand {
    fn of(app: &AppRow) -> Brand {
        Brand {
            name: app.display_name.clone(),
            logo: app
                .logo_url
                .clone()
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
            color: app
                .primary_color
                .as_deref()
                .and_then(brand_color)
                .map(|c| (c.to_owned(), text_on(c))),
            contacts: pages::partner_lines(app),
        }
    }

    /// A page that cannot know which app it speaks for: no name, no colour, no logo, and
    /// never the platform's own.
    fn neutral() -> Brand {
        Brand {
            name: String::new(),
            logo: None,
            color: None,
            contacts: Vec::new(),
        }
    }

    fn of_option(app: Option<&AppRow>) -> Brand {
        app.map_or_else(Brand::neutral, Brand::of)
    }
}

/// A whole page: the brand's header, then `body` (HTML, its values already escaped). The
/// brand's colour is one inline `<style>`, allowed by its hash alone.
fn page(status: StatusCode, brand: &Brand, title: &str, testid: &str, body: &str) -> Response {
    page_with(status, brand, title, testid, "", body)
}

/// A whole page with `above` (the portal's navigation) between the header and the title. A page
/// without it ends with the app's support contacts (the signed-in portal has its own support
/// page and card).
fn page_with(
    status: StatusCode,
    brand: &Brand,
    title: &str,
    testid: &str,
    above: &str,
    body: &str,
) -> Response {
    page_with_scripts(status, brand, title, testid, above, body, None)
}

/// A page that runs scripts: the processor's (from its origin) and our own file beside the
/// page's stylesheet, never inline ones; it may call and frame the processor's origins only.
struct Scripts<'a> {
    processor: &'a CardProcessorOrigins,
    own: &'a str,
}

fn page_with_scripts(
    status: StatusCode,
    brand: &Brand,
    title: &str,
    testid: &str,
    above: &str,
    body: &str,
    scripts: Option<Scripts<'_>>,
) -> Response {
    let style = brand
        .color
        .as_ref()
        .map(|(c, on)| format!(":root{{--brand:{c};--brand-contrast:{on}}}"))
        .unwrap_or_default();
    let logo = brand
        .logo
        .as_ref()
        .map(|src| format!("<img class=\"logo\" src=\"{}\" alt=\"\">", html_escape(src)))
        .unwrap_or_default();
    let (title_suffix, name) = if brand.name.is_empty() {
        (String::new(), String::new())
    } else {
        let name = html_escape(&brand.name);
        (
            format!(" · {name}"),
            format!("<span class=\"brand\" data-testid=\"app-name\">{name}</span>"),
        )
    };
    let contacts = if above.is_empty() && !brand.contacts.is_empty() {
        format!(
            "<footer class=\"card\" data-testid=\"brand-contacts\"><p>Questions? Contact {}:\
             <br>{}</p></footer>",
            html_escape(&brand.name),
            brand.contacts.join("<br>")
        )
    } else {
        String::new()
    };
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}{title_suffix}</title><link rel=\"stylesheet\" href=\"/pkg/switchboard.css\">\
         <link rel=\"stylesheet\" href=\"/portal/assets/portal.css\">\
         <link rel=\"icon\" href=\"{icon}\"><style>{style}</style>{script_tags}</head><body>\
         <main class=\"page\" data-testid=\"{testid}\"><header class=\"flow-header\">{logo}\
         {name}</header>{above}<h1>{title}</h1>{body}{contacts}</main></body></html>",
        title = html_escape(title),
        // The app's logo is its icon too; the service's own only when it has none.
        icon = html_escape(brand.logo.as_deref().unwrap_or("/favicon.svg")),
        script_tags = scripts.as_ref().map_or_else(String::new, |s| format!(
            "<script src=\"{}\"></script><script src=\"{}\" defer></script>",
            html_escape(&s.processor.script_url),
            html_escape(s.own)
        )),
    );
    let digest = STANDARD.encode(Sha256::digest(style.as_bytes()));
    let sources = scripts.as_ref().map_or_else(String::new, |s| {
        let p = s.processor;
        format!(
            "script-src 'self' {script}; frame-src {script}; connect-src {api} {script}; ",
            script = p.script_origin,
            api = p.api_origin
        )
    });
    let policy = format!(
        "default-src 'none'; {sources}style-src 'self' 'sha256-{digest}'; img-src 'self' https: data:; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    let mut response = (status, axum::response::Html(html)).into_response();
    if let Ok(v) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, v);
    }
    response
}

/// A form posting to `action` with the session's CSRF token; `fields` is its inner HTML.
fn form(action: &str, csrf: &str, fields: &str, button: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\" class=\"stack\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\">{fields}\
         <button type=\"submit\" class=\"primary\">{}</button></form>",
        html_escape(action),
        html_escape(csrf),
        html_escape(button)
    )
}

/// A labelled text input.
fn input(name: &str, label: &str, kind: &str, autocomplete: &str, value: &str) -> String {
    format!(
        "<label for=\"{name}\">{label}</label><input id=\"{name}\" name=\"{name}\" \
         type=\"{kind}\" autocomplete=\"{autocomplete}\" value=\"{}\" required>",
        html_escape(value)
    )
}

/// A message shown above a form: what went wrong, read out when the page loads.
fn alert(message: &str) -> String {
    format!(
        "<p class=\"error\" role=\"alert\" data-testid=\"form-error\">{}</p>",
        html_escape(message)
    )
}

fn see_other(location: &str) -> Response {
    Redirect::to(location).into_response()
}

fn paragraph(text: &str) -> String {
    format!("<p>{}</p>", html_escape(text))
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

// ---------------------------------------------------------------------------------------------
// E-mail links.

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct TokenForm {
    csrf: Option<String>,
    token: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CsrfForm {
    csrf: Option<String>,
}

/// An e-mail's link, fetched: spends nothing (a mail scanner's fetch, or a browser's
/// prefetch, must leave it working). While it still opens, the app's page asks for one click,
/// a POST to the same address with the session's CSRF token, which spends it.
pub async fn link_page(
    State(state): State<AppState>,
    session: Session,
    Query(query): Query<TokenQuery>,
) -> ApiResult<Response> {
    let token = query.token.unwrap_or_default();
    Ok(match hosted_service::look_at_link(&state, &token).await? {
        LinkView::Open { app, purpose } => {
            let csrf = websession::csrf_token(&session).await?;
            page(
                StatusCode::OK,
                &Brand::of(&app),
                purpose.call_to_action(),
                "link-open",
                &format!(
                    "{}{}",
                    paragraph(
                        "For your security, this link from your e-mail works once. Press the \
                         button to go on."
                    ),
                    form("/hosted/link", &csrf, &token_field(&token), "Continue")
                ),
            )
        }
        LinkView::Stale { app } => stale_link_page(&session, app.as_deref(), &token).await?,
        LinkView::Unknown => unknown_link_page(),
    })
}

/// The link's one click: spends it and goes to what it is for.
pub async fn open_link(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<TokenForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let token = f.token.unwrap_or_default();
    Ok(match hosted_service::open_link(&state, &token).await? {
        OpenedLink::Flow { location } => see_other(&location),
        OpenedLink::CreditFrozen {
            account_uuid,
            unfreeze_url,
            ..
        } => {
            websession::signed_in(&session).await?;
            session
                .insert(CREDIT_ACCOUNT, account_uuid)
                .await
                .map_err(ApiError::internal)?;
            session
                .insert(CREDIT_UNFREEZE, unfreeze_url)
                .await
                .map_err(ApiError::internal)?;
            see_other("/hosted/credit")
        }
        OpenedLink::Deposit { account_uuid } => {
            websession::signed_in(&session).await?;
            session
                .insert(DEPOSIT_ACCOUNT, account_uuid)
                .await
                .map_err(ApiError::internal)?;
            see_other("/hosted/deposit")
        }
        OpenedLink::AuthenticatePayment {
            account_uuid,
            payment_uuid,
        } => {
            websession::signed_in(&session).await?;
            for (key, value) in [(AUTH_ACCOUNT, account_uuid), (AUTH_PAYMENT, payment_uuid)] {
                session
                    .insert(key, value)
                    .await
                    .map_err(ApiError::internal)?;
            }
            see_other("/hosted/authenticate")
        }
        OpenedLink::Stale { app } => stale_link_page(&session, app.as_deref(), &token).await?,
        OpenedLink::Unknown => unknown_link_page(),
    })
}

/// The page an authentication link opened: the customer confirms the payment with their bank
/// in the card processor's own component (its script, from its origin, and ours); the
/// processor's webhook then settles the payment and its bill.
pub async fn authenticate_page(
    State(state): State<AppState>,
    session: Session,
) -> ApiResult<Response> {
    let (Some(account), Some(payment)) = (
        session_uuid(&session, AUTH_ACCOUNT).await?,
        session_uuid(&session, AUTH_PAYMENT).await?,
    ) else {
        return Ok(signed_out_page());
    };
    Ok(
        match live_payments::payment_to_authenticate(&state, account, payment).await? {
            Authentication::Waiting {
                app,
                invoice_number,
                amount_cents,
                publishable_key,
                client_secret,
                processor,
            } => page_with_scripts(
                StatusCode::OK,
                &Brand::of(&app),
                "Confirm your payment",
                "authenticate",
                "",
                &format!(
                    "{}<div class=\"stack\" id=\"authenticate\" data-publishable-key=\"{}\" \
                     data-client-secret=\"{}\" data-state=\"waiting\">\
                     <button type=\"button\" class=\"primary\" id=\"authenticate-button\" \
                     data-testid=\"authenticate-button\">Confirm with your bank</button>\
                     <p role=\"status\" id=\"authenticate-status\" \
                     data-testid=\"authenticate-status\"></p></div>",
                    paragraph(&format!(
                        "Your bank asks you to confirm the payment of {} for your bill {}. \
                         Press the button and follow your bank's steps.",
                        app::format::dollars(amount_cents),
                        invoice_number
                    )),
                    html_escape(&publishable_key),
                    html_escape(&client_secret),
                ),
                Some(Scripts {
                    processor: &processor,
                    own: "/portal/assets/authenticate.js",
                }),
            ),
            Authentication::Settled { app, paid } => page(
                StatusCode::OK,
                &Brand::of(&app),
                if paid {
                    "Your payment went through"
                } else {
                    "Nothing to confirm"
                },
                "authenticate-settled",
                &paragraph(if paid {
                    "This payment is done: there is nothing more to confirm. Thank you."
                } else {
                    "This payment no longer waits for your confirmation. If your bill is still \
                     unpaid, you can pay it or change your card from the app."
                }),
            ),
            Authentication::Unavailable { app } => page(
                StatusCode::SERVICE_UNAVAILABLE,
                &Brand::of_option(app.as_deref()),
                "This payment cannot be confirmed here right now",
                "authenticate-unavailable",
                &paragraph("Please try again later, or pay the bill from the app with your card."),
            ),
        },
    )
}

#[derive(Debug, Deserialize)]
pub struct PayDepositForm {
    csrf: Option<String>,
    /// `instalments`: half now and the rest on the next two bills; anything else: all now.
    how: Option<String>,
}

/// The deposit a credit review asked for, opened from its e-mail's link: the amount, the card
/// it is charged to, and one button to pay it all now (or half now, the rest with the next two
/// bills); once paid, where it stands.
pub async fn deposit_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let Some(account) = session_uuid(&session, DEPOSIT_ACCOUNT).await? else {
        return Ok(signed_out_page());
    };
    let (Some(home), Some(deposit)) = (
        hosted_service::portal_home(&state, account).await?,
        services::deposits::view(&state, account).await?,
    ) else {
        return Ok(signed_out_page());
    };
    deposit_view(&state, &session, &home.app, account, &deposit, None).await
}

async fn deposit_view(
    state: &AppState,
    session: &Session,
    app: &AppRow,
    account: Uuid,
    deposit: &services::deposits::DepositView,
    error: Option<&str>,
) -> ApiResult<Response> {
    let brand = Brand::of(app);
    let d = &deposit.row;
    let amount = dollars(d.amount_cents);
    Ok(match d.status.as_str() {
        "required" => {
            let csrf = websession::csrf_token(session).await?;
            let card = crate::store::payments::current_payment_method(&state.db, account).await?;
            let (charged, status) = match &card {
                Some(c) => (
                    format!(
                        "It is charged to your {}.",
                        html_escape(&crate::domain::billing::card_name(&c.brand, &c.last4))
                    ),
                    if error.is_some() {
                        StatusCode::PAYMENT_REQUIRED
                    } else {
                        StatusCode::OK
                    },
                ),
                None => (
                    "There is no card on file yet: add one in the enrollment first.".to_owned(),
                    StatusCode::CONFLICT,
                ),
            };
            let (now, rest) = crate::domain::deposits::instalments(d.amount_cents);
            page(
                status,
                &brand,
                "Your security deposit",
                "deposit",
                &format!(
                    "{}<p data-testid=\"deposit-amount\">Deposit: <strong>{}</strong></p><p>{}</p>{}{}\
                     <form method=\"post\" action=\"/hosted/deposit\" class=\"stack\">\
                     <input type=\"hidden\" name=\"csrf\" value=\"{}\">\
                     <input type=\"hidden\" name=\"how\" value=\"instalments\">\
                     <button type=\"submit\" data-testid=\"pay-instalments\">Pay {} now and {} \
                     with each of my next two bills</button></form>",
                    error.map(alert).unwrap_or_default(),
                    amount,
                    charged,
                    paragraph(
                        "Your enrollment continues once the deposit is paid. It earns interest \
                         and comes back to you after twelve bills in a row paid on time, or is \
                         applied to your final bill."
                    ),
                    form(
                        "/hosted/deposit",
                        &csrf,
                        "<input type=\"hidden\" name=\"how\" value=\"whole\">",
                        "Pay the deposit"
                    ),
                    html_escape(&csrf),
                    dollars(now),
                    dollars(rest[0]),
                ),
            )
        }
        status => {
            let said = match status {
                "paid" if deposit.instalments_due_cents > 0 => format!(
                    "Thank you: your deposit of {amount} is paid in part; the remaining {} comes \
                     with your next bills. Your enrollment goes on.",
                    dollars(deposit.instalments_due_cents)
                ),
                "paid" => format!(
                    "Thank you: your deposit of {amount} is paid, and your enrollment goes on. \
                     It has earned {} in interest so far.",
                    dollars(deposit.interest_cents)
                ),
                "waived" => "No deposit is needed: it was waived.".to_owned(),
                _ => format!(
                    "Your deposit came back with its interest: {} in all, credited on your bills.",
                    dollars(d.refunded_cents)
                ),
            };
            page(
                StatusCode::OK,
                &brand,
                "Your security deposit",
                "deposit-settled",
                &paragraph(&said),
            )
        }
    })
}

/// Pays the deposit with the saved card, then shows where it stands (a redirect to the page).
pub async fn pay_deposit(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<PayDepositForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let Some(account) = session_uuid(&session, DEPOSIT_ACCOUNT).await? else {
        return Ok(signed_out_page());
    };
    let Some(home) = hosted_service::portal_home(&state, account).await? else {
        return Ok(signed_out_page());
    };
    let in_instalments = f.how.as_deref() == Some("instalments");
    match services::deposits::pay_deposit(&state, &home.app, account, in_instalments).await {
        Ok(_) => {
            state.account_changed(account);
            Ok(see_other("/hosted/deposit"))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
        Err(services::Error::Refused(why)) => {
            use services::deposits::DepositRefused as R;
            let message = match why {
                R::NoDeposit | R::AccountMissing => return Ok(signed_out_page()),
                R::NoCard => "There is no card on file to charge.",
                R::Declined(_) => {
                    "Your card was declined. Nothing was charged; you can change your card in \
                     the app and try again."
                }
                R::Processor(_) => {
                    "The payment could not be made right now. Please try again later."
                }
            };
            let Some(deposit) = services::deposits::view(&state, account).await? else {
                return Ok(signed_out_page());
            };
            deposit_view(
                &state,
                &session,
                &home.app,
                account,
                &deposit,
                Some(message),
            )
            .await
        }
    }
}

fn token_field(token: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"token\" value=\"{}\">",
        html_escape(token)
    )
}

/// A spent or expired link, in its app's brand: 410, with a fresh link offered by e-mail.
async fn stale_link_page(
    session: &Session,
    app: Option<&AppRow>,
    token: &str,
) -> ApiResult<Response> {
    let csrf = websession::csrf_token(session).await?;
    Ok(page(
        StatusCode::GONE,
        &Brand::of_option(app),
        "This link has expired",
        "link-expired",
        &format!(
            "{}{}",
            paragraph(
                "For your security, each link in our e-mails works once and for 7 days. \
                 We can e-mail you a new one."
            ),
            form(
                "/hosted/link/resend",
                &csrf,
                &token_field(token),
                "E-mail me a new link"
            )
        ),
    ))
}

/// Not a link of ours: which app it would speak for is unknown, so the page wears no brand.
fn unknown_link_page() -> Response {
    page(
        StatusCode::NOT_FOUND,
        &Brand::neutral(),
        "This link is not valid",
        "link-invalid",
        &paragraph("Check that you opened the whole link from the e-mail."),
    )
}

/// Sends a fresh link in place of a spent or expired one.
pub async fn resend_link(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<TokenForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let token = f.token.unwrap_or_default();
    Ok(match hosted_service::resend_link(&state, &token).await {
        Ok((email, app)) => page(
            StatusCode::OK,
            &Brand::of(&app),
            "Check your e-mail",
            "link-resent",
            &paragraph(&format!(
                "We sent a new link to {}. It works once, for 7 days.",
                masked(&email)
            )),
        ),
        Err(services::Error::Refused(why)) => {
            let (status, message) = refusal(&why);
            let app = match hosted_service::look_at_link(&state, &token).await? {
                LinkView::Open { app, .. } | LinkView::Stale { app: Some(app) } => Some(app),
                LinkView::Stale { app: None } | LinkView::Unknown => None,
            };
            page(
                status,
                &Brand::of_option(app.as_deref()),
                "We could not send a new link",
                "link-resend-refused",
                &alert(&message),
            )
        }
        Err(services::Error::Failed(e)) => return Err(ApiError::internal(e)),
    })
}

/// `ana@example.com` as `a••@example.com`: enough to recognise, not to learn.
fn masked(email: &str) -> String {
    match email.split_once('@') {
        Some((local, domain)) => {
            let first: String = local.chars().take(1).collect();
            format!("{first}••@{domain}")
        }
        None => "your address".to_owned(),
    }
}

/// The frozen-credit page a link opened: how to lift the freeze, and a retry.
pub async fn credit_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let Some(account) = session_uuid(&session, CREDIT_ACCOUNT).await? else {
        return Ok(signed_out_page());
    };
    let Some(home) = hosted_service::portal_home(&state, account).await? else {
        return Ok(signed_out_page());
    };
    let bureau = session
        .get::<Option<String>>(CREDIT_UNFREEZE)
        .await
        .map_err(ApiError::internal)?
        .flatten()
        .filter(|u| u.starts_with("https://"))
        .map(|u| {
            format!(
                "<p><a href=\"{}\" data-testid=\"unfreeze\">Lift the freeze at the credit bureau</a></p>",
                html_escape(&u)
            )
        })
        .unwrap_or_default();
    let csrf = websession::csrf_token(&session).await?;
    Ok(page(
        StatusCode::OK,
        &Brand::of(&home.app),
        "Your credit file is frozen",
        "credit-frozen",
        &format!(
            "{}{bureau}{}{}",
            paragraph(
                "We could not complete the soft credit check for your enrollment because your \
                 credit file is frozen at the credit bureau. A soft check does not affect your \
                 credit score."
            ),
            "<ol><li>Go to the credit bureau's site and lift the freeze (a temporary lift is \
             enough).</li><li>Come back here and press the button: we check again at once.</li></ol>",
            form("/hosted/credit", &csrf, "", "I lifted the freeze: check again")
        ),
    ))
}

/// Runs the credit check again at once.
pub async fn retry_credit(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<CsrfForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let Some(account) = session_uuid(&session, CREDIT_ACCOUNT).await? else {
        return Ok(signed_out_page());
    };
    hosted_service::retry_credit_check(&state, account).await?;
    let app = hosted_service::portal_home(&state, account)
        .await?
        .map(|home| home.app);
    Ok(page(
        StatusCode::OK,
        &Brand::of_option(app.as_ref()),
        "We are checking again",
        "credit-retried",
        &paragraph(
            "We asked the credit bureau again. We will e-mail you as soon as your enrollment \
             moves on; you can close this page.",
        ),
    ))
}

#[derive(Debug, Deserialize)]
pub struct AppQuery {
    app: Option<Uuid>,
}

/// Where a flow opened from an e-mail returns when it is closed.
pub async fn done_page(
    State(state): State<AppState>,
    Query(q): Query<AppQuery>,
) -> ApiResult<Response> {
    let app = match q.app {
        Some(uuid) => crate::store::apps::app_by_uuid(&state.db, uuid).await?,
        None => None,
    };
    let account_link = app
        .as_ref()
        .map(|a| {
            format!(
                "<p><a href=\"{}\">Go to your account</a></p>",
                html_escape(&sign_in_path(a))
            )
        })
        .unwrap_or_default();
    Ok(page(
        StatusCode::OK,
        &Brand::of_option(app.as_ref()),
        "All done",
        "hosted-done",
        &format!(
            "{}{account_link}",
            paragraph("Thank you. You can close this page.")
        ),
    ))
}

fn signed_out_page() -> Response {
    page(
        StatusCode::UNAUTHORIZED,
        &Brand::neutral(),
        "Please sign in",
        "signed-out",
        "<p>This page needs you signed in. <a href=\"/portal\">Sign in to your account</a>.</p>",
    )
}

/// Where a customer of `app` signs in to the portal.
fn sign_in_path(app: &AppRow) -> String {
    format!("/go/{}/portal", app.slug)
}

async fn session_uuid(session: &Session, key: &str) -> ApiResult<Option<Uuid>> {
    session.get::<Uuid>(key).await.map_err(ApiError::internal)
}

// ---------------------------------------------------------------------------------------------
// Hosted sign-up.

async fn app_or_404(state: &AppState, slug: &str) -> ApiResult<Result<AppRow, Response>> {
    Ok(hosted_service::app_of_slug(state, slug)
        .await?
        .ok_or_else(no_sign_up_page))
}

/// The app of a sign-up page: a live app's stays unpublished until it is ready.
async fn sign_up_app_or_404(state: &AppState, slug: &str) -> ApiResult<Result<AppRow, Response>> {
    Ok(hosted_service::sign_up_app_of_slug(state, slug)
        .await?
        .ok_or_else(no_sign_up_page))
}

fn no_sign_up_page() -> Response {
    page(
        StatusCode::NOT_FOUND,
        &Brand::neutral(),
        "Page not found",
        "not-found",
        &paragraph("There is no sign-up page at this address."),
    )
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
    let fields = format!(
        "{}{}{}",
        input(
            "first_name",
            "First name",
            "text",
            "given-name",
            &value(&given.first_name)
        ),
        input(
            "last_name",
            "Last name",
            "text",
            "family-name",
            &value(&given.last_name)
        ),
        input("email", "E-mail", "email", "email", &value(&given.email)),
    );
    page(
        status,
        &Brand::of(app),
        &format!("Get your electricity with {}", app.display_name),
        "sign-up",
        &format!(
            "{}{}{}<p class=\"hint\">We e-mail you a code to confirm your address before \
             anything else.</p><p class=\"hint\">Already a customer? <a href=\"{}\">Sign in</a>.</p>",
            landing_text(app),
            error.map(alert).unwrap_or_default(),
            form(&format!("/go/{}", app.slug), csrf, &fields, "Continue"),
            html_escape(&sign_in_path(app)),
        ),
    )
}

/// The app's own words above the sign-up form (escaped; its line breaks kept by the style),
/// else the general promise.
fn landing_text(app: &AppRow) -> String {
    match app.landing_text.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(text) => format!(
            "<p class=\"landing-text\" data-testid=\"landing-text\">{}</p>",
            html_escape(text)
        ),
        None => paragraph(
            "Choose a plan, and we switch your electricity for you: no interruption, nobody \
             needs to visit.",
        ),
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

#[derive(Debug, Deserialize)]
pub struct CodeForm {
    csrf: Option<String>,
    code: Option<String>,
}

fn code_form(action: &str, csrf: &str) -> String {
    form(
        action,
        csrf,
        "<label for=\"code\">Code</label><input id=\"code\" name=\"code\" type=\"text\" \
         inputmode=\"numeric\" autocomplete=\"one-time-code\" pattern=\"[0-9 ]*\" required>",
        "Confirm",
    )
}

fn confirm_sign_up_page(
    status: StatusCode,
    app: &AppRow,
    email: &str,
    csrf: &str,
    error: Option<&str>,
) -> Response {
    page(
        status,
        &Brand::of(app),
        "Check your e-mail",
        "confirm-code",
        &format!(
            "{}{}{}<p class=\"hint\"><a href=\"/go/{}\">Use another address or send a new code</a></p>",
            paragraph(&format!(
                "We sent a six-digit code to {email}. Type it here; it works for 10 minutes."
            )),
            error.map(alert).unwrap_or_default(),
            code_form(&format!("/go/{}/confirm", app.slug), csrf),
            html_escape(&app.slug),
        ),
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
    Ok(page(
        StatusCode::OK,
        &Brand::of(&app),
        "Renew your electricity plan",
        "renew",
        &format!(
            "<p>Sign in with your e-mail address to see your renewal plans: we e-mail you a \
             code, no password needed.</p><p><a href=\"{}\">Sign in to renew</a></p>",
            html_escape(&sign_in_path(&app))
        ),
    ))
}

// ---------------------------------------------------------------------------------------------
// The portal.

async fn customer(session: &Session) -> ApiResult<Option<Uuid>> {
    session_uuid(session, CUSTOMER).await
}

#[derive(Debug, Default, Deserialize)]
pub struct EmailForm {
    csrf: Option<String>,
    email: Option<String>,
}

fn sign_in_page(
    status: StatusCode,
    app: &AppRow,
    csrf: &str,
    email: &str,
    error: Option<&str>,
) -> Response {
    page(
        status,
        &Brand::of(app),
        "Sign in to your account",
        "portal-sign-in",
        &format!(
            "{}{}{}",
            paragraph(&format!(
                "Type the e-mail address you signed up to {} with: we e-mail you a code, no \
                 password needed.",
                app.display_name
            )),
            error.map(alert).unwrap_or_default(),
            form(
                &sign_in_path(app),
                csrf,
                &input("email", "E-mail", "email", "email", email),
                "E-mail me a code"
            ),
        ),
    )
}

/// The app whose portal the session signs in to, if it still exists.
async fn portal_app(state: &AppState, session: &Session) -> ApiResult<Option<AppRow>> {
    Ok(match session_uuid(session, PORTAL_APP).await? {
        Some(uuid) => crate::store::apps::app_by_uuid(&state.db, uuid).await?,
        None => None,
    })
}

/// The portal's sign-in for one app's customers: its brand, its accounts only. A customer
/// already signed in to an account of this app goes to the home.
pub async fn portal_sign_in_page(
    State(state): State<AppState>,
    session: Session,
    Path(slug): Path<String>,
) -> ApiResult<Response> {
    let app = match app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    if let Some(account) = customer(&session).await? {
        let home = hosted_service::portal_home(&state, account).await?;
        if home.is_some_and(|h| h.app.uuid == app.uuid) {
            return Ok(see_other("/portal"));
        }
    }
    let csrf = websession::csrf_token(&session).await?;
    Ok(sign_in_page(StatusCode::OK, &app, &csrf, "", None))
}

/// The portal: its home when signed in; else the sign-in of the app the session last signed in
/// to, or (knowing none) where to sign in.
pub async fn portal_home(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let csrf = websession::csrf_token(&session).await?;
    let Some(account) = customer(&session).await? else {
        if choices(&session).await?.len() > 1 {
            return Ok(see_other("/portal/choose"));
        }
        if let Some(app) = portal_app(&state, &session).await? {
            return Ok(see_other(&sign_in_path(&app)));
        }
        return Ok(page(
            StatusCode::OK,
            &Brand::neutral(),
            "Sign in to your account",
            "portal-find",
            &paragraph(
                "Sign in from your electricity provider's own page: follow the link to your \
                 account on its site or in its app, or the one in any of its e-mails to you.",
            ),
        ));
    };
    let Some(home) = hosted_service::portal_home(&state, account).await? else {
        websession::sign_out(&session).await?;
        return Ok(see_other("/portal"));
    };
    let locations = super::enrollment::locations_of(&state.db, account).await?;
    let status = AccountStatus::parse(&home.account.status);
    let reason = StatusReason::parse(&home.account.status_reason);
    let words = match (status, reason) {
        (Some(s), Some(r)) => status_in_words(s, r),
        _ => "",
    };
    let mut body = format!(
        "<p data-testid=\"status\" class=\"lead\">{}</p>",
        html_escape(words)
    );
    if choices(&session).await?.len() > 1 {
        body.push_str(
            "<p><a href=\"/portal/choose\" data-testid=\"switch-account\">Switch to your \
             other account</a></p>",
        );
    }
    for l in &locations {
        body.push_str("<section class=\"card stack\" data-testid=\"location\">");
        body.push_str(&format!(
            "<h2>{}</h2>",
            html_escape(&format!("{}, {}", l.address_1, l.city))
        ));
        if let Some(plan) = &l.plan_name {
            body.push_str(&paragraph(&format!("Plan: {plan}")));
        }
        match (l.contract_start, l.contract_end) {
            (Some(s), Some(e)) => body.push_str(&paragraph(&format!(
                "Contract: {} to {}",
                long_date(s),
                long_date(e)
            ))),
            (Some(s), None) => body.push_str(&paragraph(&format!(
                "Contract: since {}, month to month",
                long_date(s)
            ))),
            _ => {}
        }
        body.push_str("</section>");
    }
    if let Some(bill) = &home.next_bill {
        body.push_str(&format!(
            "<section class=\"card\" data-testid=\"next-bill\"><h2>Next bill</h2>{}\
             <p><a href=\"/portal/invoices/{}\">See the bill and pay it</a></p></section>",
            paragraph(&format!(
                "{} due by {} (invoice {}).",
                dollars(bill.total_cents),
                long_date(bill.payment_due_date),
                bill.number
            )),
            html_escape(&bill.number)
        ));
    }
    let enrolling = status.is_some_and(|s| {
        matches!(
            s,
            AccountStatus::NotEnrolled | AccountStatus::NeedsAttention
        )
    });
    let actions: &[(FlowScope, &str)] = if enrolling {
        &[(FlowScope::Enrollment, "Continue your enrollment")]
    } else {
        &[
            (FlowScope::Billing, "Usage, bills and payments"),
            (FlowScope::UpdatePaymentMethod, "Change your payment card"),
            (FlowScope::Documents, "Your documents"),
            (FlowScope::Renewal, "Renew your plan"),
        ]
    };
    body.push_str("<div class=\"stack actions\">");
    for (scope, label) in actions {
        body.push_str(&format!(
            "<form method=\"post\" action=\"/portal/open/{}\"><input type=\"hidden\" \
             name=\"csrf\" value=\"{}\"><button type=\"submit\" class=\"secondary\" \
             data-testid=\"open-{}\">{}</button></form>",
            scope.as_str(),
            html_escape(&csrf),
            scope.as_str(),
            html_escape(label)
        ));
    }
    body.push_str("</div>");
    let utilities = services::portal::utilities(&state, account).await?;
    body.push_str(&support(
        &home.app,
        utilities.first().and_then(|(_, t)| t.as_ref()),
    ));
    Ok(page_with(
        StatusCode::OK,
        &Brand::of(&home.app),
        &format!("Hello {}", home.account.first_name),
        "portal-home",
        &pages::nav("/portal", &csrf),
        &body,
    ))
}

/// The partner's contacts, and whom to call for an outage: the utility of the customer's
/// location by name and number once known.
fn support(app: &AppRow, utility: Option<&crate::store::market::TduRow>) -> String {
    let mut lines = pages::partner_lines(app);
    if lines.is_empty() {
        lines.push(format!(
            "For your account and bills, write to {} through the app or site where you signed \
             up.",
            html_escape(&app.display_name)
        ));
    }
    lines.push(pages::outage_line(utility));
    format!(
        "<section class=\"card\" data-testid=\"support\"><h2>Support</h2><p>{}</p>\
         <p><a href=\"/portal/support\">All your contacts</a></p></section>",
        lines.join("<br>")
    )
}

/// E-mails a sign-in code for one app's accounts of the address.
pub async fn portal_sign_in(
    State(state): State<AppState>,
    session: Session,
    ClientIp(ip): ClientIp,
    Path(slug): Path<String>,
    Form(f): Form<EmailForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let app = match app_or_404(&state, &slug).await? {
        Ok(app) => app,
        Err(r) => return Ok(r),
    };
    let given = f.email.unwrap_or_default();
    match hosted_service::start_portal_sign_in(&state, &app, &given, &ip).await {
        Ok(email) => {
            session
                .insert(PORTAL_EMAIL, email)
                .await
                .map_err(ApiError::internal)?;
            session
                .insert(PORTAL_APP, app.uuid)
                .await
                .map_err(ApiError::internal)?;
            Ok(see_other("/portal/code"))
        }
        Err(services::Error::Refused(why)) => {
            let (status, message) = refusal(&why);
            let csrf = websession::csrf_token(&session).await?;
            Ok(sign_in_page(status, &app, &csrf, &given, Some(&message)))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

fn portal_code_form(
    status: StatusCode,
    app: &AppRow,
    email: &str,
    csrf: &str,
    error: Option<&str>,
) -> Response {
    page(
        status,
        &Brand::of(app),
        "Check your e-mail",
        "confirm-code",
        &format!(
            "{}{}{}<p class=\"hint\"><a href=\"{}\">Use another address or send a new code</a></p>",
            paragraph(&format!(
                "If {email} is the address of an account, we sent it a six-digit code. Type it \
                 here; it works for 10 minutes."
            )),
            error.map(alert).unwrap_or_default(),
            code_form("/portal/code", csrf),
            html_escape(&sign_in_path(app)),
        ),
    )
}

async fn portal_email(session: &Session) -> ApiResult<Option<String>> {
    session
        .get::<String>(PORTAL_EMAIL)
        .await
        .map_err(ApiError::internal)
}

/// The address a code went to and the app it signs in to, while a sign-in waits for its code.
async fn pending_portal_sign_in(
    state: &AppState,
    session: &Session,
) -> ApiResult<Option<(String, AppRow)>> {
    let Some(email) = portal_email(session).await? else {
        return Ok(None);
    };
    Ok(portal_app(state, session).await?.map(|app| (email, app)))
}

pub async fn portal_code_page(
    State(state): State<AppState>,
    session: Session,
) -> ApiResult<Response> {
    let Some((email, app)) = pending_portal_sign_in(&state, &session).await? else {
        return Ok(see_other("/portal"));
    };
    let csrf = websession::csrf_token(&session).await?;
    Ok(portal_code_form(StatusCode::OK, &app, &email, &csrf, None))
}

/// Checks the code and signs in to the app's accounts of the address.
pub async fn portal_code(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<CodeForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let Some((email, app)) = pending_portal_sign_in(&state, &session).await? else {
        return Ok(see_other("/portal"));
    };
    match hosted_service::finish_portal_sign_in(
        &state,
        app.uuid,
        &email,
        f.code.as_deref().unwrap_or_default(),
    )
    .await
    {
        Ok(accounts) => signed_in_to(&session, &accounts, app.uuid).await,
        Err(services::Error::Refused(why)) => {
            let (status, message) = refusal(&why);
            let csrf = websession::csrf_token(&session).await?;
            Ok(portal_code_form(
                status,
                &app,
                &email,
                &csrf,
                Some(&message),
            ))
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

/// The accounts an address signed in with may open, when it has several.
async fn choices(session: &Session) -> ApiResult<Vec<Uuid>> {
    Ok(session
        .get::<Vec<Uuid>>(CHOICES)
        .await
        .map_err(ApiError::internal)?
        .unwrap_or_default())
}

/// Asks which account to open: each of the signing-in app's accounts of the address, by its
/// service address and account number, in the app's brand.
pub async fn choose_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let uuids = choices(&session).await?;
    let app = portal_app(&state, &session).await?;
    let Some(app) = app.filter(|_| uuids.len() > 1) else {
        return Ok(see_other("/portal"));
    };
    let csrf = websession::csrf_token(&session).await?;
    let mut body = paragraph(&format!(
        "Your e-mail address has more than one account with {}. Which one do you want to see?",
        app.display_name
    ));
    body.push_str("<ul class=\"choices\" data-testid=\"accounts\">");
    let listed = hosted_service::portal_choices(&state, &uuids).await?;
    for c in listed.iter().filter(|c| c.app.uuid == app.uuid) {
        let status = match (
            AccountStatus::parse(&c.account.status),
            StatusReason::parse(&c.account.status_reason),
        ) {
            (Some(s), Some(r)) => status_in_words(s, r),
            _ => "",
        };
        body.push_str(&format!(
            "<li><form method=\"post\" action=\"/portal/choose\"><input type=\"hidden\" \
             name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"account\" value=\"{}\">\
             <button type=\"submit\" class=\"choice\" data-testid=\"choose-account\">\
             <strong>{}</strong><span>{}</span><span class=\"muted\">{}</span></button></form></li>",
            html_escape(&csrf),
            c.account.uuid,
            html_escape(c.address.as_deref().unwrap_or("No service address yet")),
            html_escape(&format!("Account {}", c.account.account_number)),
            html_escape(status),
        ));
    }
    body.push_str("</ul>");
    Ok(page(
        StatusCode::OK,
        &Brand::of(&app),
        "Choose an account",
        "portal-choose",
        &body,
    ))
}

#[derive(Debug, Deserialize)]
pub struct ChooseForm {
    csrf: Option<String>,
    account: Option<Uuid>,
}

/// Opens the chosen account: only one the signed-in address may open.
pub async fn choose_account(session: Session, Form(f): Form<ChooseForm>) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let uuids = choices(&session).await?;
    let Some(account) = f.account.filter(|a| uuids.contains(a)) else {
        return Err(ApiError::not_found("account").as_page());
    };
    session
        .insert(CUSTOMER, account)
        .await
        .map_err(ApiError::internal)?;
    Ok(see_other("/portal"))
}

/// Opens one of the account's flows full-page; closing it comes back to the portal.
pub async fn portal_open(
    State(state): State<AppState>,
    session: Session,
    Path(scope): Path<String>,
    Form(f): Form<CsrfForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let Some(account) = customer(&session).await? else {
        return Ok(see_other("/portal"));
    };
    let scope = FlowScope::parse(&scope).ok_or_else(|| ApiError::not_found("page").as_page())?;
    let location = hosted_service::open_portal_flow(&state, account, scope).await?;
    Ok(see_other(&location))
}

/// Signs out, back to the sign-in of the app the session was signed in to.
pub async fn portal_sign_out(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<CsrfForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let app = match customer(&session).await? {
        Some(account) => hosted_service::portal_home(&state, account)
            .await?
            .map(|home| home.app),
        None => portal_app(&state, &session).await?,
    };
    websession::sign_out(&session).await?;
    Ok(see_other(&app.map_or_else(
        || "/portal".to_owned(),
        |a| sign_in_path(&a),
    )))
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
