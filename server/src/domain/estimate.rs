//! What a plan would have cost a home over a year of its own usage: each of the last twelve
//! whole months billed as a cycle of that plan (energy, base charge, delivery, the solar
//! buyback credit, taxes and fees), months the meter did not report in full filled with the
//! average of those it did. Plans are compared by it, not by the EFL's averages alone, which
//! can be far from a given home's bill.
//!
//! A new customer's home has no usage here yet: its estimate bills a typical home of its size
//! instead (`typical_home_cost`), and says so.

use chrono::{Datelike, Duration, NaiveDate};
use rust_decimal::{Decimal, RoundingStrategy};

use super::{
    billing::{compute, ContractRates, InvoiceInput},
    deposits::DEFAULT_MONTHLY_KWH,
    market::DeliveryCharges,
    usage::{first_of_month, last_of_month, SEASON},
};

/// The twelve whole months before the one `today` is in, oldest first, by their first day.
pub fn last_twelve_months(today: NaiveDate) -> Vec<NaiveDate> {
    let mut month = first_of_month(today.year(), today.month());
    let mut months = Vec::with_capacity(12);
    for _ in 0..12 {
        month = (month - Duration::days(1)).with_day(1).unwrap_or(month);
        months.push(month);
    }
    months.reverse();
    months
}

/// One month of a meter's usage, as far as it reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthUsage {
    /// The month's first day.
    pub month: NaiveDate,
    /// Days of the month the meter reported.
    pub days: u32,
    pub consumption_kwh: Decimal,
    pub generation_kwh: Decimal,
}

impl MonthUsage {
    fn is_whole(&self) -> bool {
        i64::from(self.days) >= days_in(self.month)
    }
}

fn days_in(month: NaiveDate) -> i64 {
    (last_of_month(month.year(), month.month()) - month).num_days() + 1
}

/// A year's estimated cost and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnualEstimate {
    pub total_cents: i64,
    /// The first day of the months billed, and the last.
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// Whole months of the home's own usage it bills.
    pub months_of_usage: u32,
    /// Months without a whole month of usage, billed at the average of the others.
    pub months_filled: u32,
    /// Set when the estimate bills a typical home of this size, not the home's own usage.
    pub home_size: Option<HomeSize>,
}

/// What the plan's rates would have billed over `months` (the twelve of
/// `last_twelve_months`): `None` without a single whole month to go on.
pub fn annual_cost(
    months: &[MonthUsage],
    window: &[NaiveDate],
    rates: &ContractRates,
    delivery: &DeliveryCharges,
    gross_receipts_percent: Decimal,
) -> Option<AnnualEstimate> {
    let whole: Vec<&MonthUsage> = months.iter().filter(|m| m.is_whole()).collect();
    let (Some(first), Some(last)) = (window.first(), window.last()) else {
        return None;
    };
    if whole.is_empty() {
        return None;
    }
    let n = Decimal::from(whole.len());
    let average = |f: fn(&MonthUsage) -> Decimal| whole.iter().map(|m| f(m)).sum::<Decimal>() / n;
    let (avg_consumption, avg_generation) = (
        average(|m| m.consumption_kwh),
        average(|m| m.generation_kwh),
    );
    let mut total_cents = 0;
    let mut filled = 0;
    for month in window {
        let own = whole.iter().find(|m| m.month == *month);
        let (consumption_kwh, generation_kwh) = match own {
            Some(m) => (m.consumption_kwh, m.generation_kwh),
            None => {
                filled += 1;
                (avg_consumption.round_dp(3), avg_generation.round_dp(3))
            }
        };
        total_cents += compute(&InvoiceInput {
            period_start: *month,
            period_end: last_of_month(month.year(), month.month()),
            consumption_kwh,
            generation_kwh,
            rates: rates.clone(),
            periods: Vec::new(),
            delivery: *delivery,
            gross_receipts_percent,
            off_days: 0,
        })
        .total_cents;
    }
    Some(AnnualEstimate {
        total_cents,
        from: *first,
        to: last_of_month(last.year(), last.month()),
        months_of_usage: u32::try_from(window.len()).unwrap_or(12) - filled,
        months_filled: filled,
        home_size: None,
    })
}

super::text_enum! {
    /// How big a home is, for the estimate of a customer whose own usage is not known.
    pub enum HomeSize {
        /// An apartment, or a house under 1,200 square feet.
        Small = "small",
        /// 1,200 to 2,500 square feet.
        Medium = "medium",
        /// Over 2,500 square feet.
        Large = "large",
    }
}

