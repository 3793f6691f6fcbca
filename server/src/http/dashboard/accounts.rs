//! Customers' accounts in the dashboard: the search (e-mail, name, account number, ESI ID)
//! within the apps the member may see, and an account's page with its status and history,
//! locations and contracts, invoices (their PDFs) and payments, each location's documents
//! (their PDFs, served here), e-mails sent (previewed with their links inert), events, and for
//! a sandbox account the clock and simulation buttons (`sandbox.rs`). Any account of an app the
//! member may not see is a 404. Every page and PDF here that shows a customer's data is in the
//! audit log (`services::dashboard`).

use axum::{
    extract::{Path, Query, State},
    http::{
        header::{CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE},
        StatusCode,
    },
    response::IntoResponse,
    routing::{get, post},
    Form, Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, views, Dash, Done, PageResult};
use crate::{
    domain::{
        billing::{InvoiceStatus, PaymentStatus},
        credit::SIMULATED_EVENTS,
        disconnection::DisconnectionStatus,
        documents::DocumentStatus,
    },
    http::{
        error::{ApiError, ErrorCode},
        market::pdf_response,
        AppState,
    },
    services::{self, dashboard::AccountOverview},
    store::{self, accounts::AccountRow},
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard/accounts", get(search))
        .route("/dashboard/accounts/{account}", get(account_page))
        .route(
            "/dashboard/accounts/{account}/invoices/{number}",
            get(invoice_pdf),
        )
        .route("/dashboard/accounts/{account}/emails/{email}", get(email))
        .route(
            "/dashboard/accounts/{account}/late-fee-exemption",
            post(set_late_fee_exemption),
        )
        .route(
            "/dashboard/accounts/{account}/disconnections/{disconnection}/done",
            post(record_utility_done),
        )
        .route(
            "/dashboard/accounts/{account}/invoices/{number}/reissue",
            post(reissue_invoice),
        )
        .route(
            "/dashboard/accounts/{account}/documents/{document}",
            get(document_pdf),
        )
}

#[derive(Deserialize)]
struct SearchQuery {
    #[serde(default)]
    q: String,
}

async fn search(
    State(state): State<AppState>,
    dash: Dash,
    Query(query): Query<SearchQuery>,
) -> PageResult {
    let found =
        services::dashboard::search_accounts(&state, &dash.actor(), dash.member(), &query.q)
            .await?;
    Ok(html(StatusCode::OK, search_view(&dash, &query.q, &found)))
}

fn search_view(dash: &Dash, q: &str, found: &[AccountRow]) -> String {
    let nav = dash.nav();
    let rows = found
        .iter()
        .map(|a| {
            let href = format!("/dashboard/accounts/{}", a.uuid);
            let name = format!("{} {}", a.first_name, a.last_name);
            let number = a.account_number.clone();
            let email = a.email.clone();
            let status = a.status.as_str();
            view! {
                <tr>
                    <td><a href=href>{number}</a></td>
                    <td>{name}</td>
                    <td>{email}</td>
                    <td>{status}</td>
                </tr>
            }
        })
        .collect_view();
    let summary = (!q.trim().is_empty()).then(|| {
        let text = format!("{} account(s) found.", found.len());
        view! { <p role="status">{text}</p> }
    });
    let q = q.to_owned();
    let body = view! {
        <h1>"Accounts"</h1>
        <form method="get" action="/dashboard/accounts" class="card">
            <label for="q">"E-mail, name, account number or ESI ID"</label>
            <input id="q" name="q" type="search" value=q/>
            <button type="submit">"Search"</button>
        </form>
        {summary}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"Account"</th><th scope="col">"Name"</th>
                    <th scope="col">"E-mail"</th><th scope="col">"Status"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any();
    views::document("Accounts", Some(&nav), body)
}

/// The account's page data, its look audited.
async fn overview(state: &AppState, dash: &Dash, uuid: Uuid) -> Result<AccountOverview, ApiError> {
    services::dashboard::view_account(state, &dash.actor(), dash.member(), uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))
}

