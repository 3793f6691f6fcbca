//! How money, rates, dates, card brands and phone numbers are written for people, everywhere
//! the product writes them: the flows, e-mails, bills and document pages. One name per format,
//! so that a bill and the e-mail announcing it agree.
//!
//! This module also runs in the browser, whose bundle has a size budget: it formats with integer
//! arithmetic and string slicing only, never with float formatting or chrono's `format`.

use chrono::{Datelike, NaiveDate};

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

/// A calendar day to write: a date, or an ISO `YYYY-MM-DD` string as the API sends it (which,
/// if it is not one, is written as given).
pub trait CalendarDay {
    /// Year, month (1 to 12) and day.
    fn ymd(&self) -> Option<(i32, usize, u32)>;
    fn as_given(&self) -> String;
}

impl CalendarDay for NaiveDate {
    fn ymd(&self) -> Option<(i32, usize, u32)> {
        Some((self.year(), usize::try_from(self.month()).ok()?, self.day()))
    }

    fn as_given(&self) -> String {
        self.to_string()
    }
}

impl CalendarDay for &str {
    fn ymd(&self) -> Option<(i32, usize, u32)> {
        let mut parts = self.splitn(3, '-');
        let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
        if year.len() != 4 {
            return None;
        }
        let month = month
            .parse::<usize>()
            .ok()
            .filter(|m| (1..=12).contains(m))?;
        Some((year.parse().ok()?, month, day.parse().ok()?))
    }

    fn as_given(&self) -> String {
        (*self).to_owned()
    }
}

impl CalendarDay for &String {
    fn ymd(&self) -> Option<(i32, usize, u32)> {
        self.as_str().ymd()
    }

    fn as_given(&self) -> String {
        (*self).clone()
    }
}

fn month_name(month: usize) -> &'static str {
    MONTHS.get(month.wrapping_sub(1)).copied().unwrap_or("")
}

fn month_abbreviation(month: usize) -> &'static str {
    month_name(month).get(..3).unwrap_or("")
}

/// "March 5, 2027": sentences (e-mails, the flows).
pub fn long_date(day: impl CalendarDay) -> String {
    match day.ymd() {
        Some((y, m, d)) => format!("{} {d}, {y}", month_name(m)),
        None => day.as_given(),
    }
}

/// "Mar 5, 2027": where space is short (a bill's facts and notes).
pub fn short_date(day: impl CalendarDay) -> String {
    match day.ymd() {
        Some((y, m, d)) => format!("{} {d}, {y}", month_abbreviation(m)),
        None => day.as_given(),
    }
}

/// "Mar 5", without the year: chart labels, and the start of a period whose end has the year.
pub fn month_day(day: impl CalendarDay) -> String {
    match day.ymd() {
        Some((_, m, d)) => format!("{} {d}", month_abbreviation(m)),
        None => day.as_given(),
    }
}

/// Commas every three digits of a run of ASCII digits.
fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Whole cents as dollars: `995` → "$9.95", `150000` → "$1,500.00", `-5` → "-$0.05".
pub fn dollars(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let cents = cents.unsigned_abs();
    format!(
        "{sign}${}.{:02}",
        group_thousands(&(cents / 100).to_string()),
        cents % 100
    )
}

/// Thousands separators in a plain decimal such as `1034.512` (kWh); anything else as given.
pub fn thousands(text: &str) -> String {
    let (sign, unsigned) = text
        .strip_prefix('-')
        .map_or(("", text), |rest| ("-", rest));
    let (int, frac) = unsigned
        .split_once('.')
        .map_or((unsigned, None), |(int, frac)| (int, Some(frac)));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !frac.is_none_or(digits) {
        return text.to_owned();
    }
    match frac {
        Some(frac) => format!("{sign}{}.{frac}", group_thousands(int)),
        None => format!("{sign}{}", group_thousands(int)),
    }
}

/// A decimal rate in cents as sent by the API, without trailing zeros: "12.3450" → "12.345¢".
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

