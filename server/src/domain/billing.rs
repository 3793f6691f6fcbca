//! Billing rules: an invoice's charges computed from a cycle's usage, the contract's rates, the
//! delivery charges in effect and the service city's taxes; invoice numbers, due dates (on the
//! market's business calendar), the late fee, statuses and the auto-pay retry schedule.
//!
//! Every line is rounded to the cent on its own (half away from zero) and the totals are sums
//! of the rounded lines, so that what the customer reads adds up.
//!
//! Each day's kWh are billed at the rates of the contract covering that day (`contract_on`): a
//! cycle that spans a renewal has an energy line per contract. The monthly charges are those of
//! the contract in force on the cycle's last day.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use rust_decimal::{Decimal, RoundingStrategy};

use super::market::{at_market_time, BusinessCalendar, DeliveryCharges};

/// The fewest days between a bill's issue and its due date; the due date is then moved to the
/// next business day when it falls on a weekend or a holiday.
pub const MIN_DAYS_TO_PAY: i64 = 16;

/// Local hour (market time) at which auto-pay charges the card on the due date.
pub const AUTO_PAY_HOUR: u32 = 8;

/// The regulator's assessment recovered on every bill, percent.
pub fn regulatory_assessment_percent() -> Decimal {
    Decimal::new(1667, 4)
}

/// A cycle at least this long bills the monthly charges in full; a shorter one (the first or
/// last bill of a service) bills them by the day, over a 30-day month.
const FULL_CYCLE_DAYS: i64 = 27;

/// The energy side of the contract's rates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractRates {
    pub energy_cents_per_kwh: Decimal,
    pub base_charge_cents_per_month: i64,
    pub solar_buyback_cents_per_kwh: Decimal,
}

/// What one cycle bills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvoiceInput {
    pub period_start: NaiveDate,
    /// Inclusive.
    pub period_end: NaiveDate,
    pub consumption_kwh: Decimal,
    pub generation_kwh: Decimal,
    pub rates: ContractRates,
    /// When the cycle spans several contracts, its days' kWh by contract, oldest first (their
    /// sums are `consumption_kwh` and `generation_kwh`); empty when one contract covers it all.
    pub periods: Vec<RatedKwh>,
    pub delivery: DeliveryCharges,
    /// The service city's gross-receipts reimbursement, percent (0 outside city limits).
    pub gross_receipts_percent: Decimal,
    /// Days of the cycle the location spent disconnected for non-payment (`disconnected_days`):
    /// their kWh are zero, and the base charge bills only the days served (`months_served`).
    pub off_days: i64,
}

/// The kWh of the days of a cycle that one contract covers, with that contract's rates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatedKwh {
    pub consumption_kwh: Decimal,
    pub generation_kwh: Decimal,
    pub rates: ContractRates,
}

/// The contract covering `day`: of those whose term holds it, the one that started last.
pub fn contract_on<C>(
    contracts: &[C],
    start: impl Fn(&C) -> NaiveDate,
    end: impl Fn(&C) -> Option<NaiveDate>,
    day: NaiveDate,
) -> Option<&C> {
    contracts
        .iter()
        .filter(|c| start(c) <= day && end(c).is_none_or(|e| day <= e))
        .max_by_key(|c| start(c))
}

/// Why a cycle cannot be billed: something a charge is computed from is missing or unreadable.
/// The cycle is stopped rather than billed with that charge at $0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BillingError {
    #[error("no contract covers the location")]
    NoContract,
    #[error("the contract's stored rates cannot be read: {0}")]
    ContractRates(String),
    #[error("no delivery charges of utility {tdu} are in effect on {day}")]
    NoDeliveryCharges { tdu: String, day: NaiveDate },
    #[error("the delivery charges of utility {tdu} cannot be read: cents per kWh {value:?}")]
    DeliveryCharges { tdu: String, value: String },
    #[error("the city's gross receipts percent cannot be read: {0:?}")]
    GrossReceipts(String),
    #[error("the stored usage of {day} cannot be read: {field} {value:?}")]
    UsageDay {
        day: NaiveDate,
        field: &'static str,
        value: String,
    },
}

/// One stored day of a cycle's usage, before it is trusted.
#[derive(Debug, Clone, Copy)]
pub struct StoredDay<'a> {
    pub day: NaiveDate,
    pub consumption_kwh: &'a str,
    pub generation_kwh: &'a str,
}

/// A period's consumption and generation summed from its stored days; a day that cannot be
/// read stops the cycle instead of counting as zero.
pub fn period_kwh<'a>(
    days: impl IntoIterator<Item = StoredDay<'a>>,
) -> Result<(Decimal, Decimal), BillingError> {
    let mut consumption = Decimal::ZERO;
    let mut generation = Decimal::ZERO;
    for d in days {
        let read = |field: &'static str, text: &str| {
            decimal(text).ok_or_else(|| BillingError::UsageDay {
                day: d.day,
                field,
                value: text.to_owned(),
            })
        };
        consumption += read("consumption_kwh", d.consumption_kwh)?;
        generation += read("generation_kwh", d.generation_kwh)?;
    }
    Ok((consumption, generation))
}

