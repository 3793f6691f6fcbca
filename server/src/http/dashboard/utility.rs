//! The utility worklist: live enrollments submitted to the utility, waiting for its answer or
//! for the meter's switch. The operator records what the utility answered (accepted with its
//! start date, switch hold, deactivated, rejected with its reason) and, once accepted, that
//! service started; each moves the enrollment on at once and is audited. Partner members see
//! none of it (404), as with the CLI's `market submissions`. Records go through
//! `services::enrollment::record_utility_answer_as`.

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    routing::{get, post},
    Form, Router,
};
use chrono::NaiveDate;
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, see_other, views, Dash, Done, PageResult};
use crate::{
    domain::enrollment::{SubmissionStatus, UtilityRecord},
    http::{error::ApiError, AppState},
    services::{self, enrollment::UtilityAnswerRefused},
    store::{self, utility::SubmissionRow},
};

const LIST: &str = "/dashboard/utility";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(LIST, get(list_page))
        .route("/dashboard/utility/{submission}", post(record))
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "recorded" => "The utility's answer was recorded: the enrollment moved on.",
        _ => return None,
    })
}

/// The form of one answer: `answer` is `accepted` (with `start_date`), `switch_hold`,
/// `deactivated`, `rejected` (with `reason`) or `active`.
#[derive(Debug, Default, Deserialize)]
struct RecordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    answer: String,
    #[serde(default)]
    start_date: String,
    #[serde(default)]
    reason: String,
}

/// What the operator's form says the utility answered, or why it says nothing usable.
fn utility_record(form: &RecordForm) -> Result<UtilityRecord, String> {
    match form.answer.as_str() {
        "accepted" => NaiveDate::parse_from_str(form.start_date.trim(), "%Y-%m-%d")
            .map(|start_date| UtilityRecord::Accepted { start_date })
            .map_err(|_| "give the start date the utility gave, as YYYY-MM-DD".to_owned()),
        "switch_hold" => Ok(UtilityRecord::SwitchHold),
        "deactivated" => Ok(UtilityRecord::Deactivated),
        "rejected" => UtilityRecord::rejected(&form.reason),
        "active" => Ok(UtilityRecord::Active),
        _ => Err("say what the utility answered".to_owned()),
    }
}

async fn list_page(
    State(state): State<AppState>,
    dash: Dash,
    Query(done): Query<Done>,
) -> PageResult {
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("page").into());
    }
    let rows = open_submissions(&state).await?;
    Ok(html(
        StatusCode::OK,
        list_view(&dash, &rows, done_message(done.done.as_deref()), None),
    ))
}

async fn record(
    State(state): State<AppState>,
    dash: Dash,
    Path(submission): Path<Uuid>,
    Form(form): Form<RecordForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("submission").into());
    }
    let why = match utility_record(&form) {
        Ok(record) => match services::enrollment::record_utility_answer_as(
            &state.db,
            &state.clock,
            &dash.actor(),
            submission,
            &record,
        )
        .await
        {
            Ok(_) => return Ok(see_other(&format!("{LIST}?done=recorded"))),
            Err(services::Error::Refused(UtilityAnswerRefused::NotFound)) => {
                return Err(ApiError::not_found("submission").into())
            }
            Err(services::Error::Refused(why)) => why.to_string(),
            Err(services::Error::Failed(e)) => return Err(ApiError::internal(e).into()),
        },
        Err(why) => why,
    };
    let rows = open_submissions(&state).await?;
    Ok(html(
        StatusCode::UNPROCESSABLE_ENTITY,
        list_view(&dash, &rows, None, Some(&why)),
    ))
}

/// The submissions that wait for the operator, oldest first.
async fn open_submissions(state: &AppState) -> Result<Vec<SubmissionRow>, ApiError> {
    Ok(store::utility::submissions(&state.db, false)
        .await?
        .into_iter()
        .filter(|s| UtilityRecord::awaits_operator(s.status))
        .collect())
}

fn status_text(s: &SubmissionRow) -> String {
    match (s.status, s.start_date) {
        (SubmissionStatus::Accepted, Some(day)) => format!("accepted, starts {day}"),
        (SubmissionStatus::Pending, _) => "waiting for the utility".to_owned(),
        (status, _) => status.as_str().replace('_', " "),
    }
}

