//! Bills: the list (twelve a page), what the bills page says of disconnection notices and
//! payment plans, one bill with its charges, usage and payments, its PDF, and Pay now.

use app::format::{card_brand, dollars, long_date, month_day, short_date};
use axum::{extract::State, http::StatusCode, response::Response, Form};
use chrono::NaiveDate;
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;

use super::{button_form, facts, open_flow, portal_page, Customer};
use crate::{
    domain::billing::{InvoiceStatus, PaymentStatus},
    http::{
        error::{ApiError, ApiResult},
        extract::{Path, Query},
        portal::{
            chart::{bar_chart, kwh, Bar},
            render::{alert, paragraph},
            see_other, CsrfForm,
        },
        websession, AppState,
    },
    services, store,
};

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
    format!("/portal/invoices/{number}")
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
    let bills = if rows.is_empty() {
        paragraph("No bills yet: your first comes after your first meter reading.").into_any()
    } else {
        let rows = rows
            .iter()
            .map(|r| {
                let period = format!(
                    "{} to {}",
                    month_day(r.billing_period_start),
                    short_date(r.billing_period_end)
                );
                view! {
                    <tr data-testid="invoice-row">
                        <td><a href=invoice_path(&r.number)>{short_date(r.invoice_date)}</a></td>
                        <td>{period}</td>
                        <td class="num">{dollars(r.total_cents)}</td>
                        <td>{status_words(r.status, r.payment_due_date)}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <table class="bills" data-testid="invoices">
                <caption class="visually-hidden">"Your bills"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Bill"</th>
                        <th scope="col">"Period"</th>
                        <th scope="col" class="num">"Amount"</th>
                        <th scope="col">"Status"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    };
    let newer = (page_no > 1).then(|| {
        let href = format!("/portal/invoices?page={}", page_no - 1);
        view! { <a href=href>"Newer bills"</a> }
    });
    let older = more.then(|| {
        let href = format!("/portal/invoices?page={}", page_no + 1);
        view! { <a href=href data-testid="older">"Older bills"</a> }
    });
    let pages = (newer.is_some() || older.is_some()).then(|| {
        let between = (newer.is_some() && older.is_some()).then_some(" ");
        view! { <p class="around">{newer} {between} {older}</p> }
    });
    let collections = collections_section(&state, &c, q.plan.is_some()).await?;
    let body = view! {
        {bills}
        {pages}
        {collections}
        {open_flow("update-payment-method", &c.csrf, "Change your payment card")}
    }
    .into_any();
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/invoices",
        "Your bills",
        "portal-invoices",
        body,
    ))
}