/// "Visa ending 4242": how a bill, its e-mail and its PDF name a card.
pub fn card_name(brand: &str, last4: &str) -> String {
    format!("{} ending {last4}", app::format::card_brand(brand))
}

/// The auto-pay note of an invoice still to be paid, with its due date as the caller writes
/// dates ("Your Visa ending 4242 will be charged automatically on Dec 8, 2026.").
pub fn auto_pay_sentence(brand: &str, last4: &str, due_date: &str) -> String {
    format!(
        "Your {} will be charged automatically on {due_date}.",
        card_name(brand, last4)
    )
}

/// A cycle's inputs as the store holds them, before they are trusted.
#[derive(Debug, Clone)]
pub struct StoredCycle<'a> {
    pub period_start: NaiveDate,
    /// Inclusive; the contract and the delivery charges are the ones in effect on this day.
    pub period_end: NaiveDate,
    pub consumption_kwh: Decimal,
    pub generation_kwh: Decimal,
    /// The covering contract's rates as stored (JSON); `None` without a contract.
    pub contract_rates: Option<&'a str>,
    /// When several contracts cover the cycle: each one's stored rates with the kWh of its
    /// days, oldest first.
    pub periods: Vec<StoredPeriod<'a>>,
    pub tdu: &'a str,
    /// The utility's fixed cents per month and cents per kWh; `None` when no schedule is in
    /// effect.
    pub delivery: Option<(i64, &'a str)>,
    /// `None` outside city limits, where no gross receipts are recovered.
    pub gross_receipts_percent: Option<&'a str>,
    /// Days of the cycle without service (disconnected for non-payment).
    pub off_days: i64,
}

/// The days of a cycle one contract covers, before its rates are trusted.
#[derive(Debug, Clone)]
pub struct StoredPeriod<'a> {
    pub consumption_kwh: Decimal,
    pub generation_kwh: Decimal,
    pub contract_rates: &'a str,
}

/// The part of a contract's stored rates that billing reads; the rest is for documents.
#[derive(serde::Deserialize)]
struct StoredRates {
    energy_cents_per_kwh: String,
    base_charge_cents_per_month: i64,
    solar_buyback_cents_per_kwh: String,
}

fn decimal(text: &str) -> Option<Decimal> {
    text.trim().parse().ok()
}

/// A contract's stored rates, or why they cannot be read.
fn contract_rates(raw: &str) -> Result<ContractRates, BillingError> {
    let stored: StoredRates =
        serde_json::from_str(raw).map_err(|e| BillingError::ContractRates(e.to_string()))?;
    let rate = |name: &str, text: &str| {
        decimal(text).ok_or_else(|| BillingError::ContractRates(format!("{name} {text:?}")))
    };
    Ok(ContractRates {
        energy_cents_per_kwh: rate("energy_cents_per_kwh", &stored.energy_cents_per_kwh)?,
        base_charge_cents_per_month: stored.base_charge_cents_per_month,
        solar_buyback_cents_per_kwh: rate(
            "solar_buyback_cents_per_kwh",
            &stored.solar_buyback_cents_per_kwh,
        )?,
    })
}

impl InvoiceInput {
    /// The cycle's input, or why it cannot be billed.
    pub fn from_stored(s: &StoredCycle<'_>) -> Result<InvoiceInput, BillingError> {
        let rates = contract_rates(s.contract_rates.ok_or(BillingError::NoContract)?)?;
        let periods = s
            .periods
            .iter()
            .map(|p| {
                Ok(RatedKwh {
                    consumption_kwh: p.consumption_kwh,
                    generation_kwh: p.generation_kwh,
                    rates: contract_rates(p.contract_rates)?,
                })
            })
            .collect::<Result<Vec<_>, BillingError>>()?;
        let (fixed, per_kwh) = s.delivery.ok_or_else(|| BillingError::NoDeliveryCharges {
            tdu: s.tdu.to_owned(),
            day: s.period_end,
        })?;
        let delivery = DeliveryCharges::from_stored(fixed, per_kwh).ok_or_else(|| {
            BillingError::DeliveryCharges {
                tdu: s.tdu.to_owned(),
                value: per_kwh.to_owned(),
            }
        })?;
        let gross_receipts_percent = match s.gross_receipts_percent {
            None => Decimal::ZERO,
            Some(text) => {
                decimal(text).ok_or_else(|| BillingError::GrossReceipts(text.to_owned()))?
            }
        };
        Ok(InvoiceInput {
            period_start: s.period_start,
            period_end: s.period_end,
            consumption_kwh: s.consumption_kwh,
            generation_kwh: s.generation_kwh,
            rates,
            periods,
            delivery,
            gross_receipts_percent,
            off_days: s.off_days,
        })
    }
}