impl HomeSize {
    /// A typical year of a home this size, in kWh. Texas homes use more than most because of
    /// summer air conditioning. The mid-size home is the standard home the deposit rule already
    /// assumes, `DEFAULT_MONTHLY_KWH` a month (the EFL's middle column); the small home uses
    /// 600 kWh a month and the large one 1,800, round figures between the EFL's 500 and 1,000
    /// columns and just under its 2,000 one. The same in every utility's area: what a typical
    /// home of the size uses, not a forecast of any one home.
    pub fn annual_kwh(self) -> Decimal {
        let monthly = match self {
            HomeSize::Small => 600,
            HomeSize::Medium => DEFAULT_MONTHLY_KWH,
            HomeSize::Large => 1800,
        };
        Decimal::from(12 * monthly)
    }

    /// The size in the words an estimate is shown with.
    pub fn describe(self) -> &'static str {
        match self {
            HomeSize::Small => "small home or apartment (under 1,200 sq ft)",
            HomeSize::Medium => "mid-size home (1,200 to 2,500 sq ft)",
            HomeSize::Large => "large home (over 2,500 sq ft)",
        }
    }

    /// The size assumed when the customer has not said: an apartment (the directory's type of
    /// the premise) is a small home, any other premise a mid-size one.
    pub fn of_premise(premise_type: &str) -> HomeSize {
        if premise_type == "apartment" {
            HomeSize::Small
        } else {
            HomeSize::Medium
        }
    }
}

/// A typical home's use in each month of `window`: its year spread over the months as Texas
/// load runs through a year (`usage::SEASON`), to the kWh (so the twelve may differ from
/// `annual_kwh` by a few kWh). No export.
pub fn typical_year(size: HomeSize, window: &[NaiveDate]) -> Vec<MonthUsage> {
    let year: i64 = SEASON.iter().sum();
    window
        .iter()
        .map(|month| {
            let share = SEASON[usize::try_from(month.month0()).unwrap_or(0)];
            MonthUsage {
                month: *month,
                days: u32::try_from(days_in(*month)).unwrap_or(31),
                consumption_kwh: (size.annual_kwh() * Decimal::from(share) / Decimal::from(year))
                    .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero),
                generation_kwh: Decimal::ZERO,
            }
        })
        .collect()
}

