//! A disconnection notice as a PDF: the written notice the rules ask for before service is
//! disconnected for non-payment. It states the amount owed and the bill it is for, the earliest
//! date of disconnection, how to pay, that a deferred payment plan is available (and on what
//! terms), where energy assistance is found, how a deposit applies, and whom to complain to.

use app::format::{dollars, long_date};
use chrono::NaiveDate;

use super::layout::Flow;
use crate::domain::documents::COMMISSION;

/// What a disconnection notice states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisconnectionNoticeDocument {
    pub brand_name: String,
    pub brand_color: Option<String>,
    pub provider_line: String,
    pub customer_name: String,
    pub service_address: String,
    pub esi_id: String,
    pub invoice_number: String,
    pub due_date: NaiveDate,
    /// The noticed bill's amount.
    pub amount_cents: i64,
    /// Everything past due on the account, this bill included.
    pub past_due_cents: i64,
    pub notice_date: NaiveDate,
    pub earliest_date: NaiveDate,
    /// Where to pay: the app, its support page or phone.
    pub how_to_pay: String,
    /// A deferred payment plan the customer may ask for: its instalments (none when none is
    /// owed, for example after too many notices this year).
    pub plan_months: Option<u32>,
    /// The deposit held, if any.
    pub deposit_cents: Option<i64>,
    pub support: String,
}

/// The notice as a PDF.
#[must_use]
pub fn render(d: &DisconnectionNoticeDocument) -> Vec<u8> {
    let mut flow = Flow::new(
        &d.brand_name,
        d.brand_color.as_deref(),
        "Disconnection notice",
        &format!("Disconnection notice of {}", d.notice_date),
    );
    flow.heading("Your electric service may be disconnected");
    flow.paragraph(&format!(
        "{}, your bill {} of {} was due on {} and has not been paid. Unless it is paid, or you \
         agree to a payment plan, your electric service may be disconnected for non-payment \
         on {} or later.",
        d.customer_name,
        d.invoice_number,
        dollars(d.amount_cents),
        long_date(d.due_date),
        long_date(d.earliest_date),
    ));
    flow.table(&[
        ("Notice date", long_date(d.notice_date)),
        ("Service address", d.service_address.clone()),
        ("ESI ID", d.esi_id.clone()),
        ("Bill", d.invoice_number.clone()),
        ("Amount of this bill", dollars(d.amount_cents)),
        ("Total past due", dollars(d.past_due_cents)),
        ("Earliest disconnection date", long_date(d.earliest_date)),
    ]);
    flow.heading("How to pay");
    flow.paragraph(&d.how_to_pay);
    flow.paragraph(
        "Service is never disconnected on a weekend or a holiday, on the day before one, or \
         during an extreme-weather emergency. Once the past-due amount is paid, service that \
         was disconnected is reconnected.",
    );
    flow.heading("Payment plans");
    match d.plan_months {
        Some(months) => flow.paragraph(&format!(
            "If you cannot pay the whole amount now, you may ask for a deferred payment plan: \
             what you owe is spread over {months} equal monthly instalments, each added to \
             your next bills, with no finance charge. Accepting it stops this disconnection. \
             Ask for it in your account or by calling us."
        )),
        None => flow.paragraph(
            "Payment arrangements may be available: please call us to discuss your \
             options.",
        ),
    }
    flow.heading("Energy assistance");
    flow.paragraph(
        "Help paying electric bills may be available from energy assistance programs for \
         customers with low incomes, the elderly and people with disabilities. Dial 2-1-1 to \
         find the programs near you. If someone in your home is seriously ill or depends on \
         electrically powered medical equipment, call us before the disconnection date: \
         disconnection may be postponed.",
    );
    flow.heading("Your deposit");
    flow.paragraph(&match d.deposit_cents {
        Some(cents) if cents > 0 => format!(
            "We hold a deposit of {} for this account. It is not used to pay this bill while \
             service continues; when service ends it is applied to your final bill and any \
             rest is refunded to you.",
            dollars(cents)
        ),
        _ => "We hold no deposit for this account.".to_owned(),
    });
    flow.heading("Questions and complaints");
    flow.paragraph(&d.support);
    flow.paragraph(&COMMISSION.complaint_sentence());
    flow.note(&d.provider_line);
    flow.finish(&format!("Disconnection notice: {}", d.invoice_number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_states_what_the_rule_asks() {
        let d = DisconnectionNoticeDocument {
            brand_name: "Sunny".into(),
            brand_color: None,
            provider_line: "Switchboard Energy LLC, PUCT Certificate No. 10000".into(),
            customer_name: "Ana Diaz".into(),
            service_address: "1 Main St, Dallas, TX 75001".into(),
            esi_id: "10443720000000001".into(),
            invoice_number: "INV-00000007".into(),
            due_date: NaiveDate::from_ymd_opt(2027, 3, 1).unwrap(),
            amount_cents: 12_345,
            past_due_cents: 12_345,
            notice_date: NaiveDate::from_ymd_opt(2027, 3, 2).unwrap(),
            earliest_date: NaiveDate::from_ymd_opt(2027, 3, 15).unwrap(),
            how_to_pay: "Pay in the Sunny app.".into(),
            plan_months: Some(5),
            deposit_cents: Some(5_000),
            support: "Call 555-0100.".into(),
        };
        let pdf = String::from_utf8_lossy(&render(&d)).to_string();
        for printed in [
            "$123.45",
            "March 15, 2027",
            "Payment plans",
            "2-1-1",
            "$50.00",
            "customer@puc.texas.gov",
        ] {
            assert!(pdf.contains(printed), "{printed}");
        }
    }
}
