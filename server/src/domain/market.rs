//! Market values parsed at the edge (ESI IDs, ZIP codes, rates), the market's calendar
//! (business days over the federal holiday table, plan start-date windows and price expiry),
//! the utilities' delivery charges, and who may buy: eligibility and the directory's searches.

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

/// The ESI ID prefixes of the reference data (`tdu_esi_prefixes`, migration 0002), each with its
/// utility's ESI ID length, sorted: what the OpenAPI document states an ESI ID may be. A test
/// holds them to the table.
pub const KNOWN_ESI_PREFIXES: &[(&str, usize)] = &[
    ("1003278", 17),
    ("1008901", 22),
    ("1017699", 17),
    ("1020404", 17),
    ("1040051", 17),
    ("1040060", 17),
    ("1044372", 17),
];

/// The ESI IDs whose prefix and length name a utility (`KNOWN_ESI_PREFIXES`), blanks around
/// allowed, as a regular expression.
pub fn esi_id_pattern() -> String {
    let ids: Vec<String> = KNOWN_ESI_PREFIXES
        .iter()
        .map(|(prefix, length)| format!("{prefix}[0-9]{{{}}}", length - prefix.len()))
        .collect();
    format!(r"^\s*({})\s*$", ids.join("|"))
}

/// The market's calendar date of an instant (the market keeps Central time).
pub fn market_date(t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&Chicago).date_naive()
}

/// The instant a market day begins: midnight in the market's time zone (a day on which the
/// clocks change still begins at midnight, which exists on both).
pub fn start_of_market_day(date: NaiveDate) -> DateTime<Utc> {
    use chrono::TimeZone;
    let midnight = date.and_time(chrono::NaiveTime::MIN);
    Chicago
        .from_local_datetime(&midnight)
        .earliest()
        .map_or_else(|| midnight.and_utc(), |t| t.with_timezone(&Utc))
}

/// The instant of `hour` o'clock (market time) on `date`; on a day whose clocks change the hour
/// is read on the clock of that hour (an hour the spring change skips becomes the next).
pub fn at_market_time(date: NaiveDate, hour: u32) -> DateTime<Utc> {
    use chrono::TimeZone;
    let local = date.and_time(chrono::NaiveTime::MIN) + Duration::hours(i64::from(hour));
    Chicago
        .from_local_datetime(&local)
        .earliest()
        .or_else(|| {
            Chicago
                .from_local_datetime(&(local + Duration::hours(1)))
                .earliest()
        })
        .map_or_else(|| local.and_utc(), |t| t.with_timezone(&Utc))
}

/// The instant `days` market days after `t` at the same wall-clock time in the market. A day
/// in the market is 23 or 25 hours long when the clocks change, so adding `days * 24` hours
/// would land an hour off and, near midnight, on the wrong date. A time the spring change
/// skips (2:00 to 3:00) becomes the time an hour later.
pub fn add_market_days(t: DateTime<Utc>, days: i64) -> DateTime<Utc> {
    use chrono::TimeZone;
    let local = t.with_timezone(&Chicago).naive_local();
    let target = local + Duration::days(days);
    Chicago
        .from_local_datetime(&target)
        .earliest()
        .or_else(|| {
            Chicago
                .from_local_datetime(&(target + Duration::hours(1)))
                .earliest()
        })
        .map_or(t + Duration::days(days), |l| l.with_timezone(&Utc))
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

/// A utility's delivery charges in effect, as plans are priced and cycles billed with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryCharges {
    pub fixed_cents_per_month: i64,
    pub cents_per_kwh: Decimal,
}

