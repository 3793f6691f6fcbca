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
    }
}
