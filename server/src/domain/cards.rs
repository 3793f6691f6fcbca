//! Payment cards as the built-in test-mode processor sees them: number (Luhn), brand, expiry,
//! CVC, and how the documented test cards behave. Card numbers live only inside the processor
//! request; what is kept is brand, last four, expiry, postal code and a fingerprint.

use chrono::{Datelike, NaiveDate};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardBrand {
    Visa,
    Mastercard,
    Amex,
    Discover,
    Unknown,
}

impl CardBrand {
    pub fn as_str(self) -> &'static str {
        match self {
            CardBrand::Visa => "visa",
            CardBrand::Mastercard => "mastercard",
            CardBrand::Amex => "amex",
            CardBrand::Discover => "discover",
            CardBrand::Unknown => "unknown",
        }
    }
}

/// Why a card was refused before any bank saw it (the processor's `400`s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardError {
    pub param: &'static str,
    pub code: &'static str,
    pub message: &'static str,
}

/// What a test card does, by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestCardBehavior {
    Succeeds,
    /// Refused when the payment method is created.
    Declined(&'static str),
    /// Saved fine; every later charge fails.
    ChargesFail,
}

/// A card number: 12 to 19 digits (spaces and dashes allowed) passing the Luhn check.
#[derive(Clone, PartialEq, Eq)]
pub struct CardNumber(String);

impl std::fmt::Debug for CardNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CardNumber(…{})", self.last4())
    }
}

impl CardNumber {
    pub fn parse(raw: &str) -> Result<CardNumber, CardError> {
        let invalid = CardError {
            param: "card.number",
            code: "invalid_number",
            message: "The card number is not a valid card number",
        };
        let mut digits = String::with_capacity(19);
        for ch in raw.chars() {
            match ch {
                '0'..='9' => digits.push(ch),
                ' ' | '-' => {}
                _ => return Err(invalid),
            }
        }
        if !(12..=19).contains(&digits.len()) || !luhn_valid(&digits) {
            return Err(invalid);
        }
        Ok(CardNumber(digits))
    }

    pub fn last4(&self) -> &str {
        &self.0[self.0.len() - 4..]
    }

    pub fn brand(&self) -> CardBrand {
        let n = &self.0;
        let prefix = |len: usize| n[..len].parse::<u32>().unwrap_or(0);
        if n.starts_with('4') {
            CardBrand::Visa
        } else if (51..=55).contains(&prefix(2)) || (2221..=2720).contains(&prefix(4)) {
            CardBrand::Mastercard
        } else if matches!(prefix(2), 34 | 37) {
            CardBrand::Amex
        } else if n.starts_with("6011") || n.starts_with("65") {
            CardBrand::Discover
        } else {
            CardBrand::Unknown
        }
    }

    /// Stable per card and per processor account, so that the same card can be recognised
    /// without keeping its number.
    pub fn fingerprint(&self, account_salt: &str) -> String {
        let digest = Sha256::digest(format!("{account_salt}:{}", self.0).as_bytes());
        format!("{digest:x}")[..16].to_owned()
    }

    /// The documented test cards; every other valid number succeeds.
    pub fn test_behavior(&self) -> TestCardBehavior {
        match self.0.as_str() {
            "4000000000000002" => TestCardBehavior::Declined("generic_decline"),
            "4000000000009995" => TestCardBehavior::Declined("insufficient_funds"),
            "4000000000000069" => TestCardBehavior::Declined("expired_card"),
            "4000000000000341" => TestCardBehavior::ChargesFail,
            _ => TestCardBehavior::Succeeds,
        }
    }
}

/// What a charge of a card saved by the built-in processor does: `Some(decline_code)` for the
/// cards saved from `4000 0000 0000 0341` (`charges_fail`), `None` (it succeeds) for every other.
pub fn test_charge_decline(charges_fail: bool) -> Option<&'static str> {
    charges_fail.then_some("card_declined")
}

