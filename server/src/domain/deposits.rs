//! Security deposits of residential customers whose credit is not enough on its own: the most a
//! deposit may be, what waives it, the interest it earns and when it comes back.
//!
//! The rule: a deposit is at most the greater of one-fifth of the customer's estimated annual
//! bills and the sum of the next two months' estimated bills. No deposit may be asked of a
//! customer 65 or older with no past-due balance, of one who gives a family-violence
//! certificate, or of one who brings a letter of good credit from a previous provider covering
//! the last 12 months. A deposit earns simple interest at the yearly rate the operator sets,
//! and comes back once the customer has paid 12 bills in a row on time, or is applied to the
//! final bill.

use chrono::NaiveDate;
use rust_decimal::{prelude::ToPrimitive, Decimal, RoundingStrategy};

/// Monthly usage assumed when the meter's is not known, in kWh.
pub const DEFAULT_MONTHLY_KWH: u32 = 1000;

/// Price assumed when no plan was accepted yet, in cents per kWh, all charges in.
pub const DEFAULT_CENTS_PER_KWH: Decimal = Decimal::from_parts(15, 0, 0, false, 0);

/// On-time payments in a row that earn the deposit back.
pub const ON_TIME_PAYMENTS_FOR_REFUND: usize = 12;

/// Months a letter of good credit must cover.
pub const GOOD_CREDIT_LETTER_MONTHS: u32 = 12;

/// Age from which a customer without a past-due balance owes no deposit.
pub const SENIOR_AGE: u32 = 65;

/// The twelve next months' estimated bills, in cents, the first month first: each month's kWh
/// at an all-in price in cents per kWh plus the fixed charges of a month.
pub fn estimated_bills(
    monthly_kwh: &[Decimal; 12],
    cents_per_kwh: Decimal,
    fixed_cents_per_month: i64,
) -> [i64; 12] {
    monthly_kwh.map(|kwh| {
        (kwh * cents_per_kwh + Decimal::from(fixed_cents_per_month))
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
            .to_i64()
            .unwrap_or(0)
            .max(0)
    })
}

/// The meter's estimated kWh of each of the twelve months from `from` (30-day months, from its
/// usage profile); `DEFAULT_MONTHLY_KWH` each when the meter is not known.
pub fn monthly_kwh(esi_id: Option<&str>, from: NaiveDate) -> [Decimal; 12] {
    let Some(esi_id) = esi_id else {
        return [Decimal::from(DEFAULT_MONTHLY_KWH); 12];
    };
    let mut months = [Decimal::ZERO; 12];
    for (i, month) in months.iter_mut().enumerate() {
        let first = from + chrono::Duration::days(30 * i as i64);
        *month = (0..30)
            .map(|d| super::usage::day_usage(esi_id, first + chrono::Duration::days(d)).consumption)
            .sum();
    }
    months
}

/// The part of a contract's stored rates an estimate reads.
#[derive(serde::Deserialize)]
struct StoredRates {
    energy_cents_per_kwh: String,
    base_charge_cents_per_month: i64,
    #[serde(default)]
    tdu_cents_per_kwh: Option<String>,
    #[serde(default)]
    tdu_fixed_cents_per_month: Option<i64>,
}

/// A contract's all-in price per kWh and fixed cents per month, from its stored rates; `None`
/// when they cannot be read (the estimate then uses `DEFAULT_CENTS_PER_KWH`).
pub fn contract_price(raw: &str) -> Option<(Decimal, i64)> {
    let stored: StoredRates = serde_json::from_str(raw).ok()?;
    let energy: Decimal = stored.energy_cents_per_kwh.trim().parse().ok()?;
    let tdu: Decimal = match stored.tdu_cents_per_kwh {
        Some(t) => t.trim().parse().ok()?,
        None => Decimal::ZERO,
    };
    Some((
        energy + tdu,
        stored.base_charge_cents_per_month + stored.tdu_fixed_cents_per_month.unwrap_or(0),
    ))
}

/// The most a deposit may be, in cents: the greater of one-fifth of the year's estimated
/// bills and the next two months' (rounded down: the rule is a ceiling).
pub fn max_deposit_cents(bills: &[i64; 12]) -> i64 {
    let annual: i64 = bills.iter().sum();
    let one_fifth = annual / 5;
    let two_months = bills[0] + bills[1];
    one_fifth.max(two_months).max(0)
}

/// What the customer showed that may waive a deposit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaiverFacts {
    pub date_of_birth: Option<NaiveDate>,
    pub has_past_due_balance: bool,
    pub has_family_violence_certificate: bool,
    /// How many months of on-time payments the letter of a previous provider covers.
    pub good_credit_letter_months: Option<u32>,
}

