//! How the flows write money, rates, dates and phone numbers, and read what customers type
//! (card expiry, digits). Plain functions, so that both renderings agree and tests cover them.

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `2027-03-05` as "March 5, 2027" (anything else as given).
pub fn long_date(iso: &str) -> String {
    let mut parts = iso.splitn(3, '-');
    let (Some(year), Some(month), Some(day)) = (parts.next(), parts.next(), parts.next()) else {
        return iso.to_owned();
    };
    let month = month
        .parse::<usize>()
        .ok()
        .and_then(|m| MONTHS.get(m.checked_sub(1)?));
    match (month, day.parse::<u32>()) {
        (Some(month), Ok(day)) if year.len() == 4 => format!("{month} {day}, {year}"),
        _ => iso.to_owned(),
    }
}

/// Whole cents as dollars: `995` → "$9.95", `150000` → "$1,500.00".
pub fn dollars(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}${grouped}.{:02}", cents % 100)
}

/// A decimal rate as sent by the API, without trailing zeros: "12.3450" → "12.345¢".
pub fn cents(rate: &str) -> String {
    let trimmed = if rate.contains('.') {
        rate.trim_end_matches('0').trim_end_matches('.')
    } else {
        rate
    };
    format!("{trimmed}¢")
}

/// An average price as an EFL shows it, to a tenth of a cent, half up: "16.6474" → "16.6¢".
pub fn average(rate: &str) -> String {
    let (whole, fraction) = rate.trim().split_once('.').unwrap_or((rate.trim(), ""));
    let digit = |i: usize| {
        fraction
            .as_bytes()
            .get(i)
            .map_or(Some(0), |b| b.is_ascii_digit().then(|| u64::from(b - b'0')))
    };
    let tenths = whole
        .parse::<u64>()
        .ok()
        .zip(digit(0))
        .zip(digit(1))
        .filter(|_| fraction.bytes().all(|b| b.is_ascii_digit()))
        .map(|((w, d1), d2)| w * 10 + d1 + u64::from(d2 >= 5));
    match tenths {
        Some(t) => format!("{}.{}¢", t / 10, t % 10),
        None => cents(rate),
    }
}

/// A card brand as the processor names it ("visa"), as people write it ("Visa").
pub fn card_brand(brand: &str) -> String {
    match brand {
        "amex" => "American Express".to_owned(),
        "mastercard" => "Mastercard".to_owned(),
        other => {
            let mut chars = other.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        }
    }
}

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

/// `+15125550123` as "(512) 555-0123"; anything else as given.
pub fn phone(e164: &str) -> String {
    match e164.strip_prefix("+1") {
        Some(n) if n.len() == 10 && n.bytes().all(|b| b.is_ascii_digit()) => {
            format!("({}) {}-{}", &n[..3], &n[3..6], &n[6..])
        }
        _ => e164.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_out() {
        assert_eq!(long_date("2027-03-05"), "March 5, 2027");
        assert_eq!(long_date("2026-12-31"), "December 31, 2026");
        assert_eq!(long_date("2026-13-01"), "2026-13-01");
        assert_eq!(long_date("soon"), "soon");
    }

    #[test]
    fn dollars_have_cents_and_thousands() {
        assert_eq!(dollars(995), "$9.95");
        assert_eq!(dollars(0), "$0.00");
        assert_eq!(dollars(150_000), "$1,500.00");
        assert_eq!(dollars(123_456_789), "$1,234,567.89");
        assert_eq!(dollars(-1_050), "-$10.50");
    }

    #[test]
    fn rates_lose_trailing_zeros_only() {
        assert_eq!(cents("12.3450"), "12.345¢");
        assert_eq!(cents("14.0"), "14¢");
        assert_eq!(cents("10"), "10¢");
        assert_eq!(cents("0.5000"), "0.5¢");
    }

    #[test]
    fn averages_show_tenths_of_a_cent() {
        assert_eq!(average("16.6474"), "16.6¢");
        assert_eq!(average("15.8999"), "15.9¢");
        assert_eq!(average("9"), "9.0¢");
        assert_eq!(average("16.65"), "16.7¢");
        assert_eq!(average("16.6499"), "16.6¢");
        assert_eq!(average("9.96"), "10.0¢");
        assert_eq!(average("n/a"), "n/a¢");
    }

    #[test]
    fn card_brands_are_capitalized() {
        assert_eq!(card_brand("visa"), "Visa");
        assert_eq!(card_brand("amex"), "American Express");
        assert_eq!(card_brand("discover"), "Discover");
        assert_eq!(card_brand(""), "");
    }

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

    #[test]
    fn us_phones_are_grouped() {
        assert_eq!(phone("+15125550123"), "(512) 555-0123");
        assert_eq!(phone("+445555"), "+445555");
    }
}