fn list_view(
    dash: &Dash,
    rows: &[SubmissionRow],
    notice: Option<&str>,
    error: Option<&str>,
) -> String {
    let nav = dash.nav();
    let items = rows
        .iter()
        .map(|s| {
            let csrf = nav.csrf.clone();
            let action = format!("{LIST}/{}", s.uuid);
            let account = format!("/dashboard/accounts/{}", s.account_uuid);
            let esi = s.esi_id.clone();
            let requested = s
                .requested_start_date
                .map(|d| d.to_string())
                .unwrap_or_default();
            let since = views::time(s.submitted_at);
            let status = status_text(s);
            let date_id = format!("start-{}", s.uuid);
            let reason_id = format!("reason-{}", s.uuid);
            // Waiting for the answer: what the utility may answer. Accepted: that service
            // started.
            let forms = if s.status == SubmissionStatus::Accepted {
                view! {
                    <form method="post" action=action>
                        {views::csrf_field(&csrf)}
                        <input type="hidden" name="answer" value="active"/>
                        <button type="submit">"Service started (meter switched)"</button>
                    </form>
                }
                .into_any()
            } else {
                view! {
                    <form method="post" action=action.clone()>
                        {views::csrf_field(&csrf)}
                        <input type="hidden" name="answer" value="accepted"/>
                        <label for=date_id.clone()>"Start date the utility gave"</label>
                        <input id=date_id name="start_date" type="date" required value=requested/>
                        <button type="submit">"Accepted"</button>
                    </form>
                    <form method="post" action=action.clone()>
                        {views::csrf_field(&csrf)}
                        <input type="hidden" name="answer" value="switch_hold"/>
                        <button type="submit">"Switch hold"</button>
                    </form>
                    <form method="post" action=action.clone()>
                        {views::csrf_field(&csrf)}
                        <input type="hidden" name="answer" value="deactivated"/>
                        <button type="submit">"Meter deactivated"</button>
                    </form>
                    <form method="post" action=action>
                        {views::csrf_field(&csrf)}
                        <input type="hidden" name="answer" value="rejected"/>
                        <label for=reason_id.clone()>"Why the utility rejected it"</label>
                        <input id=reason_id name="reason" type="text" maxlength="500" required/>
                        <button type="submit" class="danger">"Rejected"</button>
                    </form>
                }
                .into_any()
            };
            view! {
                <section class="card" data-testid="submission">
                    <h2>{format!("ESI ID {esi}")}</h2>
                    <p>
                        <a href=account>"Open the account"</a>
                        {format!(" · submitted {since} · {status}")}
                    </p>
                    {forms}
                </section>
            }
        })
        .collect_view();
    let empty = rows
        .is_empty()
        .then(|| view! { <p>"Nothing is waiting for the utility."</p> });
    let body = view! {
        <h1>"Utility worklist"</h1>
        {views::messages(notice, error)}
        <p>"Live enrollments submitted to the utility, oldest first: record what the utility answered, then that service started. Each answer moves the enrollment on at once (the customer is e-mailed as with the sandbox's simulated utility) and is audited."</p>
        {empty}
        {items}
    }
    .into_any();
    views::document("Utility worklist", Some(&nav), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(answer: &str, start_date: &str, reason: &str) -> RecordForm {
        RecordForm {
            answer: answer.to_owned(),
            start_date: start_date.to_owned(),
            reason: reason.to_owned(),
            ..RecordForm::default()
        }
    }

    #[test]
    fn the_operators_form_reads_as_the_utilitys_answer() {
        assert_eq!(
            utility_record(&form("accepted", "2026-12-04", "")),
            Ok(UtilityRecord::Accepted {
                start_date: NaiveDate::from_ymd_opt(2026, 12, 4).unwrap()
            })
        );
        assert_eq!(
            utility_record(&form("active", "", "")),
            Ok(UtilityRecord::Active)
        );
        assert!(utility_record(&form("accepted", "12/04/2026", "")).is_err());
        assert!(utility_record(&form("accepted", "", "")).is_err());
        assert!(utility_record(&form("rejected", "", "  ")).is_err());
        assert!(utility_record(&form("maybe", "", "")).is_err());
    }
}