super::text_enum! {
    /// Why no deposit may be asked.
    pub enum Waiver {
        /// 65 or older, with no past-due balance.
        Senior = "senior",
        /// A certificate from a family-violence centre or shelter.
        FamilyViolence = "family_violence",
        /// A letter of good credit from a previous provider covering the last 12 months.
        GoodCreditLetter = "good_credit_letter",
    }
}

impl Waiver {
    /// What the customer is told, and the operator's pages show.
    pub fn describe(self) -> &'static str {
        match self {
            Waiver::Senior => "65 or older with no past-due balance",
            Waiver::FamilyViolence => "a family-violence certificate",
            Waiver::GoodCreditLetter => {
                "a letter of good credit from a previous provider covering 12 months"
            }
        }
    }
}

/// Why the facts the operator recorded waive nothing (the operator is told, nothing changes).
pub fn why_not_waived(claimed: Waiver, facts: &WaiverFacts) -> &'static str {
    match claimed {
        Waiver::Senior if facts.has_past_due_balance => {
            "the customer has a past-due balance, so their age does not waive the deposit"
        }
        Waiver::Senior if facts.date_of_birth.is_none() => {
            "the account has no date of birth: record it first"
        }
        Waiver::Senior => "the customer is not 65 or older",
        Waiver::FamilyViolence => "the family-violence certificate was not confirmed",
        Waiver::GoodCreditLetter => "the letter must cover at least the last 12 months",
    }
}

/// Bills after the first payment over which the rest of a deposit is spread, when the
/// customer asks to pay it in instalments.
pub const INSTALMENT_BILLS: usize = 2;

/// A deposit paid in instalments: half now (the odd cent with it), and the rest in
/// `INSTALMENT_BILLS` lines on the next bills (the first takes the odd cent).
pub fn instalments(amount_cents: i64) -> (i64, [i64; INSTALMENT_BILLS]) {
    let now = amount_cents - amount_cents / 2;
    let rest = amount_cents - now;
    let second = rest / 2;
    (now, [rest - second, second])
}

/// Whether a bill counts as paid on time: `Some(true)` paid by its due date, `Some(false)`
/// paid after it or still unpaid once it passed, `None` still unpaid and not yet due (it does
/// not count either way yet).
pub fn paid_on_time(due: NaiveDate, paid_on: Option<NaiveDate>, today: NaiveDate) -> Option<bool> {
    match paid_on {
        Some(paid) => Some(paid <= due),
        None if today > due => Some(false),
        None => None,
    }
}

/// The interest a deposit holds on `today`: what was accrued until `accrued_through`, plus
/// simple interest on `held_cents` since then.
pub fn interest_to_date(
    accrued_cents: i64,
    held_cents: i64,
    yearly_rate_percent: Decimal,
    accrued_through: NaiveDate,
    today: NaiveDate,
) -> i64 {
    accrued_cents + interest_cents(held_cents, yearly_rate_percent, accrued_through, today)
}

/// Of a refund still owed (`left_cents`), what a bill of `bill_cents` (before the refund)
/// takes as its credit line: never more than the bill, so that no bill goes below zero; the
/// rest waits for the next bill.
pub fn refund_line_cents(left_cents: i64, bill_cents: i64) -> i64 {
    left_cents.min(bill_cents.max(0)).max(0)
}

/// The waiver that applies on `today`, if any.
pub fn waiver(facts: &WaiverFacts, today: NaiveDate) -> Option<Waiver> {
    if facts.has_family_violence_certificate {
        return Some(Waiver::FamilyViolence);
    }
    if facts
        .good_credit_letter_months
        .is_some_and(|m| m >= GOOD_CREDIT_LETTER_MONTHS)
    {
        return Some(Waiver::GoodCreditLetter);
    }
    let senior = facts
        .date_of_birth
        .and_then(|born| today.years_since(born))
        .is_some_and(|age| age >= SENIOR_AGE);
    (senior && !facts.has_past_due_balance).then_some(Waiver::Senior)
}

/// Simple interest on `amount_cents` held from `paid` to `until` at `yearly_rate_percent`
/// (`2.5` for 2.5 % a year), over a 365-day year, rounded to the cent.
pub fn interest_cents(
    amount_cents: i64,
    yearly_rate_percent: Decimal,
    paid: NaiveDate,
    until: NaiveDate,
) -> i64 {
    let days = (until - paid).num_days().max(0);
    (Decimal::from(amount_cents) * yearly_rate_percent / Decimal::from(100) * Decimal::from(days)
        / Decimal::from(365))
    .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
    .to_i64()
    .unwrap_or(0)
}

