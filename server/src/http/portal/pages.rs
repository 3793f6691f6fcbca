//! The portal's own pages for a signed-in customer, server-rendered with no script: usage
//! (twelve months and a month by day), bills (list, detail, PDF, pay now), the billing
//! address, documents, renewal and support. Each reads the signed-in account only, so another
//! customer's location, bill or document is a 404; every form carries the CSRF token.

use app::{
    api::PostalAddressIn,
    format::{card_brand, dollars, html_escape, long_date, month_day, phone, short_date},
};
use axum::{extract::State, http::StatusCode, response::Response, Form};
use chrono::{Datelike, NaiveDate};
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{
    alert,
    chart::{bar_chart, kwh, Bar},
    customer, page_with, paragraph, see_other, Brand, CsrfForm,
};
use crate::{
    domain::{
        account::parse_postal_address,
        billing::{InvoiceStatus, PaymentStatus},
        documents::DocumentStatus,
        usage::first_of_month,
        FieldError,
    },
    http::{
        error::{ApiError, ApiResult},
        extract::{Path, Query},
        websession, AppState,
    },
    services::{
        self, hosted as hosted_service,
        portal::{self as portal_service, RenewalState},
    },
    store::{self, accounts::AccountRow, apps::AppRow, enrollment::LocationRow},
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
        match signed_in(&$state, &$session).await? {
            Ok(c) => c,
            Err(r) => return Ok(r),
        }
    };
}

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
pub(super) fn nav(current: &str, csrf: &str) -> String {
    let links: String = SECTIONS
        .iter()
        .map(|(path, name, testid)| {
            let here = if *path == current {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("<li><a href=\"{path}\" data-testid=\"{testid}\"{here}>{name}</a></li>")
        })
        .collect();
    format!(
        "<nav class=\"portal-nav\" aria-label=\"Your account\"><ul>{links}</ul>\
         <form method=\"post\" action=\"/portal/sign-out\"><input type=\"hidden\" name=\"csrf\" \
         value=\"{}\"><button type=\"submit\" class=\"link\" data-testid=\"sign-out\">Sign out\
         </button></form></nav>",
        html_escape(csrf)
    )
}

/// A signed-in page: the navigation, then `body`.
fn portal_page(
    status: StatusCode,
    c: &Customer,
    current: &str,
    title: &str,
    testid: &str,
    body: &str,
) -> Response {
    page_with(
        status,
        &Brand::of(&c.app),
        title,
        testid,
        &nav(current, &c.csrf),
        body,
    )
}

/// A small form posting to `action` with a single button.
fn button_form(action: &str, csrf: &str, label: &str, class: &str, testid: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <button type=\"submit\" class=\"{class}\" data-testid=\"{testid}\">{}</button></form>",
        html_escape(action),
        html_escape(csrf),
        html_escape(label)
    )
}

