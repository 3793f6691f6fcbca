//! The pages an e-mail's single-use link opens: the link's one click (or the offer of a fresh
//! link when it is spent), the frozen-credit page, the deposit, a payment to confirm with the
//! bank, and where a flow opened from an e-mail ends.

use app::format::dollars;
use axum::{extract::State, http::StatusCode, response::Response, Form};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    refusal,
    render::{alert, csrf_field, form, hidden, page, page_with_scripts, paragraph, Scripts},
    see_other, session_uuid, sign_in_path, CsrfForm, AUTH_ACCOUNT, AUTH_PAYMENT, CREDIT_ACCOUNT,
    CREDIT_UNFREEZE, DEPOSIT_ACCOUNT,
};
use crate::{
    http::{
        branded::Brand,
        error::{ApiError, ApiResult},
        extract::Query,
        websession, AppState,
    },
    services::{
        self,
        hosted::{self as hosted_service, LinkView, OpenedLink},
        live_payments::{self, Authentication},
    },
    store::apps::AppRow,
};

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct TokenForm {
    csrf: Option<String>,
    token: Option<String>,
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
                view! {
                    {paragraph(
                        "For your security, this link from your e-mail works once. Press the \
                         button to go on.",
                    )}
                    {form("/hosted/link", &csrf, hidden("token", token), "Continue")}
                }
                .into_any(),
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
                None,
                view! {
                    {paragraph(format!(
                        "Your bank asks you to confirm the payment of {} for your bill {}. \
                         Press the button and follow your bank's steps.",
                        dollars(amount_cents),
                        invoice_number
                    ))}
                    <div class="stack" id="authenticate" data-publishable-key=publishable_key
                        data-client-secret=client_secret data-state="waiting">
                        <button type="button" class="primary" id="authenticate-button"
                            data-testid="authenticate-button">"Confirm with your bank"</button>
                        <p role="status" id="authenticate-status"
                            data-testid="authenticate-status"></p>
                    </div>
                }
                .into_any(),
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
                paragraph(if paid {
                    "This payment is done: there is nothing more to confirm. Thank you."
                } else {
                    "This payment no longer waits for your confirmation. If your bill is still \
                     unpaid, you can pay it or change your card from the app."
                })
                .into_any(),
            ),
            Authentication::Unavailable { app } => page(
                StatusCode::SERVICE_UNAVAILABLE,
                &Brand::of_option(app.as_deref()),
                "This payment cannot be confirmed here right now",
                "authenticate-unavailable",
                paragraph("Please try again later, or pay the bill from the app with your card.")
                    .into_any(),
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
                        crate::domain::billing::card_name(&c.brand, &c.last4)
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
                view! {
                    {error.map(alert)}
                    <p data-testid="deposit-amount">"Deposit: " <strong>{amount}</strong></p>
                    <p>{charged}</p>
                    {paragraph(
                        "Your enrollment continues once the deposit is paid. It earns interest \
                         and comes back to you after twelve bills in a row paid on time, or is \
                         applied to your final bill.",
                    )}
                    {form("/hosted/deposit", &csrf, hidden("how", "whole"), "Pay the deposit")}
                    <form method="post" action="/hosted/deposit" class="stack">
                        {csrf_field(&csrf)}
                        {hidden("how", "instalments")}
                        <button type="submit" data-testid="pay-instalments">
                            "Pay " {dollars(now)} " now and " {dollars(rest[0])}
                            " with each of my next two bills"
                        </button>
                    </form>
                }
                .into_any(),
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
                paragraph(said).into_any(),
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
        view! {
            {paragraph(
                "For your security, each link in our e-mails works once and for 7 days. \
                 We can e-mail you a new one.",
            )}
            {form("/hosted/link/resend", &csrf, hidden("token", token), "E-mail me a new link")}
        }
        .into_any(),
    ))
}

/// Not a link of ours: which app it would speak for is unknown, so the page wears no brand.
fn unknown_link_page() -> Response {
    page(
        StatusCode::NOT_FOUND,
        &Brand::neutral(),
        "This link is not valid",
        "link-invalid",
        paragraph("Check that you opened the whole link from the e-mail.").into_any(),
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
            paragraph(format!(
                "We sent a new link to {}. It works once, for 7 days.",
                masked(&email)
            ))
            .into_any(),
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
                alert(message).into_any(),
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
            view! {
                <p><a href=u data-testid="unfreeze">"Lift the freeze at the credit bureau"</a></p>
            }
        });
    let csrf = websession::csrf_token(&session).await?;
    Ok(page(
        StatusCode::OK,
        &Brand::of(&home.app),
        "Your credit file is frozen",
        "credit-frozen",
        view! {
            {paragraph(
                "We could not complete the soft credit check for your enrollment because your \
                 credit file is frozen at the credit bureau. A soft check does not affect your \
                 credit score.",
            )}
            {bureau}
            <ol>
                <li>
                    "Go to the credit bureau's site and lift the freeze (a temporary lift is \
                     enough)."
                </li>
                <li>"Come back here and press the button: we check again at once."</li>
            </ol>
            {form("/hosted/credit", &csrf, (), "I lifted the freeze: check again")}
        }
        .into_any(),
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
        paragraph(
            "We asked the credit bureau again. We will e-mail you as soon as your enrollment \
             moves on; you can close this page.",
        )
        .into_any(),
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
    let account_link = app.as_ref().map(|a| {
        let href = sign_in_path(a);
        view! { <p><a href=href>"Go to your account"</a></p> }
    });
    Ok(page(
        StatusCode::OK,
        &Brand::of_option(app.as_ref()),
        "All done",
        "hosted-done",
        view! { {paragraph("Thank you. You can close this page.")} {account_link} }.into_any(),
    ))
}

pub(super) fn signed_out_page() -> Response {
    page(
        StatusCode::UNAUTHORIZED,
        &Brand::neutral(),
        "Please sign in",
        "signed-out",
        view! {
            <p>"This page needs you signed in. " <a href="/portal">"Sign in to your account"</a> "."</p>
        }
        .into_any(),
    )
}