/// One line of an invoice.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Charge {
    pub description: String,
    pub quantity: Decimal,
    /// `kWh`, `month` or `%`.
    pub unit: String,
    /// Cents per unit (per kWh, per month), or percent of the base for `%`.
    pub rate: Decimal,
    pub amount_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChargeGroup {
    pub name: String,
    pub total_cents: i64,
    pub charges: Vec<Charge>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputedInvoice {
    pub groups: Vec<ChargeGroup>,
    pub total_cents: i64,
}

/// An amount in cents rounded to a whole cent, half away from zero.
pub fn to_cents(amount: Decimal) -> i64 {
    amount
        .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)
        .try_into()
        .unwrap_or(0)
}

/// Days of a cycle, both ends included.
pub fn period_days(start: NaiveDate, end: NaiveDate) -> i64 {
    (end - start).num_days() + 1
}

/// The days of `start..=end` without any service: those wholly between the day the utility
/// disconnected the location and the day it reconnected it (`None`: not yet), for each
/// disconnection. The days of the disconnection and of the reconnection had service part of
/// the day and are billed as usual.
pub fn disconnected_days(
    spans: &[(NaiveDate, Option<NaiveDate>)],
    start: NaiveDate,
    end: NaiveDate,
) -> std::collections::BTreeSet<NaiveDate> {
    let mut off = std::collections::BTreeSet::new();
    for (cut, restored) in spans {
        let mut day = (*cut + Duration::days(1)).max(start);
        while day <= end && restored.is_none_or(|r| day < r) {
            off.insert(day);
            day += Duration::days(1);
        }
    }
    off
}

/// How many months of the base charge a cycle of `days` bills when `off_days` of them had no
/// service: the cycle's months (`months_billed`) by the share of its days served (4 places).
/// No charge of ours runs while the customer has no power.
pub fn months_served(days: i64, off_days: i64) -> Decimal {
    let months = months_billed(days);
    if off_days <= 0 || days <= 0 {
        return months;
    }
    let served = (days - off_days).max(0);
    (months * Decimal::from(served) / Decimal::from(days)).round_dp(4)
}

/// How many months of the monthly charges a cycle bills (4 places).
pub fn months_billed(days: i64) -> Decimal {
    if days >= FULL_CYCLE_DAYS {
        Decimal::ONE
    } else {
        (Decimal::from(days.max(0)) / Decimal::from(30)).round_dp(4)
    }
}

fn line(
    description: &str,
    quantity: Decimal,
    unit: &str,
    rate: Decimal,
    amount: Decimal,
) -> Charge {
    Charge {
        description: description.to_owned(),
        quantity,
        unit: unit.to_owned(),
        rate,
        amount_cents: to_cents(amount),
    }
}

fn group(name: &str, charges: Vec<Charge>) -> ChargeGroup {
    ChargeGroup {
        name: name.to_owned(),
        total_cents: charges.iter().map(|c| c.amount_cents).sum(),
        charges,
    }
}

/// The invoice of one cycle, grouped as energy, delivery, credits (when there are any) and
/// taxes and fees. The taxes apply to the charges net of credits.
pub fn compute(input: &InvoiceInput) -> ComputedInvoice {
    let days = period_days(input.period_start, input.period_end);
    let months = months_billed(days);
    let base_months = months_served(days, input.off_days);
    let kwh = input.consumption_kwh;
    let r = &input.rates;
    let whole = [RatedKwh {
        consumption_kwh: kwh,
        generation_kwh: input.generation_kwh,
        rates: r.clone(),
    }];
    let periods = if input.periods.is_empty() {
        &whole[..]
    } else {
        &input.periods[..]
    };
    let mut energy_lines: Vec<Charge> = periods
        .iter()
        .map(|p| {
            let rate = p.rates.energy_cents_per_kwh;
            line(
                "Energy charge",
                p.consumption_kwh,
                "kWh",
                rate,
                p.consumption_kwh * rate,
            )
        })
        .collect();
    energy_lines.push(line(
        "Base charge",
        base_months,
        "month",
        Decimal::from(r.base_charge_cents_per_month),
        base_months * Decimal::from(r.base_charge_cents_per_month),
    ));
    let energy = group("Energy", energy_lines);
    let d = &input.delivery;
    let delivery = group(
        "Delivery",
        vec![
            line(
                "Delivery charge (utility, fixed)",
                months,
                "month",
                Decimal::from(d.fixed_cents_per_month),
                months * Decimal::from(d.fixed_cents_per_month),
            ),
            line(
                "Delivery charge (utility, per kWh)",
                kwh,
                "kWh",
                d.cents_per_kwh,
                kwh * d.cents_per_kwh,
            ),
        ],
    );
    let mut groups = vec![energy, delivery];
    let credits: Vec<Charge> = periods
        .iter()
        .filter(|p| {
            p.generation_kwh > Decimal::ZERO && p.rates.solar_buyback_cents_per_kwh > Decimal::ZERO
        })
        .map(|p| {
            let rate = p.rates.solar_buyback_cents_per_kwh;
            line(
                "Solar buyback credit",
                p.generation_kwh,
                "kWh",
                rate,
                -(p.generation_kwh * rate),
            )
        })
        .collect();
    if !credits.is_empty() {
        groups.push(group("Credits", credits));
    }
    let taxable: i64 = groups.iter().map(|g| g.total_cents).sum();
    let base = Decimal::from(taxable);
    let mut taxes = vec![line(
        "Regulatory assessment",
        base,
        "%",
        regulatory_assessment_percent(),
        base * regulatory_assessment_percent() / Decimal::ONE_HUNDRED,
    )];
    if input.gross_receipts_percent > Decimal::ZERO {
        taxes.push(line(
            "Gross receipts reimbursement",
            base,
            "%",
            input.gross_receipts_percent,
            base * input.gross_receipts_percent / Decimal::ONE_HUNDRED,
        ));
    }
    groups.push(group("Taxes and fees", taxes));
    ComputedInvoice {
        total_cents: groups.iter().map(|g| g.total_cents).sum(),
        groups,
    }
}

