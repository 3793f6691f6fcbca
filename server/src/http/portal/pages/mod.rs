//! The portal's own pages for a signed-in customer, server-rendered with no script: usage
//! (twelve months and a month by day), bills (list, detail, PDF, pay now), the billing
//! address, documents, renewal and support. Each reads the signed-in account only, so another
//! customer's location, bill or document is a 404; every form carries the CSRF token.

use app::format::long_date;
use axum::{http::StatusCode, response::Response};
use chrono::{Datelike, NaiveDate};
use leptos::prelude::*;
use tower_sessions::Session;

use super::{customer, render::csrf_field, render::page_with, see_other};
use crate::{
    http::{branded::Brand, error::ApiResult, websession, AppState},
    services::hosted as hosted_service,
    store::{accounts::AccountRow, apps::AppRow, enrollment::LocationRow},
};

/// The signed-in customer of a portal page, with the session's CSRF token for its forms.
pub(super) struct Customer {
    pub account: AccountRow,
    pub app: AppRow,
    pub csrf: String,
}

/// The signed-in customer, or the answer for a browser that is not (back to sign in).
pub(super) async fn signed_in(
    state: &AppState,
    session: &Session,
) -> ApiResult<Result<Customer, Response>> {
    let Some(uuid) = customer(session).await? else {
        return Ok(Err(see_other("/portal")));
    };
    let Some(home) = hosted_service::portal_home(state, uuid).await? else {
        websession::sign_out(session).await?;
        return Ok(Err(see_other("/portal")));
    };
    Ok(Ok(Customer {
        account: home.account,
        app: home.app,
        csrf: websession::csrf_token(session).await?,
    }))
}

/// Unwraps `signed_in`: the customer, or returns the redirect to sign in.
macro_rules! customer_or_sign_in {
    ($state:expr, $session:expr) => {
        match super::signed_in(&$state, &$session).await? {
            Ok(c) => c,
            Err(r) => return Ok(r),
        }
    };
}

mod address;
mod bills;
mod documents;
mod support;
mod usage;

pub use address::{billing_address_page, set_billing_address};
pub use bills::{accept_payment_plan, invoice_page, invoice_pdf, invoices_page, pay_invoice};
pub use documents::{document_pdf, documents_page, renewal_page};
pub(super) use support::support_card;
pub use support::support_page;
pub use usage::usage_page;

/// The portal's sections, as its navigation lists them: path, name, test id.
const SECTIONS: [(&str, &str, &str); 7] = [
    ("/portal", "Home", "nav-home"),
    ("/portal/usage", "Usage", "nav-usage"),
    ("/portal/invoices", "Bills", "nav-invoices"),
    (
        "/portal/billing-address",
        "Billing address",
        "nav-billing-address",
    ),
    ("/portal/documents", "Documents", "nav-documents"),
    ("/portal/renewal", "Renewal", "nav-renewal"),
    ("/portal/support", "Support", "nav-support"),
];

/// The portal's navigation, `current` marked, with the sign-out button.
pub(super) fn nav(current: &str, csrf: &str) -> impl IntoView {
    let links = SECTIONS
        .iter()
        .map(|&(path, name, testid)| {
            let here = (path == current).then_some("page");
            view! { <li><a href=path data-testid=testid aria-current=here>{name}</a></li> }
        })
        .collect_view();
    view! {
        <nav class="portal-nav" aria-label="Your account">
            <ul>{links}</ul>
            <form method="post" action="/portal/sign-out">
                {csrf_field(csrf)}
                <button type="submit" class="link" data-testid="sign-out">"Sign out"</button>
            </form>
        </nav>
    }
}

/// A signed-in page: the navigation, then `body`.
fn portal_page(
    status: StatusCode,
    c: &Customer,
    current: &str,
    title: &str,
    testid: &'static str,
    body: AnyView,
) -> Response {
    page_with(
        status,
        &Brand::of(&c.app),
        title,
        testid,
        Some(nav(current, &c.csrf).into_any()),
        body,
    )
}

/// A small form posting to `action` with a single button.
fn button_form(
    action: String,
    csrf: &str,
    label: &'static str,
    class: &'static str,
    testid: String,
) -> impl IntoView {
    view! {
        <form method="post" action=action>
            {csrf_field(csrf)}
            <button type="submit" class=class data-testid=testid>{label}</button>
        </form>
    }
}

/// The button that opens one of the account's flows full-page (closing it comes back).
pub(super) fn open_flow(scope: &str, csrf: &str, label: &'static str) -> impl IntoView {
    button_form(
        format!("/portal/open/{scope}"),
        csrf,
        label,
        "secondary",
        format!("open-{scope}"),
    )
}

fn address_of(l: &LocationRow) -> String {
    match l.address_2.as_deref().map(str::trim) {
        Some(unit) if !unit.is_empty() => format!("{} {unit}, {}", l.address_1, l.city),
        _ => format!("{}, {}", l.address_1, l.city),
    }
}

fn month_name(day: NaiveDate) -> String {
    long_date(day)
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// "March 2027".
fn month_and_year(day: NaiveDate) -> String {
    format!("{} {}", month_name(day), day.year())
}

/// A description list of facts: (term, value).
fn facts(rows: Vec<(&'static str, AnyView)>) -> impl IntoView {
    let items = rows
        .into_iter()
        .map(|(t, v)| view! { <div><dt>{t}</dt><dd>{v}</dd></div> })
        .collect_view();
    view! { <dl class="facts">{items}</dl> }
}
