//! Correcting a bill: the operator cancels it and issues a new one with the corrected lines.
//! The cancelled bill keeps its number (voided); a credit note, numbered in the same sequence,
//! cancels its amount; the new bill counts what was paid on the cancelled one. An overpayment
//! is credited on the next bill or refunded to the card the bill was paid with, as the
//! operator chooses (`Overpayment`, `split_overpayment`); an amount still due (underbilling) is
//! a bill of its own that a payment plan may spread.

use std::str::FromStr;

use rust_decimal::Decimal;

use super::FieldError;

/// The group of a credit note's line.
pub const CREDIT_NOTE_GROUP: &str = "Credit note";

/// The group of the line counting what was paid on the cancelled bill.
pub const PAID_GROUP: &str = "Paid on the cancelled bill";

/// The group of the credits an overpayment left, on the next bill.
pub const CREDITS_GROUP: &str = "Credits";

/// The group of the line counting what an overpayment refunded to the card.
pub const REFUNDED_GROUP: &str = "Refunded to the card";

/// Where the operator sends what a correction leaves overpaid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overpayment {
    /// A credit on the next bill (the default).
    Credit,
    /// Back to the card the bill was paid with, through the processor.
    Refund,
}

impl Overpayment {
    /// `credit` (or nothing) or `refund`.
    pub fn parse(param: &str, raw: &str) -> Result<Overpayment, FieldError> {
        match raw.trim() {
            "" | "credit" => Ok(Overpayment::Credit),
            "refund" => Ok(Overpayment::Refund),
            _ => Err(FieldError::invalid(
                param,
                format!("{param} must be credit or refund"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Overpayment::Credit => "credit",
            Overpayment::Refund => "refund",
        }
    }
}

/// How an overpayment of `credit_cents` goes back to the card: from each payment, in the order
/// given (newest first), what is left of it to refund, until the overpayment is covered.
/// Answers the refunds (the payment's key, cents) and what stays a credit (the part paid
/// otherwise than by card, such as by a payment plan).
pub fn split_overpayment<K: Copy>(
    credit_cents: i64,
    refundable: &[(K, i64)],
) -> (Vec<(K, i64)>, i64) {
    let mut left = credit_cents.max(0);
    let mut refunds = Vec::new();
    for (key, available) in refundable {
        if left == 0 {
            break;
        }
        let cents = (*available).min(left);
        if cents > 0 {
            refunds.push((*key, cents));
            left -= cents;
        }
    }
    (refunds, left)
}

/// The most kWh a corrected month may read.
const MAX_KWH: i64 = 1_000_000;

/// The corrected consumption of the cycle: a number of kWh, 0 or more, at most 3 places.
pub fn parse_kwh(param: &str, raw: &str) -> Result<Decimal, FieldError> {
    let invalid = || {
        FieldError::invalid(
            param,
            format!("{param} must be the kWh consumed, 0 to {MAX_KWH}, at most 3 decimal places"),
        )
    };
    let s = raw.trim();
    if s.is_empty() {
        return Err(FieldError::missing(param));
    }
    let d = Decimal::from_str(s).map_err(|_| invalid())?;
    if d.is_sign_negative() || d > Decimal::from(MAX_KWH) || d.scale() > 3 {
        return Err(invalid());
    }
    Ok(d.normalize())
}

/// Why the bill is corrected, as the customer reads it: 3 to 500 characters.
pub fn parse_reason(param: &str, raw: &str) -> Result<String, FieldError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(FieldError::missing(param));
    }
    let n = s.chars().count();
    if !(3..=500).contains(&n) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must be 3 to 500 characters"),
        ));
    }
    Ok(s.to_owned())
}

/// What the new bill leaves: still due (underbilled, or never paid), or a credit for the next
/// bill (overbilled and paid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settlement {
    pub due_cents: i64,
    pub credit_cents: i64,
}

/// The corrected total against what was paid on the cancelled bill.
pub fn settle(corrected_cents: i64, paid_cents: i64) -> Settlement {
    let balance = corrected_cents - paid_cents.max(0);
    Settlement {
        due_cents: balance.max(0),
        credit_cents: (-balance).max(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kwh_and_reason_are_parsed() {
        assert_eq!(parse_kwh("kwh", " 812.5 ").unwrap(), Decimal::new(8125, 1));
        assert_eq!(parse_kwh("kwh", "0").unwrap(), Decimal::ZERO);
        for bad in ["-1", "abc", "1.2345", "2000000"] {
            assert!(parse_kwh("kwh", bad).is_err(), "{bad}");
        }
        assert!(parse_kwh("kwh", "").is_err());
        assert_eq!(
            parse_reason("reason", " Meter misread ").unwrap(),
            "Meter misread"
        );
        assert!(parse_reason("reason", "x").is_err());
        assert!(parse_reason("reason", "").is_err());
    }

    #[test]
    fn an_overpayment_goes_back_to_the_cards_that_paid_and_the_rest_is_credited() {
        assert_eq!(
            split_overpayment(2_000, &[('a', 10_000)]),
            (vec![('a', 2_000)], 0)
        );
        assert_eq!(
            split_overpayment(5_000, &[('a', 3_000), ('b', 4_000)]),
            (vec![('a', 3_000), ('b', 2_000)], 0)
        );
        // Paid partly otherwise (a payment plan): that part stays a credit.
        assert_eq!(
            split_overpayment(5_000, &[('a', 1_000)]),
            (vec![('a', 1_000)], 4_000)
        );
        assert_eq!(split_overpayment::<char>(5_000, &[]), (vec![], 5_000));
        assert_eq!(split_overpayment::<char>(0, &[('a', 1_000)]), (vec![], 0));
        assert_eq!(Overpayment::parse("o", "").unwrap(), Overpayment::Credit);
        assert_eq!(
            Overpayment::parse("o", " refund ").unwrap(),
            Overpayment::Refund
        );
        assert!(Overpayment::parse("o", "cash").is_err());
    }

    #[test]
    fn overpaid_becomes_a_credit_and_underpaid_stays_due() {
        assert_eq!(
            settle(8_000, 10_000),
            Settlement {
                due_cents: 0,
                credit_cents: 2_000
            }
        );
        assert_eq!(
            settle(12_000, 10_000),
            Settlement {
                due_cents: 2_000,
                credit_cents: 0
            }
        );
        assert_eq!(
            settle(9_000, 0),
            Settlement {
                due_cents: 9_000,
                credit_cents: 0
            }
        );
        assert_eq!(
            settle(10_000, 10_000),
            Settlement {
                due_cents: 0,
                credit_cents: 0
            }
        );
    }
}
