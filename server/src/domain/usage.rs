//! What a meter measures, as the sandbox utility reports it: a deterministic model of each
//! premise's daily consumption (seasonal, with day-to-day variation, an electric vehicle or
//! rooftop solar at some premises), its 15-minute intervals in local time (92 or 100 of them on
//! daylight-saving change days), and the monthly meter-read cycle of each ESI ID.
//!
//! The same ESI ID and day always give the same figures, so usage history, meter reads and the
//! invoices computed from them agree however often they are asked for.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Timelike, Utc, Weekday};
use rust_decimal::Decimal;

use super::{market::start_of_market_day, FieldError};

/// The market's time zone: days, cycles and intervals are local to it.
const MARKET_TZ: chrono_tz::Tz = chrono_tz::America::Chicago;

/// Minutes per interval of a smart meter.
pub const INTERVAL_MINUTES: i64 = 15;

/// One day of a meter, in kWh (3 decimal places).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayUsage {
    pub date: NaiveDate,
    /// Energy drawn from the grid (the electric vehicle's charging included).
    pub consumption: Decimal,
    /// Energy sent to the grid (rooftop solar).
    pub generation: Decimal,
    /// The part of consumption that charged an electric vehicle.
    pub vehicle_charging: Decimal,
    /// The part of `vehicle_charging` in off-peak hours.
    pub eligible_vehicle_charging: Decimal,
}

impl DayUsage {
    /// A day the meter measured nothing (its service was disconnected).
    pub fn none(date: NaiveDate) -> DayUsage {
        DayUsage {
            date,
            consumption: Decimal::ZERO,
            generation: Decimal::ZERO,
            vehicle_charging: Decimal::ZERO,
            eligible_vehicle_charging: Decimal::ZERO,
        }
    }
}

/// One 15-minute interval, starting at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub start: DateTime<Utc>,
    pub consumption: Decimal,
    pub generation: Decimal,
}

/// What kind of home sits behind a meter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Premise {
    /// Typical daily consumption in a mild month, kWh.
    pub base_kwh_per_day: u32,
    pub solar: bool,
    pub electric_vehicle: bool,
}

