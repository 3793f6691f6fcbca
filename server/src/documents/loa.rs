//! The Letter of Authorization of a client agent enrollment, as a PDF: the record that the
//! partner accepted a plan on the customer's behalf, and how to cancel.

use app::format::long_date;
use chrono::{DateTime, NaiveDate, Utc};

use super::layout::Flow;
use crate::domain::market::market_date;

/// What an LOA states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoaDocument {
    pub brand_name: String,
    pub brand_color: Option<String>,
    pub provider_name: String,
    pub customer_name: String,
    pub service_address: String,
    pub esi_id: String,
    pub plan_name: String,
    pub energy_cents_per_kwh: String,
    pub term_months: i64,
    pub start_date: NaiveDate,
    pub authorized_at: DateTime<Utc>,
    pub accepted_at: DateTime<Utc>,
    /// How the customer cancels: the partner's contacts.
    pub cancel_contact: String,
}

/// The LOA as a PDF.
#[must_use]
pub fn render(d: &LoaDocument) -> Vec<u8> {
    let mut flow = Flow::new(
        &d.brand_name,
        d.brand_color.as_deref(),
        "Letter of Authorization",
        &format!("Letter of Authorization, {}", d.customer_name),
    );
    flow.heading("Letter of Authorization");
    flow.paragraph(&format!(
        "On {}, {} accepted an electricity plan from {} on behalf of {}, under the limited \
         power of attorney granted on {}.",
        long_date(market_date(d.accepted_at)),
        d.brand_name,
        d.provider_name,
        d.customer_name,
        long_date(market_date(d.authorized_at)),
    ));
    flow.table(&[
        ("Customer", d.customer_name.clone()),
        ("Service address", d.service_address.clone()),
        ("ESI ID", d.esi_id.clone()),
        ("Plan", d.plan_name.clone()),
        (
            "Energy price",
            format!("{}\u{a2} per kWh", d.energy_cents_per_kwh),
        ),
        ("Term", format!("{} months", d.term_months)),
        ("Service start date", long_date(d.start_date)),
        ("Authorized on", long_date(market_date(d.authorized_at))),
        ("Plan accepted on", long_date(market_date(d.accepted_at))),
    ]);
    flow.heading("How to cancel");
    flow.paragraph(&format!(
        "If you did not agree to this, or changed your mind, contact {} ({}) and the \
         enrollment will be cancelled. A switch may be rescinded within 3 federal business \
         days at no cost.",
        d.brand_name, d.cancel_contact
    ));
    flow.finish("Letter of Authorization")
}
