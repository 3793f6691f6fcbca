//! Market values parsed at the edge (ESI IDs, ZIP codes, rates) and the market's calendar:
//! business days over the federal holiday table, plan start-date windows and price expiry.

use std::{collections::BTreeSet, fmt, str::FromStr};

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc, Weekday};
use chrono_tz::America::Chicago;
use rust_decimal::{Decimal, RoundingStrategy};

use super::FieldError;

/// A service point's ESI ID: 17 or 22 digits. Whether its prefix names a utility is a question
/// for the reference data (`tdu_for_esi_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EsiId(String);

impl EsiId {
    /// Accepts the digits with surrounding blanks; nothing else.
    pub fn parse(raw: &str) -> Option<EsiId> {
        let s = raw.trim();
        let well_formed = (s.len() == 17 || s.len() == 22) && s.bytes().all(|b| b.is_ascii_digit());
        well_formed.then(|| EsiId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The seven digits that name the delivery utility.
    pub fn prefix(&self) -> &str {
        &self.0[..7]
    }
}

impl fmt::Display for EsiId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An ESI ID prefix of the reference data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EsiPrefix {
    pub prefix: String,
    pub tdu: String,
    pub esi_id_length: usize,
}

/// The market's calendar date of an instant (the market keeps Central time).
pub fn market_date(t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&Chicago).date_naive()
}

/// The utility an ESI ID belongs to, when its prefix and length match one.
pub fn tdu_for_esi_id<'a>(esi_id: &EsiId, prefixes: &'a [EsiPrefix]) -> Option<&'a str> {
    prefixes
        .iter()
        .find(|p| p.prefix == esi_id.prefix() && p.esi_id_length == esi_id.as_str().len())
        .map(|p| p.tdu.as_str())
}

/// A five-digit US ZIP code (ZIP+4 is accepted and shortened).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ZipCode(String);