/// The button that opens one of the account's flows full-page (closing it comes back).
fn open_flow(scope: &str, csrf: &str, label: &str) -> String {
    button_form(
        &format!("/portal/open/{scope}"),
        csrf,
        label,
        "secondary",
        &format!("open-{scope}"),
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

/// A description list of facts: (term, value HTML already escaped).
fn facts(rows: &[(&str, String)]) -> String {
    let items: String = rows
        .iter()
        .map(|(t, v)| format!("<div><dt>{}</dt><dd>{v}</dd></div>", html_escape(t)))
        .collect();
    format!("<dl class=\"facts\">{items}</dl>")
}

// ---------------------------------------------------------------------------------------------
// Usage.

#[derive(Debug, Deserialize)]
pub struct UsageQuery {
    location: Option<Uuid>,
    /// `YYYY-MM`: the month shown by day.
    month: Option<String>,
}

fn parse_month(raw: &str) -> Result<(i32, u32), FieldError> {
    let invalid = || FieldError::invalid("month", "month must be written YYYY-MM, such as 2027-03");
    let (y, m) = raw.trim().split_once('-').ok_or_else(invalid)?;
    let year: i32 = y.parse().map_err(|_| invalid())?;
    let month: u32 = m.parse().map_err(|_| invalid())?;
    if !(2000..=2100).contains(&year) || !(1..=12).contains(&month) {
        return Err(invalid());
    }
    Ok((year, month))
}

fn usage_link(location: Uuid, month: NaiveDate) -> String {
    format!(
        "/portal/usage?location={location}&amp;month={}-{:02}",
        month.year(),
        month.month()
    )
}

/// Usage: the last twelve months, then one month by day, with links to the months around it.
pub async fn usage_page(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<UsageQuery>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let month = q
        .month
        .as_deref()
        .map(parse_month)
        .transpose()
        .map_err(|e| ApiError::from(e).as_page())?;
    let usage = portal_service::usage(&state, c.account.uuid, q.location, month)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    let Some(usage) = usage else {
        return Ok(portal_page(
            StatusCode::OK,
            &c,
            "/portal/usage",
            "Your usage",
            "portal-usage",
            &paragraph("Your usage shows here once your service has started."),
        ));
    };
    let mut body = String::new();
    let locations = store::enrollment::locations_of_account(&state.db, c.account.uuid).await?;
    if locations.len() > 1 {
        body.push_str("<ul class=\"choices-inline\">");
        for l in &locations {
            let here = if l.uuid == usage.location.uuid {
                " aria-current=\"page\""
            } else {
                ""
            };
            body.push_str(&format!(
                "<li><a href=\"/portal/usage?location={}\"{here}>{}</a></li>",
                l.uuid,
                html_escape(&address_of(l))
            ));
        }
        body.push_str("</ul>");
    }
    body.push_str(&format!(
        "<p class=\"muted\">{}</p>",
        html_escape(&address_of(&usage.location))
    ));
    let total: rust_decimal::Decimal = usage.months.iter().map(|(_, k)| *k).sum();
    let bars: Vec<Bar> = usage
        .months
        .iter()
        .map(|(first, k)| Bar {
            label: format!("{} {}", &month_name(*first)[..3], first.year() % 100),
            kwh: *k,
        })
        .collect();
    let (from, to) = (
        usage.months.first().map(|m| m.0),
        usage.months.last().map(|m| m.0),
    );
    let caption = match (from, to) {
        (Some(f), Some(t)) => format!(
            "Usage by month, {} to {}: {} in all",
            month_and_year(f),
            month_and_year(t),
            kwh(total)
        ),
        _ => "Usage by month".to_owned(),
    };
    body.push_str("<section class=\"card\"><h2>The last twelve months</h2>");
    body.push_str(&bar_chart(&caption, "usage-months", &bars, 2));
    body.push_str("</section>");

    let daily = &usage.daily;
    let shown = first_of_month(daily.year, daily.month);
    let month_total: rust_decimal::Decimal = daily
        .days
        .iter()
        .map(|d| {
            d.consumption_kwh
                .parse::<rust_decimal::Decimal>()
                .unwrap_or_default()
        })
        .sum();
    body.push_str(&format!(
        "<section class=\"card\"><h2>{} by day</h2>",
        html_escape(&month_and_year(shown))
    ));
    if daily.days.is_empty() {
        body.push_str(&paragraph("No usage was read for this month."));
    } else {
        let bars: Vec<Bar> = daily
            .days
            .iter()
            .map(|d| Bar {
                label: d.day.day().to_string(),
                kwh: d.consumption_kwh.parse().unwrap_or_default(),
            })
            .collect();
        body.push_str(&bar_chart(
            &format!(
                "Usage by day in {}: {} in all",
                month_and_year(shown),
                kwh(month_total)
            ),
            "usage-days",
            &bars,
            5,
        ));
    }
    let mut around = Vec::new();
    if let Some(p) = daily.neighbours.previous {
        around.push(format!(
            "<a href=\"{}\" data-testid=\"previous-month\">Previous month: {}</a>",
            usage_link(usage.location.uuid, p),
            html_escape(&month_and_year(p))
        ));
    }
    if let Some(n) = daily.neighbours.next {
        around.push(format!(
            "<a href=\"{}\" data-testid=\"next-month\">Next month: {}</a>",
            usage_link(usage.location.uuid, n),
            html_escape(&month_and_year(n))
        ));
    }
    if !around.is_empty() {
        body.push_str(&format!("<p class=\"around\">{}</p>", around.join(" ")));
    }
    body.push_str("</section>");
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/usage",
        "Your usage",
        "portal-usage",
        &body,
    ))
}

// ---------------------------------------------------------------------------------------------
// Bills.

const BILLS_PER_PAGE: i64 = 12;

#[derive(Debug, Deserialize)]
pub struct BillsQuery {
    page: Option<u32>,
    plan: Option<String>,
}

fn status_words(status: InvoiceStatus, due: NaiveDate) -> String {
    match status {
        InvoiceStatus::Open => format!("To pay by {}", short_date(due)),
        InvoiceStatus::PastDue => format!("Past due since {}", short_date(due)),
        InvoiceStatus::Paid => "Paid".to_owned(),
        InvoiceStatus::Voided => "Cancelled".to_owned(),
    }
}

