//! A location's usage as the utility reported it: by month of a year, by day of a month, in
//! 15-minute intervals, and its cycle meter reads. Usage exists from the utility's history (a
//! year before service start) through the last cycle read; `next`/`previous` link the
//! neighbouring periods that have usage.

use std::str::FromStr;

use app::api::{
    billing::{
        DailyUsage, IntervalUsage, MeterRead, MonthlyUsage, UsageDay, UsageInterval, UsageMonth,
    },
    ErrorEnvelope, List, Timestamp,
};
use axum::extract::State;
use chrono::{Datelike, Duration, NaiveDate};
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult},
    extract::{Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        usage::{self, first_of_month, last_of_month, month_of, year_of},
        FieldError,
    },
    store::{self, billing::UsageDayRow, enrollment::LocationRow},
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(monthly))
        .routes(routes!(daily))
        .routes(routes!(intervals))
        .routes(routes!(meter_reads))
}

const UNITS: &str = "kWh";

async fn location(
    state: &AppState,
    principal: &AccountPrincipal,
    uuid: Uuid,
) -> ApiResult<LocationRow> {
    store::enrollment::location_of_account(&state.db, principal.account_uuid, uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("location").with_param("location_uuid"))
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_default()
}

/// Sums of a set of days: consumption, generation, vehicle, eligible vehicle.
fn totals<'a>(days: impl Iterator<Item = &'a UsageDayRow>) -> [Decimal; 4] {
    days.fold([Decimal::ZERO; 4], |acc, d| {
        [
            acc[0] + dec(&d.consumption_kwh),
            acc[1] + dec(&d.generation_kwh),
            acc[2] + dec(&d.vehicle_kwh),
            acc[3] + dec(&d.eligible_vehicle_kwh),
        ]
    })
}

