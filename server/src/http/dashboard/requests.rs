//! Live apps that partners ask for, in the dashboard. A partner member requests one for their
//! organisation and follows where the request stands (and why, when declined); the operator
//! sees every request and approves (the live app is created for that organisation) or declines
//! with a reason. A request is seen only by the operator and its organisation's members (404 to
//! anyone else); approving and declining are the operator's (404 to partners), requesting is a
//! partner's. Changes go through `services::app_requests`.

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
    domain::app_requests::RequestStatus,
    http::{error::ApiError, AppState},
    services::{
        self,
        app_requests::{AppRequestRefused, LiveAppInput},
    },
    store::app_requests::LiveAppRequestRow,
};

const LIST: &str = "/dashboard/live-app-requests";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(LIST, get(list_page).post(create_request))
        .route("/dashboard/live-app-requests/{request}", get(request_page))
        .route(
            "/dashboard/live-app-requests/{request}/approve",
            post(approve),
        )
        .route(
            "/dashboard/live-app-requests/{request}/decline",
            post(decline),
        )
}

fn done_message(done: Option<&str>) -> Option<&'static str> {
    Some(match done? {
        "requested" => "Your request was sent to the operator.",
        "approved" => "The request was approved: the live app was created for the organisation.",
        "declined" => "The request was declined; the partner sees your reason.",
        _ => return None,
    })
}

/// A refusal to show on the page (422); a failure is a 500.
fn refusal(e: services::Error<AppRequestRefused>) -> Result<AppRequestRefused, ApiError> {
    refusal_or_404(
        e,
        |why| matches!(why, AppRequestRefused::NotFound),
        "live app request",
    )
}

/// The request `uuid` if this member may see it: the operator, or a member of its
/// organisation. Anyone else gets the same 404 as for a request that does not exist.
async fn visible_request(
    state: &AppState,
    dash: &Dash,
    uuid: Uuid,
) -> Result<LiveAppRequestRow, ApiError> {
    let request = services::app_requests::request(&state.db, uuid)
        .await
        .map_err(|e| match refusal(e) {
            Ok(_) => ApiError::not_found("live app request"),
            Err(e) => e,
        })?;
    if !dash.member().may_see(Some(request.organisation_uuid)) {
        return Err(ApiError::not_found("live app request"));
    }
    Ok(request)
}

/// The list page: the operator's every request, a partner's their organisation's.
async fn list_page(
    State(state): State<AppState>,
    dash: Dash,
    Query(done): Query<Done>,
) -> PageResult {
    let page = render_list(
        &state,
        &dash,
        &RequestForm::default(),
        done_message(done.done.as_deref()),
        &[],
    )
    .await?;
    Ok(html(StatusCode::OK, page))
}

async fn render_list(
    state: &AppState,
    dash: &Dash,
    form: &RequestForm,
    notice: Option<&str>,
    errors: &[(String, String)],
) -> Result<String, ApiError> {
    let member = dash.member();
    let requests = if member.is_operator() {
        services::app_requests::requests_of(&state.db, None).await
    } else {
        match member.organisation {
            Some(org) => services::app_requests::requests_of(&state.db, Some(org)).await,
            None => Ok(Vec::new()),
        }
    }
    .map_err(|e| match refusal(e) {
        Ok(why) => ApiError::internal(anyhow::anyhow!("{why}")),
        Err(e) => e,
    })?;
    Ok(list_view(dash, &requests, form, notice, errors))
}

#[derive(Debug, Default, Deserialize)]
struct RequestForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    slug: String,
    #[serde(default)]
    reason: String,
}

/// A partner member asks for a live app of their organisation (the operator creates live apps
/// directly, so this form is not theirs).
async fn create_request(
    State(state): State<AppState>,
    dash: Dash,
    Form(form): Form<RequestForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let member = dash.member();
    let Some(organisation) = member.organisation.filter(|_| !member.is_operator()) else {
        return Err(ApiError::not_found("page").into());
    };
    let input = LiveAppInput {
        display_name: &form.display_name,
        slug: &form.slug,
        reason: &form.reason,
    };
    match services::app_requests::request_live_app(
        &state.db,
        &state.clock,
        &dash.actor(),
        organisation,
        &input,
    )
    .await
    {
        Ok(_) => Ok(see_other(&format!("{LIST}?done=requested"))),
        Err(e) => {
            let errors: Vec<(String, String)> = match refusal(e)? {
                AppRequestRefused::Fields(errors) => {
                    errors.into_iter().map(|e| (e.param, e.message)).collect()
                }
                AppRequestRefused::SlugTaken(slug) => vec![(
                    "slug".to_owned(),
                    format!("the slug {slug} is taken: choose another"),
                )],
                other => vec![(String::new(), other.to_string())],
            };
            let page = render_list(&state, &dash, &form, None, &errors).await?;
            Ok(html(StatusCode::UNPROCESSABLE_ENTITY, page))
        }
    }
}

