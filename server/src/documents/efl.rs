//! The Electricity Facts Label of a priced plan, as a PDF: who provides it, the price and its
//! parts, the average prices at 500, 1,000 and 2,000 kWh a month (the domain's EFL function,
//! printed to the tenth of a cent), the term and what ending it early costs.

use app::format::dollars;

use super::{html::Laid, layout::Flow};
use crate::domain::pricing::efl_printed_cents;

/// What an EFL prints, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EflDocument {
    pub brand_name: String,
    pub brand_color: Option<String>,
    pub provider_name: String,
    pub provider_certificate: String,
    /// The partner's contacts for the customer: phone, e-mail, web, as far as given.
    pub contacts: Vec<String>,
    /// The priced plan's id: the EFL's version.
    pub version: String,
    pub plan_name: String,
    /// `fixed` or `month_to_month`.
    pub plan_type: String,
    pub term_months: i64,
    pub energy_cents_per_kwh: String,
    pub base_charge_cents_per_month: i64,
    pub utility_name: String,
    pub tdu_fixed_cents_per_month: i64,
    pub tdu_cents_per_kwh: String,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
    /// Whether the fee is ever charged (the Terms of Service say when it is not).
    pub early_termination_fee_charged: bool,
    pub renewable_percent: i64,
    /// The averages at 500, 1,000 and 2,000 kWh, in cents per kWh as the plan carries them.
    pub averages: [rust_decimal::Decimal; 3],
    pub tos_version: String,
    pub yrac_version: String,
    /// The day the plan was priced.
    pub issued: chrono::NaiveDate,
}

/// A rate in cents per kWh as the documents print it (`9.5000` prints `9.5¢ per kWh`).
pub(super) fn cents(rate: &str) -> String {
    let trimmed = rate
        .parse::<rust_decimal::Decimal>()
        .map(|d| d.normalize().to_string())
        .unwrap_or_else(|_| rate.to_owned());
    format!("{trimmed}\u{a2} per kWh")
}

/// The EFL as a PDF.
#[must_use]
pub fn render(d: &EflDocument) -> Vec<u8> {
    laid(d).pdf()
}

/// The EFL laid out, for its PDF or its HTML.
#[must_use]
pub fn laid(d: &EflDocument) -> Laid {
    let mut flow = Flow::new(
        &d.brand_name,
        d.brand_color.as_deref(),
        "Electricity Facts Label",
        &format!(
            "Electricity Facts Label, {}, version {}",
            d.plan_name, d.version
        ),
    );
    write(&mut flow, d);
    Laid {
        flow,
        title: format!("Electricity Facts Label: {}", d.plan_name),
    }
}

/// The EFL's sections, from where `flow` stands (a notice carries its plan's EFL this way).
pub fn write(flow: &mut Flow, d: &EflDocument) {
    let fixed = d.plan_type == "fixed";
    flow.heading(&format!("Electricity Facts Label: {}", d.plan_name));
    flow.paragraph(&format!(
        "{} provides this plan, offered by {}, in the {} service area. Issued {}.",
        d.provider_name,
        d.brand_name,
        d.utility_name,
        app::format::long_date(d.issued)
    ));
    flow.heading("Average price per kWh");
    let [a500, a1000, a2000] = d.averages.map(efl_printed_cents);
    flow.table(&[
        ("500 kWh a month", format!("{a500}\u{a2} per kWh")),
        ("1,000 kWh a month", format!("{a1000}\u{a2} per kWh")),
        ("2,000 kWh a month", format!("{a2000}\u{a2} per kWh")),
    ]);
    let [e500, e1000, e2000] = d.averages.map(|a| format!("{a:.4}"));
    flow.note(&format!(
        "The average price includes every recurring charge (energy, base charge and the \
         utility's delivery charges) and excludes taxes and the gross-receipts reimbursement. \
         Your average price depends on how much electricity you use. Unrounded: {e500}, \
         {e1000} and {e2000} cents per kWh."
    ));
    flow.heading("Electricity price");
    flow.table(&[
        ("Energy charge", cents(&d.energy_cents_per_kwh)),
        (
            "Base charge",
            format!("{} per month", dollars(d.base_charge_cents_per_month)),
        ),
        (
            "Utility delivery charges",
            format!(
                "{} per month and {}, passed through from {} as it sets them",
                dollars(d.tdu_fixed_cents_per_month),
                cents(&d.tdu_cents_per_kwh),
                d.utility_name
            ),
        ),
        (
            "Solar buyback credit",
            format!("{} exported", cents(&d.solar_buyback_cents_per_kwh)),
        ),
    ]);
    flow.heading("Other key terms");
    // What the plan states is what is charged (`renewal::stated_early_termination_fee_cents`).
    let etf = if d.early_termination_fee_charged && d.early_termination_fee_cents > 0 {
        format!(
            "{}, not charged in the last 14 days of the term",
            dollars(d.early_termination_fee_cents)
        )
    } else {
        format!(
            "None ({}): ending the contract early costs nothing beyond the electricity used \
             (see the Terms of Service)",
            dollars(0)
        )
    };
    flow.table(&[
        (
            "Type of product",
            if fixed {
                "Fixed rate".to_owned()
            } else {
                "Variable rate, month to month".to_owned()
            },
        ),
        (
            "Contract term",
            if fixed {
                format!("{} months", d.term_months)
            } else {
                "Month to month".to_owned()
            },
        ),
        ("Early termination fee", etf),
        ("Renewable content", format!("{}%", d.renewable_percent)),
        ("Terms of Service", format!("version {}", d.tos_version)),
        (
            "Your Rights as a Customer",
            format!("version {}", d.yrac_version),
        ),
    ]);
    flow.heading("Provider and contacts");
    let mut rows = vec![
        (
            "Retail electric provider".to_owned(),
            d.provider_name.clone(),
        ),
        (
            "Certificate number".to_owned(),
            d.provider_certificate.clone(),
        ),
    ];
    rows.extend(
        d.contacts
            .iter()
            .map(|c| ("Customer service".to_owned(), c.clone())),
    );
    flow.table(&rows);
}
