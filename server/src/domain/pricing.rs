//! Plan pricing and EFL math: a plan's rates from its group, the day's wholesale price and the
//! utility's delivery charges (with per-account overrides), the simulated wholesale curve, the
//! market's typical plan that benchmarks compare with, and the average prices of the
//! Electricity Facts Label. Exact decimals throughout.

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;

use super::{
    market::{parse_dollars_to_cents, round4, DeliveryCharges, RateCentsPerKwh},
    FieldError,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanType {
    Fixed,
    MonthToMonth,
}

impl PlanType {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanType::Fixed => "fixed",
            PlanType::MonthToMonth => "month_to_month",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fixed" => Some(PlanType::Fixed),
            "month_to_month" => Some(PlanType::MonthToMonth),
            _ => None,
        }
    }
}

/// What a plan group fixes about its plans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupTerms {
    pub name: String,
    pub plan_type: PlanType,
    pub term_months: u32,
    pub base_charge_cents_per_month: i64,
    pub energy_margin_cents_per_kwh: Decimal,
    pub partner_commission_cents_per_month: i64,
    pub solar_buyback_cents_per_kwh: Decimal,
    pub early_termination_fee_cents: i64,
    pub renewable_percent: u8,
    pub tos_version: String,
    pub is_month_to_month_default: bool,
}

/// The sandbox defaults every new app starts with.
pub fn default_groups() -> Vec<GroupTerms> {
    let group = |name: &str, plan_type, term, margin: i64, buyback: i64, etf, m2m| GroupTerms {
        name: name.to_owned(),
        plan_type,
        term_months: term,
        base_charge_cents_per_month: 995,
        energy_margin_cents_per_kwh: Decimal::new(margin, 4),
        partner_commission_cents_per_month: 500,
        solar_buyback_cents_per_kwh: Decimal::new(buyback, 4),
        early_termination_fee_cents: etf,
        renewable_percent: if buyback > 0 { 100 } else { 31 },
        tos_version: "2026.1".to_owned(),
        is_month_to_month_default: m2m,
    };
    vec![
        group("12-Month Fixed", PlanType::Fixed, 12, 42_000, 0, 0, false),
        group("24-Month Fixed", PlanType::Fixed, 24, 39_000, 0, 0, false),
        group(
            "12-Month Fixed Solar Buyback",
            PlanType::Fixed,
            12,
            45_000,
            75_000,
            0,
            false,
        ),
        group(
            "Month-to-Month Variable",
            PlanType::MonthToMonth,
            1,
            55_000,
            0,
            0,
            true,
        ),
    ]
}

/// The platform's month-to-month group: what a contract nobody renews rolls onto when its app
/// has no month-to-month group of its own (the one every app starts with).
pub fn platform_month_to_month_group() -> GroupTerms {
    default_groups()
        .into_iter()
        .find(|g| g.plan_type == PlanType::MonthToMonth)
        .unwrap_or_else(|| unreachable!("the default groups hold a month-to-month group"))
}

/// The market's typical plan in a load zone, which benchmarks compare an app's plans with: a
/// 12-month fixed product at the zone's usual margin and base charge.
pub fn market_plan(margin_cents_per_kwh: Decimal, base_charge_cents_per_month: i64) -> GroupTerms {
    GroupTerms {
        name: "market".into(),
        plan_type: PlanType::Fixed,
        term_months: 12,
        base_charge_cents_per_month,
        energy_margin_cents_per_kwh: margin_cents_per_kwh,
        partner_commission_cents_per_month: 0,
        solar_buyback_cents_per_kwh: Decimal::ZERO,
        early_termination_fee_cents: 0,
        renewable_percent: 0,
        tos_version: String::new(),
        is_month_to_month_default: false,
    }
}

/// The longest term per-account terms may set.
pub const MAX_TERM_MONTHS: u32 = 36;

