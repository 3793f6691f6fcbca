//! Usage: the last twelve months, then one month by day, with links to the months around it.

use axum::{extract::State, http::StatusCode, response::Response};
use chrono::{Datelike, NaiveDate};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;
use uuid::Uuid;

use super::{address_of, month_and_year, month_name, portal_page};
use crate::{
    domain::{usage::first_of_month, FieldError},
    http::{
        error::{ApiError, ApiResult},
        extract::Query,
        portal::{
            chart::{bar_chart, kwh, Bar},
            render::paragraph,
        },
        AppState,
    },
    services::portal as portal_service,
    store,
};

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
        "/portal/usage?location={location}&month={}-{:02}",
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
            paragraph("Your usage shows here once your service has started.").into_any(),
        ));
    };
    let locations = store::enrollment::locations_of_account(&state.db, c.account.uuid).await?;
    let choices = (locations.len() > 1).then(|| {
        let items = locations
            .iter()
            .map(|l| {
                let here = (l.uuid == usage.location.uuid).then_some("page");
                let href = format!("/portal/usage?location={}", l.uuid);
                view! { <li><a href=href aria-current=here>{address_of(l)}</a></li> }
            })
            .collect_view();
        view! { <ul class="choices-inline">{items}</ul> }
    });
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
    let months = bar_chart(&caption, "usage-months", &bars, 2);

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
    let days = if daily.days.is_empty() {
        paragraph("No usage was read for this month.").into_any()
    } else {
        let bars: Vec<Bar> = daily
            .days
            .iter()
            .map(|d| Bar {
                label: d.day.day().to_string(),
                kwh: d.consumption_kwh.parse().unwrap_or_default(),
            })
            .collect();
        bar_chart(
            &format!(
                "Usage by day in {}: {} in all",
                month_and_year(shown),
                kwh(month_total)
            ),
            "usage-days",
            &bars,
            5,
        )
        .into_any()
    };
    let location = usage.location.uuid;
    let previous = daily.neighbours.previous.map(|p| {
        let href = usage_link(location, p);
        let text = format!("Previous month: {}", month_and_year(p));
        view! { <a href=href data-testid="previous-month">{text}</a> }
    });
    let next = daily.neighbours.next.map(|n| {
        let href = usage_link(location, n);
        let text = format!("Next month: {}", month_and_year(n));
        view! { <a href=href data-testid="next-month">{text}</a> }
    });
    let around = (previous.is_some() || next.is_some()).then(|| {
        let between = (previous.is_some() && next.is_some()).then_some(" ");
        view! { <p class="around">{previous} {between} {next}</p> }
    });
    let body = view! {
        {choices}
        <p class="muted">{address_of(&usage.location)}</p>
        <section class="card">
            <h2>"The last twelve months"</h2>
            {months}
        </section>
        <section class="card">
            <h2>{format!("{} by day", month_and_year(shown))}</h2>
            {days}
            {around}
        </section>
    }
    .into_any();
    Ok(portal_page(
        StatusCode::OK,
        &c,
        "/portal/usage",
        "Your usage",
        "portal-usage",
        body,
    ))
}