fn invoice_path(number: &str) -> String {
    format!("/portal/invoices/{}", html_escape(number))
}

/// The bills, newest first, twelve a page.
pub async fn invoices_page(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<BillsQuery>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let page_no = i64::from(q.page.unwrap_or(1).clamp(1, 10_000));
    let mut rows = store::billing::invoices_of_account(
        &state.db,
        c.account.uuid,
        BILLS_PER_PAGE + 1,
        (page_no - 1) * BILLS_PER_PAGE,
    )
    .await?;
    let more = i64::try_from(rows.len()).unwrap_or(0) > BILLS_PER_PAGE;
    rows.truncate(usize::try_from(BILLS_PER_PAGE).unwrap_or(12));
    let mut body = String::new();
    if rows.is_empty() {
        body.push_str(&paragraph(
            "No bills yet: your first comes after your first meter reading.",
        ));
    } else {
        body.push_str(
            "<table class=\"bills\" data-testid=\"invoices\"><caption class=\"visually-hidden\">\
             Your bills</caption><thead><tr><th scope=\"col\">Bill</th><th scope=\"col\">Period\
             </th><th scope=\"col\" class=\"num\">Amount</th><th scope=\"col\">Status</th></tr>\
             </thead><tbody>",
        );
        for r in &rows {
            body.push_str(&format!(
                "<tr data-testid=\"invoice-row\"><td><a href=\"{}\">{}</a></td><td>{} to {}</td>\
                 <td class=\"num\">{}</td><td>{}</td></tr>",
                invoice_path(&r.number),
                html_escape(&short_date(r.invoice_date)),
                html_escape(&month_day(r.billing_period_start)),
                html_escape(&short_date(r.billing_period_end)),
                dollars(r.total_cents),
                html_escape(&status_words(r.status, r.payment_due_date)),
            ));
        }
        body.push_str("</tbody></table>");
    }
    let mut pages = Vec::new();
    if page_no > 1 {
        pages.push(format!(
            "<a href=\"/portal/invoices?page={}\">Newer bills</a>",
            page_no - 1
        ));
    }
    if more {
        pages.push(format!(
            "<a href=\"/portal/invoices?page={}\" data-testid=\"older\">Older bills</a>",
            page_no + 1
        ));
    }
    if !pages.is_empty() {
        body.push_str(&format!("<p class=\"around\">{}</p>", pages.join(" ")));
    }
    body.push_str(&collections_section(&state, &c, q.plan.is_some()).await?);
    body.push_str(&open_flow(
        "update-payment-method",
        &c.csrf,
        "Change your payment card",
    ));
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/invoices",
        "Your bills",
        "portal-invoices",
        &body,
    ))
}

/// What the bills page says of disconnection notices still in force and of payment plans:
/// the plan the customer may accept here (one button), or the plan running.
async fn collections_section(state: &AppState, c: &Customer, accepted: bool) -> ApiResult<String> {
    use crate::domain::disconnection::{DisconnectionStatus, PaymentPlanStatus};
    let mut out = String::new();
    if accepted {
        out.push_str(&paragraph(
            "Your payment plan is in place: its instalments come on your next bills.",
        ));
    }
    for (n, number) in services::disconnection::notices(&state.db, c.account.uuid).await? {
        let text = match n.status {
            DisconnectionStatus::Noticed => format!(
                "Disconnection notice: bill {number} is unpaid. Unless it is paid, your service \
                 may be disconnected on {} or later.",
                long_date(n.earliest_date)
            ),
            DisconnectionStatus::Requested | DisconnectionStatus::Disconnected => format!(
                "Your service is disconnected for non-payment of bill {number}. Pay what is \
                 past due, or accept a payment plan, and it is reconnected."
            ),
            DisconnectionStatus::ReconnectRequested => {
                "Thank you: your service is being reconnected.".to_owned()
            }
            DisconnectionStatus::Cancelled | DisconnectionStatus::Reconnected => continue,
        };
        out.push_str(&format!(
            "<p class=\"notice\" data-testid=\"disconnection\">{}</p>",
            html_escape(&text)
        ));
    }
    let plans = services::disconnection::plan_overview(state, c.account.uuid).await?;
    if let Some((plan, lines)) = plans
        .plans
        .iter()
        .find(|(p, _)| p.status == PaymentPlanStatus::Active)
    {
        let billed = lines.iter().filter(|l| l.invoice_uuid.is_some()).count();
        out.push_str(&format!(
            "<p data-testid=\"payment-plan\">Your payment plan: {} in {} monthly instalments; \
             {billed} billed so far.</p>",
            dollars(plan.total_cents),
            plan.months
        ));
    } else if let Some(offer) = plans.offer {
        out.push_str(&format!(
            "<h2>Payment plan</h2><p>If you cannot pay all at once, you can spread the {} you \
             owe over {} monthly instalments, each added to your next bills, with no finance \
             charge. It stops a disconnection for these bills.</p>",
            dollars(offer.unpaid_cents),
            offer.months
        ));
        out.push_str(&button_form(
            "/portal/payment-plan",
            &c.csrf,
            "Accept the payment plan",
            "primary",
            "accept-plan",
        ));
    }
    Ok(out)
}