/// What a `?done=` after a sandbox action says.
fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "advanced" => "The account's clock was moved forward; what fell due on the way ran.",
        "simulated" => "The event was simulated.",
        "exemption" => "The account's late-fee exemption was saved.",
        "utility" => "The utility's answer was recorded.",
        "corrected" => "The bill was cancelled and issued again; the customer was e-mailed why.",
        "refunded" => "The refund was made; the customer's card gets the money back.",
        _ => return None,
    })
}

#[derive(Deserialize)]
struct ExemptionForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    exempt: String,
}

/// Marks the account exempt from late fees (`exempt=on`) or clears the mark (`off`); the
/// operator's to decide.
async fn set_late_fee_exemption(
    State(state): State<AppState>,
    dash: Dash,
    Path(account): Path<Uuid>,
    Form(form): Form<ExemptionForm>,
) -> PageResult {
    let change = "marks an account exempt from late fees";
    let (app, account) = account_for_operator(&state, &dash, &form.csrf, account, change).await?;
    let exempt = match form.exempt.trim() {
        "on" => true,
        "off" => false,
        _ => {
            return Err(
                ApiError::new(ErrorCode::ParameterInvalid, "exempt must be on or off").into(),
            )
        }
    };
    services::collections::set_late_fee_exempt(
        &state.db,
        &state.clock,
        &dash.actor(),
        app.uuid,
        account.uuid,
        exempt,
    )
    .await?
    .ok_or_else(|| ApiError::not_found("account"))?;
    Ok(account_done(&account, "exemption"))
}

/// The account `uuid` for the operator's change `change`, once the form's CSRF token is
/// checked: a 404 when this member may not see it, a refusal naming the change when they are
/// not the operator.
async fn account_for_operator(
    state: &AppState,
    dash: &Dash,
    csrf: &str,
    uuid: Uuid,
    change: &'static str,
) -> Result<(store::apps::AppRow, AccountRow), ApiError> {
    dash.check(csrf).await?;
    let visible = services::dashboard::visible_account(&state.db, dash.member(), uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    dash.operator_only(change)?;
    Ok(visible)
}

/// Back to the account's page after a change, which says what was `done`.
pub(super) fn account_done(account: &AccountRow, done: &str) -> axum::response::Response {
    super::see_other(&format!("/dashboard/accounts/{}?done={done}", account.uuid))
}

#[derive(Deserialize)]
struct CsrfOnly {
    #[serde(default)]
    csrf: String,
}

/// The operator records that the utility carried out a disconnection or reconnection of the
/// worklist (a live app's; the sandbox's utility does it by itself).
async fn record_utility_done(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, disconnection)): Path<(Uuid, Uuid)>,
    Form(form): Form<CsrfOnly>,
) -> PageResult {
    let change = "records the utility's answers";
    let (app, account) = account_for_operator(&state, &dash, &form.csrf, account, change).await?;
    if !services::disconnection::record_utility_done(
        &state,
        &dash.actor(),
        &app,
        account.uuid,
        disconnection,
    )
    .await?
    {
        return Err(ApiError::not_found("utility order").into());
    }
    Ok(account_done(&account, "utility"))
}

#[derive(Deserialize)]
struct ReissueForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    kwh: String,
    #[serde(default)]
    reason: String,
    /// `credit` (the default) or `refund`: where what the correction leaves overpaid goes.
    #[serde(default)]
    overpayment: String,
}

/// The operator cancels a bill and issues it again with the corrected consumption.
async fn reissue_invoice(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, number)): Path<(Uuid, String)>,
    Form(form): Form<ReissueForm>,
) -> PageResult {
    let change = "corrects bills";
    let (app, account) = account_for_operator(&state, &dash, &form.csrf, account, change).await?;
    services::corrections::reissue(
        &state,
        &dash.actor(),
        &app,
        account.uuid,
        &number,
        &form.kwh,
        &form.reason,
        &form.overpayment,
    )
    .await?;
    Ok(account_done(&account, "corrected"))
}

async fn account_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(account): Path<Uuid>,
    Query(done): Query<Done>,
) -> PageResult {
    let notice = done_message(done.done.as_deref());
    render(&state, &dash, account, StatusCode::OK, notice, None).await
}

