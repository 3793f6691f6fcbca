//! An account's profile: the customer's contact and identity facts, parsed from requests into
//! values that are valid once they exist.

use std::collections::BTreeMap;

use app::api::{
    CreateAccountIn, Environment, Patch, PostalAddress, PostalAddressIn, UpdateAccountIn,
};
use chrono::{Months, NaiveDate};

use super::FieldError;

const MAX_NAME_CHARS: usize = 100;
const MAX_METADATA_KEYS: usize = 20;
const MAX_METADATA_KEY_CHARS: usize = 40;
const MAX_METADATA_VALUE_CHARS: usize = 500;
const MAX_URL_CHARS: usize = 2048;
const MIN_AGE_YEARS: u32 = 18;
const MAX_AGE_YEARS: u32 = 130;

/// What the request parsers need to know besides the request.
#[derive(Debug, Clone, Copy)]
pub struct ParseContext {
    /// Today in the market's time zone.
    pub today: NaiveDate,
    pub environment: Environment,
}

/// The profile of an account as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    /// E.164.
    pub phone: Option<String>,
    pub date_of_birth: Option<NaiveDate>,
    pub preliminary_address: Option<PostalAddress>,
    pub renewals_url: Option<String>,
    pub metadata: BTreeMap<String, String>,
}

impl Profile {
    /// The identity minimum to start service: names, e-mail, phone and date of birth.
    pub fn is_identity_complete(&self) -> bool {
        self.phone.is_some() && self.date_of_birth.is_some()
    }

    /// Whether `other` differs from this profile in the identity fields (names, e-mail, phone,
    /// date of birth): the change `enrollment.identity_updated` announces, whichever way it was
    /// made.
    pub fn identity_differs(&self, other: &Profile) -> bool {
        (
            &self.email,
            &self.first_name,
            &self.last_name,
            &self.phone,
            self.date_of_birth,
        ) != (
            &other.email,
            &other.first_name,
            &other.last_name,
            &other.phone,
            other.date_of_birth,
        )
    }
}

/// The number printed on a customer's documents: nine digits from a gap-free counter.
pub fn account_number(sequence: i64) -> String {
    format!("{:09}", 100_000_000 + sequence)
}

/// An e-mail address, trimmed and lower-cased.
pub fn parse_email(param: &str, raw: &str) -> Result<String, FieldError> {
    let trimmed = raw.trim();
    let invalid = || FieldError::invalid(param, format!("{param} must be a valid e-mail address"));
    if trimmed.len() > 254 {
        return Err(invalid());
    }
    let parsed: email_address::EmailAddress = trimmed.parse().map_err(|_| invalid())?;
    // Consumers' mail lives on public domains; `user@localhost`-style addresses are typos here.
    if !parsed.domain().contains('.') || parsed.domain().starts_with('[') {
        return Err(invalid());
    }
    Ok(trimmed.to_lowercase())
}

/// When a customer granted the partner a limited power of attorney: an RFC 3339 time, not in
/// the future (defaults to now).
pub fn parse_client_agent_accepted_at(
    param: &str,
    raw: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<chrono::DateTime<chrono::Utc>, FieldError> {
    let Some(raw) = raw else {
        return Ok(now);
    };
    let at = chrono::DateTime::parse_from_rfc3339(raw.trim())
        .map_err(|_| FieldError::invalid(param, format!("{param} must be an RFC 3339 time")))?
        .with_timezone(&chrono::Utc);
    if at > now + chrono::Duration::minutes(5) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must not be in the future"),
        ));
    }
    Ok(at)
}

/// A Social Security number. Never printed, logged or returned; only its last four digits are
/// shown.
#[derive(Clone, PartialEq, Eq)]
pub struct Ssn(String);

impl std::fmt::Debug for Ssn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ssn(***-**-{})", self.last4())
    }
}

impl Ssn {
    pub fn last4(&self) -> &str {
        &self.0[5..]
    }

    pub fn digits(&self) -> &str {
        &self.0
    }
}