/// The customer accepts the payment plan offered on the bills page.
pub async fn accept_payment_plan(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<CsrfForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let c = customer_or_sign_in!(state, session);
    services::disconnection::accept_plan(
        &state,
        &c.app,
        c.account.uuid,
        crate::domain::disconnection::DEFAULT_PLAN_MONTHS,
    )
    .await
    .map_err(|e| ApiError::from(e).as_page())?;
    state.account_changed(c.account.uuid);
    Ok(see_other("/portal/invoices?plan=accepted"))
}

#[derive(Debug, Deserialize)]
pub struct PaidQuery {
    paid: Option<String>,
    declined: Option<String>,
}

/// One bill: what it charges, the period's usage by day, its payments, its PDF, and Pay now.
pub async fn invoice_page(
    State(state): State<AppState>,
    session: Session,
    Path(number): Path<String>,
    Query(q): Query<PaidQuery>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let notice = if q.paid.is_some() {
        Some(("Thank you: your payment went through.", false))
    } else if q.declined.is_some() {
        Some((
            "Your card was declined, and nothing was charged. Change your card, then pay again.",
            true,
        ))
    } else {
        None
    };
    invoice_detail(&state, &c, &number, StatusCode::OK, notice).await
}

async fn invoice_detail(
    state: &AppState,
    c: &Customer,
    number: &str,
    status: StatusCode,
    notice: Option<(&str, bool)>,
) -> ApiResult<Response> {
    let detail = services::invoices::invoice_detail(state, c.account.uuid, number)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    let i = &detail.invoice;
    let mut body = String::new();
    if let Some((text, error)) = notice {
        body.push_str(&if error {
            alert(text)
        } else {
            format!(
                "<p class=\"notice\" role=\"status\" data-testid=\"paid\">{}</p>",
                html_escape(text)
            )
        });
    }
    body.push_str(&facts(&[
        (
            "Amount",
            format!("<strong>{}</strong>", dollars(i.total_cents)),
        ),
        (
            "Status",
            html_escape(&status_words(i.status, i.payment_due_date)),
        ),
        ("Bill date", html_escape(&long_date(i.invoice_date))),
        (
            "Period",
            html_escape(&format!(
                "{} to {}",
                long_date(i.billing_period_start),
                long_date(i.billing_period_end)
            )),
        ),
        (
            "Electricity used",
            kwh(i.total_kwh.parse().unwrap_or_default()),
        ),
    ]));
    body.push_str(&format!(
        "<p><a href=\"{}/pdf\" data-testid=\"invoice-pdf\">The bill as a PDF</a></p>",
        invoice_path(&i.number)
    ));
    if i.status.is_payable() {
        match store::payments::current_payment_method(&state.db, c.account.uuid).await? {
            Some(card) => body.push_str(&format!(
                "<section class=\"card stack\"><p>Pay {} now with your {} ending in {}.</p>{}\
                 </section>",
                dollars(i.total_cents),
                card_brand(&card.brand),
                html_escape(&card.last4),
                button_form(
                    &format!("/portal/invoices/{}/pay", i.number),
                    &c.csrf,
                    "Pay now",
                    "primary",
                    "pay-now"
                ),
            )),
            None => body.push_str(&paragraph("Add a card to pay this bill.")),
        }
        body.push_str(&open_flow(
            "update-payment-method",
            &c.csrf,
            "Change your payment card",
        ));
    }
    for g in &detail.groups {
        body.push_str(&format!(
            "<section class=\"card\"><h2>{}</h2><table class=\"charges\"><tbody>",
            html_escape(&g.name)
        ));
        for ch in &g.charges {
            body.push_str(&format!(
                "<tr><th scope=\"row\">{}</th><td class=\"num\">{}</td></tr>",
                html_escape(&ch.description),
                dollars(ch.amount_cents)
            ));
        }
        body.push_str(&format!(
            "</tbody><tfoot><tr><th scope=\"row\">Total</th><td class=\"num\">{}</td></tr>\
             </tfoot></table></section>",
            dollars(g.total_cents)
        ));
    }
    if !detail.days.is_empty() {
        let bars: Vec<Bar> = detail
            .days
            .iter()
            .map(|d| Bar {
                label: month_day(d.day),
                kwh: d.consumption_kwh.parse().unwrap_or_default(),
            })
            .collect();
        body.push_str("<section class=\"card\"><h2>Your usage in this period</h2>");
        body.push_str(&bar_chart(
            "Usage by day in this bill's period",
            "invoice-days",
            &bars,
            7,
        ));
        body.push_str("</section>");
    }
    if !detail.payments.is_empty() {
        body.push_str("<section class=\"card\"><h2>Payments</h2><ul data-testid=\"payments\">");
        for p in &detail.payments {
            let outcome = match p.status {
                PaymentStatus::Succeeded => "paid",
                PaymentStatus::Failed => "declined",
                PaymentStatus::Pending => "in progress",
            };
            body.push_str(&format!(
                "<li>{}: {} {}</li>",
                html_escape(&long_date(crate::domain::market::market_date(
                    p.attempted_at
                ))),
                dollars(p.amount_cents),
                outcome
            ));
        }
        body.push_str("</ul></section>");
    }
    body.push_str("<p><a href=\"/portal/invoices\">All your bills</a></p>");
    Ok(portal_page(
        status,
        c,
        "/portal/invoices",
        &format!("Bill of {}", long_date(i.invoice_date)),
        "portal-invoice",
        &body,
    ))
}