/// The account's page with `status`, saying `notice` or `error` (a sandbox action's refusal).
pub(super) async fn render(
    state: &AppState,
    dash: &Dash,
    account: Uuid,
    status: StatusCode,
    notice: Option<&str>,
    error: Option<&str>,
) -> PageResult {
    let o = overview(state, dash, account).await?;
    Ok(html(status, account_view(dash, &o, notice, error)))
}

fn dollars(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}${}.{:02}", (cents / 100).abs(), (cents % 100).abs())
}

/// The account's deposit: what was asked and paid, its interest, what came back and how, and
/// anything the final bill left that is still owed to the customer.
fn deposit_view(d: &store::credit_reviews::DepositRow) -> impl IntoView {
    let owed = crate::domain::deposits::owed_cents(d.refund_reason.as_deref(), d.refund_left_cents);
    let row = |label: &'static str, value: String| {
        view! { <tr><th scope="row">{label}</th><td>{value}</td></tr> }
    };
    let mut rows = vec![
        row("Status", d.status.clone()),
        row("Asked", dollars(d.amount_cents)),
        row("Paid", dollars(d.paid_cents)),
        row("Interest accrued", dollars(d.interest_cents)),
    ];
    if let Some(waiver) = &d.waiver {
        rows.push(row("Waived", waiver.replace('_', " ")));
    }
    if d.refunded_cents > 0 {
        let how = match d.refund_reason.as_deref() {
            Some("final_bill") => "applied to the final bill",
            _ => "credited on the bills after 12 on-time payments",
        };
        rows.push(row(
            "Coming back",
            format!("{} with its interest, {how}", dollars(d.refunded_cents)),
        ));
    }
    if d.paid_out_cents > 0 {
        rows.push(row("Refunded to the card", dollars(d.paid_out_cents)));
    }
    let owed = (owed > 0).then(|| {
        view! {
            <p class="error" data-testid="deposit-owed">{format!(
                "{} of the deposit is still owed to the customer: the final bill could not take \
                 and the card has not taken back. Pay it back by other means.",
                dollars(owed)
            )}</p>
        }
    });
    view! {
        <h2>"Deposit"</h2>
        <div class="table-wrap" data-testid="deposit"><table>
            <tbody>{rows}</tbody>
        </table></div>
        {owed}
    }
}

