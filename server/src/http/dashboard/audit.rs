//! The operator's audit log at `/dashboard/audit`: narrowed by who, what, on what and when
//! (all in the query, so a filtered page can be linked and reloaded), 50 entries a page with
//! links to the pages before and after, each target a link to its page, each detail folded.

use axum::{
    extract::{Query, State},
    http::StatusCode,
    routing::get,
    Router,
};
use chrono::{DateTime, Days, NaiveDate, Utc};
use leptos::prelude::*;
use serde::Deserialize;

use super::{html, views, Dash, PageResult};
use crate::{
    domain::market::start_of_market_day,
    http::{error::ApiError, AppState},
    store::{
        self,
        audit::{AuditFilter, AuditRow},
    },
};

/// Entries a page.
const PAGE_SIZE: i64 = 50;

pub fn routes() -> Router<AppState> {
    Router::new().route("/dashboard/audit", get(audit_page))
}

/// The page's query, as typed into its filters.
#[derive(Debug, Default, Deserialize)]
struct AuditQuery {
    #[serde(default)]
    actor: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    target: String,
    /// `YYYY-MM-DD`, from the start of that day (Central time, as every date here).
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD`, through the end of that day.
    #[serde(default)]
    to: String,
    /// 1 for the newest entries.
    #[serde(default)]
    page: Option<String>,
}

fn non_blank(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

fn day(raw: &str) -> Result<Option<NaiveDate>, ()> {
    match raw.trim() {
        "" => Ok(None),
        s => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| ()),
    }
}

const NOT_A_DAY: &str = "Type a date as YYYY-MM-DD, e.g. 2026-11-26, or leave it empty.";

async fn audit_page(
    State(state): State<AppState>,
    dash: Dash,
    Query(query): Query<AuditQuery>,
) -> PageResult {
    if !dash.member().is_operator() {
        return Err(ApiError::not_found("page").into());
    }
    let from = day(&query.from);
    let to = day(&query.to);
    let mut errors = FilterErrors::default();
    if from.is_err() {
        errors.from = Some(NOT_A_DAY.to_owned());
    }
    if to.is_err() {
        errors.to = Some(NOT_A_DAY.to_owned());
    }
    if let (Ok(Some(f)), Ok(Some(t))) = (from, to) {
        if t < f {
            errors.to = Some("The last day comes before the first: swap them.".to_owned());
        }
    }
    let page_number = match query.page.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(raw) => raw.parse::<i64>().ok().filter(|n| *n >= 1).unwrap_or(1),
    };
    if errors.any() {
        let body = render(&dash, &query, &errors, &[], page_number, false);
        return Ok(html(StatusCode::UNPROCESSABLE_ENTITY, body));
    }
    let until: Option<DateTime<Utc>> = to
        .ok()
        .flatten()
        .and_then(|d| d.checked_add_days(Days::new(1)))
        .map(start_of_market_day);
    let filter = AuditFilter {
        actor: non_blank(&query.actor),
        action: non_blank(&query.action),
        target: non_blank(&query.target),
        from: from.ok().flatten().map(start_of_market_day),
        until,
    };
    let offset = (page_number - 1).saturating_mul(PAGE_SIZE);
    let mut entries =
        store::audit::filtered_entries(&state.db, &filter, PAGE_SIZE + 1, offset).await?;
    let more = entries.len() > usize::try_from(PAGE_SIZE).unwrap_or(usize::MAX);
    entries.truncate(usize::try_from(PAGE_SIZE).unwrap_or(usize::MAX));
    let body = render(&dash, &query, &errors, &entries, page_number, more);
    Ok(html(StatusCode::OK, body))
}

#[derive(Default)]
struct FilterErrors {
    from: Option<String>,
    to: Option<String>,
}

impl FilterErrors {
    fn any(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }
}

/// The address of page `page` under the same filters.
fn page_href(query: &AuditQuery, page: i64) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (name, value) in [
        ("actor", &query.actor),
        ("action", &query.action),
        ("target", &query.target),
        ("from", &query.from),
        ("to", &query.to),
    ] {
        if !value.trim().is_empty() {
            q.append_pair(name, value.trim());
        }
    }
    q.append_pair("page", &page.to_string());
    format!("/dashboard/audit?{}", q.finish())
}

/// Where a target's page is, for the kinds of target that have one.
fn target_href(target: &str) -> Option<String> {
    let (kind, id) = target.split_once(':')?;
    let id = uuid::Uuid::parse_str(id).ok()?;
    Some(match kind {
        "app" => format!("/dashboard/apps/{id}"),
        "account" => format!("/dashboard/accounts/{id}"),
        "live_app_request" => format!("/dashboard/live-app-requests/{id}"),
        _ => return None,
    })
}

/// The detail as indented JSON (as stored when it is not JSON).
fn pretty(detail: &str) -> String {
    serde_json::from_str::<serde_json::Value>(detail)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| detail.to_owned())
}

fn text_filter(id: &'static str, label: &'static str, value: &str) -> impl IntoView {
    let value = value.to_owned();
    view! {
        <div class="filter">
            <label for=id>{label}</label>
            <input id=id name=id type="text" value=value/>
        </div>
    }
}

fn date_filter(
    id: &'static str,
    label: &'static str,
    value: &str,
    error: Option<&String>,
) -> impl IntoView {
    let value = value.to_owned();
    let described = error.map(|_| format!("{id}-error"));
    let invalid = error.map(|_| "true");
    let message = error.cloned().map(|m| {
        let id = format!("{id}-error");
        view! { <p class="field-error" id=id>{m}</p> }
    });
    view! {
        <div class="filter">
            <label for=id>{label}</label>
            <input id=id name=id type="date" value=value aria-invalid=invalid aria-describedby=described/>
            {message}
        </div>
    }
}

fn render(
    dash: &Dash,
    query: &AuditQuery,
    errors: &FilterErrors,
    entries: &[AuditRow],
    page: i64,
    more: bool,
) -> String {
    let nav = dash.nav();
    let rows = entries
        .iter()
        .map(|e| {
            let when = views::time(e.created_at);
            let who = e.actor.clone();
            let action = e.action.clone();
            let target = e.target.clone();
            let target = match target_href(&target) {
                Some(href) => view! { <a href=href><code>{target}</code></a> }.into_any(),
                None => view! { <code>{target}</code> }.into_any(),
            };
            let detail = pretty(&e.detail);
            view! {
                <tr>
                    <td data-label="When">{when}</td>
                    <td data-label="Who">{who}</td>
                    <td data-label="What"><code>{action}</code></td>
                    <td data-label="Target">{target}</td>
                    <td data-label="Detail">
                        <details>
                            <summary>"Detail"</summary>
                            <pre class="detail">{detail}</pre>
                        </details>
                    </td>
                </tr>
            }
        })
        .collect_view();
    let empty = entries.is_empty().then(|| {
        view! { <p data-testid="audit-empty">"No entries match these filters."</p> }
    });
    let previous = (page > 1).then(|| {
        let href = page_href(query, page - 1);
        view! { <a href=href rel="prev">"← Newer entries"</a> }
    });
    let next = more.then(|| {
        let href = page_href(query, page + 1);
        view! { <a href=href rel="next">"Older entries →"</a> }
    });
    let position = format!("Page {page}");
    let body = view! {
        <h1>"Audit log"</h1>
        <p>"Changes made in the dashboard or with the CLI, and every look at a customer's data from the dashboard, newest first (secrets are never recorded). Dates are Central time."</p>
        <form method="get" action="/dashboard/audit" class="card filters" role="search" aria-label="Filter the audit log">
            {text_filter("actor", "Who (e-mail, cli, system)", &query.actor)}
            {text_filter("action", "What (e.g. token.revoked)", &query.action)}
            {text_filter("target", "Target (e.g. an app's id)", &query.target)}
            {date_filter("from", "From (day)", &query.from, errors.from.as_ref())}
            {date_filter("to", "To (day, included)", &query.to, errors.to.as_ref())}
            <div class="filter-actions">
                <button type="submit">"Filter"</button>
                <a href="/dashboard/audit">"Clear"</a>
            </div>
        </form>
        {empty}
        <div class="table-wrap stack">
            <table class="audit">
                <thead><tr>
                    <th scope="col">"When"</th><th scope="col">"Who"</th><th scope="col">"What"</th>
                    <th scope="col">"Target"</th><th scope="col">"Detail"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Audit log pages">
            {previous}
            <span>{position}</span>
            {next}
        </nav>
    }
    .into_any();
    views::document("Audit log", Some(&nav), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_with_a_page_are_links() {
        let id = "0b7a4f7e-3c2b-4a8e-9a55-0c6f5d1e2a10";
        assert_eq!(
            target_href(&format!("app:{id}")),
            Some(format!("/dashboard/apps/{id}"))
        );
        assert_eq!(
            target_href(&format!("account:{id}")),
            Some(format!("/dashboard/accounts/{id}"))
        );
        assert_eq!(target_href(&format!("user:{id}")), None);
        assert_eq!(target_href("app:not-an-id"), None);
    }

    #[test]
    fn a_page_link_keeps_the_filters() {
        let query = AuditQuery {
            actor: "ops@example.com".into(),
            action: " token ".into(),
            ..AuditQuery::default()
        };
        assert_eq!(
            page_href(&query, 2),
            "/dashboard/audit?actor=ops%40example.com&action=token&page=2"
        );
    }
}