/// Per-account terms negotiated with the partner; each replaces the group's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overrides {
    pub term_months: Option<u32>,
    pub energy_cents_per_kwh: Option<Decimal>,
    pub partner_commission_cents_per_month: Option<i64>,
}

impl Overrides {
    /// The per-account terms of a plan request, as given on the wire: a term of 1 to
    /// `MAX_TERM_MONTHS` months, an energy rate in cents per kWh, a commission in dollars.
    pub fn parse(
        term_months: Option<u32>,
        energy_rate_cents_per_kwh: Option<&str>,
        partner_commission_per_month_dollars: Option<&str>,
    ) -> Result<Overrides, FieldError> {
        let term_months = term_months
            .map(|t| {
                if (1..=MAX_TERM_MONTHS).contains(&t) {
                    Ok(t)
                } else {
                    Err(FieldError::invalid(
                        "term_months",
                        format!("term_months must be 1 to {MAX_TERM_MONTHS}"),
                    ))
                }
            })
            .transpose()?;
        let energy = energy_rate_cents_per_kwh
            .map(|d| RateCentsPerKwh::parse("energy_rate_cents_per_kwh", d).map(|r| r.0))
            .transpose()?;
        let commission = partner_commission_per_month_dollars
            .map(|d| parse_dollars_to_cents("partner_commission_per_month_dollars", d))
            .transpose()?;
        Ok(Overrides {
            term_months,
            energy_cents_per_kwh: energy.map(round4),
            partner_commission_cents_per_month: commission,
        })
    }

    pub fn is_custom(&self) -> bool {
        self.term_months.is_some()
            || self.energy_cents_per_kwh.is_some()
            || self.partner_commission_cents_per_month.is_some()
    }
}

/// A priced plan's rates, as on its EFL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanRates {
    pub energy_cents_per_kwh: Decimal,
    /// The retail base charge, the partner's commission included.
    pub base_charge_cents_per_month: i64,
    pub tdu_fixed_cents_per_month: i64,
    pub tdu_cents_per_kwh: Decimal,
    pub solar_buyback_cents_per_kwh: Decimal,
    pub early_termination_fee_cents: i64,
    pub partner_commission_cents_per_month: i64,
    pub term_months: u32,
}

/// Prices a plan: energy = wholesale for the term + the group's margin (or the override),
/// base = the group's base charge + the commission (the group's or the override).
pub fn price_plan(
    group: &GroupTerms,
    overrides: &Overrides,
    wholesale_cents_per_kwh: Decimal,
    tdu: &DeliveryCharges,
) -> PlanRates {
    let commission = overrides
        .partner_commission_cents_per_month
        .unwrap_or(group.partner_commission_cents_per_month);
    let term_months = match group.plan_type {
        PlanType::Fixed => overrides.term_months.unwrap_or(group.term_months),
        PlanType::MonthToMonth => 1,
    };
    PlanRates {
        energy_cents_per_kwh: round4(
            overrides
                .energy_cents_per_kwh
                .unwrap_or(wholesale_cents_per_kwh + group.energy_margin_cents_per_kwh),
        ),
        base_charge_cents_per_month: group.base_charge_cents_per_month + commission,
        tdu_fixed_cents_per_month: tdu.fixed_cents_per_month,
        tdu_cents_per_kwh: tdu.cents_per_kwh,
        solar_buyback_cents_per_kwh: group.solar_buyback_cents_per_kwh,
        early_termination_fee_cents: super::renewal::stated_early_termination_fee_cents(
            group.plan_type == PlanType::Fixed,
            group.early_termination_fee_cents,
        ),
        partner_commission_cents_per_month: commission,
        term_months,
    }
}