/// Nine digits, as `123456789` or `123-45-6789`, that the SSA could have issued (no area 000,
/// 666 or 900-999, no group 00, no serial 0000).
pub fn parse_ssn(param: &str, raw: &str) -> Result<Ssn, FieldError> {
    let invalid = || FieldError::invalid(param, format!("{param} must be a 9-digit SSN"));
    let raw = raw.trim();
    let digits: String = match raw.len() {
        9 => raw.to_owned(),
        11 if raw.as_bytes()[3] == b'-' && raw.as_bytes()[6] == b'-' => raw.replace('-', ""),
        _ => return Err(invalid()),
    };
    if digits.len() != 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let (area, group, serial) = (&digits[..3], &digits[3..5], &digits[5..]);
    if area == "000" || area == "666" || area.starts_with('9') || group == "00" || serial == "0000"
    {
        return Err(invalid());
    }
    Ok(Ssn(digits))
}

/// A person's name: 1 to 100 characters after trimming, no control characters.
pub fn parse_name(param: &str, raw: &str) -> Result<String, FieldError> {
    let trimmed = raw.trim();
    let chars = trimmed.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS {
        return Err(FieldError::invalid(
            param,
            format!("{param} must be 1 to {MAX_NAME_CHARS} characters"),
        ));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must not contain control characters"),
        ));
    }
    Ok(trimmed.to_owned())
}

/// A US phone number in any common notation, normalized to E.164 (`+1NXXNXXXXXX`).
pub fn parse_us_phone(param: &str, raw: &str) -> Result<String, FieldError> {
    let invalid = || {
        FieldError::invalid(
            param,
            format!("{param} must be a US phone number, e.g. +1 512 555 0123"),
        )
    };
    let mut digits = String::with_capacity(11);
    for (i, ch) in raw.trim().chars().enumerate() {
        match ch {
            '0'..='9' => digits.push(ch),
            '+' if i == 0 => {}
            ' ' | '-' | '.' | '(' | ')' => {}
            _ => return Err(invalid()),
        }
    }
    let national = match digits.len() {
        10 => digits.as_str(),
        11 if digits.starts_with('1') => &digits[1..],
        _ => return Err(invalid()),
    };
    let b = national.as_bytes();
    // North American numbering plan: area code and exchange start with 2-9.
    if !(b'2'..=b'9').contains(&b[0]) || !(b'2'..=b'9').contains(&b[3]) {
        return Err(invalid());
    }
    Ok(format!("+1{national}"))
}

/// A date of birth: `YYYY-MM-DD`, in the past, of someone at least 18 (and at most 130).
pub fn parse_date_of_birth(
    param: &str,
    raw: &str,
    today: NaiveDate,
) -> Result<NaiveDate, FieldError> {
    let date = NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d")
        .map_err(|_| FieldError::invalid(param, format!("{param} must be a date (YYYY-MM-DD)")))?;
    if date >= today {
        return Err(FieldError::invalid(
            param,
            format!("{param} must be in the past"),
        ));
    }
    let adult_on = date.checked_add_months(Months::new(12 * MIN_AGE_YEARS));
    if adult_on.is_none_or(|d| d > today) {
        return Err(FieldError::invalid(
            param,
            format!("the customer must be at least {MIN_AGE_YEARS} years old"),
        ));
    }
    if date
        .checked_add_months(Months::new(12 * MAX_AGE_YEARS))
        .is_some_and(|d| d < today)
    {
        return Err(FieldError::invalid(
            param,
            format!("{param} is not plausible"),
        ));
    }
    Ok(date)
}