impl ZipCode {
    pub fn parse(param: &str, raw: &str) -> Result<ZipCode, FieldError> {
        let s = raw.trim();
        let (five, plus4) = match s.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
        if digits(five, 5) && plus4.is_none_or(|p| digits(p, 4)) {
            Ok(ZipCode(five.to_owned()))
        } else {
            Err(FieldError::invalid(
                param,
                format!("{param} must be a five-digit ZIP code"),
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Cents per kWh, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RateCentsPerKwh(pub Decimal);

impl RateCentsPerKwh {
    /// A rate from the wire: a decimal string or number, 0 to 100 cents, at most 4 places.
    pub fn parse(param: &str, raw: &str) -> Result<Self, FieldError> {
        let invalid = || {
            FieldError::invalid(
                param,
                format!("{param} must be a decimal number of cents per kWh between 0 and 100, at most 4 decimal places"),
            )
        };
        let d = Decimal::from_str(raw.trim()).map_err(|_| invalid())?;
        if d.is_sign_negative() || d > Decimal::ONE_HUNDRED || d.scale() > 4 {
            return Err(invalid());
        }
        Ok(RateCentsPerKwh(d))
    }

    /// Stored text (written by this program): a decimal.
    pub fn from_stored(s: &str) -> anyhow::Result<Self> {
        Ok(RateCentsPerKwh(Decimal::from_str(s)?))
    }

    /// The wire form: four decimal places (`"12.3450"`).
    pub fn to_wire(self) -> String {
        format!("{:.4}", round4(self.0))
    }
}

/// Rounds half away from zero to 4 places, the precision of every rate the product shows.
pub fn round4(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(4, RoundingStrategy::MidpointAwayFromZero)
}

/// Whole cents from a dollar amount given on the wire (`"12.5"`, at most 2 places, 0 to 1,000).
pub fn parse_dollars_to_cents(param: &str, raw: &str) -> Result<i64, FieldError> {
    let invalid =
        || FieldError::invalid(param, format!("{param} must be dollars between 0 and 1000"));
    let d = Decimal::from_str(raw.trim()).map_err(|_| invalid())?;
    if d.is_sign_negative() || d > Decimal::from(1000) || d.scale() > 2 {
        return Err(invalid());
    }
    i64::try_from(d * Decimal::ONE_HUNDRED).map_err(|_| invalid())
}

/// Business days: Monday to Friday except US federal holidays (observed dates, from the table).
#[derive(Debug, Clone, Default)]
pub struct BusinessCalendar {
    holidays: BTreeSet<NaiveDate>,
}

impl BusinessCalendar {
    pub fn new(holidays: impl IntoIterator<Item = NaiveDate>) -> Self {
        BusinessCalendar {
            holidays: holidays.into_iter().collect(),
        }
    }

    pub fn is_business_day(&self, d: NaiveDate) -> bool {
        !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) && !self.holidays.contains(&d)
    }

    /// The `n`th business day after `from` (`from` itself never counts).
    pub fn add_business_days(&self, from: NaiveDate, n: u32) -> NaiveDate {
        let mut d = from;
        let mut left = n;
        while left > 0 {
            d += Duration::days(1);
            if self.is_business_day(d) {
                left -= 1;
            }
        }
        d
    }
}

/// Who is enrolling, which decides the start dates a plan allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enroller {
    Customer,
    /// The partner accepts on the customer's behalf: 7 to 30 days ahead.
    ClientAgent,
}

/// The dates a plan may start on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartWindow {
    /// Earliest date of any start (a move-in for customers).
    pub earliest: NaiveDate,
    /// Earliest date of a switch (the rescission wait and the market's 3 business days).
    pub earliest_switch: NaiveDate,
    pub latest: NaiveDate,
}

/// The market refuses start dates further out.
pub const MAX_DAYS_AHEAD: i64 = 90;
pub const CLIENT_AGENT_MIN_DAYS: i64 = 7;
pub const CLIENT_AGENT_MAX_DAYS: i64 = 30;
/// Switches start at least this many business days out.
pub const SWITCH_BUSINESS_DAYS: u32 = 3;
/// A priced plan is good for this many business days.
pub const PRICE_VALID_BUSINESS_DAYS: u32 = 5;

pub fn start_window(today: NaiveDate, enroller: Enroller, cal: &BusinessCalendar) -> StartWindow {
    match enroller {
        Enroller::Customer => StartWindow {
            earliest: today + Duration::days(1),
            earliest_switch: cal.add_business_days(today, SWITCH_BUSINESS_DAYS),
            latest: today + Duration::days(MAX_DAYS_AHEAD),
        },
        Enroller::ClientAgent => {
            let earliest = today + Duration::days(CLIENT_AGENT_MIN_DAYS);
            StartWindow {
                earliest,
                earliest_switch: earliest.max(cal.add_business_days(today, SWITCH_BUSINESS_DAYS)),
                latest: today + Duration::days(CLIENT_AGENT_MAX_DAYS),
            }
        }
    }
}

/// The market date on which a price given `today` stops being valid.
pub fn price_expiry_date(today: NaiveDate, cal: &BusinessCalendar) -> NaiveDate {
    cal.add_business_days(today, PRICE_VALID_BUSINESS_DAYS)
}

/// Eligibility of a ZIP code from its utility rows: the share of its premises served by a
/// utility open to retail choice, 0 to 100.
pub fn eligibility_likelihood(likelihoods: &[i64]) -> u8 {
    let total: i64 = likelihoods.iter().map(|l| (*l).clamp(0, 100)).sum();
    u8::try_from(total.clamp(0, 100)).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn market_dates_are_central_time() {
        let t = DateTime::parse_from_rfc3339("2026-07-01T04:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(market_date(t).to_string(), "2026-06-30");
        let t = DateTime::parse_from_rfc3339("2026-01-01T06:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(market_date(t).to_string(), "2026-01-01");
    }

    #[test]
    fn esi_ids_are_17_or_22_digits() {
        assert!(EsiId::parse("10443720000000001").is_some());
        assert!(EsiId::parse(" 1008901000000000000001 ").is_some());
        for bad in [
            "",
            "1044372000000000",
            "104437200000000012",
            "1044372000000000A",
            "10443720-00000001",
        ] {
            assert!(EsiId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn an_esi_id_needs_a_known_prefix_of_its_length() {
        let prefixes = [
            EsiPrefix {
                prefix: "1044372".into(),
                tdu: "ONCOR".into(),
                esi_id_length: 17,
            },
            EsiPrefix {
                prefix: "1008901".into(),
                tdu: "CENTERPOINT".into(),
                esi_id_length: 22,
            },
        ];
        let oncor = EsiId::parse("10443720000000001").unwrap();
        assert_eq!(tdu_for_esi_id(&oncor, &prefixes), Some("ONCOR"));
        let short_cnp = EsiId::parse("10089010000000001").unwrap();
        assert_eq!(tdu_for_esi_id(&short_cnp, &prefixes), None);
        let unknown = EsiId::parse("99999990000000001").unwrap();
        assert_eq!(tdu_for_esi_id(&unknown, &prefixes), None);
    }

    #[test]
    fn zip_codes() {
        assert_eq!(ZipCode::parse("z", " 75201 ").unwrap().as_str(), "75201");
        assert_eq!(ZipCode::parse("z", "75201-1234").unwrap().as_str(), "75201");
        for bad in ["7520", "752011", "7520A", "75201-12", "", "75201-"] {
            assert!(ZipCode::parse("z", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_and_dollars() {
        assert_eq!(
            RateCentsPerKwh::parse("r", "12.345").unwrap().to_wire(),
            "12.3450"
        );
        for bad in ["-1", "100.01", "1.23456", "abc", ""] {
            assert!(RateCentsPerKwh::parse("r", bad).is_err(), "{bad}");
        }
        assert_eq!(parse_dollars_to_cents("c", "12.5").unwrap(), 1250);
        assert_eq!(parse_dollars_to_cents("c", "0").unwrap(), 0);
        for bad in ["-1", "1000.01", "1.005", "x"] {
            assert!(parse_dollars_to_cents("c", bad).is_err(), "{bad}");
        }
    }

    fn calendar() -> BusinessCalendar {
        // Thanksgiving 2026 and Christmas 2026 (a Friday).
        BusinessCalendar::new([d("2026-11-26"), d("2026-12-25")])
    }

    #[test]
    fn business_days_skip_weekends_and_holidays() {
        let cal = calendar();
        // Friday 20 Nov + 3 = Wed 25 Nov; + 5 = Mon 30 Nov (skips Thanksgiving).
        assert_eq!(cal.add_business_days(d("2026-11-20"), 3), d("2026-11-25"));
        assert_eq!(cal.add_business_days(d("2026-11-20"), 5), d("2026-11-30"));
        // From a Saturday, the first business day is Monday.
        assert_eq!(cal.add_business_days(d("2026-11-21"), 1), d("2026-11-23"));
        assert_eq!(cal.add_business_days(d("2026-12-24"), 1), d("2026-12-28"));
        assert!(!cal.is_business_day(d("2026-11-26")));
    }

    #[test]
    fn start_windows() {
        let cal = calendar();
        let w = start_window(d("2026-11-23"), Enroller::Customer, &cal);
        assert_eq!(w.earliest, d("2026-11-24"));
        assert_eq!(w.earliest_switch, d("2026-11-27"));
        assert_eq!(w.latest, d("2027-02-21"));
        let w = start_window(d("2026-11-23"), Enroller::ClientAgent, &cal);
        assert_eq!((w.earliest, w.latest), (d("2026-11-30"), d("2026-12-23")));
        assert_eq!(price_expiry_date(d("2026-11-23"), &cal), d("2026-12-01"));
    }

    #[test]
    fn likelihood_adds_open_shares_up_to_100() {
        assert_eq!(eligibility_likelihood(&[]), 0);
        assert_eq!(eligibility_likelihood(&[60]), 60);
        assert_eq!(eligibility_likelihood(&[70, 30]), 100);
        assert_eq!(eligibility_likelihood(&[80, 40]), 100);
    }
}
