//! The portal's sign-in, per app (an e-mailed code signs in to that app's accounts of the
//! address, choosing one when it has several there), its home, and the buttons that open the
//! account's flows full-page.

use app::format::{dollars, long_date};
use axum::{extract::State, http::StatusCode, response::Response, Form};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    app_or_404, choices, code_form, customer, pages, portal_app, refusal,
    render::{alert, csrf_field, form, hidden, input, page, page_with, paragraph},
    see_other, sign_in_path, signed_in_to, CodeForm, CsrfForm, CUSTOMER, PORTAL_APP, PORTAL_EMAIL,
};
use crate::{
    domain::{flows::FlowScope, hosted::status_in_words, status::AccountStatus},
    http::{
        branded::Brand,
        error::{ApiError, ApiResult},
        extract::{ClientIp, Path},
        websession, AppState,
    },
    services::{self, hosted as hosted_service},
    store::apps::AppRow,
};

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
        view! {
            {paragraph(format!(
                "Type the e-mail address you signed up to {} with: we e-mail you a code, no \
                 password needed.",
                app.display_name
            ))}
            {error.map(alert)}
            {form(
                sign_in_path(app),
                csrf,
                input("email", "E-mail", "email", "email", email),
                "E-mail me a code",
            )}
        }
        .into_any(),
    )
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
            paragraph(
                "Sign in from your electricity provider's own page: follow the link to your \
                 account on its site or in its app, or the one in any of its e-mails to you.",
            )
            .into_any(),
        ));
    };
    let Some(home) = hosted_service::portal_home(&state, account).await? else {
        websession::sign_out(&session).await?;
        return Ok(see_other("/portal"));
    };
    let locations = crate::http::enrollment::locations_of(&state.db, account).await?;
    let status = home.account.status;
    let words = status_in_words(status, home.account.status_reason);
    let switch = (choices(&session).await?.len() > 1).then(|| {
        view! {
            <p>
                <a href="/portal/choose" data-testid="switch-account">
                    "Switch to your other account"
                </a>
            </p>
        }
    });
    let locations = locations
        .iter()
        .map(|l| {
            let address = format!("{}, {}", l.address_1, l.city);
            let plan = l
                .plan_name
                .as_ref()
                .map(|p| paragraph(format!("Plan: {p}")));
            let contract = match (l.contract_start, l.contract_end) {
                (Some(s), Some(e)) => {
                    Some(format!("Contract: {} to {}", long_date(s), long_date(e)))
                }
                (Some(s), None) => {
                    Some(format!("Contract: since {}, month to month", long_date(s)))
                }
                _ => None,
            };
            view! {
                <section class="card stack" data-testid="location">
                    <h2>{address}</h2>
                    {plan}
                    {contract.map(paragraph)}
                </section>
            }
        })
        .collect_view();
    let next_bill = home.next_bill.as_ref().map(|bill| {
        let href = format!("/portal/invoices/{}", bill.number);
        view! {
            <section class="card" data-testid="next-bill">
                <h2>"Next bill"</h2>
                {paragraph(format!(
                    "{} due by {} (invoice {}).",
                    dollars(bill.total_cents),
                    long_date(bill.payment_due_date),
                    bill.number
                ))}
                <p><a href=href>"See the bill and pay it"</a></p>
            </section>
        }
    });
    let enrolling = matches!(
        status,
        AccountStatus::NotEnrolled | AccountStatus::NeedsAttention
    );
    let actions: &[(FlowScope, &'static str)] = if enrolling {
        &[(FlowScope::Enrollment, "Continue your enrollment")]
    } else {
        &[
            (FlowScope::Billing, "Usage, bills and payments"),
            (FlowScope::UpdatePaymentMethod, "Change your payment card"),
            (FlowScope::Documents, "Your documents"),
            (FlowScope::Renewal, "Renew your plan"),
        ]
    };
    let actions = actions
        .iter()
        .map(|(scope, label)| pages::open_flow(scope.as_str(), &csrf, label))
        .collect_view();
    let utilities = services::portal::utilities(&state, account).await?;
    let support = pages::support_card(&home.app, utilities.first().and_then(|(_, t)| t.as_ref()));
    let body = view! {
        <p data-testid="status" class="lead">{words}</p>
        {switch}
        {locations}
        {next_bill}
        <div class="stack actions">{actions}</div>
        {support}
    }
    .into_any();
    Ok(page_with(
        StatusCode::OK,
        &Brand::of(&home.app),
        &format!("Hello {}", home.account.first_name),
        "portal-home",
        Some(pages::nav("/portal", &csrf).into_any()),
        body,
    ))
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
    let again = sign_in_path(app);
    page(
        status,
        &Brand::of(app),
        "Check your e-mail",
        "confirm-code",
        view! {
            {paragraph(format!(
                "If {email} is the address of an account, we sent it a six-digit code. Type it \
                 here; it works for 10 minutes."
            ))}
            {error.map(alert)}
            {code_form("/portal/code", csrf)}
            <p class="hint"><a href=again>"Use another address or send a new code"</a></p>
        }
        .into_any(),
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

/// Asks which account to open: each of the signing-in app's accounts of the address, by its
/// service address and account number, in the app's brand.
pub async fn choose_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let uuids = choices(&session).await?;
    let app = portal_app(&state, &session).await?;
    let Some(app) = app.filter(|_| uuids.len() > 1) else {
        return Ok(see_other("/portal"));
    };
    let csrf = websession::csrf_token(&session).await?;
    let listed = hosted_service::portal_choices(&state, &uuids).await?;
    let accounts = listed
        .iter()
        .filter(|c| c.app.uuid == app.uuid)
        .map(|c| {
            let status = status_in_words(c.account.status, c.account.status_reason);
            let address = c
                .address
                .clone()
                .unwrap_or_else(|| "No service address yet".to_owned());
            let number = format!("Account {}", c.account.account_number);
            view! {
                <li>
                    <form method="post" action="/portal/choose">
                        {csrf_field(&csrf)}
                        {hidden("account", c.account.uuid.to_string())}
                        <button type="submit" class="choice" data-testid="choose-account">
                            <strong>{address}</strong>
                            <span>{number}</span>
                            <span class="muted">{status}</span>
                        </button>
                    </form>
                </li>
            }
        })
        .collect_view();
    let body = view! {
        {paragraph(format!(
            "Your e-mail address has more than one account with {}. Which one do you want to see?",
            app.display_name
        ))}
        <ul class="choices" data-testid="accounts">{accounts}</ul>
    }
    .into_any();
    Ok(page(
        StatusCode::OK,
        &Brand::of(&app),
        "Choose an account",
        "portal-choose",
        body,
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