/// Average price in cents per kWh at `usage_kwh` a month, as the EFL defines it: every
/// recurring charge (energy, base, TDU fixed and per kWh) less recurring credits at that usage,
/// over the usage; taxes and gross-receipts reimbursement excluded. Rounded to 4 places.
pub fn average_price_cents_per_kwh(
    rates: &PlanRates,
    usage_kwh: Decimal,
    credits_cents: Decimal,
) -> Decimal {
    let fixed = Decimal::from(rates.base_charge_cents_per_month + rates.tdu_fixed_cents_per_month);
    let per_kwh = rates.energy_cents_per_kwh + rates.tdu_cents_per_kwh;
    round4((fixed + usage_kwh * per_kwh - credits_cents) / usage_kwh)
}

/// The credit for exported kWh on a solar buyback plan, in cents (exact).
pub fn solar_buyback_credit_cents(rates: &PlanRates, exported_kwh: Decimal) -> Decimal {
    rates.solar_buyback_cents_per_kwh * exported_kwh
}

/// The monthly usages the EFL gives average prices at, in kWh.
pub const EFL_USAGES_KWH: [u32; 3] = [500, 1000, 2000];

/// The EFL's three averages (at `EFL_USAGES_KWH`). The EFL assumes a household that exports
/// nothing, so a solar buyback does not lower them; no plan here carries other recurring
/// credits.
pub fn efl_averages(rates: &PlanRates) -> [Decimal; 3] {
    EFL_USAGES_KWH.map(|u| average_price_cents_per_kwh(rates, Decimal::from(u), Decimal::ZERO))
}