/// The bill as a PDF.
pub async fn invoice_pdf(
    State(state): State<AppState>,
    session: Session,
    Path(number): Path<String>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let pdf = services::invoices::invoice_pdf(&state, &c.app, c.account.uuid, &number)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    Ok(crate::http::market::pdf_response(
        pdf.bytes,
        &format!("invoice-{}", pdf.number),
    ))
}

/// Pays the bill now with the saved card, through the same service as the billing flow.
pub async fn pay_invoice(
    State(state): State<AppState>,
    session: Session,
    Path(number): Path<String>,
    Form(f): Form<CsrfForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let c = customer_or_sign_in!(state, session);
    let (invoice, payment) =
        services::invoices::pay_invoice(&state, &c.app, c.account.uuid, &number)
            .await
            .map_err(|e| ApiError::from(e).as_page())?;
    state.account_changed(c.account.uuid);
    let outcome = if payment.failure_code.is_none() {
        "paid=1"
    } else {
        "declined=1"
    };
    Ok(see_other(&format!(
        "/portal/invoices/{}?{outcome}",
        invoice.number
    )))
}

// ---------------------------------------------------------------------------------------------
// Billing address.

#[derive(Debug, Default, Deserialize)]
pub struct AddressForm {
    csrf: Option<String>,
    /// "service" or "other".
    which: Option<String>,
    address_1: Option<String>,
    address_2: Option<String>,
    city: Option<String>,
    state: Option<String>,
    postal_code: Option<String>,
}

fn address_form(csrf: &str, same: bool, given: &AddressForm) -> String {
    let value = |v: &Option<String>| html_escape(v.as_deref().unwrap_or_default());
    let field = |name: &str, label: &str, autocomplete: &str, v: &Option<String>| {
        format!(
            "<label for=\"{name}\">{label}</label><input id=\"{name}\" name=\"{name}\" \
             type=\"text\" autocomplete=\"{autocomplete}\" value=\"{}\">",
            value(v)
        )
    };
    let checked = |yes: bool| if yes { " checked" } else { "" };
    format!(
        "<form method=\"post\" action=\"/portal/billing-address\" class=\"stack\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\"><fieldset class=\"stack\">\
         <legend>Send my bills to</legend>\
         <label class=\"option\"><input type=\"radio\" name=\"which\" value=\"service\"{}> \
         My service address</label><label class=\"option\"><input type=\"radio\" name=\"which\" \
         value=\"other\"{}> Another address (below)</label></fieldset>{}{}{}\
         <div class=\"row\"><div class=\"stack\">{}</div><div class=\"stack\">{}</div></div>\
         <button type=\"submit\" class=\"primary\" data-testid=\"save-address\">Save billing \
         address</button></form>",
        html_escape(csrf),
        checked(same),
        checked(!same),
        field(
            "address_1",
            "Street address",
            "address-line1",
            &given.address_1
        ),
        field(
            "address_2",
            "Apartment or unit (optional)",
            "address-line2",
            &given.address_2
        ),
        field("city", "City", "address-level2", &given.city),
        field("state", "State", "address-level1", &given.state),
        field("postal_code", "ZIP code", "postal-code", &given.postal_code),
    )
}