impl DeliveryCharges {
    /// The charges as the reference table stores them (cents per kWh as decimal text); `None`
    /// when the text is not a decimal.
    pub fn from_stored(fixed_cents_per_month: i64, cents_per_kwh: &str) -> Option<Self> {
        Some(DeliveryCharges {
            fixed_cents_per_month,
            cents_per_kwh: cents_per_kwh.trim().parse().ok()?,
        })
    }
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

impl StartWindow {
    /// Whether a plan may be priced for a service start on `start`.
    pub fn allows(&self, start: NaiveDate) -> bool {
        (self.earliest..=self.latest).contains(&start)
    }
}

/// The market refuses start dates further out.
pub const MAX_DAYS_AHEAD: i64 = 90;
pub const CLIENT_AGENT_MIN_DAYS: i64 = 7;
pub const CLIENT_AGENT_MAX_DAYS: i64 = 30;
/// Switches start at least this many business days out.
pub const SWITCH_BUSINESS_DAYS: u32 = 3;
/// A priced plan is good for this many business days.
pub const PRICE_VALID_BUSINESS_DAYS: u32 = 5;

/// Whether a move-in may still start today at `now`: on a business day, before the utility's
/// same-day cut-off (market time). A utility without one (`None`) starts move-ins the next day
/// at the earliest.
pub fn same_day_move_in(
    now: DateTime<Utc>,
    cutoff: Option<chrono::NaiveTime>,
    cal: &BusinessCalendar,
) -> bool {
    let local = now.with_timezone(&Chicago);
    cutoff.is_some_and(|c| cal.is_business_day(local.date_naive()) && local.time() < c)
}

/// A utility's same-day cut-off as stored (`HH:MM`, market time); `None` when it has none.
pub fn parse_cutoff(stored: Option<&str>) -> Option<chrono::NaiveTime> {
    stored.and_then(|s| chrono::NaiveTime::parse_from_str(s, "%H:%M").ok())
}

/// The dates a plan may start on, decided `today`; `same_day` when a move-in may still start
/// today (`same_day_move_in`).
pub fn start_window(
    today: NaiveDate,
    enroller: Enroller,
    cal: &BusinessCalendar,
    same_day: bool,
) -> StartWindow {
    match enroller {
        Enroller::Customer => StartWindow {
            earliest: if same_day {
                today
            } else {
                today + Duration::days(1)
            },
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

/// The instant a price given at `now` (on the market day `today`) expires: the same time of
/// day, `PRICE_VALID_BUSINESS_DAYS` business days later.
pub fn price_expires_at(
    now: DateTime<Utc>,
    today: NaiveDate,
    cal: &BusinessCalendar,
) -> DateTime<Utc> {
    add_market_days(now, (price_expiry_date(today, cal) - today).num_days())
}

/// The version of the regulator's customer-rights text ("Your Rights as a Customer") every plan
/// links to.
pub const YRAC_VERSION: &str = "2024.1";

/// Eligibility of a ZIP code from its utility rows: the share of its premises served by a
/// utility open to retail choice, 0 to 100.
pub fn eligibility_likelihood(likelihoods: &[i64]) -> u8 {
    let total: i64 = likelihoods.iter().map(|l| (*l).clamp(0, 100)).sum();
    u8::try_from(total.clamp(0, 100)).unwrap_or(100)
}

/// How likely a place is open to retail choice (0 to 100), and the utilities that may serve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetailChoice {
    pub likelihood: u8,
    pub tdus: Vec<String>,
}

/// Eligibility of a place. A full address found in the directory means certain eligibility:
/// its meter's utility (`found_tdu`) serves it. Otherwise the postal code decides, from each
/// utility's share of its premises (`postal_code_shares`, utility and percent).
pub fn eligibility(found_tdu: Option<&str>, postal_code_shares: &[(&str, i64)]) -> RetailChoice {
    match found_tdu {
        Some(tdu) => RetailChoice {
            likelihood: 100,
            tdus: vec![tdu.to_owned()],
        },
        None => {
            let shares: Vec<i64> = postal_code_shares.iter().map(|(_, l)| *l).collect();
            RetailChoice {
                likelihood: eligibility_likelihood(&shares),
                tdus: postal_code_shares
                    .iter()
                    .map(|(t, _)| (*t).to_owned())
                    .collect(),
            }
        }
    }
}

/// The market is Texas's: an address given in another state has no meter in the directory. A
/// missing or blank state does not exclude anything.
pub fn state_in_market(state: Option<&str>) -> bool {
    state
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .is_none_or(|s| s.eq_ignore_ascii_case("TX") || s.eq_ignore_ascii_case("texas"))
}

/// Addresses a directory search answers unless told otherwise, and at most.
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
pub const MAX_SEARCH_LIMIT: u32 = 50;

/// The `limit` of a directory search: `DEFAULT_SEARCH_LIMIT` when absent, else 1 to
/// `MAX_SEARCH_LIMIT`.
pub fn parse_search_limit(limit: Option<u32>) -> Result<u32, FieldError> {
    let limit = limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if (1..=MAX_SEARCH_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(FieldError::invalid(
            "limit",
            format!("limit must be 1 to {MAX_SEARCH_LIMIT}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn the_esi_id_pattern_names_each_known_prefix_at_its_length() {
        let pattern = esi_id_pattern();
        assert!(pattern.starts_with(r"^\s*(1003278[0-9]{10}|1008901[0-9]{15}|"));
        assert!(pattern.ends_with(r"|1044372[0-9]{10})\s*$"));
        let prefixes = [
            EsiPrefix {
                prefix: "1008901".into(),
                tdu: "CENTERPOINT".into(),
                esi_id_length: 22,
            },
            EsiPrefix {
                prefix: "1044372".into(),
                tdu: "ONCOR".into(),
                esi_id_length: 17,
            },
        ];
        for id in ["1008901000000000000000", "10443720000000000"] {
            let esi = EsiId::parse(id).unwrap();
            assert!(tdu_for_esi_id(&esi, &prefixes).is_some(), "{id}");
        }
    }

    #[test]
    fn market_days_keep_the_time_of_day_across_the_clock_changes() {
        let t = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        // Spring: 23:30 CST, then 23:30 CDT a day later (23 hours).
        assert_eq!(
            add_market_days(t("2027-03-14T05:30:00Z"), 1),
            t("2027-03-15T04:30:00Z")
        );
        // Autumn: 00:30 CDT, then 00:30 CST (25 hours); 01:30 happens twice on the day of
        // the change, and the first one is taken.
        assert_eq!(
            add_market_days(t("2026-10-31T05:30:00Z"), 1),
            t("2026-11-01T05:30:00Z")
        );
        assert_eq!(
            add_market_days(t("2026-11-01T05:30:00Z"), 1),
            t("2026-11-02T06:30:00Z")
        );
        assert_eq!(
            add_market_days(t("2026-10-31T06:30:00Z"), 1),
            t("2026-11-01T06:30:00Z")
        );
        // 02:30 does not exist on the spring day: an hour later.
        assert_eq!(
            add_market_days(t("2027-03-13T08:30:00Z"), 1),
            t("2027-03-14T08:30:00Z")
        );
        assert_eq!(
            add_market_days(t("2026-12-02T18:00:00Z"), 0),
            t("2026-12-02T18:00:00Z")
        );
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
        let w = start_window(d("2026-11-23"), Enroller::Customer, &cal, false);
        assert_eq!(w.earliest, d("2026-11-24"));
        assert_eq!(w.earliest_switch, d("2026-11-27"));
        assert_eq!(w.latest, d("2027-02-21"));
        let w = start_window(d("2026-11-23"), Enroller::Customer, &cal, true);
        assert_eq!(
            (w.earliest, w.earliest_switch),
            (d("2026-11-23"), d("2026-11-27"))
        );
        let w = start_window(d("2026-11-23"), Enroller::ClientAgent, &cal, false);
        assert_eq!((w.earliest, w.latest), (d("2026-11-30"), d("2026-12-23")));
        // A client agent enrollment starts a week out, same-day utility or not.
        assert_eq!(
            start_window(d("2026-11-23"), Enroller::ClientAgent, &cal, true),
            w
        );
        assert_eq!(price_expiry_date(d("2026-11-23"), &cal), d("2026-12-01"));
    }

    #[test]
    fn a_move_in_starts_today_only_before_the_cut_off_of_a_business_day() {
        let cal = calendar();
        let cutoff = parse_cutoff(Some("17:00"));
        assert_eq!(cutoff, chrono::NaiveTime::from_hms_opt(17, 0, 0));
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        // Monday 2026-11-23, Central standard time (UTC-6).
        assert!(same_day_move_in(at("2026-11-23T22:59:00Z"), cutoff, &cal));
        assert!(!same_day_move_in(at("2026-11-23T23:00:00Z"), cutoff, &cal));
        // 00:30 on Tuesday in Texas (06:30 UTC): a new business day, long before its cut-off.
        assert!(same_day_move_in(at("2026-11-24T06:30:00Z"), cutoff, &cal));
        // Thanksgiving and a Saturday are no business days.
        assert!(!same_day_move_in(at("2026-11-26T15:00:00Z"), cutoff, &cal));
        assert!(!same_day_move_in(at("2026-11-28T15:00:00Z"), cutoff, &cal));
        // A utility without a cut-off never starts the same day.
        assert!(!same_day_move_in(at("2026-11-23T15:00:00Z"), None, &cal));
        assert_eq!(parse_cutoff(Some("5pm")), None);
    }

    #[test]
    fn likelihood_adds_open_shares_up_to_100() {
        assert_eq!(eligibility_likelihood(&[]), 0);
        assert_eq!(eligibility_likelihood(&[60]), 60);
        assert_eq!(eligibility_likelihood(&[70, 30]), 100);
        assert_eq!(eligibility_likelihood(&[80, 40]), 100);
    }

    #[test]
    fn a_full_address_found_means_certain_eligibility() {
        let shares = [("ONCOR", 40), ("TNMP", 20)];
        let found = eligibility(Some("TNMP"), &shares);
        assert_eq!(found.likelihood, 100);
        assert_eq!(found.tdus, ["TNMP"]);
        let by_zip = eligibility(None, &shares);
        assert_eq!(by_zip.likelihood, 60);
        assert_eq!(by_zip.tdus, ["ONCOR", "TNMP"]);
        let closed = eligibility(None, &[]);
        assert_eq!((closed.likelihood, closed.tdus.len()), (0, 0));
    }

    #[test]
    fn only_texas_addresses_are_in_the_market() {
        for state in [
            None,
            Some(""),
            Some("  "),
            Some("TX"),
            Some("tx"),
            Some(" Texas "),
        ] {
            assert!(state_in_market(state), "{state:?}");
        }
        for state in [Some("OK"), Some("Tex"), Some("TXX")] {
            assert!(!state_in_market(state), "{state:?}");
        }
    }

    #[test]
    fn search_limits() {
        assert_eq!(parse_search_limit(None), Ok(DEFAULT_SEARCH_LIMIT));
        assert_eq!(parse_search_limit(Some(1)), Ok(1));
        assert_eq!(parse_search_limit(Some(50)), Ok(50));
        for bad in [0, 51] {
            let e = parse_search_limit(Some(bad)).unwrap_err();
            assert_eq!(
                (e.param.as_str(), e.message.as_str()),
                ("limit", "limit must be 1 to 50")
            );
        }
    }

    #[test]
    fn a_start_window_allows_its_own_ends() {
        let w = start_window(d("2026-11-23"), Enroller::Customer, &calendar(), false);
        assert!(w.allows(w.earliest) && w.allows(w.latest));
        assert!(!w.allows(w.earliest - Duration::days(1)));
        assert!(!w.allows(w.latest + Duration::days(1)));
    }

    #[test]
    fn a_price_expires_five_business_days_later_at_the_same_time() {
        let now = DateTime::parse_from_rfc3339("2026-11-23T15:04:05Z")
            .unwrap()
            .with_timezone(&Utc);
        let expires = price_expires_at(now, d("2026-11-23"), &calendar());
        assert_eq!(expires.to_rfc3339(), "2026-12-01T15:04:05+00:00");
    }

    #[test]
    fn delivery_charges_from_the_reference_table() {
        let c = DeliveryCharges::from_stored(423, " 4.5403").unwrap();
        assert_eq!(c.fixed_cents_per_month, 423);
        assert_eq!(c.cents_per_kwh, Decimal::new(45403, 4));
        assert_eq!(DeliveryCharges::from_stored(423, ""), None);
        assert_eq!(DeliveryCharges::from_stored(423, "4,54"), None);
    }
}