fn account_view(
    dash: &Dash,
    o: &AccountOverview,
    notice: Option<&str>,
    error: Option<&str>,
) -> String {
    let nav = dash.nav();
    let a = &o.account;
    let base = format!("/dashboard/accounts/{}", a.uuid);
    let history = o
        .history
        .iter()
        .map(|h| {
            let when = views::time(h.changed_at);
            let status = h.status.as_str();
            let reason = h.status_reason.as_str();
            view! { <tr><td>{when}</td><td>{status}</td><td>{reason}</td></tr> }
        })
        .collect_view();
    let locations = o
        .locations
        .iter()
        .map(|l| {
            let esi = l.esi_id.clone();
            let place = format!("{}, {} {}", l.city, l.state, l.postal_code);
            let status = l.status.to_string();
            let start = l
                .service_start_date
                .map_or_else(|| "-".to_owned(), |d| d.to_string());
            view! { <tr><td>{esi}</td><td>{place}</td><td>{status}</td><td>{start}</td></tr> }
        })
        .collect_view();
    let contracts = o
        .contracts
        .iter()
        .map(|c| {
            let plan = c.plan_name.clone();
            let start = c.start_date.to_string();
            let end = c.end_date.map_or_else(|| "-".to_owned(), |d| d.to_string());
            let status = c.status.to_string();
            view! { <tr><td>{plan}</td><td>{start}</td><td>{end}</td><td>{status}</td></tr> }
        })
        .collect_view();
    let operator = nav.operator;
    let csrf = dash.csrf.clone();
    let invoices = o
        .invoices
        .iter()
        .map(|i| {
            let href = format!("{base}/invoices/{}", i.number);
            let number = i.number.clone();
            let period = format!("{} – {}", i.billing_period_start, i.billing_period_end);
            let total = dollars(i.total_cents);
            let status = i.status.to_string();
            let correct = (operator && i.status != InvoiceStatus::Voided).then(|| {
                let action = format!("{base}/invoices/{}/reissue", i.number);
                let csrf = csrf.clone();
                let kwh = i.total_kwh.clone();
                view! {
                    <details>
                        <summary>"Correct"</summary>
                        <form method="post" action=action>
                            <input type="hidden" name="csrf" value=csrf/>
                            <label>"Corrected kWh" <input name="kwh" value=kwh/></label>
                            <label>"Why (the customer reads it)" <input name="reason"/></label>
                            <fieldset>
                                <legend>"If the customer paid more than the corrected amount"</legend>
                                <label>
                                    <input type="radio" name="overpayment" value="credit" checked/>
                                    "Credit on the next bill"
                                </label>
                                <label>
                                    <input type="radio" name="overpayment" value="refund"/>
                                    "Refund to the card"
                                </label>
                            </fieldset>
                            <button type="submit">"Cancel and re-issue"</button>
                        </form>
                    </details>
                }
            });
            view! {
                <tr>
                    <td><a href=href>{number}" (PDF)"</a></td>
                    <td>{period}</td><td>{total}</td><td>{status}</td><td>{correct}</td>
                </tr>
            }
        })
        .collect_view();
    let disconnections = o
        .disconnections
        .iter()
        .map(|(d, number)| {
            let number = number.clone();
            let noticed = d.notice_date.to_string();
            let earliest = d.earliest_date.to_string();
            let status = d.status.to_string();
            let pending = matches!(
                d.status,
                DisconnectionStatus::Requested | DisconnectionStatus::ReconnectRequested
            );
            let action = (operator && pending).then(|| {
                let href = format!("{base}/disconnections/{}/done", d.uuid);
                let label = if d.status == DisconnectionStatus::Requested {
                    "The utility disconnected"
                } else {
                    "The utility reconnected"
                };
                let csrf = csrf.clone();
                view! {
                    <form method="post" action=href>
                        <input type="hidden" name="csrf" value=csrf/>
                        <button type="submit">{label}</button>
                    </form>
                }
            });
            view! {
                <tr><td>{number}</td><td>{noticed}</td><td>{earliest}</td><td>{status}</td><td>{action}</td></tr>
            }
        })
        .collect_view();
    let payments = o
        .payments
        .iter()
        .map(|p| {
            let when = views::time(p.attempted_at);
            let amount = dollars(p.amount_cents);
            let status = p.status.to_string();
            let invoice = o
                .invoices
                .iter()
                .find(|i| i.uuid == p.invoice_uuid)
                .map_or_else(|| "-".to_owned(), |i| i.number.clone());
            let failure = p.failure_code.clone().unwrap_or_else(|| "-".to_owned());
            let mut after = Vec::new();
            if p.refunded_cents > 0 {
                after.push(format!("{} refunded", dollars(p.refunded_cents)));
            }
            if p.disputed_at.is_some() {
                after.push("disputed".to_owned());
            }
            let after = if after.is_empty() { "-".to_owned() } else { after.join(", ") };
            let left = p.amount_cents - p.refunded_cents;
            let refundable = operator
                && p.status == PaymentStatus::Succeeded
                && p.processor_payment_id.is_some()
                && left > 0;
            let refund = refundable.then(|| {
                let id = format!("refund-{}", p.uuid);
                let reason_id = format!("refund-reason-{}", p.uuid);
                view! {
                    <form method="post" action=format!("{base}/payments/{}/refund", p.uuid) class="inline">
                        {views::csrf_field(&nav.csrf)}
                        <label for=id.clone()>{format!("Amount to refund (up to {}; empty: all)", dollars(left))}</label>
                        <input id=id name="amount" inputmode="decimal" placeholder=dollars(left)/>
                        <label for=reason_id.clone()>"Reason"</label>
                        <input id=reason_id name="reason"/>
                        <button type="submit">"Refund"</button>
                    </form>
                }
            });
            view! {
                <tr>
                    <td>{when}</td><td>{amount}</td><td>{status}</td><td>{failure}</td><td>{invoice}</td>
                    <td>{after}</td><td>{refund}</td>
                </tr>
            }
        })
        .collect_view();
    let no_payments = o
        .payments
        .is_empty()
        .then(|| view! { <p>"No payments yet."</p> });
    let documents = o
        .documents
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(location, docs)| {
            let heading = o
                .locations
                .iter()
                .find(|l| l.uuid == *location)
                .map_or_else(String::new, |l| {
                    format!(
                        "ESI ID {} · {}, {} {}",
                        l.esi_id, l.city, l.state, l.postal_code
                    )
                });
            let items = docs
                .iter()
                .map(|d| {
                    let href = format!("{base}/documents/{}", d.uuid);
                    let name = format!("{} (PDF)", d.kind.title());
                    let state = match d.status {
                        DocumentStatus::Active => "in force",
                        DocumentStatus::Queued => "queued",
                        DocumentStatus::Superseded => "superseded",
                    };
                    let meta = format!(
                        " · {state} from {} · version {}",
                        d.effective_date, d.version
                    );
                    view! { <li><a href=href>{name}</a><span class="muted">{meta}</span></li> }
                })
                .collect_view();
            view! {
                <h3>{heading}</h3>
                <ul class="plain">{items}</ul>
            }
        })
        .collect_view();
    let no_documents = o
        .documents
        .iter()
        .all(|(_, d)| d.is_empty())
        .then(|| view! { <p>"No documents yet: they come with an accepted plan."</p> });
    let sandbox = (o.app.environment == "sandbox").then(|| {
        let options = SIMULATED_EVENTS
            .iter()
            .copied()
            .map(|e| view! { <option value=e>{e}</option> })
            .collect_view();
        view! {
            <section class="card">
                <h2>"Sandbox"</h2>
                <p>"A sandbox account's clock moves only forward; what falls due on the way (reads, bills, auto-pay, renewal notices) runs in order."</p>
                <form method="post" action=format!("{base}/sandbox/advance-clock")>
                    {views::csrf_field(&nav.csrf)}
                    <label for="days">"Days to move the clock forward (1 to 3650)"</label>
                    <input id="days" name="days" type="number" min="1" max="3650" value="1" required/>
                    <button type="submit">"Advance the clock"</button>
                </form>
                <form method="post" action=format!("{base}/sandbox/simulate")>
                    {views::csrf_field(&nav.csrf)}
                    <label for="event">"Simulated event"</label>
                    <select id="event" name="event">{options}</select>
                    <button type="submit">"Simulate"</button>
                </form>
            </section>
        }
    });
    let emails = o
        .emails
        .iter()
        .map(|e| {
            let href = format!("{base}/emails/{}", e.uuid);
            let when = views::time(e.created_at);
            let subject = e.subject.clone();
            let to = e.to_address.clone();
            let status = e.status.to_string();
            view! {
                <tr><td>{when}</td><td><a href=href>{subject}</a></td><td>{to}</td><td>{status}</td></tr>
            }
        })
        .collect_view();
    let events = o
        .events
        .iter()
        .rev()
        .map(|e| {
            let when = views::time(e.created_at);
            let kind = e.kind.clone();
            view! { <tr><td>{when}</td><td><code>{kind}</code></td></tr> }
        })
        .collect_view();
    let exemption = if o.late_fee_exempt {
        "Exempt from late fees."
    } else {
        "Late fees apply when the app charges them."
    };
    let exemption_form = dash.member().is_operator().then(|| {
        let (value, label) = if o.late_fee_exempt {
            ("off", "Charge late fees again")
        } else {
            ("on", "Mark exempt from late fees")
        };
        view! {
            <form method="post" action=format!("{base}/late-fee-exemption")>
                {views::csrf_field(&nav.csrf)}
                <input type="hidden" name="exempt" value=value/>
                <button type="submit">{label}</button>
            </form>
        }
    });
    let late_fee = view! {
        <h2>"Late fee"</h2>
        <p>{exemption}</p>
        {exemption_form}
    };
    let title = format!("{} {}", a.first_name, a.last_name);
    let meta = format!(
        "Account {} · {} · app {} ({})",
        a.account_number, a.email, o.app.display_name, o.app.environment
    );
    let status = format!("{} ({})", a.status, a.status_reason);
    let deposit = o.deposit.as_ref().map(deposit_view);
    let body = view! {
        <p><a href="/dashboard/accounts">"← Accounts"</a></p>
        <h1>{title}</h1>
        <p class="muted">{meta}</p>
        {views::messages(notice, error)}
        <section class="card">
            <h2>"Status"</h2>
            <p>{status}</p>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Changed"</th><th scope="col">"Status"</th><th scope="col">"Reason"</th></tr></thead>
                <tbody>{history}</tbody>
            </table></div>
        </section>
        <section class="card">
            <h2>"Locations"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"ESI ID"</th><th scope="col">"Place"</th><th scope="col">"Status"</th><th scope="col">"Service start"</th></tr></thead>
                <tbody>{locations}</tbody>
            </table></div>
            <h2>"Contracts"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Plan"</th><th scope="col">"Start"</th><th scope="col">"End"</th><th scope="col">"Status"</th></tr></thead>
                <tbody>{contracts}</tbody>
            </table></div>
        </section>
        <section class="card">
            <h2>"Invoices"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Invoice"</th><th scope="col">"Period"</th><th scope="col">"Total"</th><th scope="col">"Status"</th><th scope="col"></th></tr></thead>
                <tbody>{invoices}</tbody>
            </table></div>
            {late_fee}
            <h2>"Payments"</h2>
            {no_payments}
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Date"</th><th scope="col">"Amount"</th><th scope="col">"Status"</th><th scope="col">"Failure code"</th><th scope="col">"Invoice"</th><th scope="col">"Since"</th><th scope="col">"Refund"</th></tr></thead>
                <tbody>{payments}</tbody>
            </table></div>
            {deposit}
            <h2>"Disconnection notices"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Bill"</th><th scope="col">"Notice"</th><th scope="col">"Earliest disconnection"</th><th scope="col">"Status"</th><th scope="col"></th></tr></thead>
                <tbody>{disconnections}</tbody>
            </table></div>
        </section>
        <section class="card">
            <h2>"Documents"</h2>
            {no_documents}
            {documents}
        </section>
        {sandbox}
        <section class="card">
            <h2>"E-mails sent"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"Written"</th><th scope="col">"Subject"</th><th scope="col">"To"</th><th scope="col">"Status"</th></tr></thead>
                <tbody>{emails}</tbody>
            </table></div>
        </section>
        <section class="card">
            <h2>"Events"</h2>
            <div class="table-wrap"><table>
                <thead><tr><th scope="col">"When"</th><th scope="col">"Event"</th></tr></thead>
                <tbody>{events}</tbody>
            </table></div>
        </section>
    }
    .into_any();
    views::document(&format!("Account {}", a.account_number), Some(&nav), body)
}

