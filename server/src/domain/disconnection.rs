//! Disconnection for non-payment and deferred payment plans.
//!
//! A bill still unpaid the day after its due date gets a written disconnection notice. The
//! earliest disconnection date is at least `NOTICE_DAYS` days after the notice, and only on a
//! day the rules allow: never on a weekend or a holiday of the market's calendar, nor the day
//! before one (nobody would be there to take the payment and reconnect), nor on an
//! extreme-weather emergency day the operator recorded. A day that is not allowed moves the
//! disconnection to the next day that is. Service is disconnected only when the noticed bill is
//! still unpaid and not taken over by a payment plan; it is reconnected once nothing past due
//! remains.
//!
//! A deferred payment plan spreads the unpaid balance over equal monthly instalments, each its
//! own line of the following bills. It is offered to every customer with an unpaid balance who
//! asks, unless they were sent more than `NOTICES_BEFORE_NO_PLAN` disconnection notices in the
//! last 12 months; during a weather emergency it is offered to everyone. A bill carrying an
//! instalment that turns past due ends the plan: what was not billed yet is due on the next
//! bill, and that bill's own disconnection notice follows.

use std::collections::BTreeSet;

use chrono::{Duration, NaiveDate};

use super::{market::BusinessCalendar, FieldError};

/// Days between the notice and the earliest disconnection.
pub const NOTICE_DAYS: i64 = 10;

/// More disconnection notices than this in the last 12 months and a plan is no longer owed on
/// request (a weather emergency still owes one).
pub const NOTICES_BEFORE_NO_PLAN: usize = 2;

/// Instalments a plan is offered with unless the customer asks for fewer or more.
pub const DEFAULT_PLAN_MONTHS: u32 = 5;

/// The fewest and most instalments a plan may have.
pub const MIN_PLAN_MONTHS: u32 = 2;
pub const MAX_PLAN_MONTHS: u32 = 12;

/// The name of the group of a bill's payment-plan lines.
pub const PAYMENT_PLAN_GROUP: &str = "Payment plan";

super::text_enum! {
    /// Where a disconnection notice stands: noticed (waiting for its date), cancelled (paid or
    /// taken over by a payment plan in time), requested of the utility, disconnected, and the
    /// reconnection requested and done.
    pub enum DisconnectionStatus {
        Noticed = "noticed",
        Cancelled = "cancelled",
        Requested = "requested",
        Disconnected = "disconnected",
        ReconnectRequested = "reconnect_requested",
        Reconnected = "reconnected",
    }
}

super::text_enum! {
    pub enum PaymentPlanStatus {
        Active = "active",
        Completed = "completed",
        Defaulted = "defaulted",
    }
}

super::text_enum! {
    /// Why a plan was owed: the customer asked, or a weather emergency.
    pub enum PlanReason {
        CustomerRequest = "customer_request",
        WeatherEmergency = "weather_emergency",
    }
}

/// The days on which nobody is disconnected: the market's calendar and the operator's
/// extreme-weather emergency days.
#[derive(Debug, Clone, Default)]
pub struct DisconnectionCalendar {
    pub business: BusinessCalendar,
    pub emergencies: BTreeSet<NaiveDate>,
}

/// Why a day allows no disconnection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forbidden {
    WeekendOrHoliday,
    DayBeforeWeekendOrHoliday,
    WeatherEmergency,
}

impl DisconnectionCalendar {
    pub fn new(
        holidays: impl IntoIterator<Item = NaiveDate>,
        emergencies: impl IntoIterator<Item = NaiveDate>,
    ) -> Self {
        DisconnectionCalendar {
            business: BusinessCalendar::new(holidays),
            emergencies: emergencies.into_iter().collect(),
        }
    }

    /// Why `day` allows no disconnection; `None` when it does.
    pub fn forbidden(&self, day: NaiveDate) -> Option<Forbidden> {
        if self.emergencies.contains(&day) {
            Some(Forbidden::WeatherEmergency)
        } else if !self.business.is_business_day(day) {
            Some(Forbidden::WeekendOrHoliday)
        } else if !self.business.is_business_day(day + Duration::days(1)) {
            Some(Forbidden::DayBeforeWeekendOrHoliday)
        } else {
            None
        }
    }

    /// The first day from `from` (included) on which a disconnection is allowed.
    pub fn first_allowed(&self, from: NaiveDate) -> NaiveDate {
        let mut d = from;
        // Every week has allowed days unless emergencies cover them; a year of emergencies
        // is not a calendar anybody keeps, so the search ends.
        for _ in 0..730 {
            if self.forbidden(d).is_none() {
                return d;
            }
            d += Duration::days(1);
        }
        d
    }

    /// The earliest disconnection date of a notice issued on `notice_date`.
    pub fn earliest_disconnection(&self, notice_date: NaiveDate) -> NaiveDate {
        self.first_allowed(notice_date + Duration::days(NOTICE_DAYS))
    }

    pub fn is_emergency(&self, day: NaiveDate) -> bool {
        self.emergencies.contains(&day)
    }
}