async fn request_page(
    State(state): State<AppState>,
    dash: Dash,
    Path(request): Path<Uuid>,
    Query(done): Query<Done>,
) -> PageResult {
    let request = visible_request(&state, &dash, request).await?;
    Ok(html(
        StatusCode::OK,
        request_view(&dash, &request, done_message(done.done.as_deref()), None),
    ))
}

/// The operator's request, if they are the operator; to anyone else the forms do not exist.
async fn operators_request(
    state: &AppState,
    dash: &Dash,
    uuid: Uuid,
) -> Result<LiveAppRequestRow, ApiError> {
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("live app request"));
    }
    visible_request(state, dash, uuid).await
}

#[derive(Deserialize)]
struct ApproveForm {
    #[serde(default)]
    csrf: String,
}

async fn approve(
    State(state): State<AppState>,
    dash: Dash,
    Path(request): Path<Uuid>,
    Form(form): Form<ApproveForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let request = operators_request(&state, &dash, request).await?;
    match services::app_requests::approve(&state.db, &state.clock, &dash.actor(), request.uuid)
        .await
    {
        Ok(_) => Ok(see_other(&format!("{LIST}/{}?done=approved", request.uuid))),
        Err(e) => {
            let why = refusal(e)?.to_string();
            Ok(html(
                StatusCode::UNPROCESSABLE_ENTITY,
                request_view(&dash, &request, None, Some(&why)),
            ))
        }
    }
}

#[derive(Deserialize)]
struct DeclineForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    reason: String,
}