/// An average price as the EFL prints it: cents per kWh to the tenth of a cent, rounded half
/// away from zero (`14.7493` prints `14.7`).
pub fn efl_printed_cents(average: Decimal) -> String {
    format!(
        "{:.1}",
        average.round_dp_with_strategy(1, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
    )
}

/// The simulated wholesale curve of one load zone (all figures from the reference tables).
#[derive(Debug, Clone)]
pub struct WholesaleCurve {
    pub zone: String,
    pub base_cents_per_kwh: Decimal,
    pub daily_spread_cents_per_kwh: Decimal,
    /// Factor per calendar month, January first.
    pub monthly_factors: [Decimal; 12],
}

impl WholesaleCurve {
    fn monthly_level(&self, month0: usize) -> Decimal {
        self.base_cents_per_kwh * self.monthly_factors[month0 % 12]
    }

    /// A deterministic wiggle of the day in [-spread, +spread], in steps of a thousandth.
    fn daily_deviation(&self, date: NaiveDate) -> Decimal {
        let mut h = u64::from(date.num_days_from_ce().unsigned_abs());
        for b in self.zone.bytes() {
            h = h.wrapping_mul(31).wrapping_add(u64::from(b));
        }
        let step = i64::try_from(splitmix64(h) % 2001).unwrap_or(1000) - 1000;
        self.daily_spread_cents_per_kwh * Decimal::new(step, 3)
    }

    /// The spot price of `date`.
    pub fn spot(&self, date: NaiveDate) -> Decimal {
        round4(self.monthly_level(date.month0() as usize) + self.daily_deviation(date))
    }

    /// What a supplier pays to hedge `term_months` from `start`, as priced on `today`: the
    /// average monthly level over the term plus today's deviation.
    pub fn term_price(&self, today: NaiveDate, start: NaiveDate, term_months: u32) -> Decimal {
        let months = term_months.max(1);
        let first = start.month0() as usize;
        let sum: Decimal = (0..months as usize)
            .map(|i| self.monthly_level(first + i))
            .sum();
        round4(sum / Decimal::from(months) + self.daily_deviation(today))
    }

    /// The wholesale price a plan of `plan_type` is priced on `today`: a fixed plan hedges its
    /// `term_months` from `start`; a month-to-month plan follows the day's spot price.
    pub fn price_for(
        &self,
        plan_type: PlanType,
        today: NaiveDate,
        start: NaiveDate,
        term_months: u32,
    ) -> Decimal {
        match plan_type {
            PlanType::Fixed => self.term_price(today, start, term_months),
            PlanType::MonthToMonth => self.spot(today),
        }
    }
}

/// A well-mixed 64-bit hash step (SplitMix64), stable across releases unlike std's hasher.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn rates(energy: &str, base: i64, tdu_fixed: i64, tdu: &str) -> PlanRates {
        PlanRates {
            energy_cents_per_kwh: dec(energy),
            base_charge_cents_per_month: base,
            tdu_fixed_cents_per_month: tdu_fixed,
            tdu_cents_per_kwh: dec(tdu),
            solar_buyback_cents_per_kwh: Decimal::ZERO,
            early_termination_fee_cents: 15_000,
            partner_commission_cents_per_month: 0,
            term_months: 12,
        }
    }

    #[test]
    fn efl_averages_oncor_fixed() {
        // (995 + 423 + U x (9.5 + 4.5403)) / U:
        // 500: (1418 + 7020.15) / 500 = 16.8763; 1000: 15458.3 / 1000 = 15.4583;
        // 2000: 29498.6 / 2000 = 14.7493.
        let r = rates("9.5000", 995, 423, "4.5403");
        assert_eq!(
            efl_averages(&r),
            [dec("16.8763"), dec("15.4583"), dec("14.7493")]
        );
    }

    #[test]
    fn the_efl_prints_averages_to_the_tenth_of_a_cent() {
        // Oncor, 9.5 + 4.5403 per kWh, 9.95 + 4.23 a month, by hand:
        // 500 kWh: $84.3815 / 500 = 16.876 -> 16.9; 1,000: $154.583 -> 15.5 (15.4583);
        // 2,000: $294.986 / 2000 = 14.749 -> 14.7.
        let printed = efl_averages(&rates("9.5000", 995, 423, "4.5403")).map(efl_printed_cents);
        assert_eq!(printed, ["16.9", "15.5", "14.7"]);
        // CenterPoint, 8.1234 + 3.8957 per kWh, 14.95 + 4.39 a month:
        // 500: 15.8871 -> 15.9; 1,000: 13.9531 -> 14.0; 2,000: 12.9861 -> 13.0.
        let printed = efl_averages(&rates("8.1234", 1495, 439, "3.8957")).map(efl_printed_cents);
        assert_eq!(printed, ["15.9", "14.0", "13.0"]);
        // Half a tenth rounds away from zero.
        assert_eq!(efl_printed_cents(dec("12.25")), "12.3");
        assert_eq!(efl_printed_cents(dec("12.2499")), "12.2");
    }

    #[test]
    fn efl_averages_centerpoint_rounding() {
        // (1495 + 439 + U x (8.1234 + 3.8957)) / U = 1934/U + 12.0191:
        // 500: 3.868 + 12.0191 = 15.8871; 1000: 1.934 + 12.0191 = 13.9531;
        // 2000: 0.967 + 12.0191 = 12.9861.
        let r = rates("8.1234", 1495, 439, "3.8957");
        assert_eq!(
            efl_averages(&r),
            [dec("15.8871"), dec("13.9531"), dec("12.9861")]
        );
        // Half a ten-thousandth rounds away from zero: (0 + 0 + 3 x 1.00005) / 3 kWh.
        let r = rates("1.00005", 0, 0, "0");
        assert_eq!(
            average_price_cents_per_kwh(&r, dec("3"), Decimal::ZERO),
            dec("1.0001")
        );
    }

    #[test]
    fn efl_averages_lubbock_without_fixed_delivery() {
        // (995 + 0 + U x (10.25 + 6.442)) / U: 500: 1.99 + 16.692 = 18.682;
        // 1000: 0.995 + 16.692 = 17.687; 2000: 0.4975 + 16.692 = 17.1895.
        let r = rates("10.25", 995, 0, "6.442");
        assert_eq!(
            efl_averages(&r),
            [dec("18.6820"), dec("17.6870"), dec("17.1895")]
        );
    }

    #[test]
    fn solar_buyback_credits_and_the_efl() {
        let group = &default_groups()[2];
        let tdu = DeliveryCharges {
            fixed_cents_per_month: 785,
            cents_per_kwh: dec("5.0383"),
        };
        let r = price_plan(group, &Overrides::default(), dec("5.0000"), &tdu);
        // Energy 5 + 4.5 margin = 9.5; base 995 + 500 commission = 1495; buyback 7.5.
        assert_eq!(r.energy_cents_per_kwh, dec("9.5"));
        assert_eq!(r.base_charge_cents_per_month, 1495);
        assert_eq!(r.solar_buyback_cents_per_kwh, dec("7.5"));
        // The EFL assumes no export: (1495 + 785 + U x 14.5383) / U.
        // 500: 4.56 + 14.5383 = 19.0983; 1000: 2.28 + 14.5383 = 16.8183;
        // 2000: 1.14 + 14.5383 = 15.6783.
        assert_eq!(
            efl_averages(&r),
            [dec("19.0983"), dec("16.8183"), dec("15.6783")]
        );
        // 300 kWh exported at 7.5 cents = 2,250 cents; at 1,000 kWh the average drops by 2.25.
        let credit = solar_buyback_credit_cents(&r, dec("300"));
        assert_eq!(credit, dec("2250"));
        assert_eq!(
            average_price_cents_per_kwh(&r, dec("1000"), credit),
            dec("14.5683")
        );
    }

    #[test]
    fn month_to_month_has_no_term_fee_and_one_month() {
        let group = &default_groups()[3];
        let tdu = DeliveryCharges {
            fixed_cents_per_month: 423,
            cents_per_kwh: dec("4.5403"),
        };
        let overrides = Overrides {
            term_months: Some(36),
            ..Default::default()
        };
        let r = price_plan(group, &overrides, dec("4.4321"), &tdu);
        assert_eq!(r.term_months, 1);
        assert_eq!(r.early_termination_fee_cents, 0);
        // 4.4321 + 5.5 margin = 9.9321; (1495 + 423 + U x 14.4724) / U:
        // 500: 3.836 + 14.4724 = 18.3084; 1000: 1.918 + 14.4724 = 16.3904;
        // 2000: 0.959 + 14.4724 = 15.4314.
        assert_eq!(r.energy_cents_per_kwh, dec("9.9321"));
        assert_eq!(
            efl_averages(&r),
            [dec("18.3084"), dec("16.3904"), dec("15.4314")]
        );
    }

    #[test]
    fn overrides_replace_the_groups_terms() {
        let group = &default_groups()[0];
        let tdu = DeliveryCharges {
            fixed_cents_per_month: 423,
            cents_per_kwh: dec("4.5403"),
        };
        let o = Overrides {
            term_months: Some(36),
            energy_cents_per_kwh: Some(dec("8.25")),
            partner_commission_cents_per_month: Some(1000),
        };
        assert!(o.is_custom());
        let r = price_plan(group, &o, dec("4.0"), &tdu);
        assert_eq!(r.term_months, 36);
        assert_eq!(r.energy_cents_per_kwh, dec("8.25"));
        assert_eq!(r.base_charge_cents_per_month, 995 + 1000);
        assert_eq!(r.partner_commission_cents_per_month, 1000);
    }

    fn curve() -> WholesaleCurve {
        WholesaleCurve {
            zone: "NORTH".into(),
            base_cents_per_kwh: dec("4.00"),
            daily_spread_cents_per_kwh: dec("0.30"),
            monthly_factors: [
                "1.05", "1.00", "0.85", "0.80", "0.90", "1.15", "1.35", "1.50", "1.20", "0.85",
                "0.85", "1.00",
            ]
            .map(dec),
        }
    }

    #[test]
    fn wholesale_is_deterministic_seasonal_and_bounded() {
        let c = curve();
        let aug: NaiveDate = "2026-08-10".parse().unwrap();
        let apr: NaiveDate = "2026-04-10".parse().unwrap();
        assert_eq!(c.spot(aug), c.spot(aug));
        assert!(c.spot(aug) > c.spot(apr));
        for day in 0..400 {
            let d = apr + chrono::Duration::days(day);
            let level = dec("4.00") * c.monthly_factors[d.month0() as usize];
            assert!((c.spot(d) - level).abs() <= dec("0.30"), "{d}");
        }
        // A 12-month hedge averages the whole year: 4 x 12.5 / 12 = 4.1666..., +- the spread.
        let t = c.term_price(apr, apr, 12);
        assert!((t - dec("4.1667")).abs() <= dec("0.3001"), "{t}");
        let other = WholesaleCurve {
            zone: "HOUSTON".into(),
            ..c.clone()
        };
        assert!((0..30).any(|i| {
            let d = apr + chrono::Duration::days(i);
            other.spot(d) != c.spot(d)
        }));
    }

    #[test]
    fn fixed_plans_hedge_their_term_and_month_to_month_follows_the_spot() {
        let c = curve();
        let (today, start): (NaiveDate, NaiveDate) =
            ("2026-04-10".parse().unwrap(), "2026-06-01".parse().unwrap());
        assert_eq!(
            c.price_for(PlanType::Fixed, today, start, 24),
            c.term_price(today, start, 24)
        );
        assert_ne!(
            c.price_for(PlanType::Fixed, today, start, 1),
            c.price_for(PlanType::Fixed, today, start, 12)
        );
        for term in [1, 12, 36] {
            assert_eq!(
                c.price_for(PlanType::MonthToMonth, today, start, term),
                c.spot(today)
            );
        }
    }

    #[test]
    fn the_market_plan_is_a_plain_12_month_fixed_product() {
        let m = market_plan(dec("1.25"), 900);
        assert_eq!((m.plan_type, m.term_months), (PlanType::Fixed, 12));
        assert_eq!(m.energy_margin_cents_per_kwh, dec("1.25"));
        let tdu = DeliveryCharges {
            fixed_cents_per_month: 423,
            cents_per_kwh: dec("4.5403"),
        };
        let r = price_plan(&m, &Overrides::default(), dec("4.0"), &tdu);
        // No commission, no buyback, no termination fee: energy 4 + 1.25, base 900.
        assert_eq!(r.energy_cents_per_kwh, dec("5.25"));
        assert_eq!(r.base_charge_cents_per_month, 900);
        assert_eq!(r.solar_buyback_cents_per_kwh, Decimal::ZERO);
        assert_eq!(r.early_termination_fee_cents, 0);
    }

    #[test]
    fn per_account_terms_from_the_wire() {
        assert_eq!(Overrides::parse(None, None, None), Ok(Overrides::default()));
        let o = Overrides::parse(Some(36), Some(" 8.1234 "), Some("12.5")).unwrap();
        assert_eq!(o.term_months, Some(36));
        assert_eq!(o.energy_cents_per_kwh, Some(dec("8.1234")));
        assert_eq!(o.partner_commission_cents_per_month, Some(1250));
        for (term, energy, commission, param) in [
            (Some(0), None, None, "term_months"),
            (Some(37), None, None, "term_months"),
            (None, Some("-1"), None, "energy_rate_cents_per_kwh"),
            (None, Some("9.12345"), None, "energy_rate_cents_per_kwh"),
            (
                None,
                None,
                Some("5.001"),
                "partner_commission_per_month_dollars",
            ),
        ] {
            let e = Overrides::parse(term, energy, commission).unwrap_err();
            assert_eq!(e.param, param);
        }
        assert_eq!(
            Overrides::parse(Some(40), None, None).unwrap_err().message,
            "term_months must be 1 to 36"
        );
    }
}