/// What the bills page says of disconnection notices still in force and of payment plans:
/// the plan the customer may accept here (one button), or the plan running.
async fn collections_section(state: &AppState, c: &Customer, accepted: bool) -> ApiResult<AnyView> {
    use crate::domain::disconnection::{DisconnectionStatus, PaymentPlanStatus};
    let accepted = accepted.then(|| {
        paragraph("Your payment plan is in place: its instalments come on your next bills.")
    });
    let mut notices = Vec::new();
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
        notices.push(view! { <p class="notice" data-testid="disconnection">{text}</p> });
    }
    let plans = services::disconnection::plan_overview(state, c.account.uuid).await?;
    let plan = if let Some((plan, lines)) = plans
        .plans
        .iter()
        .find(|(p, _)| p.status == PaymentPlanStatus::Active)
    {
        let billed = lines.iter().filter(|l| l.invoice_uuid.is_some()).count();
        let text = format!(
            "Your payment plan: {} in {} monthly instalments; {billed} billed so far.",
            dollars(plan.total_cents),
            plan.months
        );
        Some(view! { <p data-testid="payment-plan">{text}</p> }.into_any())
    } else {
        plans.offer.map(|offer| {
            let text = format!(
                "If you cannot pay all at once, you can spread the {} you owe over {} monthly \
                 instalments, each added to your next bills, with no finance charge. It stops a \
                 disconnection for these bills.",
                dollars(offer.unpaid_cents),
                offer.months
            );
            view! {
                <h2>"Payment plan"</h2>
                <p>{text}</p>
                {button_form(
                    "/portal/payment-plan".to_owned(),
                    &c.csrf,
                    "Accept the payment plan",
                    "primary",
                    "accept-plan".to_owned(),
                )}
            }
            .into_any()
        })
    };
    Ok(view! { {accepted} {notices} {plan} }.into_any())
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
    notice: Option<(&'static str, bool)>,
) -> ApiResult<Response> {
    let detail = services::invoices::invoice_detail(state, c.account.uuid, number)
        .await
        .map_err(|e| ApiError::from(e).as_page())?;
    let i = &detail.invoice;
    let notice = notice.map(|(text, error)| {
        if error {
            alert(text).into_any()
        } else {
            view! { <p class="notice" role="status" data-testid="paid">{text}</p> }.into_any()
        }
    });
    let summary = facts(vec![
        (
            "Amount",
            view! { <strong>{dollars(i.total_cents)}</strong> }.into_any(),
        ),
        (
            "Status",
            status_words(i.status, i.payment_due_date).into_any(),
        ),
        ("Bill date", long_date(i.invoice_date).into_any()),
        (
            "Period",
            format!(
                "{} to {}",
                long_date(i.billing_period_start),
                long_date(i.billing_period_end)
            )
            .into_any(),
        ),
        (
            "Electricity used",
            kwh(i.total_kwh.parse().unwrap_or_default()).into_any(),
        ),
    ]);
    let pdf = format!("{}/pdf", invoice_path(&i.number));
    let pay = if i.status.is_payable() {
        let with_card =
            match store::payments::current_payment_method(&state.db, c.account.uuid).await? {
                Some(card) => {
                    let text = format!(
                        "Pay {} now with your {} ending in {}.",
                        dollars(i.total_cents),
                        card_brand(&card.brand),
                        card.last4
                    );
                    view! {
                        <section class="card stack">
                            <p>{text}</p>
                            {button_form(
                                format!("/portal/invoices/{}/pay", i.number),
                                &c.csrf,
                                "Pay now",
                                "primary",
                                "pay-now".to_owned(),
                            )}
                        </section>
                    }
                    .into_any()
                }
                None => paragraph("Add a card to pay this bill.").into_any(),
            };
        Some(view! {
            {with_card}
            {open_flow("update-payment-method", &c.csrf, "Change your payment card")}
        })
    } else {
        None
    };
    let groups = detail
        .groups
        .iter()
        .map(|g| {
            let charges = g
                .charges
                .iter()
                .map(|ch| {
                    let description = ch.description.clone();
                    view! {
                        <tr>
                            <th scope="row">{description}</th>
                            <td class="num">{dollars(ch.amount_cents)}</td>
                        </tr>
                    }
                })
                .collect_view();
            let name = g.name.clone();
            view! {
                <section class="card">
                    <h2>{name}</h2>
                    <table class="charges">
                        <tbody>{charges}</tbody>
                        <tfoot>
                            <tr>
                                <th scope="row">"Total"</th>
                                <td class="num">{dollars(g.total_cents)}</td>
                            </tr>
                        </tfoot>
                    </table>
                </section>
            }
        })
        .collect_view();
    let days = (!detail.days.is_empty()).then(|| {
        let bars: Vec<Bar> = detail
            .days
            .iter()
            .map(|d| Bar {
                label: month_day(d.day),
                kwh: d.consumption_kwh.parse().unwrap_or_default(),
            })
            .collect();
        view! {
            <section class="card">
                <h2>"Your usage in this period"</h2>
                {bar_chart("Usage by day in this bill's period", "invoice-days", &bars, 7)}
            </section>
        }
    });
    let payments = (!detail.payments.is_empty()).then(|| {
        let items = detail
            .payments
            .iter()
            .map(|p| {
                let outcome = match p.status {
                    PaymentStatus::Succeeded => "paid",
                    PaymentStatus::Failed => "declined",
                    PaymentStatus::Pending => "in progress",
                };
                let text = format!(
                    "{}: {} {outcome}",
                    long_date(crate::domain::market::market_date(p.attempted_at)),
                    dollars(p.amount_cents)
                );
                view! { <li>{text}</li> }
            })
            .collect_view();
        view! {
            <section class="card">
                <h2>"Payments"</h2>
                <ul data-testid="payments">{items}</ul>
            </section>
        }
    });
    let body = view! {
        {notice}
        {summary}
        <p><a href=pdf data-testid="invoice-pdf">"The bill as a PDF"</a></p>
        {pay}
        {groups}
        {days}
        {payments}
        <p><a href="/portal/invoices">"All your bills"</a></p>
    }
    .into_any();
    Ok(portal_page(
        status,
        c,
        "/portal/invoices",
        &format!("Bill of {}", long_date(i.invoice_date)),
        "portal-invoice",
        body,
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
