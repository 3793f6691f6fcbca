//! A location's usage as the utility reported it, gathered for the usage views: by month of a
//! year, by day of a month, in 15-minute intervals, each through yesterday on the account's
//! clock (`usage_between`). Each answers which neighbouring periods have
//! usage, so the views link only those. What the meter measured over days (`measured`), with
//! nothing on the days a disconnection left it without service (`disconnected_days`,
//! `measured_while_served`), which billing reads too.

use std::str::FromStr;

use chrono::{Datelike, Duration, NaiveDate};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::Error;
use crate::{
    domain::{
        billing::disconnected_days as domain_disconnected_days,
        estimate::MonthUsage,
        market::market_date,
        usage::{
            self, daily_data_range, first_of_month, has_usage_in, interval_period, last_of_month,
            month_of, monthly_totals, year_of, IntervalPeriod, UsageTotals,
        },
        FieldError,
    },
    state::Core,
    store::{self, billing::UsageDayRow, enrollment::LocationRow},
};

/// Why no usage was answered.
#[derive(Debug)]
pub enum UsageRefused {
    /// No such location on this account.
    LocationNotFound,
    Field(FieldError),
}

impl From<FieldError> for Error<UsageRefused> {
    fn from(e: FieldError) -> Self {
        Error::Refused(UsageRefused::Field(e))
    }
}

/// The period before and after the one asked for, by their first day, when they have usage.
pub struct Neighbours {
    pub next: Option<NaiveDate>,
    pub previous: Option<NaiveDate>,
}

pub struct MonthlyUsage {
    pub year: i32,
    /// The months (1 to 12) that have usage, in order.
    pub months: Vec<(u32, UsageTotals)>,
    pub neighbours: Neighbours,
}

pub struct DailyUsage {
    pub year: i32,
    pub month: u32,
    pub days: Vec<UsageDayRow>,
    pub neighbours: Neighbours,
}

pub struct IntervalUsage {
    pub period: IntervalPeriod,
    /// The period's first and last day.
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub intervals: Vec<usage::Interval>,
    pub neighbours: Neighbours,
}

/// The location, when it is the account's.
pub async fn location_of_account(
    core: &Core,
    account_uuid: Uuid,
    location_uuid: Uuid,
) -> Result<LocationRow, Error<UsageRefused>> {
    store::enrollment::location_of_account(&core.db, account_uuid, location_uuid)
        .await?
        .ok_or(Error::Refused(UsageRefused::LocationNotFound))
}

async fn today(core: &Core, account_uuid: Uuid) -> Result<NaiveDate, Error<UsageRefused>> {
    Ok(core
        .clock
        .for_account(&core.db, account_uuid)
        .await?
        .today())
}

