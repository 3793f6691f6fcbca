//! Renewals: the reminders before a fixed contract ends (with the month-to-month plan it
//! rolls onto and a renewal offer) and the confirmation of a renewal accepted.

use app::format::long_date;

use super::layout::{layout, list_titles};
use super::{Action, Brand, Rendered};

/// What a renewal confirmation states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalConfirmed {
    pub first_name: String,
    pub plan_name: String,
    /// None for a month-to-month plan.
    pub term_months: Option<i64>,
    pub energy_cents_per_kwh: String,
    pub start_date: chrono::NaiveDate,
    pub end_date: Option<chrono::NaiveDate>,
    /// The titles of the documents attached.
    pub attached: Vec<String>,
}

/// The month-to-month plan a fixed contract rolls onto when nobody renews it, as the final
/// expiration notice states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonthToMonthOffer {
    pub plan_name: String,
    pub starts_on: chrono::NaiveDate,
    pub energy_cents_per_kwh: String,
    pub base_charge_cents_per_month: i64,
    /// The EFL's average price at 1,000 kWh a month, delivery included.
    pub average_1000: String,
    /// Whether the notice carries the plan's Electricity Facts Label as an attachment.
    pub efl_attached: bool,
}

/// The fixed plan an expiration notice offers, as priced the day it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalOffer {
    pub plan_name: String,
    pub term_months: i64,
    /// The EFL's average price at 1,000 kWh a month, delivery included.
    pub average_1000: String,
    pub priced_on: chrono::NaiveDate,
}

pub(super) fn confirmed(brand: &Brand, r: &RenewalConfirmed) -> Rendered {
    let mut paragraphs = vec![format!(
        "Thank you for renewing with {}. Your new plan is {}: {}, {}\u{a2} per kWh \
                     for energy, starting on {}.",
        brand.display_name,
        r.plan_name,
        match (r.term_months, r.end_date) {
            (Some(months), Some(end)) =>
                format!("a fixed rate for {months} months, until {}", long_date(end)),
            (Some(months), None) => format!("a fixed rate for {months} months"),
            _ => "a variable rate, month to month".to_owned(),
        },
        r.energy_cents_per_kwh,
        long_date(r.start_date)
    )];
    paragraphs.push(
        "Your current plan continues until then; you do not need to do anything, \
                     and your service is not interrupted."
            .to_owned(),
    );
    if !r.attached.is_empty() {
        paragraphs.push(format!(
            "Attached are the documents of your new contract, to keep: {}.",
            list_titles(&r.attached)
        ));
    }
    layout(
        brand,
        "Your renewal is confirmed",
        &r.first_name,
        &paragraphs,
        None,
    )
}

pub(super) fn reminder(
    brand: &Brand,
    first_name: &str,
    contract_end: &chrono::NaiveDate,
    days_left: &i64,
    renewal_url: &str,
    month_to_month: &Option<MonthToMonthOffer>,
    offer: &Option<RenewalOffer>,
) -> Rendered {
    let end = long_date(*contract_end);
    let mut paragraphs = vec![
        format!(
            "Your {} electricity plan ends on {end}.",
            brand.display_name
        ),
        "Choose a renewal plan before then to keep a fixed rate. If you do \
                     nothing, your service continues on a month-to-month plan with a \
                     variable rate."
            .to_owned(),
    ];
    if let Some(o) = offer {
        paragraphs.push(format!(
            "One plan you can renew onto: {}, a fixed rate for {} months, an average \
                         of {}\u{a2} per kWh at 1,000 kWh a month with the utility's delivery \
                         charges, as priced on {}. Its Electricity Facts Label is in the notice \
                         attached; the renewal page shows every plan at today's prices.",
            o.plan_name,
            o.term_months,
            o.average_1000,
            long_date(o.priced_on)
        ));
    }
    if let Some(m) = month_to_month {
        paragraphs.push(format!(
            "From {} that plan is {}, under the same terms of service: {}\u{a2} \
                         per kWh for energy and a base charge of {} a month, an average of \
                         {}\u{a2} per kWh at 1,000 kWh a month with the utility's delivery \
                         charges.",
            long_date(m.starts_on),
            m.plan_name,
            m.energy_cents_per_kwh,
            app::format::dollars(m.base_charge_cents_per_month),
            m.average_1000
        ));
        if m.efl_attached {
            paragraphs.push("Its Electricity Facts Label is attached to this notice.".to_owned());
        }
    }
    layout(
        brand,
        &format!("Your electricity plan ends in {days_left} days"),
        first_name,
        &paragraphs,
        Some(&Action {
            label: "Choose a renewal plan".to_owned(),
            url: renewal_url.to_owned(),
        }),
    )
}
