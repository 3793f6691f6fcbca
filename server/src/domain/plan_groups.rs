//! A plan group as the operator types it: each field of the form parsed into its typed value
//! (`GroupTerms`, the rules the pricing model reads), with every field that is wrong named at
//! once. Rules that need the app's other groups (one month-to-month default, names that do not
//! repeat) are the service's.

use super::{
    market::RateCentsPerKwh,
    pricing::{GroupTerms, PlanType},
    FieldError,
};

/// The longest fixed term a group may have, in months.
pub const MAX_TERM_MONTHS: u32 = 36;
/// A bound on every amount in cents (100,000 dollars): beyond it a typo, not a price.
pub const MAX_CENTS: i64 = 10_000_000;

/// A plan group's form, as typed.
#[derive(Debug, Default, Clone, Copy)]
pub struct GroupInput<'a> {
    pub name: &'a str,
    pub plan_type: &'a str,
    pub term_months: &'a str,
    pub base_charge_cents_per_month: &'a str,
    pub energy_margin_cents_per_kwh: &'a str,
    pub partner_commission_cents_per_month: &'a str,
    pub solar_buyback_cents_per_kwh: &'a str,
    pub early_termination_fee_cents: &'a str,
    pub renewable_percent: &'a str,
    pub tos_version: &'a str,
    pub is_month_to_month_default: bool,
    /// Blank: after the app's other groups.
    pub position: &'a str,
}

/// A plan group's values, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupValues {
    pub terms: GroupTerms,
    pub position: Option<i64>,
}

fn text(param: &str, raw: &str, max: usize) -> Result<String, FieldError> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(FieldError::missing(param));
    }
    if value.chars().count() > max || value.chars().any(char::is_control) {
        return Err(FieldError::invalid(
            param,
            format!("{param} must have 1 to {max} characters"),
        ));
    }
    Ok(value.to_owned())
}

/// A whole number from `min` to `max`, digits only (no sign, no decimals).
fn whole(param: &str, raw: &str, min: i64, max: i64, what: &str) -> Result<i64, FieldError> {
    let value = raw.trim();
    if value.is_empty() {
        return Err(FieldError::missing(param));
    }
    value
        .parse::<i64>()
        .ok()
        .filter(|n| value.bytes().all(|b| b.is_ascii_digit()) && (min..=max).contains(n))
        .ok_or_else(|| FieldError::invalid(param, format!("{param} must be {what}")))
}

/// The value, or `None` with its error noted.
fn keep<T>(errors: &mut Vec<FieldError>, r: Result<T, FieldError>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
}

fn cents(param: &str, raw: &str) -> Result<i64, FieldError> {
    whole(
        param,
        raw,
        0,
        MAX_CENTS,
        &format!("a whole number of cents from 0 to {MAX_CENTS}"),
    )
}

fn rate(param: &str, raw: &str) -> Result<RateCentsPerKwh, FieldError> {
    if raw.trim().is_empty() {
        return Err(FieldError::missing(param));
    }
    RateCentsPerKwh::parse(param, raw)
}

/// A Terms of Service version: letters, digits, dots, hyphens and underscores (it names the
/// document the plans link to).
fn tos_version(raw: &str) -> Result<String, FieldError> {
    let value = text("tos_version", raw, 20)?;
    if !value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
    {
        return Err(FieldError::invalid(
            "tos_version",
            "tos_version may have letters, digits, dots, hyphens and underscores only",
        ));
    }
    Ok(value)
}

