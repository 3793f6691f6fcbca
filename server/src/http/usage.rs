//! A location's usage as the utility reported it: by month of a year, by day of a month, in
//! 15-minute intervals, and its cycle meter reads. Usage exists from the utility's history (a
//! year before service start) through yesterday on the account's clock (the smart meter's daily
//! data after the last cycle read, which bills those days at the next read); `next`/`previous`
//! link the neighbouring periods that have usage.

use app::api::{
    billing::{
        DailyUsage, IntervalUsage, MeterRead, MonthlyUsage, UsageDay, UsageInterval, UsageMonth,
    },
    ErrorEnvelope, List, Timestamp,
};
use axum::extract::State;
use chrono::{Datelike, Duration, NaiveDate};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::AccountPrincipal,
    error::ApiResult,
    extract::{Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{market::start_of_market_day, usage::IntervalPeriod},
    services::usage,
    store,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(monthly))
        .routes(routes!(daily))
        .routes(routes!(intervals))
        .routes(routes!(meter_reads))
}

const UNITS: &str = "kWh";

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct YearQuery {
    /// Default: this year on the account's clock.
    year: Option<i32>,
}

/// Usage by month of a year.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/usage/monthly", tag = "usage",
    params(("location_uuid" = Uuid, Path), YearQuery),
    responses(
        (status = 200, description = "The months of the year that have usage", body = MonthlyUsage),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn monthly(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Query(q): Query<YearQuery>,
) -> ApiResult<axum::Json<MonthlyUsage>> {
    let usage = usage::monthly(&state, principal.account_uuid, location_uuid, q.year).await?;
    let year = usage.year;
    let months = usage
        .months
        .into_iter()
        .map(|(m, t)| UsageMonth {
            month: format!("{year}-{m:02}"),
            consumption: t.consumption.to_string(),
            generation: t.generation.to_string(),
            vehicle_charging: t.vehicle.to_string(),
            eligible_vehicle_charging: t.eligible_vehicle.to_string(),
        })
        .collect();
    let path = |d: NaiveDate| {
        format!(
            "/v1/account/locations/{location_uuid}/usage/monthly?year={}",
            d.year()
        )
    };
    Ok(axum::Json(MonthlyUsage {
        year,
        units: UNITS.to_owned(),
        months,
        next: usage.neighbours.next.map(path),
        previous: usage.neighbours.previous.map(path),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MonthQuery {
    /// Default: this year on the account's clock.
    year: Option<i32>,
    /// 1 to 12; default: this month on the account's clock.
    month: Option<u32>,
}

/// Usage by day of a month.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/usage/daily", tag = "usage",
    params(("location_uuid" = Uuid, Path), MonthQuery),
    responses(
        (status = 200, description = "The days of the month that have usage", body = DailyUsage),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn daily(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Query(q): Query<MonthQuery>,
) -> ApiResult<axum::Json<DailyUsage>> {
    let usage = usage::daily(
        &state,
        principal.account_uuid,
        location_uuid,
        q.year,
        q.month,
    )
    .await?;
    let days = usage
        .days
        .into_iter()
        .map(|d| UsageDay {
            date: d.day,
            consumption: d.consumption_kwh,
            generation: d.generation_kwh,
            vehicle_charging: d.vehicle_kwh,
            eligible_vehicle_charging: d.eligible_vehicle_kwh,
        })
        .collect();
    let path = |d: NaiveDate| {
        format!(
            "/v1/account/locations/{location_uuid}/usage/daily?year={}&month={}",
            d.year(),
            d.month()
        )
    };
    Ok(axum::Json(DailyUsage {
        year: usage.year,
        month: usage.month,
        units: UNITS.to_owned(),
        days,
        next: usage.neighbours.next.map(path),
        previous: usage.neighbours.previous.map(path),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IntervalsQuery {
    /// A day (`YYYY-MM-DD`, years 2000 to 2100 as for `year`); or give `year` and `month` for a
    /// whole month; with none of them, this month on the account's clock.
    date: Option<NaiveDate>,
    year: Option<i32>,
    month: Option<u32>,
}

/// 15-minute intervals of a day (or of a month), local midnight to midnight in the market's time
/// zone: 96 a day, 92 or 100 when the clocks change.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/usage/intervals", tag = "usage",
    params(("location_uuid" = Uuid, Path), IntervalsQuery),
    responses(
        (status = 200, description = "The intervals of the days that have usage", body = IntervalUsage),
        (status = 400, description = "A parameter is invalid, or `year` or `month` is given without the other", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn intervals(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Query(q): Query<IntervalsQuery>,
) -> ApiResult<axum::Json<IntervalUsage>> {
    let usage = usage::intervals(
        &state,
        principal.account_uuid,
        location_uuid,
        q.date,
        q.year,
        q.month,
    )
    .await?;
    let intervals = usage
        .intervals
        .into_iter()
        .map(|i| UsageInterval {
            start: Timestamp(i.start),
            consumption: i.consumption.to_string(),
            generation: i.generation.to_string(),
        })
        .collect();
    let base = format!("/v1/account/locations/{location_uuid}/usage/intervals");
    let path = |d: NaiveDate| match usage.period {
        IntervalPeriod::Day(_) => format!("{base}?date={d}"),
        IntervalPeriod::Month { .. } => format!("{base}?year={}&month={}", d.year(), d.month()),
    };
    Ok(axum::Json(IntervalUsage {
        start: Timestamp(start_of_market_day(usage.from)),
        end: Timestamp(start_of_market_day(usage.to + Duration::days(1))),
        interval_minutes: 15,
        units: UNITS.to_owned(),
        intervals,
        next: usage.neighbours.next.map(path),
        previous: usage.neighbours.previous.map(path),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReadsQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
}

/// The location's cycle meter reads, newest first.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/meter-reads", tag = "usage",
    params(("location_uuid" = Uuid, Path), ReadsQuery),
    responses(
        (status = 200, description = "A page of reads", body = List<MeterRead>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn meter_reads(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Query(q): Query<ReadsQuery>,
) -> ApiResult<axum::Json<List<MeterRead>>> {
    let location =
        usage::location_of_account(&state, principal.account_uuid, location_uuid).await?;
    let page = Page::parse(q.limit, q.offset)?;
    let rows = store::billing::meter_reads(
        &state.db,
        location.uuid,
        i64::from(page.limit) + 1,
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    )
    .await?;
    let reads = rows
        .into_iter()
        .map(|r| MeterRead {
            read_date: r.read_date,
            start_date: r.start_date,
            end_date: r.end_date,
            kwh: r.kwh,
            kind: r.read_type,
        })
        .collect();
    Ok(axum::Json(page.list(
        reads,
        &format!("/v1/account/locations/{location_uuid}/meter-reads"),
        &[],
    )))
}