fn luhn_valid(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// An expiry month and year (two- or four-digit) that has not passed on `today`.
pub fn parse_expiry(month: u32, year: i32, today: NaiveDate) -> Result<(u32, i32), CardError> {
    if !(1..=12).contains(&month) {
        return Err(CardError {
            param: "card.exp_month",
            code: "invalid_expiry_month",
            message: "The expiry month must be 1 to 12",
        });
    }
    let year = if (0..100).contains(&year) {
        2000 + year
    } else {
        year
    };
    let this_month = (today.year(), today.month());
    if !(2000..=today.year() + 50).contains(&year) || (year, month) < this_month {
        return Err(CardError {
            param: "card.exp_year",
            code: "invalid_expiry_year",
            message: "The card has expired or the expiry year is not valid",
        });
    }
    Ok((month, year))
}

/// Three digits, four for American Express.
pub fn parse_cvc(raw: &str, brand: CardBrand) -> Result<(), CardError> {
    let len = if brand == CardBrand::Amex { 4 } else { 3 };
    if raw.len() == len && raw.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(CardError {
            param: "card.cvc",
            code: "invalid_cvc",
            message: "The security code is not valid",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn test_cards_parse_and_have_their_brands() {
        let visa = CardNumber::parse("4242 4242 4242 4242").unwrap();
        assert_eq!((visa.brand(), visa.last4()), (CardBrand::Visa, "4242"));
        assert_eq!(visa.test_behavior(), TestCardBehavior::Succeeds);
        let mc = CardNumber::parse("5555-5555-5555-4444").unwrap();
        assert_eq!(mc.brand(), CardBrand::Mastercard);
        assert_eq!(
            CardNumber::parse("378282246310005").unwrap().brand(),
            CardBrand::Amex
        );
        assert_eq!(
            CardNumber::parse("6011111111111117").unwrap().brand(),
            CardBrand::Discover
        );
    }

    #[test]
    fn the_declining_test_cards_decline_and_0341_fails_later() {
        let behavior = |n: &str| CardNumber::parse(n).unwrap().test_behavior();
        assert_eq!(
            behavior("4000000000000002"),
            TestCardBehavior::Declined("generic_decline")
        );
        assert_eq!(
            behavior("4000000000009995"),
            TestCardBehavior::Declined("insufficient_funds")
        );
        assert_eq!(
            behavior("4000000000000069"),
            TestCardBehavior::Declined("expired_card")
        );
        assert_eq!(behavior("4000000000000341"), TestCardBehavior::ChargesFail);
    }

    #[test]
    fn numbers_failing_luhn_or_length_are_refused() {
        for bad in [
            "4242424242424241",
            "4242",
            "4242a24242424242",
            "",
            "12345678901234567890",
        ] {
            assert_eq!(
                CardNumber::parse(bad).unwrap_err().code,
                "invalid_number",
                "{bad}"
            );
        }
    }

    #[test]
    fn expiry_must_not_have_passed() {
        let today = day("2026-11-21");
        assert_eq!(parse_expiry(11, 2026, today).unwrap(), (11, 2026));
        assert_eq!(parse_expiry(1, 30, today).unwrap(), (1, 2030));
        assert!(parse_expiry(10, 2026, today).is_err());
        assert!(parse_expiry(13, 2030, today).is_err());
        assert!(parse_expiry(0, 2030, today).is_err());
        assert!(parse_expiry(1, 2099, today).is_err());
    }

    #[test]
    fn cvc_length_depends_on_the_brand() {
        assert!(parse_cvc("123", CardBrand::Visa).is_ok());
        assert!(parse_cvc("1234", CardBrand::Visa).is_err());
        assert!(parse_cvc("1234", CardBrand::Amex).is_ok());
        assert!(parse_cvc("12a", CardBrand::Visa).is_err());
    }

    #[test]
    fn fingerprints_are_stable_per_account_and_hide_the_number() {
        let n = CardNumber::parse("4242424242424242").unwrap();
        assert_eq!(n.fingerprint("a"), n.fingerprint("a"));
        assert_ne!(n.fingerprint("a"), n.fingerprint("b"));
        assert!(!n.fingerprint("a").contains("4242"));
        assert!(!format!("{n:?}").contains("42424242"));
    }

    #[test]
    fn only_cards_saved_from_0341_fail_their_charges() {
        let charge = |n: &str| {
            let saved = CardNumber::parse(n).unwrap().test_behavior();
            test_charge_decline(saved == TestCardBehavior::ChargesFail)
        };
        assert_eq!(charge("4000 0000 0000 0341"), Some("card_declined"));
        for ok in [
            "4242424242424242",
            "5555555555554444",
            "378282246310005",
            "6011111111111117",
        ] {
            assert_eq!(charge(ok), None, "{ok}");
        }
    }

    #[test]
    fn every_brand_the_processor_detects_has_a_name_for_people() {
        for brand in [
            CardBrand::Visa,
            CardBrand::Mastercard,
            CardBrand::Amex,
            CardBrand::Discover,
        ] {
            assert_ne!(app::format::card_brand(brand.as_str()), "Card", "{brand:?}");
        }
        assert_eq!(app::format::card_brand(CardBrand::Unknown.as_str()), "Card");
    }
}