/// Partner metadata: at most 20 keys of 1-40 characters, values of at most 500 characters.
pub fn parse_metadata(
    param: &str,
    raw: BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, FieldError> {
    if raw.len() > MAX_METADATA_KEYS {
        return Err(FieldError::invalid(
            param,
            format!("{param} may have at most {MAX_METADATA_KEYS} keys"),
        ));
    }
    for (key, value) in &raw {
        let key_chars = key.chars().count();
        if key_chars == 0 || key_chars > MAX_METADATA_KEY_CHARS || key.chars().any(char::is_control)
        {
            return Err(FieldError::invalid(
                param,
                format!("{param} keys must be 1 to {MAX_METADATA_KEY_CHARS} characters"),
            ));
        }
        if value.chars().count() > MAX_METADATA_VALUE_CHARS {
            return Err(FieldError::invalid(
                format!("{param}.{key}"),
                format!("{param} values must be at most {MAX_METADATA_VALUE_CHARS} characters"),
            ));
        }
    }
    Ok(raw)
}

/// Where renewal notices send the customer: https, or http on the local machine in sandbox.
pub fn parse_renewals_url(
    param: &str,
    raw: &str,
    environment: Environment,
) -> Result<String, FieldError> {
    let trimmed = raw.trim();
    let url = url::Url::parse(trimmed)
        .ok()
        .filter(|_| trimmed.len() <= MAX_URL_CHARS)
        .ok_or_else(|| FieldError::invalid(param, format!("{param} must be an absolute URL")))?;
    let local = matches!(
        url.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    let allowed = match url.scheme() {
        "https" => url.host().is_some(),
        "http" => environment == Environment::Sandbox && local,
        _ => false,
    };
    if !allowed {
        return Err(FieldError::invalid(
            param,
            match environment {
                Environment::Sandbox => {
                    format!("{param} must use https (http is allowed for localhost in sandbox)")
                }
                Environment::Live => format!("{param} must use https"),
            },
        ));
    }
    Ok(url.to_string())
}

fn required_text(param: &str, raw: Option<String>, max: usize) -> Result<String, FieldError> {
    let value = raw.map(|s| s.trim().to_owned()).unwrap_or_default();
    if value.is_empty() {
        return Err(FieldError::missing(param));
    }
    if value.chars().count() > max || value.chars().any(char::is_control) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must be at most {max} characters of text"),
        ));
    }
    Ok(value)
}

/// A US postal address: street, optional unit, city, two-letter state and ZIP (or ZIP+4).
pub fn parse_postal_address(
    param: &str,
    raw: PostalAddressIn,
) -> Result<PostalAddress, FieldError> {
    let address_1 = required_text(&format!("{param}.address_1"), raw.address_1, 100)?;
    let address_2 = match raw.address_2.map(|s| s.trim().to_owned()) {
        Some(s) if !s.is_empty() => {
            Some(required_text(&format!("{param}.address_2"), Some(s), 100)?)
        }
        _ => None,
    };
    let city = required_text(&format!("{param}.city"), raw.city, 60)?;
    let state_param = format!("{param}.state");
    let state = required_text(&state_param, raw.state, 2)?.to_ascii_uppercase();
    if state.len() != 2 || !state.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(FieldError::invalid(
            state_param,
            "state must be a two-letter code such as TX",
        ));
    }
    let zip_param = format!("{param}.postal_code");
    let zip = required_text(&zip_param, raw.postal_code, 10)?;
    let postal_code = parse_postal_code(&zip_param, &zip)?;
    Ok(PostalAddress {
        address_1,
        address_2,
        city,
        state,
        postal_code,
    })
}

/// A US ZIP code (`12345` or `12345-6789`).
pub fn parse_postal_code(param: &str, raw: &str) -> Result<String, FieldError> {
    let raw = raw.trim();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let ok = match raw.split_once('-') {
        None => digits(raw, 5),
        Some((zip, plus4)) => digits(zip, 5) && digits(plus4, 4),
    };
    if ok {
        Ok(raw.to_owned())
    } else {
        Err(FieldError::invalid(
            param,
            format!("{param} must be a US ZIP code (12345 or 12345-6789)"),
        ))
    }
}

