//! Reading what customers type into the flows: digits of a number, a card's expiry. (How the
//! flows write values for people is `crate::format`, shared with the server.)

/// Only the digits of what was typed.
pub fn digits(s: &str) -> String {
    s.chars().filter(char::is_ascii_digit).collect()
}

/// A card expiry typed as `MM/YY`, `MM / YYYY` or `MMYY`: (month, four-digit year).
pub fn parse_expiry(s: &str) -> Option<(u32, i32)> {
    let d = digits(s);
    let (month, year) = match d.len() {
        4 => (&d[..2], &d[2..]),
        6 => (&d[..2], &d[2..]),
        3 => (&d[..1], &d[1..]),
        5 => (&d[..1], &d[1..]),
        _ => return None,
    };
    let month: u32 = month.parse().ok()?;
    let mut year: i32 = year.parse().ok()?;
    if year < 100 {
        year += 2000;
    }
    (1..=12).contains(&month).then_some((month, year))
}

/// The card network a number belongs to, from its first digits (as cards print it), while
/// it is typed.
pub fn card_network(digits: &str) -> Option<&'static str> {
    let two: u32 = digits.get(..2)?.parse().ok()?;
    let four: u32 = digits.get(..4).and_then(|d| d.parse().ok()).unwrap_or(0);
    Some(match two {
        40..=49 => "Visa",
        51..=55 => "Mastercard",
        22..=27 if (2221..=2720).contains(&four) => "Mastercard",
        34 | 37 => "American Express",
        65 => "Discover",
        60 if four == 6011 => "Discover",
        _ => return None,
    })
}

/// A card number as typed, grouped the way the card prints it: fours, or 4-6-5 for American
/// Express; at most 19 digits.
pub fn group_card_number(typed: &str) -> String {
    let d = digits(typed);
    let amex = matches!(d.get(..2), Some("34" | "37"));
    let mut out = String::with_capacity(d.len() + 4);
    for (i, c) in d.chars().take(19).enumerate() {
        let gap = if amex {
            i == 4 || i == 10
        } else {
            i > 0 && i % 4 == 0
        };
        if gap {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// An expiry as typed, written `MM / YY` once the year begins (a single first digit above 1 is
/// a month: "4" reads "04").
pub fn shape_expiry(typed: &str) -> String {
    let mut d = digits(typed);
    if d.len() == 1 && d != "0" && d != "1" {
        d.insert(0, '0');
    }
    d.truncate(4);
    match d.len() {
        0..=2 => d,
        _ => format!("{} / {}", &d[..2], &d[2..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_takes_the_usual_spellings() {
        assert_eq!(parse_expiry("04/29"), Some((4, 2029)));
        assert_eq!(parse_expiry("04 / 2031"), Some((4, 2031)));
        assert_eq!(parse_expiry("1229"), Some((12, 2029)));
        assert_eq!(parse_expiry("4/29"), Some((4, 2029)));
        assert_eq!(parse_expiry("13/29"), None);
        assert_eq!(parse_expiry("00/29"), None);
        assert_eq!(parse_expiry("12"), None);
        assert_eq!(parse_expiry("12 / 34"), Some((12, 2034)));
    }

    #[test]
    fn card_numbers_are_grouped_as_typed() {
        assert_eq!(group_card_number("4242424242424242"), "4242 4242 4242 4242");
        assert_eq!(group_card_number("42424"), "4242 4");
        assert_eq!(group_card_number("4242 42"), "4242 42");
        assert_eq!(group_card_number("378282246310005"), "3782 822463 10005");
        assert_eq!(
            group_card_number("4242-4242-4242-4242-9999"),
            "4242 4242 4242 4242 999"
        );
        assert_eq!(group_card_number(""), "");
    }

    #[test]
    fn the_network_shows_from_the_first_digits() {
        assert_eq!(card_network("4242"), Some("Visa"));
        assert_eq!(card_network("5555"), Some("Mastercard"));
        assert_eq!(card_network("2223"), Some("Mastercard"));
        assert_eq!(card_network("3782"), Some("American Express"));
        assert_eq!(card_network("6011"), Some("Discover"));
        assert_eq!(card_network("4"), None);
        assert_eq!(card_network("9999"), None);
    }

    #[test]
    fn expiry_takes_shape_as_typed() {
        assert_eq!(shape_expiry("1"), "1");
        assert_eq!(shape_expiry("4"), "04");
        assert_eq!(shape_expiry("12"), "12");
        assert_eq!(shape_expiry("123"), "12 / 3");
        assert_eq!(shape_expiry("1234"), "12 / 34");
        assert_eq!(shape_expiry("12 / 345"), "12 / 34");
        assert_eq!(shape_expiry("12 / "), "12");
    }
}