async fn address_page(
    state: &AppState,
    c: &Customer,
    status: StatusCode,
    given: Option<&AddressForm>,
    message: Option<(&str, bool)>,
) -> ApiResult<Response> {
    let current = services::enrollment::billing_address(&state.db, c.account.uuid).await?;
    let mut body = String::new();
    match message {
        Some((text, true)) => body.push_str(&alert(text)),
        Some((text, false)) => body.push_str(&format!(
            "<p class=\"notice\" role=\"status\" data-testid=\"saved\">{}</p>",
            html_escape(text)
        )),
        None => {}
    }
    let Some(current) = current else {
        body.push_str(&paragraph(
            "Your bills go to your service address, once it is confirmed in your enrollment.",
        ));
        return Ok(portal_page(
            status,
            c,
            "/portal/billing-address",
            "Billing address",
            "portal-billing-address",
            &body,
        ));
    };
    let b = &current.billing;
    let (same, lines) = match (b.same_as_service_address, current.service.as_ref()) {
        (true, Some(s)) => (
            true,
            [
                Some(s.address_1.clone()),
                s.address_2.clone(),
                Some(format!("{}, {} {}", s.city, s.state, s.postal_code)),
            ],
        ),
        _ => (
            false,
            [
                b.address_1.clone(),
                b.address_2.clone(),
                Some(format!(
                    "{}, {} {}",
                    b.city.clone().unwrap_or_default(),
                    b.state.clone().unwrap_or_default(),
                    b.postal_code.clone().unwrap_or_default()
                )),
            ],
        ),
    };
    let shown: Vec<String> = lines
        .into_iter()
        .flatten()
        .filter(|l| !l.trim().is_empty())
        .map(|l| html_escape(&l))
        .collect();
    body.push_str(&format!(
        "<section class=\"card\"><h2>{}</h2><p data-testid=\"billing-address\">{}</p></section>",
        if same {
            "Your bills go to your service address"
        } else {
            "Your bills go to"
        },
        shown.join("<br>")
    ));
    let prefill = AddressForm {
        address_1: b.address_1.clone(),
        address_2: b.address_2.clone(),
        city: b.city.clone(),
        state: b.state.clone(),
        postal_code: b.postal_code.clone(),
        ..AddressForm::default()
    };
    let (form_same, form_values) = match given {
        Some(g) => (g.which.as_deref() == Some("service"), g),
        None => (same, &prefill),
    };
    body.push_str("<section class=\"card stack\"><h2>Change it</h2>");
    body.push_str(&address_form(&c.csrf, form_same, form_values));
    body.push_str("</section>");
    Ok(portal_page(
        status,
        c,
        "/portal/billing-address",
        "Billing address",
        "portal-billing-address",
        &body,
    ))
}

#[derive(Debug, Deserialize)]
pub struct SavedQuery {
    saved: Option<String>,
}

pub async fn billing_address_page(
    State(state): State<AppState>,
    session: Session,
    Query(q): Query<SavedQuery>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let message = q
        .saved
        .is_some()
        .then_some(("Saved: your next bills go to this address.", false));
    address_page(&state, &c, StatusCode::OK, None, message).await
}

/// Changes the billing address through the same service as the API's.
pub async fn set_billing_address(
    State(state): State<AppState>,
    session: Session,
    Form(f): Form<AddressForm>,
) -> ApiResult<Response> {
    websession::check_csrf(&session, f.csrf.as_deref()).await?;
    let c = customer_or_sign_in!(state, session);
    let address = match f.which.as_deref() {
        Some("service") => None,
        Some("other") => match parse_postal_address(
            "address",
            PostalAddressIn {
                address_1: f.address_1.clone(),
                address_2: f.address_2.clone(),
                city: f.city.clone(),
                state: f.state.clone(),
                postal_code: f.postal_code.clone(),
            },
        ) {
            Ok(a) => Some(a),
            Err(e) => {
                let message = address_error(&e);
                return address_page(
                    &state,
                    &c,
                    StatusCode::BAD_REQUEST,
                    Some(&f),
                    Some((message.as_str(), true)),
                )
                .await;
            }
        },
        _ => {
            return address_page(
                &state,
                &c,
                StatusCode::BAD_REQUEST,
                Some(&f),
                Some(("Choose where your bills go.", true)),
            )
            .await
        }
    };
    match services::enrollment::set_billing_address(
        &state,
        c.account.app_uuid,
        c.account.uuid,
        address,
    )
    .await
    {
        Ok(_) => {
            state.account_changed(c.account.uuid);
            Ok(see_other("/portal/billing-address?saved=1"))
        }
        Err(services::Error::Refused(_)) => {
            address_page(
                &state,
                &c,
                StatusCode::CONFLICT,
                Some(&f),
                Some((
                    "Your service address is not confirmed yet: give another address for now.",
                    true,
                )),
            )
            .await
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e)),
    }
}