impl Profile {
    /// The profile of a new account.
    pub fn parse_new(input: CreateAccountIn, ctx: &ParseContext) -> Result<Profile, FieldError> {
        let email = parse_email("email", &input.email)?;
        let first_name = parse_name("first_name", &input.first_name)?;
        let last_name = parse_name("last_name", &input.last_name)?;
        let phone = input
            .phone
            .map(|p| parse_us_phone("phone", &p))
            .transpose()?;
        let date_of_birth = input
            .date_of_birth
            .map(|d| parse_date_of_birth("date_of_birth", &d, ctx.today))
            .transpose()?;
        let preliminary_address = input
            .preliminary_address
            .map(|a| parse_postal_address("preliminary_address", a))
            .transpose()?;
        let renewals_url = input
            .renewals_url
            .map(|u| parse_renewals_url("renewals_url", &u, ctx.environment))
            .transpose()?;
        let metadata = parse_metadata("metadata", input.metadata.unwrap_or_default())?;
        Ok(Profile {
            email,
            first_name,
            last_name,
            phone,
            date_of_birth,
            preliminary_address,
            renewals_url,
            metadata,
        })
    }

    /// This profile with a PATCH applied; absent fields stay, `null` clears optional ones.
    pub fn patched(
        mut self,
        input: UpdateAccountIn,
        ctx: &ParseContext,
    ) -> Result<Profile, FieldError> {
        fn required<T>(
            param: &str,
            patch: Patch<String>,
            parse: impl FnOnce(&str, &str) -> Result<T, FieldError>,
        ) -> Result<Option<T>, FieldError> {
            match patch {
                Patch::Absent => Ok(None),
                Patch::Null => Err(FieldError::invalid(
                    param,
                    format!("{param} cannot be null"),
                )),
                Patch::Value(v) => parse(param, &v).map(Some),
            }
        }
        fn optional<T, U>(
            current: &mut Option<U>,
            patch: Patch<T>,
            parse: impl FnOnce(T) -> Result<U, FieldError>,
        ) -> Result<(), FieldError> {
            match patch {
                Patch::Absent => {}
                Patch::Null => *current = None,
                Patch::Value(v) => *current = Some(parse(v)?),
            }
            Ok(())
        }

        if let Some(email) = required("email", input.email, parse_email)? {
            self.email = email;
        }
        if let Some(name) = required("first_name", input.first_name, parse_name)? {
            self.first_name = name;
        }
        if let Some(name) = required("last_name", input.last_name, parse_name)? {
            self.last_name = name;
        }
        optional(&mut self.phone, input.phone, |p| {
            parse_us_phone("phone", &p)
        })?;
        optional(&mut self.date_of_birth, input.date_of_birth, |d| {
            parse_date_of_birth("date_of_birth", &d, ctx.today)
        })?;
        optional(
            &mut self.preliminary_address,
            input.preliminary_address,
            |a| parse_postal_address("preliminary_address", a),
        )?;
        optional(&mut self.renewals_url, input.renewals_url, |u| {
            parse_renewals_url("renewals_url", &u, ctx.environment)
        })?;
        match input.metadata {
            Patch::Absent => {}
            Patch::Null => self.metadata.clear(),
            Patch::Value(m) => self.metadata = parse_metadata("metadata", m)?,
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::FieldErrorKind;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn ctx() -> ParseContext {
        ParseContext {
            today: day("2026-11-21"),
            environment: Environment::Sandbox,
        }
    }

    fn new_input() -> CreateAccountIn {
        CreateAccountIn {
            email: "Ana.Diaz@Example.com".into(),
            first_name: " Ana ".into(),
            last_name: "Díaz".into(),
            ..Default::default()
        }
    }

    #[test]
    fn identity_changes_are_the_names_email_phone_and_date_of_birth() {
        let before = Profile::parse_new(new_input(), &ctx()).unwrap();
        let mut after = before.clone();
        after.renewals_url = Some("https://example.com/renew".into());
        after.metadata.insert("k".into(), "v".into());
        assert!(!before.identity_differs(&after));
        after.phone = Some("+15125550199".into());
        assert!(before.identity_differs(&after));
        let mut after = before.clone();
        after.date_of_birth = Some(day("1980-04-02"));
        assert!(before.identity_differs(&after));
    }

    #[test]
    fn account_numbers_are_nine_digits() {
        assert_eq!(account_number(1), "100000001");
        assert_eq!(account_number(42), "100000042");
    }

    #[test]
    fn emails_are_trimmed_lowercased_and_need_a_real_domain() {
        assert_eq!(
            parse_email("email", " A@Example.COM ").unwrap(),
            "a@example.com"
        );
        for bad in ["", "plain", "a@", "@b.com", "a@localhost", "a b@c.com"] {
            assert!(parse_email("email", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn client_agent_acceptance_defaults_to_now_and_is_never_in_the_future() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(parse_client_agent_accepted_at("p", None, now).unwrap(), now);
        let earlier =
            parse_client_agent_accepted_at("p", Some("2026-11-20T08:00:00-06:00"), now).unwrap();
        assert_eq!(earlier.to_rfc3339(), "2026-11-20T14:00:00+00:00");
        assert!(parse_client_agent_accepted_at("p", Some("2026-11-22T12:00:00Z"), now).is_err());
        assert!(parse_client_agent_accepted_at("p", Some("yesterday"), now).is_err());
    }

    #[test]
    fn ssns_are_nine_issuable_digits_and_never_print() {
        let ssn = parse_ssn("ssn", "123-45-6789").unwrap();
        assert_eq!((ssn.digits(), ssn.last4()), ("123456789", "6789"));
        assert_eq!(parse_ssn("ssn", "123456789").unwrap(), ssn);
        assert_eq!(format!("{ssn:?}"), "Ssn(***-**-6789)");
        for bad in [
            "12345678",
            "1234567890",
            "123-456-789",
            "000-12-3456",
            "666-12-3456",
            "900-12-3456",
            "123-00-4567",
            "123-45-0000",
            "12a-45-6789",
        ] {
            assert!(parse_ssn("ssn", bad).is_err(), "{bad}");
        }
        // The sandbox's magic endings are valid numbers.
        assert!(parse_ssn("ssn", "123-45-0001").is_ok());
    }

    #[test]
    fn names_are_one_to_a_hundred_printable_characters() {
        assert_eq!(parse_name("first_name", " Zoë ").unwrap(), "Zoë");
        assert!(parse_name("first_name", "   ").is_err());
        assert!(parse_name("first_name", &"x".repeat(101)).is_err());
        assert!(parse_name("first_name", &"é".repeat(100)).is_ok());
        assert!(parse_name("first_name", "Ana\u{0}").is_err());
    }

    #[test]
    fn us_phones_normalize_to_e164() {
        for raw in [
            "5125550123",
            "(512) 555-0123",
            "+1 512 555 0123",
            "1-512-555-0123",
            "512.555.0123",
        ] {
            assert_eq!(
                parse_us_phone("phone", raw).unwrap(),
                "+15125550123",
                "{raw}"
            );
        }
        for bad in [
            "555-0123",
            "0125550123",
            "5121550123",
            "+44 20 7946 0958",
            "512555012a",
            "+1512555012345",
        ] {
            assert!(parse_us_phone("phone", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn date_of_birth_must_be_an_adult_in_the_past() {
        let today = day("2026-11-21");
        assert_eq!(
            parse_date_of_birth("date_of_birth", "2008-11-21", today).unwrap(),
            day("2008-11-21")
        );
        assert!(parse_date_of_birth("date_of_birth", "2008-11-22", today).is_err());
        assert!(parse_date_of_birth("date_of_birth", "2027-01-01", today).is_err());
        assert!(parse_date_of_birth("date_of_birth", "1890-01-01", today).is_err());
        assert!(parse_date_of_birth("date_of_birth", "11/21/1990", today).is_err());
        // Born on 29 February: an adult from 28 February of the 18th year on.
        assert!(parse_date_of_birth("d", "2008-02-29", day("2026-02-28")).is_ok());
        assert!(parse_date_of_birth("d", "2008-02-29", day("2026-02-27")).is_err());
    }

    #[test]
    fn metadata_is_limited_in_keys_and_lengths() {
        let many: BTreeMap<_, _> = (0..21).map(|i| (format!("k{i}"), "v".to_owned())).collect();
        assert!(parse_metadata("metadata", many).is_err());
        let long = BTreeMap::from([("k".to_owned(), "v".repeat(501))]);
        assert_eq!(
            parse_metadata("metadata", long).unwrap_err().param,
            "metadata.k"
        );
        let ok = BTreeMap::from([("crm_id".to_owned(), "v".repeat(500))]);
        assert!(parse_metadata("metadata", ok).is_ok());
    }

    #[test]
    fn renewals_url_needs_https_except_localhost_in_sandbox() {
        let p = "renewals_url";
        assert!(parse_renewals_url(p, "https://partner.example/renew", Environment::Live).is_ok());
        assert!(parse_renewals_url(p, "http://localhost:8080/r", Environment::Sandbox).is_ok());
        assert!(parse_renewals_url(p, "http://127.0.0.1/r", Environment::Sandbox).is_ok());
        assert!(parse_renewals_url(p, "http://localhost:8080/r", Environment::Live).is_err());
        assert!(parse_renewals_url(p, "http://partner.example/r", Environment::Sandbox).is_err());
        assert!(parse_renewals_url(p, "ftp://partner.example/r", Environment::Sandbox).is_err());
        assert!(parse_renewals_url(p, "/relative", Environment::Sandbox).is_err());
    }

    #[test]
    fn postal_addresses_name_the_missing_part() {
        let err = parse_postal_address(
            "preliminary_address",
            PostalAddressIn {
                address_1: Some("1 Main St".into()),
                city: Some("Dallas".into()),
                state: Some("tx".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.param, "preliminary_address.postal_code");
        assert_eq!(err.kind, FieldErrorKind::Missing);
        let ok = parse_postal_address(
            "a",
            PostalAddressIn {
                address_1: Some("1 Main St".into()),
                address_2: Some("  ".into()),
                city: Some("Dallas".into()),
                state: Some("tx".into()),
                postal_code: Some("75201-1234".into()),
            },
        )
        .unwrap();
        assert_eq!(ok.state, "TX");
        assert_eq!(ok.address_2, None);
        assert!(parse_postal_code("z", "7520").is_err());
        assert!(parse_postal_code("z", "75201-12").is_err());
    }

    #[test]
    fn a_new_profile_is_parsed_whole() {
        let p = Profile::parse_new(new_input(), &ctx()).unwrap();
        assert_eq!(p.email, "ana.diaz@example.com");
        assert_eq!(p.first_name, "Ana");
        assert!(!p.is_identity_complete());
        let mut input = new_input();
        input.phone = Some("512 555 0123".into());
        input.date_of_birth = Some("1990-05-01".into());
        assert!(Profile::parse_new(input, &ctx())
            .unwrap()
            .is_identity_complete());
    }

    #[test]
    fn patch_keeps_absent_clears_null_and_refuses_null_names() {
        let mut input = new_input();
        input.phone = Some("5125550123".into());
        let p = Profile::parse_new(input, &ctx()).unwrap();
        let kept = p
            .clone()
            .patched(UpdateAccountIn::default(), &ctx())
            .unwrap();
        assert_eq!(kept, p);
        let cleared = p
            .clone()
            .patched(
                UpdateAccountIn {
                    phone: Patch::Null,
                    first_name: Patch::Value("Bea".into()),
                    ..Default::default()
                },
                &ctx(),
            )
            .unwrap();
        assert_eq!(cleared.phone, None);
        assert_eq!(cleared.first_name, "Bea");
        let err = p
            .patched(
                UpdateAccountIn {
                    email: Patch::Null,
                    ..Default::default()
                },
                &ctx(),
            )
            .unwrap_err();
        assert_eq!(err.param, "email");
    }
}
