//! Document generation: invoices as PDF (later EFL, TOS, YRAC, LOA, renewal notices).
//! `pdf` draws pages; `invoice` lays a bill out on them from plain data; `invoice_document`
//! decides what an invoice prints from the stored records.

pub mod invoice;
mod pdf;

use rust_decimal::Decimal;

use app::format::{dollars, short_date};

use crate::{
    domain::billing::{
        auto_pay_sentence, average_cents_per_kwh, card_name, to_cents, Charge, ChargeGroup,
    },
    store::{
        accounts::AccountRow,
        apps::AppRow,
        billing::{InvoiceRow, PaymentRow, UsageDayRow},
        enrollment::LocationRow,
        market::TduRow,
        payments::CardRow,
    },
};
use invoice::{ChargeDoc, ChargeGroupDoc, InvoiceDocument, PaymentDoc};

/// What an invoice's PDF is made from.
pub struct InvoiceRecords<'a> {
    pub app: &'a AppRow,
    pub account: &'a AccountRow,
    pub location: &'a LocationRow,
    /// The location's utility, when known.
    pub tdu: Option<&'a TduRow>,
    pub invoice: &'a InvoiceRow,
    pub groups: Vec<ChargeGroup>,
    pub days: Vec<UsageDayRow>,
    pub payments: &'a [PaymentRow],
    /// The card on file now.
    pub card: Option<&'a CardRow>,
}

/// A line's quantity, unit and rate as a bill prints them: `1,034.512 kWh at 9.1¢`,
/// `1 month at $9.95`, `1.997% of $150.58`.
fn printed_quantity_and_rate(c: &Charge) -> (String, String, String) {
    let rate = c.rate.normalize();
    match c.unit.as_str() {
        "kWh" => (
            c.quantity.normalize().to_string(),
            "kWh".to_owned(),
            format!("{rate}\u{a2}"),
        ),
        "month" => (
            c.quantity.normalize().to_string(),
            if c.quantity == Decimal::ONE {
                "month"
            } else {
                "months"
            }
            .to_owned(),
            dollars(to_cents(c.rate)),
        ),
        "%" => (
            dollars(to_cents(c.quantity)),
            String::new(),
            format!("{rate}%"),
        ),
        other => (
            c.quantity.normalize().to_string(),
            other.to_owned(),
            rate.to_string(),
        ),
    }
}

/// The invoice as its PDF prints it.
pub fn invoice_document(r: InvoiceRecords<'_>) -> InvoiceDocument {
    let (app, location, row) = (r.app, r.location, r.invoice);
    let mut address = vec![match &location.address_2 {
        Some(a2) if !a2.is_empty() => format!("{} {}", location.address_1, a2),
        _ => location.address_1.clone(),
    }];
    address.push(format!(
        "{}, {} {}",
        location.city, location.state, location.postal_code
    ));
    let payable = row.status.is_payable();
    let kwh = row.total_kwh.parse::<Decimal>().unwrap_or_default();
    InvoiceDocument {
        brand_name: app.display_name.clone(),
        brand_color: app.primary_color.clone(),
        support_email: app.support_email.clone(),
        support_phone: app.support_phone.clone(),
        customer_name: format!("{} {}", r.account.first_name, r.account.last_name),
        account_number: r.account.account_number.clone(),
        service_address: address,
        esi_id: location.esi_id.clone(),
        utility_name: r
            .tdu
            .map_or_else(|| location.tdu.clone(), |t| t.display_name.clone()),
        utility_outage_phone: r.tdu.and_then(|t| t.outage_phone.clone()),
        invoice_number: row.number.clone(),
        invoice_date: row.invoice_date,
        payment_due_date: row.payment_due_date,
        billing_period_start: row.billing_period_start,
        billing_period_end: row.billing_period_end,
        status: row.status.to_string(),
        total_cents: row.total_cents,
        total_kwh: row.total_kwh.clone(),
        avg_cents_per_kwh: average_cents_per_kwh(row.total_cents, kwh).map(|a| a.to_string()),
        groups: r
            .groups
            .into_iter()
            .map(|g| ChargeGroupDoc {
                name: g.name,
                total_cents: g.total_cents,
                charges: g
                    .charges
                    .into_iter()
                    .map(|c| {
                        let (quantity, unit, rate) = printed_quantity_and_rate(&c);
                        ChargeDoc {
                            description: c.description,
                            quantity,
                            unit,
                            rate,
                            amount_cents: c.amount_cents,
                        }
                    })
                    .collect(),
            })
            .collect(),
        payments: r
            .payments
            .iter()
            .map(|p| PaymentDoc {
                date: p.attempted_at.date_naive(),
                amount_cents: p.amount_cents,
                status: p.status.to_string(),
                method: r
                    .card
                    .map_or_else(|| "Card".to_owned(), |c| card_name(&c.brand, &c.last4)),
            })
            .collect(),
        daily_kwh: r
            .days
            .into_iter()
            .map(|d| (d.day, d.consumption_kwh))
            .collect(),
        auto_pay_note: r
            .card
            .filter(|_| payable)
            .map(|c| auto_pay_sentence(&c.brand, &c.last4, &short_date(row.payment_due_date))),
    }
}
