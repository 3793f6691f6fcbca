//! What follows a bill left unpaid: the one-time late fee.
//!
//! An app may charge a late fee (its percent, set by the operator; none when unset). The fee is
//! charged once, on the next bill issued after a bill's due date while it is past due (when
//! that next bill charges none, the chance is gone), on that bill's unpaid
//! amount, at most `MAX_LATE_FEE_PERCENT` percent of it (rounded down to the cent, so never
//! above), and never on an amount already penalized: a bill's own late-fee lines are not part of
//! what a later fee is computed on, and a bill penalized once is never penalized again. An
//! account the operator marked exempt is never charged one.

use std::str::FromStr;

use rust_decimal::{Decimal, RoundingStrategy};

use super::{
    billing::{Charge, ChargeGroup},
    FieldError,
};

/// The most a late fee may be, percent of the unpaid amount of the bill it is on.
pub const MAX_LATE_FEE_PERCENT: Decimal = Decimal::from_parts(5, 0, 0, false, 0);

/// The name of the group of a bill's late-fee lines.
pub const LATE_FEE_GROUP: &str = "Late fee";

/// An app's late fee, percent of the unpaid amount: above 0, at most 5, at most 2 places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateFeePercent(Decimal);

impl LateFeePercent {
    /// The setting as given: blank or `off` is no late fee; otherwise a percent.
    pub fn parse_setting(param: &str, raw: &str) -> Result<Option<LateFeePercent>, FieldError> {
        let s = raw.trim().trim_end_matches('%').trim();
        if s.is_empty() || s.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let invalid = || {
            FieldError::invalid(
                param,
                format!(
                    "{param} must be off or a percent above 0 and at most {MAX_LATE_FEE_PERCENT}, \
                     at most 2 decimal places"
                ),
            )
        };
        let d = Decimal::from_str(s).map_err(|_| invalid())?;
        if d <= Decimal::ZERO || d > MAX_LATE_FEE_PERCENT || d.scale() > 2 {
            return Err(invalid());
        }
        Ok(Some(LateFeePercent(d.normalize())))
    }

    /// Stored text (written by this program); a value outside the rule reads as none, so that
    /// no fee above the maximum is ever charged.
    pub fn from_stored(s: &str) -> Option<LateFeePercent> {
        LateFeePercent::parse_setting("percent", s).ok().flatten()
    }

    pub fn value(self) -> Decimal {
        self.0
    }

    /// `"1.5"`.
    pub fn to_wire(self) -> String {
        self.0.normalize().to_string()
    }
}

/// A past-due bill as the next bill sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastDueBill {
    pub number: String,
    /// The bill's charge groups (its late-fee lines are left out of what a fee is on).
    pub groups: Vec<ChargeGroup>,
    /// A late fee was charged on it already.
    pub penalized: bool,
    /// Another bill was issued after its due date: the bill that could charge its fee came.
    pub billed_since_due: bool,
}

/// One late fee to charge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateFee {
    /// The past-due bill the fee is on.
    pub invoice_number: String,
    /// Its unpaid amount not penalized before, in cents.
    pub base_cents: i64,
    pub percent: Decimal,
    pub amount_cents: i64,
}

/// What of a bill a late fee may be on: its total without its own late-fee lines.
pub fn penalizable_cents(groups: &[ChargeGroup]) -> i64 {
    groups
        .iter()
        .filter(|g| g.name != LATE_FEE_GROUP)
        .map(|g| g.total_cents)
        .sum()
}

/// The fee on `base_cents` at `percent`, capped at the maximum and rounded down to the cent.
pub fn late_fee_cents(base_cents: i64, percent: Decimal) -> i64 {
    let percent = percent.min(MAX_LATE_FEE_PERCENT).max(Decimal::ZERO);
    (Decimal::from(base_cents.max(0)) * percent / Decimal::ONE_HUNDRED)
        .round_dp_with_strategy(0, RoundingStrategy::ToZero)
        .try_into()
        .unwrap_or(0)
}

/// The late fees the next bill charges: none when the app charges none or the account is
/// exempt; otherwise one on each past-due bill not penalized yet whose next bill this is, on
/// what of it was never penalized.
pub fn late_fees(
    percent: Option<LateFeePercent>,
    exempt: bool,
    past_due: &[PastDueBill],
) -> Vec<LateFee> {
    let Some(percent) = percent.filter(|_| !exempt) else {
        return Vec::new();
    };
    past_due
        .iter()
        .filter(|b| !b.penalized && !b.billed_since_due)
        .filter_map(|b| {
            let base_cents = penalizable_cents(&b.groups);
            let amount_cents = late_fee_cents(base_cents, percent.value());
            (amount_cents > 0).then(|| LateFee {
                invoice_number: b.number.clone(),
                base_cents,
                percent: percent.value(),
                amount_cents,
            })
        })
        .collect()
}

