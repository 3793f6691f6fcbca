//! What a plan would have cost a home over a year of its own usage: each of the last twelve
//! whole months billed as a cycle of that plan (energy, base charge, delivery, the solar
//! buyback credit, taxes and fees), months the meter did not report in full filled with the
//! average of those it did. Plans are compared by it, not by the EFL's averages alone, which
//! can be far from a given home's bill.

use chrono::{Datelike, Duration, NaiveDate};
use rust_decimal::Decimal;

use super::{
    billing::{compute, ContractRates, InvoiceInput},
    market::DeliveryCharges,
    usage::{first_of_month, last_of_month},
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
}