/// The average price of a cycle, cents per kWh to one place; none without consumption.
pub fn average_cents_per_kwh(total_cents: i64, kwh: Decimal) -> Option<Decimal> {
    (kwh > Decimal::ZERO).then(|| {
        (Decimal::from(total_cents) / kwh)
            .round_dp_with_strategy(1, RoundingStrategy::MidpointAwayFromZero)
    })
}

/// An invoice's number from its place in the gap-free sequence.
pub fn invoice_number(sequence: i64) -> String {
    format!("INV-{sequence:08}")
}

/// The due date of a bill issued on `invoice_date`: at least `MIN_DAYS_TO_PAY` days later, on
/// the first business day of the market's calendar from then (a weekend or a holiday moves it
/// forward, never back).
pub fn payment_due_date(invoice_date: NaiveDate, calendar: &BusinessCalendar) -> NaiveDate {
    let mut due = invoice_date + Duration::days(MIN_DAYS_TO_PAY);
    while !calendar.is_business_day(due) {
        due += Duration::days(1);
    }
    due
}

/// When auto-pay charges a bill due on `due`: `AUTO_PAY_HOUR` o'clock market time that day,
/// whatever the clocks did overnight.
pub fn auto_pay_at(due: NaiveDate) -> DateTime<Utc> {
    at_market_time(due, AUTO_PAY_HOUR)
}

super::text_enum! {
    pub enum InvoiceStatus {
        Open = "open",
        Paid = "paid",
        PastDue = "past_due",
        Voided = "voided",
    }
}

super::text_enum! {
    /// How a charge of an invoice went.
    pub enum PaymentStatus {
        Succeeded = "succeeded",
        Failed = "failed",
        Pending = "pending",
    }
}

super::text_enum! {
    /// Who started a charge: the auto-pay job, the customer (or partner) paying, or a sandbox
    /// simulation.
    pub enum PaymentInitiator {
        AutoPay = "auto_pay",
        Customer = "customer",
        Simulation = "simulation",
        /// A payment plan took the unpaid bill over (no money moved: the plan's instalments
        /// are billed on the following bills).
        PaymentPlan = "payment_plan",
    }
}

impl InvoiceStatus {
    /// Whether a payment can still settle it.
    pub fn is_payable(self) -> bool {
        matches!(self, InvoiceStatus::Open | InvoiceStatus::PastDue)
    }
}