/// Parses a plan group's form. A fixed plan runs 1 to 36 months; a month-to-month plan runs
/// month by month (term 1) and has no early termination fee; only a month-to-month group can
/// be the app's month-to-month default.
pub fn parse_group(input: &GroupInput<'_>) -> Result<GroupValues, Vec<FieldError>> {
    let mut errors = Vec::new();
    let name = keep(&mut errors, text("name", input.name, 100));
    let plan_type = keep(
        &mut errors,
        PlanType::parse(input.plan_type.trim()).ok_or_else(|| {
            FieldError::invalid("plan_type", "plan_type must be fixed or month_to_month")
        }),
    );
    let term_months = keep(
        &mut errors,
        match plan_type {
            Some(PlanType::MonthToMonth) => whole(
                "term_months",
                input.term_months,
                1,
                1,
                "1 for a month-to-month plan",
            ),
            _ => whole(
                "term_months",
                input.term_months,
                1,
                i64::from(MAX_TERM_MONTHS),
                &format!("a whole number of months from 1 to {MAX_TERM_MONTHS}"),
            ),
        },
    );
    let base_charge = keep(
        &mut errors,
        cents(
            "base_charge_cents_per_month",
            input.base_charge_cents_per_month,
        ),
    );
    let margin = keep(
        &mut errors,
        rate(
            "energy_margin_cents_per_kwh",
            input.energy_margin_cents_per_kwh,
        ),
    );
    let commission = keep(
        &mut errors,
        cents(
            "partner_commission_cents_per_month",
            input.partner_commission_cents_per_month,
        ),
    );
    let buyback = keep(
        &mut errors,
        rate(
            "solar_buyback_cents_per_kwh",
            input.solar_buyback_cents_per_kwh,
        ),
    );
    let etf = keep(
        &mut errors,
        cents(
            "early_termination_fee_cents",
            input.early_termination_fee_cents,
        )
        .and_then(|etf| {
            if plan_type == Some(PlanType::MonthToMonth) && etf != 0 {
                Err(FieldError::invalid(
                    "early_termination_fee_cents",
                    "a month-to-month plan has no early termination fee (0)",
                ))
            } else {
                Ok(etf)
            }
        }),
    );
    let renewable = keep(
        &mut errors,
        whole(
            "renewable_percent",
            input.renewable_percent,
            0,
            100,
            "a whole percentage from 0 to 100",
        ),
    );
    let tos = keep(&mut errors, tos_version(input.tos_version));
    let position = keep(
        &mut errors,
        if input.position.trim().is_empty() {
            Ok(None)
        } else {
            whole(
                "position",
                input.position,
                0,
                9_999,
                "a whole number from 0 to 9999",
            )
            .map(Some)
        },
    );
    let default = keep(
        &mut errors,
        if input.is_month_to_month_default && plan_type == Some(PlanType::Fixed) {
            Err(FieldError::invalid(
                "is_month_to_month_default",
                "only a month-to-month group can be the month-to-month default",
            ))
        } else {
            Ok(input.is_month_to_month_default)
        },
    );
    match (
        name,
        plan_type,
        term_months,
        base_charge,
        margin,
        commission,
        buyback,
        etf,
        renewable,
        tos,
        position,
        default,
    ) {
        (
            Some(name),
            Some(plan_type),
            Some(term),
            Some(base_charge_cents_per_month),
            Some(margin),
            Some(partner_commission_cents_per_month),
            Some(buyback),
            Some(early_termination_fee_cents),
            Some(renewable),
            Some(tos_version),
            Some(position),
            Some(is_month_to_month_default),
        ) if errors.is_empty() => Ok(GroupValues {
            terms: GroupTerms {
                name,
                plan_type,
                term_months: u32::try_from(term).unwrap_or(1),
                base_charge_cents_per_month,
                energy_margin_cents_per_kwh: margin.0,
                partner_commission_cents_per_month,
                solar_buyback_cents_per_kwh: buyback.0,
                early_termination_fee_cents,
                renewable_percent: u8::try_from(renewable).unwrap_or(0),
                tos_version,
                is_month_to_month_default,
            },
            position,
        }),
        _ => Err(errors),
    }
}

/// Whether an app still has a month-to-month group, which contracts nobody renews roll onto,
/// once one of its groups becomes `plan_type` (`others`: the plan types of its other groups).
pub fn keeps_a_month_to_month_group<'a>(
    others: impl IntoIterator<Item = &'a str>,
    plan_type: PlanType,
) -> bool {
    plan_type == PlanType::MonthToMonth
        || others
            .into_iter()
            .any(|t| t == PlanType::MonthToMonth.as_str())
}

