//! An app's flow funnel: for one scope over a chosen period, the sessions started, the share
//! reaching each step, the completion rate and the median time to complete, as bars (inline
//! SVG) and the same figures in a table. The figures are `GET /v1/app/flow-funnel`'s
//! (`services::flows::funnel`).

use axum::{
    extract::{Path, Query, State},
    http::StatusCode,
    routing::get,
    Router,
};
use leptos::prelude::*;
use serde::Deserialize;
use uuid::Uuid;

use super::{html, member_app, views, Dash, PageResult};
use crate::{
    domain::flows::FlowScope,
    http::{error::ApiError, flows::funnel_out, AppState},
    services,
};

pub fn routes() -> Router<AppState> {
    Router::new().route("/dashboard/apps/{app}/funnel", get(page))
}

#[derive(Deserialize)]
struct FunnelForm {
    scope: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

/// Seconds as minutes and seconds (`4 min 05 s`).
fn duration_text(seconds: Option<i64>) -> String {
    match seconds {
        None => "—".to_owned(),
        Some(s) => format!("{} min {:02} s", s / 60, s % 60),
    }
}

/// Width of a bar of `permille`, in the chart's units (the bars' area is 400 wide).
fn bar_width(percent: &str) -> String {
    let tenths: i64 = percent.replace('.', "").parse().unwrap_or(0);
    (tenths * 400 / 1000).to_string()
}

async fn page(
    State(state): State<AppState>,
    dash: Dash,
    Path(app): Path<Uuid>,
    Query(form): Query<FunnelForm>,
) -> PageResult {
    let app = member_app(&state, &dash, app).await?;
    let scope = form.scope.filter(|s| !s.is_empty());
    let (scope, period) = services::flows::funnel_query(
        &state,
        Some(scope.as_deref().unwrap_or("enrollment")),
        form.from.as_deref().filter(|s| !s.is_empty()),
        form.to.as_deref().filter(|s| !s.is_empty()),
    )
    .map_err(ApiError::from)?;
    let funnel = services::flows::funnel(&state, app.uuid, scope, &period).await?;
    let out = funnel_out(scope.as_str(), &period, &funnel);
    let nav = dash.nav();
    let base = format!("/dashboard/apps/{}", app.uuid);
    let options = FlowScope::ALL
        .into_iter()
        .map(|s| {
            view! { <option value=s.as_str() selected=s == scope>{s.as_str()}</option> }
        })
        .collect_view();
    // One bar for the sessions started (100%), one per step, one for completion.
    let mut bars = vec![(
        "started".to_owned(),
        out.sessions_started,
        "100.0".to_owned(),
    )];
    if out.sessions_started == 0 {
        bars[0].2 = "0.0".to_owned();
    }
    bars.extend(
        out.steps
            .iter()
            .map(|s| (s.step.clone(), s.sessions, s.share_percent.clone())),
    );
    bars.push((
        "completed".to_owned(),
        out.sessions_completed,
        out.completion_percent.clone(),
    ));
    let height = (bars.len() * 28 + 8).to_string();
    let view_box = format!("0 0 640 {height}");
    let chart = bars
        .iter()
        .enumerate()
        .map(|(i, (label, count, percent))| {
            let y = i * 28 + 4;
            view! {
                <g data-step=label.clone()>
                    <text x="0" y=(y + 17).to_string() font-size="13">{label.clone()}</text>
                    <rect x="120" y=y.to_string() width=bar_width(percent) height="20" fill="currentColor" opacity="0.7"></rect>
                    <text x=(130 + 400).to_string() y=(y + 17).to_string() font-size="13">{format!("{percent}% ({count})")}</text>
                </g>
            }
        })
        .collect_view();
    let rows = bars
        .iter()
        .map(|(label, count, percent)| {
            view! {
                <tr data-step=label.clone()>
                    <th scope="row">{label.clone()}</th>
                    <td data-testid="sessions">{count.to_string()}</td>
                    <td data-testid="share">{format!("{percent}%")}</td>
                </tr>
            }
        })
        .collect_view();
    let summary = format!(
        "{} {} started from {} to {}: {}% completed, median time {}.",
        out.sessions_started,
        if out.sessions_started == 1 {
            "session"
        } else {
            "sessions"
        },
        out.from,
        out.to,
        out.completion_percent,
        duration_text(out.median_duration_seconds)
    );
    let body = view! {
        <p><a href=base.clone()>{format!("← {}", app.display_name)}</a></p>
        <h1>"Flow funnel"</h1>
        <form method="get" action=format!("{base}/funnel") class="card">
            <label for="scope">"Flow"</label>
            <select id="scope" name="scope">{options}</select>
            <label for="from">"From"</label>
            <input id="from" name="from" type="date" value=out.from.to_string()/>
            <label for="to">"To"</label>
            <input id="to" name="to" type="date" value=out.to.to_string()/>
            <button type="submit">"Show"</button>
            <p class="hint">"Days are Central time (America/Chicago), each session counted on the day it opened."</p>
        </form>
        <p data-testid="funnel-summary">{summary}</p>
        <figure>
            <svg role="img" aria-label="Share of sessions reaching each step" viewBox=view_box width="640" height=height data-testid="funnel-chart">
                {chart}
            </svg>
        </figure>
        <div class="table-wrap">
            <table data-testid="funnel-table">
                <thead><tr>
                    <th scope="col">"Step"</th><th scope="col">"Sessions"</th><th scope="col">"Of sessions started"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <p class="muted">"Completion: " <span data-testid="completion">{format!("{}%", out.completion_percent)}</span>
            " · median time to complete: " <span data-testid="median">{duration_text(out.median_duration_seconds)}</span></p>
    }
    .into_any();
    Ok(html(
        StatusCode::OK,
        views::document("Flow funnel", Some(&nav), body),
    ))
}