/// After the `failures`-th failed auto-pay charge of an invoice, how long until the next try;
/// none after the fourth (the customer is asked to pay or update the card).
pub fn auto_pay_retry_after(failures: u32) -> Option<Duration> {
    match failures {
        1..=3 => Some(Duration::days(2 * i64::from(failures))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_period_sums_its_days_and_stops_at_one_it_cannot_read() {
        let day = |d: u32, c: &'static str, g: &'static str| StoredDay {
            day: NaiveDate::from_ymd_opt(2026, 3, d).unwrap(),
            consumption_kwh: c,
            generation_kwh: g,
        };
        assert_eq!(
            period_kwh([day(1, "10.5", "0"), day(2, " 2.25", "1.5")]),
            Ok((Decimal::new(1275, 2), Decimal::new(15, 1)))
        );
        assert_eq!(period_kwh(Vec::new()), Ok((Decimal::ZERO, Decimal::ZERO)));
        assert_eq!(
            period_kwh([day(1, "10.5", "0"), day(2, "n/a", "0")]),
            Err(BillingError::UsageDay {
                day: NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
                field: "consumption_kwh",
                value: "n/a".to_owned(),
            })
        );
        assert!(matches!(
            period_kwh([day(3, "1", "")]),
            Err(BillingError::UsageDay {
                field: "generation_kwh",
                ..
            })
        ));
    }

    #[test]
    fn the_auto_pay_sentence_names_the_card_and_the_day() {
        assert_eq!(
            auto_pay_sentence("visa", "4242", "Dec 8, 2026"),
            "Your Visa ending 4242 will be charged automatically on Dec 8, 2026."
        );
        assert_eq!(card_name("someprocessorcode", "0005"), "Card ending 0005");
    }

    use std::str::FromStr;

    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn input(kwh: &str) -> InvoiceInput {
        InvoiceInput {
            period_start: date("2026-06-12"),
            period_end: date("2026-07-11"),
            consumption_kwh: dec(kwh),
            generation_kwh: Decimal::ZERO,
            rates: ContractRates {
                energy_cents_per_kwh: dec("9.1"),
                base_charge_cents_per_month: 995,
                solar_buyback_cents_per_kwh: Decimal::ZERO,
            },
            periods: Vec::new(),
            delivery: DeliveryCharges {
                fixed_cents_per_month: 423,
                cents_per_kwh: dec("4.5403"),
            },
            gross_receipts_percent: dec("1.997"),
            off_days: 0,
        }
    }

    fn amount(inv: &ComputedInvoice, description: &str) -> i64 {
        inv.groups
            .iter()
            .flat_map(|g| &g.charges)
            .find(|c| c.description == description)
            .map(|c| c.amount_cents)
            .unwrap()
    }

    #[test]
    fn a_full_cycle_bills_every_line_to_the_cent() {
        let inv = compute(&input("1000"));
        assert_eq!(amount(&inv, "Energy charge"), 9100);
        assert_eq!(amount(&inv, "Base charge"), 995);
        assert_eq!(amount(&inv, "Delivery charge (utility, fixed)"), 423);
        // 1000 x 4.5403 = 4540.3 cents.
        assert_eq!(amount(&inv, "Delivery charge (utility, per kWh)"), 4540);
        // Taxable 15058: 0.1667% = 25.10, 1.997% = 300.71.
        assert_eq!(amount(&inv, "Regulatory assessment"), 25);
        assert_eq!(amount(&inv, "Gross receipts reimbursement"), 301);
        assert_eq!(inv.total_cents, 15058 + 25 + 301);
        let names: Vec<&str> = inv.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["Energy", "Delivery", "Taxes and fees"]);
    }

    #[test]
    fn the_total_is_the_sum_of_the_rounded_lines() {
        for kwh in ["0.001", "333.333", "1234.567", "2999.999"] {
            let inv = compute(&input(kwh));
            let lines: i64 = inv
                .groups
                .iter()
                .flat_map(|g| &g.charges)
                .map(|c| c.amount_cents)
                .sum();
            assert_eq!(inv.total_cents, lines);
            for g in &inv.groups {
                assert_eq!(
                    g.total_cents,
                    g.charges.iter().map(|c| c.amount_cents).sum::<i64>()
                );
            }
        }
    }

    #[test]
    fn half_cents_round_away_from_zero() {
        assert_eq!(to_cents(dec("10.5")), 11);
        assert_eq!(to_cents(dec("10.4999")), 10);
        assert_eq!(to_cents(dec("-10.5")), -11);
    }

    #[test]
    fn a_short_cycle_prorates_the_monthly_charges() {
        let mut i = input("300");
        i.period_start = date("2026-07-01");
        i.period_end = date("2026-07-15");
        let inv = compute(&i);
        assert_eq!(amount(&inv, "Base charge"), 498); // 995 x 0.5 = 497.5
        assert_eq!(amount(&inv, "Delivery charge (utility, fixed)"), 212); // 211.5
        assert_eq!(months_billed(27), Decimal::ONE);
        assert_eq!(months_billed(35), Decimal::ONE);
        assert_eq!(months_billed(1), dec("0.0333"));
    }

    #[test]
    fn solar_export_is_a_credit_before_taxes() {
        let mut i = input("1000");
        i.generation_kwh = dec("200");
        i.rates.solar_buyback_cents_per_kwh = dec("7.5");
        let inv = compute(&i);
        assert_eq!(amount(&inv, "Solar buyback credit"), -1500);
        let taxes = inv
            .groups
            .iter()
            .find(|g| g.name == "Taxes and fees")
            .unwrap();
        assert_eq!(taxes.charges[0].quantity, Decimal::from(15058 - 1500));
    }

    #[test]
    fn no_gross_receipts_outside_city_limits() {
        let mut i = input("1000");
        i.gross_receipts_percent = Decimal::ZERO;
        let inv = compute(&i);
        assert!(inv
            .groups
            .iter()
            .flat_map(|g| &g.charges)
            .all(|c| c.description != "Gross receipts reimbursement"));
    }

    /// The market's holidays of 2026 and 2027 as the reference table holds them.
    fn holidays() -> BusinessCalendar {
        BusinessCalendar::new(
            [
                "2026-01-01",
                "2026-01-19",
                "2026-05-25",
                "2026-07-03",
                "2026-09-07",
                "2026-11-11",
                "2026-11-26",
                "2026-12-25",
                "2027-01-01",
                "2027-01-18",
            ]
            .map(date),
        )
    }

    #[test]
    fn due_sixteen_days_after_the_invoice_on_a_business_day() {
        let cal = holidays();
        // Sixteen days after Nov 23, 2026 is Wednesday Dec 9: a business day, kept.
        assert_eq!(
            payment_due_date(date("2026-11-23"), &cal),
            date("2026-12-09")
        );
        // Never sooner than sixteen days, whatever the day.
        for offset in 0..800 {
            let issued = date("2026-01-01") + Duration::days(offset);
            let due = payment_due_date(issued, &cal);
            assert!((due - issued).num_days() >= MIN_DAYS_TO_PAY, "{issued}");
            assert!(cal.is_business_day(due), "{issued} -> {due}");
            // The first business day from the sixteenth: no business day is skipped.
            let sixteenth = issued + Duration::days(MIN_DAYS_TO_PAY);
            assert!(sixteenth
                .iter_days()
                .take_while(|d| *d < due)
                .all(|d| !cal.is_business_day(d)));
        }
    }

    #[test]
    fn a_due_date_on_a_weekend_moves_to_monday() {
        let cal = holidays();
        // Nov 20, 2026 + 16 = Sunday Dec 6 -> Monday Dec 7.
        assert_eq!(
            payment_due_date(date("2026-11-20"), &cal),
            date("2026-12-07")
        );
        // Saturday Dec 5 -> Monday Dec 7.
        assert_eq!(
            payment_due_date(date("2026-11-19"), &cal),
            date("2026-12-07")
        );
    }

    #[test]
    fn a_due_date_on_a_holiday_moves_to_the_next_business_day() {
        let cal = holidays();
        // Thanksgiving, Thursday Nov 26, 2026 -> Friday Nov 27.
        assert_eq!(
            payment_due_date(date("2026-11-10"), &cal),
            date("2026-11-27")
        );
        // Without the holiday table, Thanksgiving would be a business day.
        assert_eq!(
            payment_due_date(date("2026-11-10"), &BusinessCalendar::default()),
            date("2026-11-26")
        );
        // Independence Day observed on Friday Jul 3, 2026, then the weekend -> Monday Jul 6.
        assert_eq!(
            payment_due_date(date("2026-06-17"), &cal),
            date("2026-07-06")
        );
    }

    #[test]
    fn due_dates_across_month_and_year_ends() {
        let cal = holidays();
        // Month end: Jan 15, 2026 + 16 = Saturday Jan 31 -> Monday Feb 2.
        assert_eq!(
            payment_due_date(date("2026-01-15"), &cal),
            date("2026-02-02")
        );
        // February of a common year: Feb 12 + 16 = Saturday Feb 28 -> Monday Mar 2.
        assert_eq!(
            payment_due_date(date("2026-02-12"), &cal),
            date("2026-03-02")
        );
        // Year end: Dec 9, 2026 + 16 = Christmas (Friday) -> Monday Dec 28.
        assert_eq!(
            payment_due_date(date("2026-12-09"), &cal),
            date("2026-12-28")
        );
        // Dec 16 + 16 = New Year's Day 2027 (Friday) -> Monday Jan 4, 2027.
        assert_eq!(
            payment_due_date(date("2026-12-16"), &cal),
            date("2027-01-04")
        );
        // Dec 31 + 16 = Saturday Jan 16, 2027, then Sunday, then MLK Day -> Tuesday Jan 19.
        assert_eq!(
            payment_due_date(date("2026-12-31"), &cal),
            date("2027-01-19")
        );
    }

    #[test]
    fn auto_pay_charges_at_eight_market_time_across_daylight_saving_changes() {
        let cal = holidays();
        // Issued before the spring change (Mar 8, 2026), due after it: 08:00 CDT is 13:00 UTC.
        let due = payment_due_date(date("2026-03-01"), &cal);
        assert_eq!(due, date("2026-03-17"));
        assert_eq!(auto_pay_at(due).to_rfc3339(), "2026-03-17T13:00:00+00:00");
        // Issued before the fall change (Nov 1, 2026), due after it: 08:00 CST is 14:00 UTC.
        let due = payment_due_date(date("2026-10-20"), &cal);
        assert_eq!(due, date("2026-11-05"));
        assert_eq!(auto_pay_at(due).to_rfc3339(), "2026-11-05T14:00:00+00:00");
        // On the change days themselves (Sundays, never a due date) the hour still holds.
        assert_eq!(
            auto_pay_at(date("2026-11-01")).to_rfc3339(),
            "2026-11-01T14:00:00+00:00"
        );
        assert_eq!(
            auto_pay_at(date("2026-03-08")).to_rfc3339(),
            "2026-03-08T13:00:00+00:00"
        );
    }

    #[test]
    fn numbers_statuses_and_retries() {
        assert_eq!(invoice_number(7), "INV-00000007");
        for s in ["open", "paid", "past_due", "voided"] {
            assert_eq!(InvoiceStatus::parse(s).unwrap().as_str(), s);
        }
        assert!(InvoiceStatus::PastDue.is_payable());
        assert!(!InvoiceStatus::Paid.is_payable());
        assert!(!InvoiceStatus::Voided.is_payable());
        assert_eq!(auto_pay_retry_after(1), Some(Duration::days(2)));
        assert_eq!(auto_pay_retry_after(3), Some(Duration::days(6)));
        assert_eq!(auto_pay_retry_after(4), None);
    }

    fn stored(rates: Option<&str>) -> StoredCycle<'_> {
        StoredCycle {
            period_start: date("2026-06-12"),
            period_end: date("2026-07-11"),
            consumption_kwh: dec("1000"),
            generation_kwh: Decimal::ZERO,
            contract_rates: rates,
            periods: Vec::new(),
            tdu: "oncor",
            delivery: Some((423, "4.5403")),
            gross_receipts_percent: Some("1.997"),
            off_days: 0,
        }
    }

    const RATES: &str = r#"{"energy_cents_per_kwh":"9.1","base_charge_cents_per_month":995,
        "tdu_fixed_cents_per_month":423,"tdu_cents_per_kwh":"4.5403",
        "solar_buyback_cents_per_kwh":"0","early_termination_fee_cents":15000}"#;

    #[test]
    fn days_without_service_bill_no_energy_and_no_base_charge() {
        let d = date;
        // Cut on the 3rd, restored on the 7th: the 4th to the 6th had no service at all.
        let off = disconnected_days(
            &[(d("2026-06-03"), Some(d("2026-06-07")))],
            d("2026-06-01"),
            d("2026-06-30"),
        );
        assert_eq!(
            off.iter().copied().collect::<Vec<_>>(),
            vec![d("2026-06-04"), d("2026-06-05"), d("2026-06-06")]
        );
        // Still cut: through the cycle's end; a cycle starting later counts from its start.
        let off = disconnected_days(&[(d("2026-05-20"), None)], d("2026-06-01"), d("2026-06-10"));
        assert_eq!(off.len(), 10);
        // Cut and restored the same or the next day: every day had service.
        assert!(disconnected_days(
            &[(d("2026-06-03"), Some(d("2026-06-04")))],
            d("2026-06-01"),
            d("2026-06-30")
        )
        .is_empty());
        // The base charge bills the days served; the utility's fixed charge is unchanged.
        assert_eq!(months_served(30, 0), Decimal::ONE);
        assert_eq!(months_served(30, 10), dec("0.6667"));
        assert_eq!(months_served(30, 30), Decimal::ZERO);
        assert_eq!(months_served(15, 5), dec("0.3333"));
        let full = compute(&input("1000"));
        let cut = compute(&InvoiceInput {
            off_days: 10,
            ..input("1000")
        });
        assert_eq!(amount(&cut, "Base charge"), 663);
        assert_eq!(amount(&full, "Base charge"), 995);
        assert_eq!(
            amount(&cut, "Delivery charge (utility, fixed)"),
            amount(&full, "Delivery charge (utility, fixed)")
        );
    }

    #[test]
    fn stored_inputs_become_the_cycle_input() {
        assert_eq!(
            InvoiceInput::from_stored(&stored(Some(RATES))),
            Ok(input("1000"))
        );
        let outside_city = StoredCycle {
            gross_receipts_percent: None,
            ..stored(Some(RATES))
        };
        let parsed = InvoiceInput::from_stored(&outside_city).unwrap();
        assert_eq!(parsed.gross_receipts_percent, Decimal::ZERO);
    }

    #[test]
    fn a_missing_contract_stops_the_bill() {
        assert_eq!(
            InvoiceInput::from_stored(&stored(None)),
            Err(BillingError::NoContract)
        );
    }

    #[test]
    fn unreadable_contract_rates_stop_the_bill() {
        let energy = RATES.replace(r#""9.1""#, r#""nine""#);
        let buyback = RATES.replace(
            r#""solar_buyback_cents_per_kwh":"0""#,
            r#""solar_buyback_cents_per_kwh":"""#,
        );
        let missing = r#"{"base_charge_cents_per_month":995}"#.to_owned();
        for raw in [
            "not json".to_owned(),
            "{}".to_owned(),
            energy,
            buyback,
            missing,
        ] {
            let err = InvoiceInput::from_stored(&stored(Some(&raw))).unwrap_err();
            assert!(
                matches!(err, BillingError::ContractRates(_)),
                "{raw}: {err}"
            );
        }
        let nine = RATES.replace("9.1", "nine");
        let err = InvoiceInput::from_stored(&stored(Some(&nine))).unwrap_err();
        assert!(
            err.to_string().contains(r#"energy_cents_per_kwh "nine""#),
            "{err}"
        );
    }

    #[test]
    fn missing_or_unreadable_delivery_charges_stop_the_bill() {
        let none = StoredCycle {
            delivery: None,
            ..stored(Some(RATES))
        };
        assert_eq!(
            InvoiceInput::from_stored(&none),
            Err(BillingError::NoDeliveryCharges {
                tdu: "oncor".to_owned(),
                day: date("2026-07-11"),
            })
        );
        let unreadable = StoredCycle {
            delivery: Some((423, "")),
            ..stored(Some(RATES))
        };
        assert!(matches!(
            InvoiceInput::from_stored(&unreadable),
            Err(BillingError::DeliveryCharges { .. })
        ));
    }

    #[test]
    fn an_unreadable_gross_receipts_percent_stops_the_bill() {
        let unreadable = StoredCycle {
            gross_receipts_percent: Some("two"),
            ..stored(Some(RATES))
        };
        assert_eq!(
            InvoiceInput::from_stored(&unreadable),
            Err(BillingError::GrossReceipts("two".to_owned()))
        );
    }

    #[test]
    fn each_day_is_billed_at_the_rates_of_the_contract_covering_it() {
        // A 30-day cycle across a renewal: 400 kWh under the old contract at 9.1, then 600 kWh
        // (120 of them exported solar) under the renewal at 8.4628 with a 7.5 buyback.
        let renewal = ContractRates {
            energy_cents_per_kwh: dec("8.4628"),
            base_charge_cents_per_month: 1495,
            solar_buyback_cents_per_kwh: dec("7.5"),
        };
        let mut i = input("1000");
        i.generation_kwh = dec("120");
        i.rates = renewal.clone();
        i.periods = vec![
            RatedKwh {
                consumption_kwh: dec("400"),
                generation_kwh: Decimal::ZERO,
                rates: input("0").rates,
            },
            RatedKwh {
                consumption_kwh: dec("600"),
                generation_kwh: dec("120"),
                rates: renewal,
            },
        ];
        let inv = compute(&i);
        let energy: Vec<(Decimal, Decimal, i64)> = inv.groups[0]
            .charges
            .iter()
            .filter(|c| c.description == "Energy charge")
            .map(|c| (c.quantity, c.rate, c.amount_cents))
            .collect();
        // 400 x 9.1 = 3640; 600 x 8.4628 = 5077.68.
        assert_eq!(
            energy,
            [
                (dec("400"), dec("9.1"), 3640),
                (dec("600"), dec("8.4628"), 5078)
            ]
        );
        // The monthly charge is the renewal's, in force on the last day.
        assert_eq!(amount(&inv, "Base charge"), 1495);
        assert_eq!(amount(&inv, "Solar buyback credit"), -900);
        // Delivery does not depend on the contract: 1000 x 4.5403 = 4540.3.
        assert_eq!(amount(&inv, "Delivery charge (utility, per kWh)"), 4540);
        // Taxable 3640 + 5078 + 1495 + 423 + 4540 - 900 = 14276:
        // 0.1667% = 23.80, 1.997% = 285.09.
        assert_eq!(amount(&inv, "Regulatory assessment"), 24);
        assert_eq!(amount(&inv, "Gross receipts reimbursement"), 285);
        assert_eq!(inv.total_cents, 14276 + 24 + 285);
    }

    #[test]
    fn the_contract_on_a_day_is_the_latest_started_that_holds_it() {
        let c = |start: &str, end: Option<&str>| (date(start), end.map(date));
        let contracts = [
            c("2026-02-01", Some("2027-01-31")),
            c("2027-02-01", Some("2028-01-31")),
        ];
        let on = |day: &str| contract_on(&contracts, |c| c.0, |c| c.1, date(day)).map(|c| c.0);
        assert_eq!(on("2027-01-31"), Some(date("2026-02-01")));
        assert_eq!(on("2027-02-01"), Some(date("2027-02-01")));
        assert_eq!(on("2026-01-31"), None);
        assert_eq!(on("2028-02-01"), None);
        let month_to_month = [c("2026-02-01", None), c("2026-06-01", Some("2027-05-31"))];
        let on = |day: &str| contract_on(&month_to_month, |c| c.0, |c| c.1, date(day)).map(|c| c.0);
        assert_eq!(on("2026-07-01"), Some(date("2026-06-01")));
        assert_eq!(on("2027-07-01"), Some(date("2026-02-01")));
    }

    #[test]
    fn unreadable_rates_of_any_contract_of_the_cycle_stop_the_bill() {
        let mut s = stored(Some(RATES));
        s.periods = vec![
            StoredPeriod {
                consumption_kwh: dec("400"),
                generation_kwh: Decimal::ZERO,
                contract_rates: "{}",
            },
            StoredPeriod {
                consumption_kwh: dec("600"),
                generation_kwh: Decimal::ZERO,
                contract_rates: RATES,
            },
        ];
        assert!(matches!(
            InvoiceInput::from_stored(&s),
            Err(BillingError::ContractRates(_))
        ));
    }

    #[test]
    fn averages() {
        assert_eq!(average_cents_per_kwh(15384, dec("1000")), Some(dec("15.4")));
        assert_eq!(average_cents_per_kwh(100, Decimal::ZERO), None);
    }
}