/// A location's usage in `from..=to`, and the first and last day it has usage: the stored days
/// (the utility's history and the cycle reads) and after them the utility's daily smart-meter
/// data through yesterday on the account's clock (`daily_data_range`). Billing reads those days
/// only at the next cycle read, with the same figures (the utility reports a day the same way
/// each time), so an app showing "this month so far" is a day behind, not a cycle.
async fn usage_between(
    core: &Core,
    location: &LocationRow,
    today: NaiveDate,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<(Vec<UsageDayRow>, Option<(NaiveDate, NaiveDate)>), Error<UsageRefused>> {
    let mut days = store::billing::usage_days(&core.db, location.uuid, from, to).await?;
    let mut bounds = store::billing::usage_bounds(&core.db, location.uuid).await?;
    let started = location.is_service_active || location.has_usage_history;
    if let Some((first, last)) = daily_data_range(
        started,
        bounds.map(|(_, last)| last),
        location.service_start_date,
        location.final_service_date,
        today,
    ) {
        bounds = Some((bounds.map_or(first, |(f, _)| f), last));
        let (a, b) = (first.max(from), last.min(to));
        if a <= b {
            // Nothing is measured while the utility has the meter disconnected.
            let off = disconnected_days(&core.db, location, a, b).await?;
            days.extend(measured_while_served(&location.esi_id, a, b, &off));
        }
    }
    Ok((days, bounds))
}

/// The location's usage in each of `window`'s months (by their first day; see
/// `domain::estimate::last_twelve_months`), with how many of its days the meter reported.
pub async fn months_of(
    core: &Core,
    location: &LocationRow,
    today: NaiveDate,
    window: &[NaiveDate],
) -> Result<Vec<MonthUsage>, Error<UsageRefused>> {
    let (Some(first), Some(last)) = (window.first(), window.last()) else {
        return Ok(Vec::new());
    };
    let to = last_of_month(last.year(), last.month());
    let (days, _) = usage_between(core, location, today, *first, to).await?;
    let mut months: Vec<MonthUsage> = window
        .iter()
        .map(|m| MonthUsage {
            month: *m,
            days: 0,
            consumption_kwh: Decimal::ZERO,
            generation_kwh: Decimal::ZERO,
        })
        .collect();
    for d in &days {
        let first_day = first_of_month(d.day.year(), d.day.month());
        if let Some(m) = months.iter_mut().find(|m| m.month == first_day) {
            let t = totals(d);
            m.days += 1;
            m.consumption_kwh += t.consumption;
            m.generation_kwh += t.generation;
        }
    }
    Ok(months)
}

/// `from` when the location has usage in `from..=to`.
fn if_usage(
    bounds: Option<(NaiveDate, NaiveDate)>,
    from: NaiveDate,
    to: NaiveDate,
) -> Option<NaiveDate> {
    has_usage_in(bounds, from, to).then_some(from)
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap_or_default()
}

fn totals(d: &UsageDayRow) -> UsageTotals {
    UsageTotals {
        consumption: dec(&d.consumption_kwh),
        generation: dec(&d.generation_kwh),
        vehicle: dec(&d.vehicle_kwh),
        eligible_vehicle: dec(&d.eligible_vehicle_kwh),
    }
}

fn day_of(d: &UsageDayRow) -> usage::DayUsage {
    usage::DayUsage {
        date: d.day,
        consumption: dec(&d.consumption_kwh),
        generation: dec(&d.generation_kwh),
        vehicle_charging: dec(&d.vehicle_kwh),
        eligible_vehicle_charging: dec(&d.eligible_vehicle_kwh),
    }
}

/// Usage by month of `year` (default: this year on the account's clock).
pub async fn monthly(
    core: &Core,
    account_uuid: Uuid,
    location_uuid: Uuid,
    year: Option<i32>,
) -> Result<MonthlyUsage, Error<UsageRefused>> {
    let location = location_of_account(core, account_uuid, location_uuid).await?;
    let today = today(core, account_uuid).await?;
    let year = year_of(year, today)?;
    let (days, bounds) = usage_between(
        core,
        &location,
        today,
        first_of_month(year, 1),
        last_of_month(year, 12),
    )
    .await?;
    let months = monthly_totals(days.iter().map(|d| (d.day, totals(d))));
    let whole_year = |y: i32| if_usage(bounds, first_of_month(y, 1), last_of_month(y, 12));
    Ok(MonthlyUsage {
        year,
        months,
        neighbours: Neighbours {
            next: whole_year(year + 1),
            previous: whole_year(year - 1),
        },
    })
}

/// The whole months next to `from..=to`, by their first day, when they have usage.
fn neighbouring_months(
    bounds: Option<(NaiveDate, NaiveDate)>,
    from: NaiveDate,
    to: NaiveDate,
) -> Neighbours {
    let (next, previous) = (to + Duration::days(1), from - Duration::days(1));
    let previous_from = first_of_month(previous.year(), previous.month());
    Neighbours {
        next: if_usage(bounds, next, last_of_month(next.year(), next.month())),
        previous: if_usage(bounds, previous_from, previous),
    }
}

/// Usage by day of a month (default: this year and month on the account's clock).
pub async fn daily(
    core: &Core,
    account_uuid: Uuid,
    location_uuid: Uuid,
    year: Option<i32>,
    month: Option<u32>,
) -> Result<DailyUsage, Error<UsageRefused>> {
    let location = location_of_account(core, account_uuid, location_uuid).await?;
    let today = today(core, account_uuid).await?;
    let year = year_of(year, today)?;
    let month = month_of(month, today)?;
    let (from, to) = (first_of_month(year, month), last_of_month(year, month));
    let (days, bounds) = usage_between(core, &location, today, from, to).await?;
    Ok(DailyUsage {
        year,
        month,
        days,
        neighbours: neighbouring_months(bounds, from, to),
    })
}

/// The 15-minute intervals of the days with usage in a day or a month (see
/// `domain::usage::interval_period`; by default this month on the account's clock); its
/// neighbours are the days, or the months, next to it.
pub async fn intervals(
    core: &Core,
    account_uuid: Uuid,
    location_uuid: Uuid,
    date: Option<NaiveDate>,
    year: Option<i32>,
    month: Option<u32>,
) -> Result<IntervalUsage, Error<UsageRefused>> {
    let location = location_of_account(core, account_uuid, location_uuid).await?;
    let today = today(core, account_uuid).await?;
    let period = interval_period(date, year, month, today)?;
    let (from, to) = period.days();
    let (days, bounds) = usage_between(core, &location, today, from, to).await?;
    let intervals = days
        .iter()
        // Split the day's own figures, so a day without service has no consumption in its
        // intervals either.
        .flat_map(|d| usage::intervals_of(&day_of(d)))
        .collect();
    let neighbours = match period {
        IntervalPeriod::Day(_) => {
            let (n, p) = (to + Duration::days(1), from - Duration::days(1));
            Neighbours {
                next: if_usage(bounds, n, n),
                previous: if_usage(bounds, p, p),
            }
        }
        IntervalPeriod::Month { .. } => neighbouring_months(bounds, from, to),
    };
    Ok(IntervalUsage {
        period,
        from,
        to,
        intervals,
        neighbours,
    })
}

fn usage_row(u: &usage::DayUsage) -> UsageDayRow {
    UsageDayRow {
        day: u.date,
        consumption_kwh: u.consumption.to_string(),
        generation_kwh: u.generation.to_string(),
        vehicle_kwh: u.vehicle_charging.to_string(),
        eligible_vehicle_kwh: u.eligible_vehicle_charging.to_string(),
    }
}

/// What the meter measured from `from` to `to` (both included), as the utility reports it.
pub fn measured(esi_id: &str, from: NaiveDate, to: NaiveDate) -> Vec<UsageDayRow> {
    from.iter_days()
        .take_while(|d| *d <= to)
        .map(|d| usage_row(&usage::day_usage(esi_id, d)))
        .collect()
}

/// `measured`, with nothing on the days `off` the meter was disconnected.
pub fn measured_while_served(
    esi_id: &str,
    from: NaiveDate,
    to: NaiveDate,
    off: &std::collections::BTreeSet<NaiveDate>,
) -> Vec<UsageDayRow> {
    from.iter_days()
        .take_while(|d| *d <= to)
        .map(|d| {
            usage_row(&if off.contains(&d) {
                usage::DayUsage::none(d)
            } else {
                usage::day_usage(esi_id, d)
            })
        })
        .collect()
}

/// The days of `from..=to` the location had no service at all, disconnected for non-payment
/// (`domain::billing::disconnected_days`), from its notices the utility carried out.
pub async fn disconnected_days(
    conn: impl Into<store::Conn<'_>>,
    location: &LocationRow,
    from: NaiveDate,
    to: NaiveDate,
) -> store::Result<std::collections::BTreeSet<NaiveDate>> {
    let spans: Vec<(NaiveDate, Option<NaiveDate>)> =
        store::disconnections::disconnections_of_account(conn, location.account_uuid)
            .await?
            .iter()
            .filter(|d| d.location_uuid == location.uuid)
            .filter_map(|d| {
                let cut = d.disconnected_at?;
                Some((market_date(cut), d.reconnected_at.map(market_date)))
            })
            .collect();
    Ok(domain_disconnected_days(&spans, from, to))
}