/// The link to the period starting `from` when usage exists in `from..=to`.
fn link(
    bounds: Option<(NaiveDate, NaiveDate)>,
    from: NaiveDate,
    to: NaiveDate,
    path: String,
) -> Option<String> {
    bounds
        .filter(|(first, last)| *first <= to && from <= *last)
        .map(|_| path)
}

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
    let location = location(&state, &principal, location_uuid).await?;
    let today = state
        .clock
        .for_account(&state.db, principal.account_uuid)
        .await?
        .today();
    let year = year_of(q.year, today)?;
    let days = store::billing::usage_days(
        &state.db,
        location.uuid,
        first_of_month(year, 1),
        last_of_month(year, 12),
    )
    .await?;
    let months = (1..=12)
        .filter_map(|m| {
            let of_month: Vec<&UsageDayRow> = days.iter().filter(|d| d.day.month() == m).collect();
            (!of_month.is_empty()).then(|| {
                let [c, g, v, e] = totals(of_month.into_iter());
                UsageMonth {
                    month: format!("{year}-{m:02}"),
                    consumption: c.to_string(),
                    generation: g.to_string(),
                    vehicle_charging: v.to_string(),
                    eligible_vehicle_charging: e.to_string(),
                }
            })
        })
        .collect();
    let bounds = store::billing::usage_bounds(&state.db, location.uuid).await?;
    let path = |y: i32| format!("/v1/account/locations/{location_uuid}/usage/monthly?year={y}");
    Ok(axum::Json(MonthlyUsage {
        year,
        units: UNITS.to_owned(),
        months,
        next: link(
            bounds,
            first_of_month(year + 1, 1),
            last_of_month(year + 1, 12),
            path(year + 1),
        ),
        previous: link(
            bounds,
            first_of_month(year - 1, 1),
            last_of_month(year - 1, 12),
            path(year - 1),
        ),
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
    let location = location(&state, &principal, location_uuid).await?;
    let today = state
        .clock
        .for_account(&state.db, principal.account_uuid)
        .await?
        .today();
    let year = year_of(q.year, today)?;
    let month = month_of(q.month, today)?;
    let (from, to) = (first_of_month(year, month), last_of_month(year, month));
    let days = store::billing::usage_days(&state.db, location.uuid, from, to)
        .await?
        .into_iter()
        .map(|d| UsageDay {
            date: d.day,
            consumption: d.consumption_kwh,
            generation: d.generation_kwh,
            vehicle_charging: d.vehicle_kwh,
            eligible_vehicle_charging: d.eligible_vehicle_kwh,
        })
        .collect();
    let bounds = store::billing::usage_bounds(&state.db, location.uuid).await?;
    let path = |d: NaiveDate| {
        format!(
            "/v1/account/locations/{location_uuid}/usage/daily?year={}&month={}",
            d.year(),
            d.month()
        )
    };
    let next = to + Duration::days(1);
    let previous = from - Duration::days(1);
    Ok(axum::Json(DailyUsage {
        year,
        month,
        units: UNITS.to_owned(),
        days,
        next: link(
            bounds,
            next,
            last_of_month(next.year(), next.month()),
            path(next),
        ),
        previous: link(
            bounds,
            first_of_month(previous.year(), previous.month()),
            previous,
            path(previous),
        ),
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IntervalsQuery {
    /// A day (`YYYY-MM-DD`, years 2000 to 2100 as for `year`); or give `year` and `month` for a
    /// whole month.
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
        (status = 400, description = "A parameter is missing or invalid", body = ErrorEnvelope),
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
    let location = location(&state, &principal, location_uuid).await?;
    let (from, to) = match (q.date, q.year, q.month) {
        // The same years as `year=` (a date at the end of the calendar has no next day).
        (Some(d), None, None) => {
            year_of(Some(d.year()), d).map_err(|e| FieldError {
                param: "date".to_owned(),
                message: format!("the year of date: {}", e.message),
                ..e
            })?;
            (d, d)
        }
        (Some(_), _, _) => {
            return Err(FieldError::invalid("date", "give either date or year and month").into())
        }
        (None, Some(y), Some(m)) => {
            let today = state
                .clock
                .for_account(&state.db, principal.account_uuid)
                .await?
                .today();
            let (y, m) = (year_of(Some(y), today)?, month_of(Some(m), today)?);
            (first_of_month(y, m), last_of_month(y, m))
        }
        (None, Some(_), None) => return Err(FieldError::missing("month").into()),
        (None, None, Some(_)) => return Err(FieldError::missing("year").into()),
        (None, None, None) => return Err(FieldError::missing("date").into()),
    };
    let stored = store::billing::usage_days(&state.db, location.uuid, from, to).await?;
    let intervals = stored
        .iter()
        .flat_map(|d| usage::intervals(&location.esi_id, d.day))
        .map(|i| UsageInterval {
            start: Timestamp(i.start),
            consumption: i.consumption.to_string(),
            generation: i.generation.to_string(),
        })
        .collect();
    let bounds = store::billing::usage_bounds(&state.db, location.uuid).await?;
    let base = format!("/v1/account/locations/{location_uuid}/usage/intervals");
    let (next, previous) = if q.date.is_some() {
        let (n, p) = (to + Duration::days(1), from - Duration::days(1));
        (
            link(bounds, n, n, format!("{base}?date={n}")),
            link(bounds, p, p, format!("{base}?date={p}")),
        )
    } else {
        let (n, p) = (to + Duration::days(1), from - Duration::days(1));
        let month_path = |d: NaiveDate| format!("{base}?year={}&month={}", d.year(), d.month());
        (
            link(bounds, n, last_of_month(n.year(), n.month()), month_path(n)),
            link(
                bounds,
                first_of_month(p.year(), p.month()),
                p,
                month_path(p),
            ),
        )
    };
    Ok(axum::Json(IntervalUsage {
        start: Timestamp(usage::start_of_local_day(from)),
        end: Timestamp(usage::start_of_local_day(to + Duration::days(1))),
        interval_minutes: 15,
        units: UNITS.to_owned(),
        intervals,
        next,
        previous,
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
    let location = location(&state, &principal, location_uuid).await?;
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