/// Whether a plan is owed to a customer asking for one: they have something unpaid, no plan
/// running, and either a weather emergency is on or they were sent at most
/// `NOTICES_BEFORE_NO_PLAN` notices in the last 12 months.
pub fn plan_owed(
    unpaid_cents: i64,
    has_active_plan: bool,
    notices_last_year: usize,
    emergency_today: bool,
) -> Option<PlanReason> {
    if unpaid_cents <= 0 || has_active_plan {
        return None;
    }
    if emergency_today {
        Some(PlanReason::WeatherEmergency)
    } else if notices_last_year <= NOTICES_BEFORE_NO_PLAN {
        Some(PlanReason::CustomerRequest)
    } else {
        None
    }
}

/// The plan's number of instalments as asked: none is the default; otherwise a whole number
/// from `MIN_PLAN_MONTHS` to `MAX_PLAN_MONTHS`.
pub fn parse_months(param: &str, raw: Option<i64>) -> Result<u32, FieldError> {
    match raw {
        None => Ok(DEFAULT_PLAN_MONTHS),
        Some(n) => u32::try_from(n)
            .ok()
            .filter(|n| (MIN_PLAN_MONTHS..=MAX_PLAN_MONTHS).contains(n))
            .ok_or_else(|| {
                FieldError::invalid(
                    param,
                    format!(
                        "{param} must be a whole number from {MIN_PLAN_MONTHS} to \
                         {MAX_PLAN_MONTHS}"
                    ),
                )
            }),
    }
}

/// `total_cents` in `months` instalments as equal as cents allow: the first ones carry the
/// odd cents, so they add up to the total exactly.
pub fn instalments(total_cents: i64, months: u32) -> Vec<i64> {
    let n = i64::from(months.max(1));
    let base = total_cents / n;
    let extra = total_cents % n;
    (0..n).map(|i| base + i64::from(i < extra)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Datelike, Weekday};

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn never_on_a_weekend_a_holiday_or_the_day_before_one() {
        // 2027-07-05 is a Monday, the observed Independence Day.
        let cal = DisconnectionCalendar::new([day(2027, 7, 5)], []);
        assert_eq!(
            cal.forbidden(day(2027, 7, 3)),
            Some(Forbidden::WeekendOrHoliday)
        );
        assert_eq!(
            cal.forbidden(day(2027, 7, 5)),
            Some(Forbidden::WeekendOrHoliday)
        );
        // A Friday is the day before a weekend.
        assert_eq!(
            cal.forbidden(day(2027, 7, 9)),
            Some(Forbidden::DayBeforeWeekendOrHoliday)
        );
        assert_eq!(cal.forbidden(day(2027, 7, 6)), None);
        assert_eq!(cal.forbidden(day(2027, 7, 8)), None);
        // No Friday and no Saturday to Monday: the Tuesday.
        assert_eq!(cal.first_allowed(day(2027, 7, 2)), day(2027, 7, 6));
    }

    #[test]
    fn an_emergency_day_moves_the_date_on() {
        let cal = DisconnectionCalendar::new([], [day(2027, 8, 10), day(2027, 8, 11)]);
        assert_eq!(
            cal.forbidden(day(2027, 8, 10)),
            Some(Forbidden::WeatherEmergency)
        );
        assert_eq!(cal.first_allowed(day(2027, 8, 10)), day(2027, 8, 12));
    }

    #[test]
    fn the_earliest_date_is_at_least_ten_days_after_the_notice() {
        let cal = DisconnectionCalendar::new([], []);
        for offset in 0..14 {
            let notice = day(2027, 3, 1) + Duration::days(offset);
            let earliest = cal.earliest_disconnection(notice);
            assert!((earliest - notice).num_days() >= NOTICE_DAYS, "{notice}");
            assert!(cal.forbidden(earliest).is_none(), "{notice}");
            assert!(!matches!(
                earliest.weekday(),
                Weekday::Fri | Weekday::Sat | Weekday::Sun
            ));
        }
    }

    #[test]
    fn a_plan_is_owed_on_request_unless_too_many_notices_but_always_in_an_emergency() {
        assert_eq!(
            plan_owed(100, false, 0, false),
            Some(PlanReason::CustomerRequest)
        );
        assert_eq!(
            plan_owed(100, false, 2, false),
            Some(PlanReason::CustomerRequest)
        );
        assert_eq!(plan_owed(100, false, 3, false), None);
        assert_eq!(
            plan_owed(100, false, 3, true),
            Some(PlanReason::WeatherEmergency)
        );
        assert_eq!(plan_owed(0, false, 0, true), None);
        assert_eq!(plan_owed(100, true, 0, true), None);
    }

    #[test]
    fn instalments_add_up_and_differ_by_a_cent_at_most() {
        for (total, months) in [(10_000, 5), (10_003, 5), (7, 3), (12_345, 12), (2, 2)] {
            let parts = instalments(total, months);
            assert_eq!(parts.len(), months as usize);
            assert_eq!(parts.iter().sum::<i64>(), total);
            let (lo, hi) = (parts.iter().min().unwrap(), parts.iter().max().unwrap());
            assert!(hi - lo <= 1, "{parts:?}");
        }
        assert_eq!(parse_months("months", None), Ok(DEFAULT_PLAN_MONTHS));
        assert_eq!(parse_months("months", Some(12)), Ok(12));
        for bad in [0, 1, 13, -5] {
            assert!(parse_months("months", Some(bad)).is_err(), "{bad}");
        }
    }
}