/// A card brand as the processor names it ("visa"), as people write it ("Visa"). A brand this
/// list does not know reads as "Card" ("Card ending 4242") rather than as a processor's code.
pub fn card_brand(brand: &str) -> &'static str {
    match brand {
        "visa" => "Visa",
        "mastercard" => "Mastercard",
        "amex" => "American Express",
        "discover" => "Discover",
        "jcb" => "JCB",
        "diners" => "Diners Club",
        "unionpay" => "UnionPay",
        _ => "Card",
    }
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

/// A brand colour (`#rgb` or `#rrggbb`) as a colour for text and links: the colour itself when
/// it reads at 5:1 on white, else the same hue darkened until it does (WCAG AA asks 4.5:1; the
/// margin keeps it readable on the pale panels the flows also use). (Called
/// where pages are rendered, on the server: no browser bundle holds it.)
pub fn readable_on_white(hex: &str) -> String {
    let digits = hex.trim_start_matches('#');
    let full: String = match digits.len() {
        3 => digits.chars().flat_map(|c| [c, c]).collect(),
        _ => digits.to_owned(),
    };
    let channel = |i: usize| {
        full.get(i..i + 2)
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .map(f64::from)
    };
    let (Some(r), Some(g), Some(b)) = (channel(0), channel(2), channel(4)) else {
        return "#1d2327".to_owned();
    };
    let linear = |c: f64| {
        let c = c / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let mut scale = 1.0;
    loop {
        let [r, g, b] = [r * scale, g * scale, b * scale];
        let luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
        // Contrast with white: (1 + 0.05) / (L + 0.05).
        if 1.05 / (luminance + 0.05) >= 5.0 || scale <= 0.0 {
            // Channels are within 0..=255 here: the casts are exact after rounding.
            let [r, g, b] = [r, g, b].map(|c| c.round() as u8);
            return format!("#{r:02x}{g:02x}{b:02x}");
        }
        scale -= 0.02;
    }
}

/// Text safe in HTML content and in attribute values quoted either way.
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn dates_have_one_name_per_format() {
        assert_eq!(long_date(date(2027, 3, 5)), "March 5, 2027");
        assert_eq!(short_date(date(2026, 11, 8)), "Nov 8, 2026");
        assert_eq!(month_day(date(2026, 11, 8)), "Nov 8");
        assert_eq!(long_date(date(2026, 12, 31)), "December 31, 2026");
        assert_eq!(short_date(date(2027, 1, 1)), "Jan 1, 2027");
        assert_eq!(month_day(date(2027, 9, 30)), "Sep 30");
    }

    #[test]
    fn iso_strings_are_written_like_dates_or_as_given() {
        assert_eq!(long_date("2027-03-05"), "March 5, 2027");
        assert_eq!(short_date("2027-03-05"), "Mar 5, 2027");
        assert_eq!(month_day("2027-03-05"), "Mar 5");
        let owned = "2026-12-31".to_owned();
        assert_eq!(long_date(&owned), "December 31, 2026");
        for bad in [
            "2026-13-01",
            "2026-00-01",
            "soon",
            "",
            "26-01-01",
            "2026-01-xx",
        ] {
            assert_eq!(long_date(bad), bad);
            assert_eq!(short_date(bad), bad);
            assert_eq!(month_day(bad), bad);
        }
    }

    #[test]
    fn dollars_have_cents_and_thousands() {
        assert_eq!(dollars(0), "$0.00");
        assert_eq!(dollars(5), "$0.05");
        assert_eq!(dollars(995), "$9.95");
        assert_eq!(dollars(99_999), "$999.99");
        assert_eq!(dollars(100_000), "$1,000.00");
        assert_eq!(dollars(150_000), "$1,500.00");
        assert_eq!(dollars(123_456_789), "$1,234,567.89");
        assert_eq!(dollars(100_000_000), "$1,000,000.00");
    }

    #[test]
    fn negative_dollars_keep_their_sign_in_front() {
        assert_eq!(dollars(-5), "-$0.05");
        assert_eq!(dollars(-150), "-$1.50");
        assert_eq!(dollars(-1_050), "-$10.50");
        assert_eq!(dollars(-123_456), "-$1,234.56");
        assert_eq!(dollars(i64::MIN), "-$92,233,720,368,547,758.08");
        assert_eq!(dollars(i64::MAX), "$92,233,720,368,547,758.07");
    }

    #[test]
    fn plain_decimals_get_thousands_separators() {
        assert_eq!(thousands("1034.512"), "1,034.512");
        assert_eq!(thousands("999"), "999");
        assert_eq!(thousands("0"), "0");
        assert_eq!(thousands("-1234567"), "-1,234,567");
        assert_eq!(thousands("0.0725"), "0.0725");
        assert_eq!(thousands("$0.07"), "$0.07");
        assert_eq!(thousands("1.2.3"), "1.2.3");
        assert_eq!(thousands(""), "");
    }

    #[test]
    fn rates_lose_trailing_zeros_only() {
        assert_eq!(cents("12.3450"), "12.345¢");
        assert_eq!(cents("14.0"), "14¢");
        assert_eq!(cents("10"), "10¢");
        assert_eq!(cents("0.5000"), "0.5¢");
        assert_eq!(cents("0"), "0¢");
        assert_eq!(cents("-1.50"), "-1.5¢");
    }

    #[test]
    fn averages_round_half_up_to_tenths_of_a_cent() {
        assert_eq!(average("16.6474"), "16.6¢");
        assert_eq!(average("15.8999"), "15.9¢");
        assert_eq!(average("9"), "9.0¢");
        assert_eq!(average("0"), "0.0¢");
        assert_eq!(average("16.65"), "16.7¢");
        assert_eq!(average("16.6499"), "16.6¢");
        assert_eq!(average("9.96"), "10.0¢");
        assert_eq!(average("n/a"), "n/a¢");
    }

    #[test]
    fn card_brands_read_as_people_write_them() {
        assert_eq!(card_brand("visa"), "Visa");
        assert_eq!(card_brand("mastercard"), "Mastercard");
        assert_eq!(card_brand("amex"), "American Express");
        assert_eq!(card_brand("discover"), "Discover");
        assert_eq!(card_brand("jcb"), "JCB");
        assert_eq!(card_brand("unknown"), "Card");
        assert_eq!(card_brand(""), "Card");
    }

    #[test]
    fn us_phones_are_grouped() {
        assert_eq!(phone("+15125550123"), "(512) 555-0123");
        assert_eq!(phone("+445555"), "+445555");
    }

    #[test]
    fn brand_colours_are_darkened_until_text_reads_on_white() {
        // Dark enough already: kept.
        assert_eq!(readable_on_white("#1b4d3e"), "#1b4d3e");
        assert_eq!(readable_on_white("#7a2e8e"), "#7a2e8e");
        // The orange of 3.5:1 on white: darkened to at least 5:1.
        let orange = readable_on_white("#f26b1d");
        assert_ne!(orange, "#f26b1d");
        assert!(contrast_on_white(&orange) >= 5.0, "{orange}");
        assert!(
            contrast_on_white(&orange) < 5.5,
            "no darker than needed: {orange}"
        );
        assert!(contrast_on_white(&readable_on_white("#ff0")) >= 5.0);
        assert!(contrast_on_white(&readable_on_white("#ffffff")) >= 5.0);
        assert_eq!(readable_on_white("nonsense"), "#1d2327");
    }

    fn contrast_on_white(hex: &str) -> f64 {
        let c = |i: usize| {
            let v = f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
            if v <= 0.039_28 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        1.05 / (0.2126 * c(1) + 0.7152 * c(3) + 0.0722 * c(5) + 0.05)
    }

    #[test]
    fn html_escaping_covers_both_quotes() {
        assert_eq!(
            html_escape(r#"<a href="x" title='y'>Tom & Jerry</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt;"
        );
        assert_eq!(html_escape("plain"), "plain");
    }
}