async fn decline(
    State(state): State<AppState>,
    dash: Dash,
    Path(request): Path<Uuid>,
    Form(form): Form<DeclineForm>,
) -> PageResult {
    dash.check(&form.csrf).await?;
    let request = operators_request(&state, &dash, request).await?;
    match services::app_requests::decline(
        &state.db,
        &state.clock,
        &dash.actor(),
        request.uuid,
        &form.reason,
    )
    .await
    {
        Ok(()) => Ok(see_other(&format!("{LIST}/{}?done=declined", request.uuid))),
        Err(e) => {
            let why = refusal(e)?.to_string();
            Ok(html(
                StatusCode::UNPROCESSABLE_ENTITY,
                request_view(&dash, &request, None, Some(&why)),
            ))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pages

fn status_text(r: &LiveAppRequestRow) -> String {
    match r.status {
        RequestStatus::Pending => "pending".to_owned(),
        RequestStatus::Approved => "approved".to_owned(),
        RequestStatus::Declined => "declined".to_owned(),
    }
}

fn list_view(
    dash: &Dash,
    requests: &[LiveAppRequestRow],
    form: &RequestForm,
    notice: Option<&str>,
    errors: &[(String, String)],
) -> String {
    let nav = dash.nav();
    let operator = nav.operator;
    let rows = requests
        .iter()
        .map(|r| {
            let href = format!("{LIST}/{}", r.uuid);
            let name = r.display_name.clone();
            let slug = r.slug.clone();
            let organisation = r.organisation_name.clone();
            let who = r.requested_by.clone();
            let when = views::time(r.created_at);
            let status = status_text(r);
            view! {
                <tr>
                    <td><a href=href>{name}</a></td>
                    <td><code>{slug}</code></td>
                    <td>{organisation}</td>
                    <td>{who}</td>
                    <td>{when}</td>
                    <td>{status}</td>
                </tr>
            }
        })
        .collect_view();
    let empty = requests
        .is_empty()
        .then(|| view! { <p>"No requests yet."</p> });
    let error_of = |param: &str| {
        errors.iter().find(|(p, _)| p == param).map(|(_, m)| {
            let id = format!("{param}-error");
            let m = m.clone();
            view! { <p class="field-error" id=id>{m}</p> }
        })
    };
    let general = errors
        .iter()
        .find(|(p, _)| p.is_empty())
        .map(|(_, m)| m.clone())
        .or_else(|| {
            (!errors.is_empty())
                .then(|| "Some values are not right; see the messages beside them.".to_owned())
        });
    let request_form = (!operator).then(|| {
        let (name, slug, reason) = (
            form.display_name.clone(),
            form.slug.clone(),
            form.reason.clone(),
        );
        view! {
            <section class="card">
                <h2>"Request a live app"</h2>
                <p>"Live apps take real customers and real payments, so the operator approves each one. "
                   "Tell them what it is for; you will see their answer here."</p>
                <form method="post" action=LIST>
                    {views::csrf_field(&nav.csrf)}
                    <label for="display_name">"Display name"</label>
                    <input id="display_name" name="display_name" type="text" maxlength="100" required value=name/>
                    {error_of("display_name")}
                    <label for="slug">"Slug of its hosted pages (/go/…)"</label>
                    <input id="slug" name="slug" type="text" maxlength="50" required value=slug/>
                    {error_of("slug")}
                    <label for="reason">"Why (at most 500 characters)"</label>
                    <textarea id="reason" name="reason" rows="3" maxlength="500" required>{crate::http::html::textarea_text(&reason)}</textarea>
                    {error_of("reason")}
                    <button type="submit">"Send the request"</button>
                </form>
            </section>
        }
    });
    let intro = if operator {
        "Partners' requests for live apps, waiting ones first. Open one to approve or decline it."
    } else {
        "Your organisation's requests for live apps and where they stand."
    };
    let body = view! {
        <h1>"Live app requests"</h1>
        {views::messages(notice, general.as_deref())}
        <p>{intro}</p>
        {empty}
        <div class="table-wrap">
            <table>
                <thead><tr>
                    <th scope="col">"App"</th><th scope="col">"Slug"</th><th scope="col">"Organisation"</th>
                    <th scope="col">"Requested by"</th><th scope="col">"When"</th><th scope="col">"Status"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {request_form}
    }
    .into_any();
    views::document("Live app requests", Some(&nav), body)
}

fn request_view(
    dash: &Dash,
    r: &LiveAppRequestRow,
    notice: Option<&str>,
    error: Option<&str>,
) -> String {
    let nav = dash.nav();
    let base = format!("{LIST}/{}", r.uuid);
    let decision = match r.status {
        RequestStatus::Pending => "Waiting for the operator.".to_owned(),
        RequestStatus::Approved => format!(
            "Approved by {} on {}.",
            r.decided_by.clone().unwrap_or_default(),
            r.decided_at.map(views::time).unwrap_or_default()
        ),
        RequestStatus::Declined => format!(
            "Declined by {} on {}.",
            r.decided_by.clone().unwrap_or_default(),
            r.decided_at.map(views::time).unwrap_or_default()
        ),
    };
    let declined_why = r.decision_reason.clone().map(|why| {
        view! { <p>"Reason: " {why}</p> }
    });
    let app_link = r.app_uuid.map(|app| {
        let href = format!("/dashboard/apps/{app}");
        view! { <p><a href=href>"Open the live app"</a> " (make its API keys there)"</p> }
    });
    let actions = (nav.operator && r.status == RequestStatus::Pending).then(|| {
        view! {
            <section class="card">
                <h2>"Decide"</h2>
                <form method="post" action=format!("{base}/approve")>
                    {views::csrf_field(&nav.csrf)}
                    <p>"Approving creates the live app for the organisation, with this name and slug."</p>
                    <button type="submit">"Approve and create the live app"</button>
                </form>
                <form method="post" action=format!("{base}/decline")>
                    {views::csrf_field(&nav.csrf)}
                    <label for="decline_reason">"Reason for declining (the partner sees it)"</label>
                    <textarea id="decline_reason" name="reason" rows="3" maxlength="500" required></textarea>
                    <button type="submit" class="danger">"Decline"</button>
                </form>
            </section>
        }
    });
    let title = format!("Live app request: {}", r.display_name);
    let facts = vec![
        ("Display name", r.display_name.clone()),
        ("Slug", r.slug.clone()),
        ("Organisation", r.organisation_name.clone()),
        ("Requested by", r.requested_by.clone()),
        ("Requested", views::time(r.created_at)),
        ("Why", r.reason.clone()),
        ("Status", status_text(r)),
    ]
    .into_iter()
    .map(|(label, value)| view! { <tr><th scope="row">{label}</th><td>{value}</td></tr> })
    .collect_view();
    let body = view! {
        <p><a href=LIST>"← All requests"</a></p>
        <h1>{title.clone()}</h1>
        {views::messages(notice, error)}
        <section class="card">
            <div class="table-wrap">
                <table><tbody>{facts}</tbody></table>
            </div>
            <p>{decision}</p>
            {declined_why}
            {app_link}
        </section>
        {actions}
    }
    .into_any();
    views::document(&title, Some(&nav), body)
}