/// What the plan would cost a typical home of `size` over `window`, billed as `annual_cost`
/// bills a home's own year; the estimate names the size and counts no month of the home's own.
pub fn typical_home_cost(
    size: HomeSize,
    window: &[NaiveDate],
    rates: &ContractRates,
    delivery: &DeliveryCharges,
    gross_receipts_percent: Decimal,
) -> Option<AnnualEstimate> {
    let months = typical_year(size, window);
    annual_cost(&months, window, rates, delivery, gross_receipts_percent).map(|e| AnnualEstimate {
        months_of_usage: 0,
        home_size: Some(size),
        ..e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn rates(energy: &str, base: i64) -> ContractRates {
        ContractRates {
            energy_cents_per_kwh: energy.parse().unwrap(),
            base_charge_cents_per_month: base,
            solar_buyback_cents_per_kwh: Decimal::ZERO,
        }
    }

    fn delivery() -> DeliveryCharges {
        DeliveryCharges {
            fixed_cents_per_month: 390,
            cents_per_kwh: "5.5".parse().unwrap(),
        }
    }

    fn month(first: NaiveDate, kwh: i64) -> MonthUsage {
        MonthUsage {
            month: first,
            days: u32::try_from(days_in(first)).unwrap(),
            consumption_kwh: Decimal::from(kwh),
            generation_kwh: Decimal::ZERO,
        }
    }

    #[test]
    fn the_window_is_the_twelve_whole_months_before_this_one() {
        let w = last_twelve_months(day("2026-03-15"));
        assert_eq!(w.len(), 12);
        assert_eq!(w[0], day("2025-03-01"));
        assert_eq!(w[11], day("2026-02-01"));
        assert_eq!(last_twelve_months(day("2026-01-01"))[11], day("2025-12-01"));
    }

    #[test]
    fn a_year_is_twelve_bills_of_the_plan_to_the_cent() {
        let window = last_twelve_months(day("2026-11-26"));
        let usage: Vec<MonthUsage> = window.iter().map(|m| month(*m, 1000)).collect();
        let cheap_base = rates("12", 0);
        let e = annual_cost(&usage, &window, &cheap_base, &delivery(), Decimal::ZERO).unwrap();
        // Each month: 1,000 kWh at 12 + 5.5 cents, $3.90 fixed delivery = $178.90; the
        // regulatory assessment of 0.1667 % adds 29.82 cents, rounded to 30.
        assert_eq!(e.total_cents, 12 * (17_890 + 30));
        assert_eq!((e.months_of_usage, e.months_filled), (12, 0));
        assert_eq!((e.from, e.to), (day("2025-11-01"), day("2026-10-31")));
    }

    #[test]
    fn the_cheapest_at_1000_kwh_is_not_always_the_cheapest_for_a_home() {
        let window = last_twelve_months(day("2026-11-26"));
        // A small home: 400 kWh a month.
        let usage: Vec<MonthUsage> = window.iter().map(|m| month(*m, 400)).collect();
        let low_rate_high_base = rates("9", 1500);
        let high_rate_no_base = rates("12", 0);
        let d = delivery();
        let a = annual_cost(&usage, &window, &low_rate_high_base, &d, Decimal::ZERO).unwrap();
        let b = annual_cost(&usage, &window, &high_rate_no_base, &d, Decimal::ZERO).unwrap();
        assert!(b.total_cents < a.total_cents, "{b:?} {a:?}");
    }

    #[test]
    fn months_not_reported_in_full_are_filled_with_the_average() {
        let window = last_twelve_months(day("2026-11-26"));
        let mut usage: Vec<MonthUsage> = window[6..].iter().map(|m| month(*m, 900)).collect();
        // A half-reported month counts as missing.
        usage.push(MonthUsage {
            days: 10,
            ..month(window[5], 300)
        });
        let r = rates("12", 0);
        let e = annual_cost(&usage, &window, &r, &delivery(), Decimal::ZERO).unwrap();
        assert_eq!((e.months_of_usage, e.months_filled), (6, 6));
        let full: Vec<MonthUsage> = window.iter().map(|m| month(*m, 900)).collect();
        assert_eq!(
            e.total_cents,
            annual_cost(&full, &window, &r, &delivery(), Decimal::ZERO)
                .unwrap()
                .total_cents
        );
        assert_eq!(
            annual_cost(&[], &window, &r, &delivery(), Decimal::ZERO),
            None
        );
    }

    #[test]
    fn a_typical_year_follows_the_season_and_adds_up_to_its_size() {
        let window = last_twelve_months(day("2026-11-26"));
        let year = typical_year(HomeSize::Medium, &window);
        let kwh = |m: &str| {
            year.iter()
                .find(|u| u.month == day(m))
                .unwrap()
                .consumption_kwh
        };
        // 12,000 kWh x 165 / 1,340 in August, x 80 / 1,340 in April.
        assert_eq!(kwh("2026-08-01"), Decimal::from(1478));
        assert_eq!(kwh("2026-04-01"), Decimal::from(716));
        assert!(year.iter().all(|m| m.is_whole()));
        for size in HomeSize::ALL {
            let total: Decimal = typical_year(*size, &window)
                .iter()
                .map(|m| m.consumption_kwh)
                .sum();
            assert!(
                (total - size.annual_kwh()).abs() <= Decimal::from(6),
                "{size}"
            );
        }
        assert_eq!(
            year.iter().map(|m| m.consumption_kwh).sum::<Decimal>(),
            Decimal::from(12 * DEFAULT_MONTHLY_KWH)
        );
    }

    #[test]
    fn a_typical_home_is_billed_month_by_month_and_says_so() {
        let window = last_twelve_months(day("2026-11-26"));
        let r = rates("12", 995);
        let e =
            typical_home_cost(HomeSize::Large, &window, &r, &delivery(), Decimal::ZERO).unwrap();
        let own = annual_cost(
            &typical_year(HomeSize::Large, &window),
            &window,
            &r,
            &delivery(),
            Decimal::ZERO,
        )
        .unwrap();
        assert_eq!(e.total_cents, own.total_cents);
        assert_eq!(
            (e.months_of_usage, e.months_filled, e.home_size),
            (0, 0, Some(HomeSize::Large))
        );
        assert_eq!(own.home_size, None);
    }

    #[test]
    fn the_cheaper_plan_depends_on_the_size_of_the_home() {
        let window = last_twelve_months(day("2026-11-26"));
        let d = delivery();
        // Three cents a kWh less for $25 a month more: even at 833 kWh a month.
        let low_rate_high_base = rates("9", 2500);
        let high_rate_no_base = rates("12", 0);
        let cost = |size, r: &ContractRates| {
            typical_home_cost(size, &window, r, &d, Decimal::ZERO)
                .unwrap()
                .total_cents
        };
        assert!(
            cost(HomeSize::Small, &high_rate_no_base) < cost(HomeSize::Small, &low_rate_high_base)
        );
        assert!(
            cost(HomeSize::Large, &low_rate_high_base) < cost(HomeSize::Large, &high_rate_no_base)
        );
    }

    #[test]
    fn an_apartment_is_a_small_home_unless_said_otherwise() {
        assert_eq!(HomeSize::of_premise("apartment"), HomeSize::Small);
        assert_eq!(HomeSize::of_premise("residential"), HomeSize::Medium);
        assert_eq!(HomeSize::of_premise("duplex"), HomeSize::Medium);
    }
}