/// FNV-1a over the ESI ID and a salt: stable across releases and platforms, unlike std's
/// hasher.
fn hash(esi_id: &str, salt: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in esi_id.bytes().chain([0]).chain(salt.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A value in `0..n` drawn from the ESI ID and salt.
fn draw(esi_id: &str, salt: &str, n: u64) -> u64 {
    hash(esi_id, salt) % n
}

pub fn premise(esi_id: &str) -> Premise {
    Premise {
        base_kwh_per_day: 18 + u32::try_from(draw(esi_id, "base", 25)).unwrap_or(0),
        solar: draw(esi_id, "solar", 6) == 0,
        electric_vehicle: draw(esi_id, "ev", 5) == 1,
    }
}

/// Texas load by month (air conditioning dominates summer), in hundredths: the simulated meters'
/// shape, and the shape of a typical home's year in an estimate (`estimate::typical_year`).
pub const SEASON: [i64; 12] = [105, 95, 80, 80, 100, 135, 160, 165, 135, 95, 85, 105];
/// Rooftop export by month, in hundredths.
const SUN: [i64; 12] = [60, 70, 90, 105, 120, 130, 130, 125, 110, 90, 70, 60];

fn month_index(date: NaiveDate) -> usize {
    usize::try_from(date.month0()).unwrap_or(0)
}

/// A factor between 0.85 and 1.15 for one day.
fn daily_noise(esi_id: &str, date: NaiveDate, salt: &str) -> Decimal {
    let n = draw(esi_id, &format!("{salt}{date}"), 301);
    Decimal::new(850 + i64::try_from(n).unwrap_or(0), 3)
}

fn is_weekend(date: NaiveDate) -> bool {
    matches!(date.weekday(), Weekday::Sat | Weekday::Sun)
}

/// The meter's figures for `date`.
pub fn day_usage(esi_id: &str, date: NaiveDate) -> DayUsage {
    let p = premise(esi_id);
    let season = Decimal::new(SEASON[month_index(date)], 2);
    let weekend = if is_weekend(date) {
        Decimal::new(108, 2)
    } else {
        Decimal::ONE
    };
    let house =
        Decimal::from(p.base_kwh_per_day) * season * weekend * daily_noise(esi_id, date, "c");
    let vehicle = if p.electric_vehicle {
        let kwh = if is_weekend(date) { 4 } else { 9 };
        Decimal::from(kwh) * daily_noise(esi_id, date, "v")
    } else {
        Decimal::ZERO
    };
    let generation = if p.solar {
        Decimal::from(9) * Decimal::new(SUN[month_index(date)], 2) * daily_noise(esi_id, date, "g")
    } else {
        Decimal::ZERO
    };
    let vehicle = round3(vehicle);
    DayUsage {
        date,
        consumption: round3(house) + vehicle,
        generation: round3(generation),
        vehicle_charging: vehicle,
        // Most charging is scheduled overnight.
        eligible_vehicle_charging: round3(vehicle * Decimal::new(8, 1)),
    }
}

pub fn round3(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(3, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
}

/// Share of a day's consumption by local hour: low overnight (with the car charging), a
/// morning bump, the afternoon air-conditioning peak.
const LOAD_SHAPE: [i64; 24] = [
    30, 28, 27, 26, 26, 30, 38, 44, 40, 36, 36, 38, 42, 46, 50, 54, 58, 62, 64, 60, 54, 46, 38, 33,
];
/// Share of a day's export by local hour.
const SUN_SHAPE: [i64; 24] = [
    0, 0, 0, 0, 0, 0, 0, 2, 8, 14, 20, 24, 26, 26, 24, 20, 14, 8, 2, 0, 0, 0, 0, 0,
];

/// Splits `total` by `weights`, rounding each part to 3 places; the largest part takes the
/// rounding remainder so that the parts add up to the total exactly.
fn split(total: Decimal, weights: &[i64]) -> Vec<Decimal> {
    let sum: i64 = weights.iter().sum();
    if sum == 0 {
        return vec![Decimal::ZERO; weights.len()];
    }
    let mut parts: Vec<Decimal> = weights
        .iter()
        .map(|w| round3(total * Decimal::from(*w) / Decimal::from(sum)))
        .collect();
    let rest = total - parts.iter().copied().sum::<Decimal>();
    if let Some(i) = (0..weights.len()).max_by_key(|i| weights[*i]) {
        parts[i] += rest;
    }
    parts
}

/// The day's 15-minute intervals, from local midnight to the next (96 of them, 92 or 100 when
/// the clocks change), adding up exactly to the day's figures.
pub fn intervals(esi_id: &str, date: NaiveDate) -> Vec<Interval> {
    intervals_of(&day_usage(esi_id, date))
}

/// The 15-minute intervals of a day as reported (`intervals`), adding up exactly to `day`'s
/// figures: a day the meter measured nothing (disconnected) has every interval at zero.
pub fn intervals_of(day: &DayUsage) -> Vec<Interval> {
    let date = day.date;
    let start = start_of_market_day(date);
    let end = date
        .succ_opt()
        .map_or(start + Duration::days(1), start_of_market_day);
    let mut starts = Vec::with_capacity(100);
    let mut t = start;
    while t < end {
        starts.push(t);
        t += Duration::minutes(INTERVAL_MINUTES);
    }
    let hour = |t: &DateTime<Utc>| t.with_timezone(&MARKET_TZ).hour() as usize;
    let load: Vec<i64> = starts.iter().map(|t| LOAD_SHAPE[hour(t)]).collect();
    let sun: Vec<i64> = starts.iter().map(|t| SUN_SHAPE[hour(t)]).collect();
    let consumption = split(day.consumption, &load);
    let generation = split(day.generation, &sun);
    starts
        .into_iter()
        .zip(consumption.into_iter().zip(generation))
        .map(|(start, (consumption, generation))| Interval {
            start,
            consumption,
            generation,
        })
        .collect()
}

/// The day of the month on which the utility reads this meter (1 to 28, so that every month
/// has one).
pub fn cycle_day(esi_id: &str) -> u32 {
    1 + u32::try_from(draw(esi_id, "cycle", 28)).unwrap_or(0)
}

/// The first read date of the meter strictly after `after`.
pub fn next_read_date(esi_id: &str, after: NaiveDate) -> NaiveDate {
    let day = cycle_day(esi_id);
    let this_month = after.with_day(day).unwrap_or(after);
    if this_month > after {
        return this_month;
    }
    let (y, m) = if after.month() == 12 {
        (after.year() + 1, 1)
    } else {
        (after.year(), after.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, day).unwrap_or(after + Duration::days(30))
}

/// The year a usage query asks for: `year` (2000 to 2100), else the year of `today`.
pub fn year_of(param: Option<i32>, today: NaiveDate) -> Result<i32, FieldError> {
    match param {
        None => Ok(today.year()),
        Some(y) if (2000..=2100).contains(&y) => Ok(y),
        Some(_) => Err(FieldError::invalid(
            "year",
            "year must be between 2000 and 2100",
        )),
    }
}

/// The month a usage query asks for: `month` (1 to 12), else the month of `today`.
pub fn month_of(param: Option<u32>, today: NaiveDate) -> Result<u32, FieldError> {
    match param {
        None => Ok(today.month()),
        Some(m) if (1..=12).contains(&m) => Ok(m),
        Some(_) => Err(FieldError::invalid(
            "month",
            "month must be between 1 and 12",
        )),
    }
}

/// The first day of a month (`year` and `month` already in range).
pub fn first_of_month(year: i32, month: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, 1).unwrap_or_default()
}

pub fn last_of_month(year: i32, month: u32) -> NaiveDate {
    let next = if month == 12 {
        first_of_month(year + 1, 1)
    } else {
        first_of_month(year, month + 1)
    };
    next - Duration::days(1)
}

/// Whether a location whose usage runs from `bounds.0` to `bounds.1` (none stored: `None`) has
/// usage in `from..=to`. A neighbouring period is linked only then, so a client paging through
/// history stops where the history does.
pub fn has_usage_in(
    bounds: Option<(NaiveDate, NaiveDate)>,
    from: NaiveDate,
    to: NaiveDate,
) -> bool {
    bounds.is_some_and(|(first, last)| first <= to && from <= last)
}

/// The days of a location's usage the utility's daily smart-meter data covers beyond the stored
/// ones (stored through `last_stored`, the last cycle read): from the day after it (or the
/// service start) through yesterday on the account's clock, and no later than the final service
/// day; `None` when there are none, or service never started. A smart meter's day is reported
/// the next day, so usage views run through yesterday while billing stays on the cycle reads.
pub fn daily_data_range(
    started: bool,
    last_stored: Option<NaiveDate>,
    service_start: Option<NaiveDate>,
    final_service: Option<NaiveDate>,
    today: NaiveDate,
) -> Option<(NaiveDate, NaiveDate)> {
    let start = service_start.filter(|_| started)?;
    let from = last_stored.map_or(start, |l| (l + Duration::days(1)).max(start));
    let yesterday = today - Duration::days(1);
    let to = final_service.map_or(yesterday, |f| f.min(yesterday));
    (from <= to).then_some((from, to))
}

/// The kWh of a day or of a sum of days.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageTotals {
    pub consumption: Decimal,
    pub generation: Decimal,
    pub vehicle: Decimal,
    pub eligible_vehicle: Decimal,
}

impl std::ops::Add for UsageTotals {
    type Output = UsageTotals;

    fn add(self, o: UsageTotals) -> UsageTotals {
        UsageTotals {
            consumption: self.consumption + o.consumption,
            generation: self.generation + o.generation,
            vehicle: self.vehicle + o.vehicle,
            eligible_vehicle: self.eligible_vehicle + o.eligible_vehicle,
        }
    }
}

/// Sums days by month (1 to 12), in month order; a month without a day is left out (it has no
/// usage, which is not the same as zero usage).
pub fn monthly_totals(
    days: impl IntoIterator<Item = (NaiveDate, UsageTotals)>,
) -> Vec<(u32, UsageTotals)> {
    let mut months: [Option<UsageTotals>; 12] = [None; 12];
    for (day, totals) in days {
        let slot = &mut months[day.month0() as usize];
        *slot = Some(slot.unwrap_or_default() + totals);
    }
    (1..=12)
        .zip(months)
        .filter_map(|(m, t)| t.map(|t| (m, t)))
        .collect()
}

/// The days an intervals query covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalPeriod {
    Day(NaiveDate),
    Month { year: i32, month: u32 },
}

impl IntervalPeriod {
    /// The first and last day of the period.
    pub fn days(self) -> (NaiveDate, NaiveDate) {
        match self {
            IntervalPeriod::Day(d) => (d, d),
            IntervalPeriod::Month { year, month } => {
                (first_of_month(year, month), last_of_month(year, month))
            }
        }
    }
}

/// An intervals query: `date` alone (a day, its year in the range of `year`, since a date at the
/// end of the calendar has no next day), or `year` and `month` together; none of them: the
/// month of `today` (the account's), as the daily and monthly views default.
pub fn interval_period(
    date: Option<NaiveDate>,
    year: Option<i32>,
    month: Option<u32>,
    today: NaiveDate,
) -> Result<IntervalPeriod, FieldError> {
    match (date, year, month) {
        (Some(d), None, None) => {
            year_of(Some(d.year()), d).map_err(|e| FieldError {
                param: "date".to_owned(),
                message: format!("the year of date: {}", e.message),
                ..e
            })?;
            Ok(IntervalPeriod::Day(d))
        }
        (Some(_), _, _) => Err(FieldError::invalid(
            "date",
            "give either date or year and month",
        )),
        // Both given: neither falls back to today.
        (None, Some(y), Some(m)) => Ok(IntervalPeriod::Month {
            year: year_of(Some(y), NaiveDate::MIN)?,
            month: month_of(Some(m), NaiveDate::MIN)?,
        }),
        (None, Some(_), None) => Err(FieldError::missing("month")),
        (None, None, Some(_)) => Err(FieldError::missing("year")),
        (None, None, None) => Ok(IntervalPeriod::Month {
            year: today.year(),
            month: today.month(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_data_runs_from_the_last_read_through_yesterday() {
        let today = d("2026-11-26");
        let read = Some(d("2026-11-10"));
        let start = Some(d("2025-12-01"));
        assert_eq!(
            daily_data_range(true, read, start, None, today),
            Some((d("2026-11-11"), d("2026-11-25")))
        );
        // Read through yesterday already: nothing more.
        assert_eq!(
            daily_data_range(true, Some(d("2026-11-25")), start, None, today),
            None
        );
        // Service ended: through its final day.
        assert_eq!(
            daily_data_range(true, read, start, Some(d("2026-11-20")), today),
            Some((d("2026-11-11"), d("2026-11-20")))
        );
        // Only history before a start that is still to come, or service never started.
        assert_eq!(
            daily_data_range(
                true,
                Some(d("2026-11-30")),
                Some(d("2026-12-01")),
                None,
                today
            ),
            None
        );
        assert_eq!(daily_data_range(false, read, start, None, today), None);
        // Started yesterday with nothing stored since the history: just yesterday.
        assert_eq!(
            daily_data_range(
                true,
                Some(d("2026-11-24")),
                Some(d("2026-11-25")),
                None,
                today
            ),
            Some((d("2026-11-25"), d("2026-11-25")))
        );
    }

    #[test]
    fn usage_links_only_periods_that_overlap_the_history() {
        let bounds = Some((d("2025-03-10"), d("2026-02-05")));
        assert!(has_usage_in(bounds, d("2025-03-01"), d("2025-03-31")));
        assert!(has_usage_in(bounds, d("2026-02-05"), d("2026-02-05")));
        assert!(!has_usage_in(bounds, d("2025-02-01"), d("2025-03-09")));
        assert!(!has_usage_in(bounds, d("2026-02-06"), d("2026-02-28")));
        assert!(!has_usage_in(None, d("2025-03-01"), d("2025-03-31")));
    }

    #[test]
    fn monthly_totals_sum_by_month_and_skip_months_without_days() {
        let t = |c: i64| UsageTotals {
            consumption: Decimal::new(c, 3),
            generation: Decimal::new(1, 0),
            vehicle: Decimal::ZERO,
            eligible_vehicle: Decimal::new(2, 0),
        };
        let months = monthly_totals([
            (d("2025-03-31"), t(1500)),
            (d("2025-01-02"), t(250)),
            (d("2025-03-01"), t(500)),
        ]);
        assert_eq!(months.len(), 2);
        assert_eq!(months[0].0, 1);
        assert_eq!(months[0].1.consumption, Decimal::new(250, 3));
        assert_eq!(months[1].0, 3);
        assert_eq!(months[1].1.consumption, Decimal::new(2000, 3));
        assert_eq!(months[1].1.generation, Decimal::new(2, 0));
        assert_eq!(months[1].1.eligible_vehicle, Decimal::new(4, 0));
        assert!(monthly_totals([]).is_empty());
    }

    #[test]
    fn an_intervals_query_is_a_day_or_a_month_this_month_by_default() {
        let today = d("2026-11-26");
        assert_eq!(
            interval_period(Some(d("2025-07-04")), None, None, today),
            Ok(IntervalPeriod::Day(d("2025-07-04")))
        );
        assert_eq!(
            interval_period(None, Some(2025), Some(2), today).map(IntervalPeriod::days),
            Ok((d("2025-02-01"), d("2025-02-28")))
        );
        let both = interval_period(Some(d("2025-07-04")), Some(2025), None, today).unwrap_err();
        assert_eq!(both.param, "date");
        assert_eq!(
            interval_period(None, Some(2025), None, today)
                .unwrap_err()
                .param,
            "month"
        );
        assert_eq!(
            interval_period(None, None, Some(2), today)
                .unwrap_err()
                .param,
            "year"
        );
        assert_eq!(
            interval_period(None, None, None, today),
            Ok(IntervalPeriod::Month {
                year: 2026,
                month: 11
            })
        );
        let late = interval_period(Some(d("2101-01-01")), None, None, today).unwrap_err();
        assert_eq!(late.param, "date");
        assert!(late.message.starts_with("the year of date: "));
        assert_eq!(
            interval_period(None, Some(2025), Some(13), today)
                .unwrap_err()
                .param,
            "month"
        );
    }

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    const ESI: &str = "10443720001234567";

    #[test]
    fn the_same_day_gives_the_same_figures() {
        assert_eq!(
            day_usage(ESI, d("2026-07-14")),
            day_usage(ESI, d("2026-07-14"))
        );
        assert_ne!(
            day_usage(ESI, d("2026-07-14")).consumption,
            day_usage(ESI, d("2026-07-15")).consumption
        );
    }

    #[test]
    fn summer_uses_more_than_spring() {
        let month = |m: u32| -> Decimal {
            (1..=28)
                .map(|day| {
                    day_usage(ESI, NaiveDate::from_ymd_opt(2026, m, day).unwrap()).consumption
                })
                .sum()
        };
        assert!(month(8) > month(4) * Decimal::from(3) / Decimal::from(2));
    }

    #[test]
    fn figures_have_three_places_and_add_up() {
        for i in 0..200 {
            let esi = format!("1044372{i:010}");
            let u = day_usage(&esi, d("2026-03-03"));
            assert!(u.consumption.scale() <= 3);
            assert!(u.consumption > Decimal::ZERO);
            assert!(u.vehicle_charging <= u.consumption);
            assert!(u.eligible_vehicle_charging <= u.vehicle_charging);
            if !premise(&esi).solar {
                assert_eq!(u.generation, Decimal::ZERO);
            }
        }
    }

    #[test]
    fn some_premises_have_solar_or_a_car() {
        let premises: Vec<Premise> = (0..300)
            .map(|i| premise(&format!("1044372{i:010}")))
            .collect();
        assert!(premises.iter().any(|p| p.solar));
        assert!(premises.iter().any(|p| p.electric_vehicle));
        assert!(premises.iter().any(|p| !p.solar && !p.electric_vehicle));
    }

    #[test]
    fn a_day_has_96_intervals_that_add_up_to_it() {
        let day = d("2026-07-14");
        let all = intervals(ESI, day);
        assert_eq!(all.len(), 96);
        let sum: Decimal = all.iter().map(|i| i.consumption).sum();
        assert_eq!(sum, day_usage(ESI, day).consumption);
        assert_eq!(all[1].start - all[0].start, Duration::minutes(15));
        // Local midnight in July is 05:00 UTC.
        assert_eq!(all[0].start.hour(), 5);
    }

    #[test]
    fn a_day_without_service_has_every_interval_at_zero() {
        let day = d("2026-07-14");
        let all = intervals_of(&DayUsage::none(day));
        assert_eq!(all.len(), 96);
        assert!(all
            .iter()
            .all(|i| i.consumption.is_zero() && i.generation.is_zero()));
        assert_eq!(intervals_of(&day_usage(ESI, day)), intervals(ESI, day));
    }

    #[test]
    fn clock_changes_give_92_and_100_intervals() {
        assert_eq!(intervals(ESI, d("2026-03-08")).len(), 92);
        assert_eq!(intervals(ESI, d("2026-11-01")).len(), 100);
    }

    #[test]
    fn solar_exports_only_in_daylight() {
        let esi = (0..100)
            .map(|i| format!("1044372{i:010}"))
            .find(|e| premise(e).solar)
            .unwrap();
        let all = intervals(&esi, d("2026-06-10"));
        let night = all
            .iter()
            .find(|i| i.start.with_timezone(&MARKET_TZ).hour() == 2)
            .unwrap();
        assert_eq!(night.generation, Decimal::ZERO);
        let sum: Decimal = all.iter().map(|i| i.generation).sum();
        assert_eq!(sum, day_usage(&esi, d("2026-06-10")).generation);
    }

    #[test]
    fn reads_follow_the_cycle_day() {
        let day = cycle_day(ESI);
        assert!((1..=28).contains(&day));
        let first = next_read_date(ESI, d("2026-01-31"));
        assert_eq!(first.day(), day);
        assert_eq!(first.month(), 2);
        let next = next_read_date(ESI, first);
        assert_eq!(next.month(), 3);
        assert_eq!(next_read_date(ESI, d("2026-12-31")).year(), 2027);
        // The day before the cycle day reads the next day.
        let before = first.pred_opt().unwrap();
        assert_eq!(next_read_date(ESI, before), first);
    }

    #[test]
    fn query_months_and_years() {
        let today = d("2026-11-22");
        assert_eq!(year_of(None, today), Ok(2026));
        assert_eq!(year_of(Some(1999), today).unwrap_err().param, "year");
        assert_eq!(month_of(None, today), Ok(11));
        assert_eq!(month_of(Some(13), today).unwrap_err().param, "month");
        assert_eq!(last_of_month(2028, 2), d("2028-02-29"));
        assert_eq!(last_of_month(2026, 12), d("2026-12-31"));
        assert_eq!(first_of_month(2026, 3), d("2026-03-01"));
    }
}