/// The refusal of an edit that would leave the app without a month-to-month group.
pub fn last_month_to_month_group() -> FieldError {
    FieldError::invalid(
        "plan_type",
        "this is the app's last month-to-month group, which contracts nobody renews roll onto: \
         add another month-to-month group first",
    )
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;

    use super::*;

    fn fixed() -> GroupInput<'static> {
        GroupInput {
            name: " 18-Month Fixed ",
            plan_type: "fixed",
            term_months: "18",
            base_charge_cents_per_month: "995",
            energy_margin_cents_per_kwh: "4.25",
            partner_commission_cents_per_month: "500",
            solar_buyback_cents_per_kwh: "0",
            early_termination_fee_cents: "15000",
            renewable_percent: "31",
            tos_version: "2026.2",
            is_month_to_month_default: false,
            position: "",
        }
    }

    fn params(input: &GroupInput<'_>) -> Vec<String> {
        parse_group(input)
            .unwrap_err()
            .into_iter()
            .map(|e| e.param)
            .collect()
    }

    #[test]
    fn a_fixed_group_parses_into_typed_terms() {
        let values = parse_group(&fixed()).unwrap();
        assert_eq!(values.terms.name, "18-Month Fixed");
        assert_eq!(values.terms.plan_type, PlanType::Fixed);
        assert_eq!(values.terms.term_months, 18);
        assert_eq!(
            values.terms.energy_margin_cents_per_kwh,
            Decimal::new(425, 2)
        );
        assert_eq!(values.terms.early_termination_fee_cents, 15_000);
        assert_eq!(values.position, None);
    }

    #[test]
    fn every_wrong_field_is_named_at_once() {
        let input = GroupInput {
            name: "",
            term_months: "37",
            base_charge_cents_per_month: "-5",
            energy_margin_cents_per_kwh: "abc",
            partner_commission_cents_per_month: "1.5",
            solar_buyback_cents_per_kwh: "0.12345",
            renewable_percent: "101",
            tos_version: "v 1",
            position: "x",
            ..fixed()
        };
        assert_eq!(
            params(&input),
            [
                "name",
                "term_months",
                "base_charge_cents_per_month",
                "energy_margin_cents_per_kwh",
                "partner_commission_cents_per_month",
                "solar_buyback_cents_per_kwh",
                "renewable_percent",
                "tos_version",
                "position",
            ]
        );
    }

    #[test]
    fn a_fixed_term_is_1_to_36_months() {
        for ok in ["1", "36"] {
            assert!(parse_group(&GroupInput {
                term_months: ok,
                ..fixed()
            })
            .is_ok());
        }
        for bad in ["0", "37", "", "12.0", "+12"] {
            assert_eq!(
                params(&GroupInput {
                    term_months: bad,
                    ..fixed()
                }),
                ["term_months"],
                "{bad:?}"
            );
        }
    }

    #[test]
    fn month_to_month_rules() {
        let monthly = GroupInput {
            plan_type: "month_to_month",
            term_months: "1",
            early_termination_fee_cents: "0",
            is_month_to_month_default: true,
            ..fixed()
        };
        assert!(
            parse_group(&monthly)
                .unwrap()
                .terms
                .is_month_to_month_default
        );
        assert_eq!(
            params(&GroupInput {
                term_months: "12",
                ..monthly
            }),
            ["term_months"]
        );
        assert_eq!(
            params(&GroupInput {
                early_termination_fee_cents: "100",
                ..monthly
            }),
            ["early_termination_fee_cents"]
        );
        assert_eq!(
            params(&GroupInput {
                is_month_to_month_default: true,
                ..fixed()
            }),
            ["is_month_to_month_default"]
        );
        assert_eq!(
            params(&GroupInput {
                plan_type: "variable",
                ..fixed()
            }),
            ["plan_type"]
        );
    }
}