async fn invoice_pdf(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, number)): Path<(Uuid, String)>,
) -> PageResult {
    let pdf =
        services::dashboard::invoice_pdf(&state, &dash.actor(), dash.member(), account, &number)
            .await
            .map_err(ApiError::from)?;
    Ok((
        [
            (CONTENT_TYPE, "application/pdf".to_owned()),
            (
                CONTENT_DISPOSITION,
                format!("inline; filename=\"invoice-{}.pdf\"", pdf.number),
            ),
        ],
        pdf.bytes,
    )
        .into_response())
}

/// One of the account's documents as a PDF, served here (the member needs no customer's
/// session); another's account or document is a 404.
async fn document_pdf(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, document)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let (name, bytes) =
        services::dashboard::document_pdf(&state, &dash.actor(), dash.member(), account, document)
            .await
            .map_err(ApiError::from)?;
    Ok(pdf_response(bytes, &name))
}

/// An e-mail as it was sent, its links inert (the customer's single-use links are never
/// clickable here), in a sandbox that runs nothing and loads nothing from elsewhere.
async fn email(
    State(state): State<AppState>,
    dash: Dash,
    Path((account, email)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let preview =
        services::dashboard::email_preview(&state, &dash.actor(), dash.member(), account, email)
            .await?
            .ok_or_else(|| ApiError::not_found("e-mail"))?;
    Ok((
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                CONTENT_SECURITY_POLICY,
                "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; \
                 frame-ancestors 'none'",
            ),
        ],
        preview,
    )
        .into_response())
}