/// What a refused address says to a person, by the field it names.
fn address_error(e: &FieldError) -> String {
    let field = e.param.rsplit('.').next().unwrap_or_default();
    match field {
        "address_1" => "Type the street address.",
        "city" => "Type the city.",
        "state" => "Type the state as two letters, such as TX.",
        "postal_code" => "Type the ZIP code as five digits (or ZIP+4).",
        _ => "Check the address: a part of it is missing or too long.",
    }
    .to_owned()
}

// ---------------------------------------------------------------------------------------------
// Documents.

/// The documents of each location, those in force first.
pub async fn documents_page(
    State(state): State<AppState>,
    session: Session,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let all = portal_service::documents(&state, c.account.uuid).await?;
    let mut body = String::new();
    if all.iter().all(|(_, d)| d.is_empty()) {
        body.push_str(&paragraph(
            "Your documents show here once you have accepted a plan.",
        ));
    }
    for (location, mut documents) in all {
        if documents.is_empty() {
            continue;
        }
        documents.sort_by_key(|d| {
            (
                d.status != DocumentStatus::Active,
                d.status != DocumentStatus::Queued,
                std::cmp::Reverse(d.effective_date),
            )
        });
        body.push_str(&format!(
            "<section class=\"card\"><h2>{}</h2><ul class=\"documents-list\" \
             data-testid=\"documents\">",
            html_escape(&address_of(&location))
        ));
        for d in documents {
            let status = match d.status {
                DocumentStatus::Active => "in force",
                DocumentStatus::Queued => "from",
                DocumentStatus::Superseded => "replaced; from",
            };
            let when = match d.status {
                DocumentStatus::Active => format!("since {}", short_date(d.effective_date)),
                _ => short_date(d.effective_date),
            };
            body.push_str(&format!(
                "<li><a href=\"/portal/documents/{}\" data-testid=\"document\">{}</a> \
                 <span class=\"muted\">{status} {}</span></li>",
                d.uuid,
                d.kind.title(),
                html_escape(&when),
            ));
        }
        body.push_str("</ul></section>");
    }
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/documents",
        "Your documents",
        "portal-documents",
        &body,
    ))
}

/// One of the account's documents as a PDF.
pub async fn document_pdf(
    State(state): State<AppState>,
    session: Session,
    Path(document): Path<Uuid>,
) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let (name, bytes) = portal_service::document_pdf(&state, c.account.uuid, document)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    Ok(crate::http::market::pdf_response(bytes, &name))
}

// ---------------------------------------------------------------------------------------------
// Renewal.

/// Where each location stands with its renewal, and the renewal flow when it is open.
pub async fn renewal_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let renewals = portal_service::renewals(&state, c.account.uuid).await?;
    let mut body = String::new();
    let mut open = false;
    for r in &renewals {
        body.push_str(&format!(
            "<section class=\"card stack\" data-testid=\"renewal\"><h2>{}</h2>",
            html_escape(&address_of(&r.location))
        ));
        if let Some(plan) = &r.plan {
            body.push_str(&paragraph(&match plan.end_date {
                Some(end) => format!(
                    "Your plan: {}, from {} to {}.",
                    plan.plan_name,
                    long_date(plan.start_date),
                    long_date(end)
                ),
                None => format!(
                    "Your plan: {}, month to month since {}.",
                    plan.plan_name,
                    long_date(plan.start_date)
                ),
            }));
        }
        let (text, can_renew) = match &r.state {
            RenewalState::Open { end } => (
                format!(
                    "Renewal is open: choose your next plan. It starts on {}, the day after \
                     your contract ends, with no gap in your service.",
                    long_date(*end + chrono::Duration::days(1))
                ),
                true,
            ),
            RenewalState::Opens { opens, .. } => (
                format!(
                    "Renewal opens on {}: we e-mail you then with your plans.",
                    long_date(*opens)
                ),
                false,
            ),
            RenewalState::MonthToMonth => (
                "You are month to month: you can choose a fixed-price plan, starting tomorrow."
                    .to_owned(),
                true,
            ),
            RenewalState::Queued { plan, start } => (
                format!(
                    "You have renewed: {plan} starts on {}. Nothing else to do.",
                    long_date(*start)
                ),
                false,
            ),
            RenewalState::Nothing => ("There is no plan to renew here.".to_owned(), false),
        };
        body.push_str(&format!(
            "<p data-testid=\"renewal-state\">{}</p></section>",
            html_escape(&text)
        ));
        open |= can_renew;
    }
    if renewals.is_empty() {
        body.push_str(&paragraph(
            "There is nothing to renew yet: your plan shows here once your service starts.",
        ));
    }
    if open {
        body.push_str(&open_flow("renewal", &c.csrf, "See renewal plans"));
    }
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/renewal",
        "Renew your plan",
        "portal-renewal",
        &body,
    ))
}

