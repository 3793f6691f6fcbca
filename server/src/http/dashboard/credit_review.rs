//! The credit review queue: checks the bureau did not approve for good (declined, no file
//! found, or frozen or failing when their retries ran out), waiting for a decision. The
//! operator sees every app's and decides: approve (the enrollment goes on), ask for a deposit
//! (at most the rule's maximum, shown and offered as the amount), or decline with a reason the
//! customer reads. A partner member sees their organisation's reviews and where they stand;
//! another organisation's are a 404, as are the decision forms to anyone but the operator.
//! Decisions go through `services::credit::decide_review`.

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    routing::{get, post},
    Form, Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, refusal_or_404, see_other, views, Dash, Done, PageResult};
use crate::{
    domain::{
        credit::{ReviewCause, ReviewStatus},
        deposits::Waiver,
    },
    http::{error::ApiError, AppState},
    services::{
        self,
        credit::{DecisionInput, ReviewRefused},
        deposits::{WaiveRefused, WaiverInput},
    },
    store::credit_reviews::{CreditReviewRow, DepositRow},
};

const LIST: &str = "/dashboard/credit-reviews";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(LIST, get(list_page))
        .route("/dashboard/credit-reviews/{review}", get(review_page))
        .route("/dashboard/credit-reviews/{review}/decide", post(decide))
        .route("/dashboard/credit-reviews/{review}/waive", post(waive))
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "approved" => "Approved: the enrollment goes on, and the customer was e-mailed.",
        "deposit_required" => {
            "A deposit was asked for; the customer was e-mailed the amount and what comes next."
        }
        "declined" => "Declined: the customer was e-mailed your reason.",
        "waived" => {
            "The deposit is waived: the credit check counts as passed, the enrollment goes on, \
             and the customer was e-mailed."
        }
        _ => return None,
    })
}

/// A refusal to show on the page (422); an unknown review is a 404, a failure a 500.
fn refusal(e: services::Error<ReviewRefused>) -> Result<ReviewRefused, ApiError> {
    refusal_or_404(
        e,
        |why| matches!(why, ReviewRefused::NotFound),
        "credit review",
    )
}

async fn visible_review(
    state: &AppState,
    dash: &Dash,
    uuid: Uuid,
) -> Result<CreditReviewRow, ApiError> {
    services::credit::review_for(&state.db, &dash.member(), uuid)
        .await
        .map_err(|e| match refusal(e) {
            Ok(_) => ApiError::not_found("credit review"),
            Err(e) => e,
        })
}

async fn list_page(
    State(state): State<AppState>,
    dash: Dash,
    Query(done): Query<Done>,
) -> PageResult {
    let reviews = services::credit::reviews_for(&state.db, &dash.member()).await?;
    Ok(html(
        StatusCode::OK,
        list_view(&dash, &reviews, done_message(done.done.as_deref())),
    ))
}

async fn review_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(review): Path<Uuid>,
    Query(done): Query<Done>,
) -> PageResult {
    let review = visible_review(&state, &dash, review).await?;
    let deposit = deposit_asked(&state, &review).await?;
    Ok(html(
        StatusCode::OK,
        review_view(
            &dash,
            &review,
            deposit.as_ref(),
            done_message(done.done.as_deref()),
            None,
            &DecideForm::default(),
        ),
    ))
}

/// The review `uuid` for the operator's waiver or decision, once the form's CSRF token is
/// checked; anyone else gets the same 404 as for a review that does not exist.
async fn review_for_operator(
    state: &AppState,
    dash: &Dash,
    csrf: &str,
    uuid: Uuid,
) -> Result<CreditReviewRow, ApiError> {
    dash.check(csrf).await?;
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("credit review"));
    }
    visible_review(state, dash, uuid).await
}

/// The review page again (422) with why the waiver or decision was refused. The review is read
/// again: a decision made meanwhile shows as it is now.
async fn refused_page(
    state: &AppState,
    dash: &Dash,
    uuid: Uuid,
    why: &str,
    form: &DecideForm,
) -> PageResult {
    let review = visible_review(state, dash, uuid).await?;
    let deposit = deposit_asked(state, &review).await?;
    Ok(html(
        StatusCode::UNPROCESSABLE_ENTITY,
        review_view(dash, &review, deposit.as_ref(), None, Some(why), form),
    ))
}

/// The deposit the review asked for, if any.
async fn deposit_asked(
    state: &AppState,
    review: &CreditReviewRow,
) -> Result<Option<DepositRow>, ApiError> {
    Ok(services::deposits::deposit_of(state, review.account_uuid)
        .await?
        .filter(|d| d.review_uuid == Some(review.uuid)))
}

#[derive(Debug, Default, Deserialize)]
struct WaiveForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    waiver: String,
    #[serde(default)]
    certificate: String,
    #[serde(default)]
    letter_months: String,
}