/// Whether the customer's bills, oldest first (`true`: paid by its due date), end in
/// `ON_TIME_PAYMENTS_FOR_REFUND` on-time payments in a row.
pub fn refund_earned(on_time: &[bool]) -> bool {
    on_time.len() >= ON_TIME_PAYMENTS_FOR_REFUND
        && on_time
            .iter()
            .rev()
            .take(ON_TIME_PAYMENTS_FOR_REFUND)
            .all(|paid| *paid)
}

/// A deposit applied to a final bill of `final_bill_cents`: what is left to pay and what is
/// refunded (never both positive).
pub fn apply_to_final_bill(held_cents: i64, final_bill_cents: i64) -> (i64, i64) {
    let left = final_bill_cents - held_cents;
    if left >= 0 {
        (left, 0)
    } else {
        (0, -left)
    }
}

/// What a final bill could not take of a deposit and is not back with the customer yet
/// (`refund_left_cents` of a deposit applied to the final bill; a refund earned by on-time
/// payments is still to be credited on the next bills, not owed).
pub fn owed_cents(refund_reason: Option<&str>, refund_left_cents: i64) -> i64 {
    if refund_reason == Some("final_bill") {
        refund_left_cents
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn the_ceiling_is_the_greater_of_a_fifth_of_the_year_and_two_months() {
        // Even bills: a fifth of the year (24 000) beats two months (20 000).
        let even = [10_000; 12];
        assert_eq!(max_deposit_cents(&even), 24_000);
        // A summer ahead: the next two months are the bigger figure.
        let mut summer = [5_000; 12];
        summer[0] = 30_000;
        summer[1] = 32_000;
        assert_eq!(max_deposit_cents(&summer), 62_000);
        // A fifth of the year, rounded down to the cent.
        let odd = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 100];
        assert_eq!(max_deposit_cents(&odd), 22);
        assert_eq!(max_deposit_cents(&[0; 12]), 0);
    }

    #[test]
    fn bills_are_usage_at_the_price_plus_the_fixed_charges() {
        let kwh = [Decimal::from(1000); 12];
        let bills = estimated_bills(&kwh, Decimal::new(145, 1), 995);
        assert_eq!(bills[0], 15_495);
        let bills = estimated_bills(&kwh, DEFAULT_CENTS_PER_KWH, 0);
        assert_eq!(max_deposit_cents(&bills), 36_000);
    }

    #[test]
    fn an_estimate_reads_the_meter_and_the_contract() {
        let from = d(2026, 11, 26);
        assert_eq!(
            monthly_kwh(None, from),
            [Decimal::from(DEFAULT_MONTHLY_KWH); 12]
        );
        let meter = monthly_kwh(Some("10443720000500001"), from);
        assert!(meter.iter().all(|kwh| *kwh > Decimal::ZERO), "{meter:?}");
        assert_eq!(meter, monthly_kwh(Some("10443720000500001"), from));
        let raw = r#"{"energy_cents_per_kwh": "9.5", "base_charge_cents_per_month": 995,
            "tdu_cents_per_kwh": "5.1", "tdu_fixed_cents_per_month": 390, "other": 1}"#;
        assert_eq!(contract_price(raw), Some((Decimal::new(146, 1), 1385)));
        let bare = r#"{"energy_cents_per_kwh": "9.5", "base_charge_cents_per_month": 0}"#;
        assert_eq!(contract_price(bare), Some((Decimal::new(95, 1), 0)));
        assert_eq!(contract_price("{}"), None);
    }

    #[test]
    fn waivers() {
        let today = d(2026, 11, 26);
        let none = WaiverFacts::default();
        assert_eq!(waiver(&none, today), None);
        let senior = WaiverFacts {
            date_of_birth: Some(d(1961, 11, 26)),
            ..none
        };
        assert_eq!(waiver(&senior, today), Some(Waiver::Senior));
        let almost = WaiverFacts {
            date_of_birth: Some(d(1961, 11, 27)),
            ..none
        };
        assert_eq!(waiver(&almost, today), None);
        let owing = WaiverFacts {
            has_past_due_balance: true,
            ..senior
        };
        assert_eq!(waiver(&owing, today), None);
        let violence = WaiverFacts {
            has_family_violence_certificate: true,
            ..owing
        };
        assert_eq!(waiver(&violence, today), Some(Waiver::FamilyViolence));
        let short_letter = WaiverFacts {
            good_credit_letter_months: Some(11),
            ..none
        };
        assert_eq!(waiver(&short_letter, today), None);
        let letter = WaiverFacts {
            good_credit_letter_months: Some(12),
            ..none
        };
        assert_eq!(waiver(&letter, today), Some(Waiver::GoodCreditLetter));
    }

    #[test]
    fn interest_is_simple_and_yearly() {
        assert_eq!(
            interest_cents(20_000, Decimal::new(25, 1), d(2026, 1, 1), d(2027, 1, 1)),
            500
        );
        assert_eq!(
            interest_cents(20_000, Decimal::new(25, 1), d(2026, 1, 1), d(2026, 7, 2)),
            249
        );
        assert_eq!(
            interest_cents(20_000, Decimal::ZERO, d(2026, 1, 1), d(2027, 1, 1)),
            0
        );
        assert_eq!(
            interest_cents(20_000, Decimal::ONE, d(2027, 1, 1), d(2026, 1, 1)),
            0
        );
    }

    #[test]
    fn twelve_on_time_payments_in_a_row_earn_the_refund() {
        assert!(!refund_earned(&[true; 11]));
        assert!(refund_earned(&[true; 12]));
        let mut late_then_good = vec![false];
        late_then_good.extend([true; 12]);
        assert!(refund_earned(&late_then_good));
        let mut late_last = vec![true; 12];
        late_last.push(false);
        assert!(!refund_earned(&late_last));
    }

    #[test]
    fn instalments_are_half_now_and_the_rest_over_two_bills() {
        assert_eq!(instalments(20_000), (10_000, [5_000, 5_000]));
        assert_eq!(instalments(20_001), (10_001, [5_000, 5_000]));
        assert_eq!(instalments(20_003), (10_002, [5_001, 5_000]));
        let (now, rest) = instalments(1);
        assert_eq!(now + rest.iter().sum::<i64>(), 1);
    }

    #[test]
    fn a_bill_is_on_time_when_paid_by_its_due_date() {
        let due = d(2027, 3, 10);
        assert_eq!(paid_on_time(due, Some(due), d(2027, 4, 1)), Some(true));
        assert_eq!(
            paid_on_time(due, Some(d(2027, 3, 11)), d(2027, 4, 1)),
            Some(false)
        );
        assert_eq!(paid_on_time(due, None, d(2027, 3, 11)), Some(false));
        assert_eq!(paid_on_time(due, None, due), None);
    }

    #[test]
    fn interest_to_date_adds_to_what_was_accrued() {
        assert_eq!(
            interest_to_date(
                100,
                20_000,
                Decimal::new(25, 1),
                d(2026, 1, 1),
                d(2027, 1, 1)
            ),
            600
        );
        assert_eq!(
            interest_to_date(100, 20_000, Decimal::ZERO, d(2026, 1, 1), d(2027, 1, 1)),
            100
        );
    }

    #[test]
    fn a_refund_line_never_takes_a_bill_below_zero() {
        assert_eq!(refund_line_cents(30_000, 12_000), 12_000);
        assert_eq!(refund_line_cents(5_000, 12_000), 5_000);
        assert_eq!(refund_line_cents(5_000, -300), 0);
        assert_eq!(refund_line_cents(0, 12_000), 0);
    }

    #[test]
    fn a_claimed_waiver_that_does_not_apply_says_why() {
        let young = WaiverFacts {
            date_of_birth: Some(d(1990, 1, 1)),
            ..WaiverFacts::default()
        };
        assert!(why_not_waived(Waiver::Senior, &young).contains("65"));
        let owing = WaiverFacts {
            date_of_birth: Some(d(1950, 1, 1)),
            has_past_due_balance: true,
            ..WaiverFacts::default()
        };
        assert!(why_not_waived(Waiver::Senior, &owing).contains("past-due"));
        assert_eq!(
            Waiver::parse("family_violence"),
            Some(Waiver::FamilyViolence)
        );
    }

    #[test]
    fn a_deposit_pays_the_final_bill_and_the_rest_comes_back() {
        assert_eq!(apply_to_final_bill(20_000, 5_000), (0, 15_000));
        assert_eq!(apply_to_final_bill(20_000, 25_000), (5_000, 0));
        assert_eq!(apply_to_final_bill(20_000, 20_000), (0, 0));
    }

    #[test]
    fn only_what_a_final_bill_left_is_owed() {
        assert_eq!(super::owed_cents(Some("final_bill"), 1234), 1234);
        assert_eq!(super::owed_cents(Some("on_time_payments"), 1234), 0);
        assert_eq!(super::owed_cents(None, 0), 0);
    }
}