// ---------------------------------------------------------------------------------------------
// Support.

/// The partner's contacts, as a list of lines (HTML, escaped); empty when none are set.
pub(crate) fn partner_lines(app: &AppRow) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(name) = &app.support_name {
        lines.push(html_escape(name));
    }
    if let Some(p) = &app.support_phone {
        lines.push(format!(
            "Phone: <a href=\"tel:{}\">{}</a>",
            html_escape(p),
            html_escape(&phone(p))
        ));
    }
    if let Some(email) = &app.support_email {
        lines.push(format!(
            "E-mail: <a href=\"mailto:{0}\">{0}</a>",
            html_escape(email)
        ));
    }
    if let Some(hours) = &app.support_hours {
        lines.push(format!("Hours: {}", html_escape(hours)));
    }
    if let Some(url) = app
        .support_url
        .as_ref()
        .filter(|u| u.starts_with("https://"))
    {
        lines.push(format!("<a href=\"{0}\">{0}</a>", html_escape(url)));
    }
    lines
}

/// What a customer is told to call for an outage at a location: the utility by name with its
/// outage number when known, else its main number, else the generic advice.
pub(super) fn outage_line(tdu: Option<&store::market::TduRow>) -> String {
    match tdu {
        Some(t) => match t.outage_phone.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(p) => format!(
                "For a power outage or a downed line, call {} at <a href=\"tel:{}\" \
                 data-testid=\"outage-phone\">{}</a>, day or night.",
                html_escape(&t.display_name),
                html_escape(p),
                html_escape(&phone(p))
            ),
            None => format!(
                "For a power outage or a downed line, call {} at {}, day or night.",
                html_escape(&t.display_name),
                html_escape(&phone(&t.phone))
            ),
        },
        None => "For a power outage or a downed line, call your utility (the number is on your \
                 bill), day or night."
            .to_owned(),
    }
}

/// Whom to call: the partner for the account and bills, the utility for outages and meters.
pub async fn support_page(State(state): State<AppState>, session: Session) -> ApiResult<Response> {
    let c = customer_or_sign_in!(state, session);
    let utilities = portal_service::utilities(&state, c.account.uuid).await?;
    let mut body = String::new();
    let partner = partner_lines(&c.app);
    body.push_str(&format!(
        "<section class=\"card\" data-testid=\"partner-support\"><h2>Your account and bills\
         </h2><p>{}</p></section>",
        if partner.is_empty() {
            format!(
                "Write to {} through the app or site where you signed up.",
                html_escape(&c.app.display_name)
            )
        } else {
            partner.join("<br>")
        }
    ));
    for (location, tdu) in &utilities {
        let mut lines = vec![outage_line(tdu.as_ref())];
        if let Some(t) = tdu {
            lines.push(format!(
                "Meters and wires: {} at {}",
                html_escape(&t.display_name),
                html_escape(&phone(&t.phone))
            ));
            if t.website.starts_with("https://") {
                lines.push(format!("<a href=\"{0}\">{0}</a>", html_escape(&t.website)));
            }
        }
        body.push_str(&format!(
            "<section class=\"card\" data-testid=\"utility-support\"><h2>Outages at {}</h2>\
             <p>{}</p></section>",
            html_escape(&address_of(location)),
            lines.join("<br>")
        ));
    }
    if utilities.is_empty() {
        body.push_str(&format!(
            "<section class=\"card\"><h2>Outages</h2><p>{}</p></section>",
            outage_line(None)
        ));
    }
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/support",
        "Support",
        "portal-support",
        &body,
    ))
}