/// The bill's group of late-fee lines, one per fee: `Late fee on INV-00000001`, its base and
/// percent (a `%` line, like the taxes).
pub fn late_fee_group(fees: &[LateFee]) -> Option<ChargeGroup> {
    if fees.is_empty() {
        return None;
    }
    let charges: Vec<Charge> = fees
        .iter()
        .map(|f| Charge {
            description: format!("Late fee on {}", f.invoice_number),
            quantity: Decimal::from(f.base_cents),
            unit: "%".to_owned(),
            rate: f.percent,
            amount_cents: f.amount_cents,
        })
        .collect();
    Some(ChargeGroup {
        name: LATE_FEE_GROUP.to_owned(),
        total_cents: charges.iter().map(|c| c.amount_cents).sum(),
        charges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn group(name: &str, cents: i64) -> ChargeGroup {
        ChargeGroup {
            name: name.to_owned(),
            total_cents: cents,
            charges: Vec::new(),
        }
    }

    fn bill(number: &str, groups: Vec<ChargeGroup>, penalized: bool) -> PastDueBill {
        PastDueBill {
            number: number.to_owned(),
            groups,
            penalized,
            billed_since_due: false,
        }
    }

    fn five() -> Option<LateFeePercent> {
        LateFeePercent::parse_setting("late_fee_percent", "5").unwrap()
    }

    #[test]
    fn the_setting_is_off_or_a_percent_up_to_five() {
        let p = |raw| LateFeePercent::parse_setting("late_fee_percent", raw);
        assert_eq!(p(""), Ok(None));
        assert_eq!(p(" off "), Ok(None));
        assert_eq!(p("5").unwrap().unwrap().value(), dec("5"));
        assert_eq!(p("1.5%").unwrap().unwrap().to_wire(), "1.5");
        assert_eq!(p("0.01").unwrap().unwrap().value(), dec("0.01"));
        for bad in ["5.01", "6", "0", "-1", "1.234", "five", "NaN"] {
            let err = p(bad).unwrap_err();
            assert_eq!(err.param, "late_fee_percent", "{bad}");
        }
        // A stored value outside the rule charges nothing rather than too much.
        assert_eq!(LateFeePercent::from_stored("7"), None);
        assert_eq!(
            LateFeePercent::from_stored("2.5").unwrap().value(),
            dec("2.5")
        );
    }

    #[test]
    fn a_fee_is_at_most_five_percent_never_rounded_up() {
        assert_eq!(late_fee_cents(15384, dec("5")), 769); // 769.2
        assert_eq!(late_fee_cents(15390, dec("5")), 769); // 769.5, down
        assert_eq!(late_fee_cents(10, dec("5")), 0); // half a cent: nothing
                                                     // A percent above the maximum is charged at the maximum.
        assert_eq!(late_fee_cents(10000, dec("10")), 500);
        for base in [1, 19, 99, 12345, 99999] {
            for pct in ["0.01", "1", "2.5", "4.99", "5", "9"] {
                let fee = late_fee_cents(base, dec(pct));
                assert!(
                    Decimal::from(fee) <= Decimal::from(base) * dec("0.05"),
                    "{base} {pct}"
                );
            }
        }
    }

    #[test]
    fn no_fee_when_off_or_exempt() {
        let due = [bill("INV-1", vec![group("Energy", 10000)], false)];
        assert!(late_fees(None, false, &due).is_empty());
        assert!(late_fees(five(), true, &due).is_empty());
        assert_eq!(late_fees(five(), false, &due).len(), 1);
    }

    #[test]
    fn a_bill_is_penalized_once() {
        let due = [
            bill("INV-1", vec![group("Energy", 10000)], true),
            bill("INV-2", vec![group("Energy", 8000)], false),
        ];
        let fees = late_fees(five(), false, &due);
        assert_eq!(
            fees,
            [LateFee {
                invoice_number: "INV-2".to_owned(),
                base_cents: 8000,
                percent: dec("5"),
                amount_cents: 400,
            }]
        );
    }

    #[test]
    fn only_the_next_bill_charges_it() {
        let mut missed = bill("INV-1", vec![group("Energy", 10000)], false);
        missed.billed_since_due = true;
        assert!(late_fees(five(), false, &[missed]).is_empty());
    }

    #[test]
    fn never_on_an_amount_already_penalized() {
        // INV-2 carries INV-1's late fee (500); INV-2 unpaid is penalized on its own charges.
        let due = [bill(
            "INV-2",
            vec![
                group("Energy", 9000),
                group("Taxes and fees", 200),
                group(LATE_FEE_GROUP, 500),
            ],
            false,
        )];
        let fees = late_fees(five(), false, &due);
        assert_eq!(fees[0].base_cents, 9200);
        assert_eq!(fees[0].amount_cents, 460);
    }

    #[test]
    fn the_fee_is_its_own_line() {
        let fees = late_fees(
            five(),
            false,
            &[bill("INV-00000001", vec![group("Energy", 15384)], false)],
        );
        let g = late_fee_group(&fees).unwrap();
        assert_eq!(g.name, "Late fee");
        assert_eq!(g.total_cents, 769);
        assert_eq!(g.charges[0].description, "Late fee on INV-00000001");
        assert_eq!(g.charges[0].unit, "%");
        assert_eq!(g.charges[0].quantity, Decimal::from(15384));
        assert_eq!(late_fee_group(&[]), None);
        // A bill with only credits owes nothing to penalize.
        assert!(late_fees(
            five(),
            false,
            &[bill("INV-3", vec![group("Credits", -500)], false)]
        )
        .is_empty());
    }
}