/// Records the operator's waiver of the deposit the review asked for.
async fn waive(
    State(state): State<AppState>,
    dash: Dash,
    Path(review): Path<Uuid>,
    Form(form): Form<WaiveForm>,
) -> PageResult {
    let review = review_for_operator(&state, &dash, &form.csrf, review).await?;
    let input = WaiverInput {
        waiver: &form.waiver,
        certificate: !form.certificate.is_empty(),
        letter_months: &form.letter_months,
    };
    match services::deposits::waive_deposit(
        &state,
        &dash.actor(),
        &dash.member(),
        review.uuid,
        &input,
    )
    .await
    {
        Ok(_) => Ok(see_other(&format!("{LIST}/{}?done=waived", review.uuid))),
        Err(services::Error::Refused(WaiveRefused::NotFound)) => {
            Err(ApiError::not_found("credit review").into())
        }
        Err(services::Error::Failed(e)) => Err(ApiError::internal(e).into()),
        Err(services::Error::Refused(why)) => {
            let form = DecideForm::default();
            refused_page(&state, &dash, review.uuid, &why.to_string(), &form).await
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct DecideForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    deposit: String,
    #[serde(default)]
    reason: String,
}

async fn decide(
    State(state): State<AppState>,
    dash: Dash,
    Path(review): Path<Uuid>,
    Form(form): Form<DecideForm>,
) -> PageResult {
    let review = review_for_operator(&state, &dash, &form.csrf, review).await?;
    let input = DecisionInput {
        decision: &form.decision,
        deposit: &form.deposit,
        reason: &form.reason,
    };
    match services::credit::decide_review(
        &state,
        &dash.actor(),
        &dash.member(),
        review.uuid,
        &input,
    )
    .await
    {
        Ok(status) => Ok(see_other(&format!("{LIST}/{}?done={status}", review.uuid))),
        Err(e) => {
            let why = refusal(e)?.to_string();
            refused_page(&state, &dash, review.uuid, &why, &form).await
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pages

fn cause_text(cause: ReviewCause) -> &'static str {
    match cause {
        ReviewCause::Declined => "declined by the bureau",
        ReviewCause::NotFound => "no credit file found",
        ReviewCause::Frozen => "file still frozen after every retry",
        ReviewCause::Error => "bureau still failing after every retry",
    }
}

fn status_text(r: &CreditReviewRow) -> String {
    match r.status {
        ReviewStatus::Open => "waiting for a decision".to_owned(),
        ReviewStatus::Approved => "approved".to_owned(),
        ReviewStatus::DepositRequired => format!(
            "deposit of {} asked for",
            app::format::dollars(r.deposit_cents.unwrap_or_default())
        ),
        ReviewStatus::Declined => "declined".to_owned(),
        ReviewStatus::Withdrawn => "settled without a decision".to_owned(),
    }
}

/// Cents as the deposit field takes them (`150.00`).
fn plain_dollars(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn list_view(dash: &Dash, reviews: &[CreditReviewRow], notice: Option<&str>) -> String {
    let nav = dash.nav();
    let rows = reviews
        .iter()
        .map(|r| {
            let href = format!("{LIST}/{}", r.uuid);
            let customer = format!("{} {}", r.first_name, r.last_name);
            let app_name = r.app_name.clone();
            let cause = cause_text(r.cause);
            let when = views::time(r.created_at);
            let status = status_text(r);
            view! {
                <tr>
                    <td><a href=href>{customer}</a></td>
                    <td>{app_name}</td>
                    <td>{cause}</td>
                    <td>{when}</td>
                    <td>{status}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = reviews
        .is_empty()
        .then(|| view! { <p>"No credit reviews."</p> });
    let intro = if nav.operator {
        "Credit checks the bureau did not approve, oldest waiting first. Open one to approve it, \
         ask for a deposit, or decline it."
    } else {
        "Your customers' credit checks the bureau did not approve, and what the operator decided."
    };
    let body = view! {
        <h1>"Credit reviews"</h1>
        {views::messages(notice, None)}
        <p>{intro}</p>
        {empty}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"Customer"</th><th scope="col">"App"</th>
                    <th scope="col">"Why"</th><th scope="col">"Since"</th>
                    <th scope="col">"Status"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any();
    views::document("Credit reviews", Some(&nav), body)
}

fn review_view(
    dash: &Dash,
    r: &CreditReviewRow,
    deposit: Option<&DepositRow>,
    notice: Option<&str>,
    error: Option<&str>,
    form: &DecideForm,
) -> String {
    let nav = dash.nav();
    let action = format!("{LIST}/{}/decide", r.uuid);
    let max = app::format::dollars(r.max_deposit_cents);
    let deposit_value = if form.deposit.is_empty() {
        plain_dollars(r.max_deposit_cents)
    } else {
        form.deposit.clone()
    };
    let reason_value = crate::http::html::textarea_text(&form.reason);
    let decided = (r.status != ReviewStatus::Open).then(|| {
        let by = r.decided_by.clone().unwrap_or_default();
        let at = r.decided_at.map(views::time).unwrap_or_default();
        let why = r
            .decision_reason
            .clone()
            .map(|why| view! { <p>"Reason: " {why}</p> });
        view! {
            <p>{format!("Decided by {by} on {at}.")}</p>
            {why}
        }
    });
    let forms = (nav.operator && r.status == ReviewStatus::Open).then(|| {
        let csrf = nav.csrf.clone();
        view! {
            <section class="card">
                <h2>"Decide"</h2>
                <form method="post" action=action.clone()>
                    {views::csrf_field(&csrf)}
                    <input type="hidden" name="decision" value="approve"/>
                    <p>"Approving passes the credit check: the enrollment goes on with no deposit."</p>
                    <button type="submit">"Approve"</button>
                </form>
                <form method="post" action=action.clone()>
                    {views::csrf_field(&csrf)}
                    <input type="hidden" name="decision" value="deposit"/>
                    <label for="deposit">{format!("Deposit in dollars (at most {max}: the greater of one-fifth of the estimated annual bill and two months' estimated bills)")}</label>
                    <input id="deposit" name="deposit" type="text" inputmode="decimal" required value=deposit_value/>
                    <button type="submit">"Ask for this deposit"</button>
                </form>
                <form method="post" action=action>
                    {views::csrf_field(&csrf)}
                    <input type="hidden" name="decision" value="decline"/>
                    <label for="reason">"Reason for declining (the customer reads it)"</label>
                    <textarea id="reason" name="reason" rows="3" maxlength="500" required>{reason_value}</textarea>
                    <button type="submit" class="danger">"Decline"</button>
                </form>
            </section>
        }
    });
    let waiver_form = deposit
        .filter(|d| nav.operator && d.status == "required")
        .map(|_| {
            let csrf = nav.csrf.clone();
            let action = format!("{LIST}/{}/waive", r.uuid);
            let choices = Waiver::ALL
                .iter()
                .map(|w| {
                    let value = w.as_str();
                    let id = format!("waiver-{value}");
                    let label = w.describe();
                    view! {
                        <p>
                            <input type="radio" name="waiver" id=id.clone() value=value required/>
                            <label for=id>{label}</label>
                        </p>
                    }
                })
                .collect_view();
            view! {
                <section class="card" data-testid="waiver">
                    <h2>"Record a waiver"</h2>
                    <p>"No deposit may be asked of a customer 65 or older with no past-due balance (from the account's date of birth), of one who gives a family-violence certificate, or of one who brings a letter of good credit from a previous provider covering the last 12 months. The credit check then counts as passed and the enrollment goes on."</p>
                    <form method="post" action=action>
                        {views::csrf_field(&csrf)}
                        <fieldset>
                            <legend>"Why no deposit may be asked"</legend>
                            {choices}
                        </fieldset>
                        <p>
                            <input type="checkbox" name="certificate" id="certificate" value="yes"/>
                            <label for="certificate">"The family-violence certificate was received"</label>
                        </p>
                        <label for="letter_months">"Months of on-time payments the previous provider's letter covers"</label>
                        <input id="letter_months" name="letter_months" type="text" inputmode="numeric"/>
                        <button type="submit">"Waive the deposit"</button>
                    </form>
                </section>
            }
        });
    let deposit_status = deposit.map(|d| match &d.waiver {
        Some(w) => format!(
            "waived ({}) by {}",
            Waiver::parse(w).map(Waiver::describe).unwrap_or(w.as_str()),
            d.waived_by.clone().unwrap_or_default()
        ),
        None => d.status.clone(),
    });
    let account_href = format!("/dashboard/accounts/{}", r.account_uuid);
    let title = format!("Credit review: {} {}", r.first_name, r.last_name);
    let facts = vec![
        (
            "Customer",
            format!("{} {} <{}>", r.first_name, r.last_name, r.email),
        ),
        ("App", r.app_name.clone()),
        ("Why it is here", cause_text(r.cause).to_owned()),
        ("Since", views::time(r.created_at)),
        ("Largest deposit allowed", max.clone()),
        ("Status", status_text(r)),
    ]
    .into_iter()
    .chain(deposit_status.map(|s| ("Deposit", s)))
    .map(|(label, value)| view! { <tr><th scope="row">{label}</th><td>{value}</td></tr> })
    .collect_view();
    let body = view! {
        <p><a href=LIST>"← All credit reviews"</a></p>
        <h1>{title.clone()}</h1>
        {views::messages(notice, error)}
        <section class="card">
            <div class="table-wrap">
                <table><tbody>{facts}</tbody></table>
            </div>
            {decided}
            <p><a href=account_href>"Open the account"</a></p>
        </section>
        {forms}
        {waiver_form}
    }
    .into_any();
    views::document(&title, Some(&nav), body)
}
