//! An expiration notice as a PDF: when the contract ends, where to renew, a fixed plan the
//! customer can renew onto, and in the final notice the month-to-month plan the contract rolls
//! onto, each plan's Electricity Facts Label on the following pages.

use app::format::long_date;
use chrono::NaiveDate;

use super::{efl::EflDocument, layout::Flow};

/// What an expiration notice states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeDocument {
    pub brand_name: String,
    pub brand_color: Option<String>,
    pub customer_name: String,
    pub service_address: String,
    pub esi_id: String,
    pub plan_name: String,
    pub contract_end: NaiveDate,
    pub days_left: i64,
    pub renewal_url: String,
    /// The final notice: the month-to-month plan's EFL.
    pub month_to_month: Option<EflDocument>,
    /// The fixed plan offered for renewal, as priced the day the notice was made.
    pub offer: Option<EflDocument>,
}

/// The notice as a PDF.
#[must_use]
pub fn render(d: &NoticeDocument) -> Vec<u8> {
    let mut flow = Flow::new(
        &d.brand_name,
        d.brand_color.as_deref(),
        "Expiration notice",
        &format!("Expiration notice, contract ending {}", d.contract_end),
    );
    flow.heading(&format!("Your plan ends in {} days", d.days_left));
    flow.paragraph(&format!(
        "{}, your {} electricity plan ends on {}. Choose a renewal plan before then to keep a \
         fixed rate: {}",
        d.customer_name,
        d.plan_name,
        long_date(d.contract_end),
        d.renewal_url
    ));
    flow.table(&[
        ("Service address", d.service_address.clone()),
        ("ESI ID", d.esi_id.clone()),
        ("Current plan", d.plan_name.clone()),
        ("Contract end date", long_date(d.contract_end)),
    ]);
    if let Some(o) = &d.offer {
        flow.heading("A plan you can renew onto");
        flow.paragraph(&format!(
            "{}: a fixed rate for {} months from {}, as priced the day this notice was made. \
             Its Electricity Facts Label follows; the renewal page shows every plan at the \
             prices of the day you choose.",
            o.plan_name,
            o.term_months,
            long_date(d.contract_end + chrono::Duration::days(1)),
        ));
        flow.table(&[
            ("Energy charge", super::efl::cents(&o.energy_cents_per_kwh)),
            (
                "Average price at 1,000 kWh",
                super::efl::cents(&o.averages[1].to_string()),
            ),
        ]);
    }
    match &d.month_to_month {
        None => flow.paragraph(
            "If you do nothing, your service continues on a month-to-month plan with a \
             variable rate, under the same terms of service.",
        ),
        Some(m) => {
            flow.heading("If you do nothing");
            flow.paragraph(&format!(
                "From {} your service continues on {}, a month-to-month variable plan, under \
                 the same terms of service. Its Electricity Facts Label follows.",
                long_date(d.contract_end + chrono::Duration::days(1)),
                m.plan_name
            ));
            flow.table(&[
                ("Energy charge", super::efl::cents(&m.energy_cents_per_kwh)),
                (
                    "Base charge",
                    format!(
                        "{} per month",
                        app::format::dollars(m.base_charge_cents_per_month)
                    ),
                ),
            ]);
        }
    }
    for efl in d.offer.iter().chain(&d.month_to_month) {
        flow.page_break();
        super::efl::write(&mut flow, efl);
    }
    flow.finish(&format!("Expiration notice: {}", d.plan_name))
}
