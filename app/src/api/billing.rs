//! Wire types of billing: invoices with their charges, usage and payments, and a location's
//! usage (monthly, daily, 15-minute intervals) and meter reads.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

use super::Timestamp;

/// An invoice in listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Invoice {
    /// Assigned when issued, gap-free; identifies the invoice in paths.
    pub number: String,
    pub invoice_date: NaiveDate,
    /// Auto-pay charges the saved card on this day: at least 16 days after the invoice date,
    /// on the first business day from then (weekends and the market's holidays move it on).
    pub payment_due_date: NaiveDate,
    pub billing_period_start: NaiveDate,
    /// Inclusive.
    pub billing_period_end: NaiveDate,
    pub total_cents: i64,
    /// The total in dollars, as a decimal string (`"123.45"`).
    pub total: String,
    /// Consumption of the period, kWh (decimal string).
    pub total_kwh: String,
    /// Total over consumption, cents per kWh to one place; null without consumption.
    pub avg_cents_per_kwh: Option<String>,
    /// `open`, `paid`, `past_due` or `voided`.
    pub status: String,
    pub paid_at: Option<Timestamp>,
    pub voided_at: Option<Timestamp>,
    /// The invoice's PDF: an absolute, signed link that a browser opens with no token for
    /// about an hour (`GET /v1/account/billing/invoices/{invoice_number}/pdf` with the
    /// AccountToken gives the same PDF).
    pub pdf: String,
    pub location_uuid: Uuid,
}

/// One line of an invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct InvoiceCharge {
    pub description: String,
    /// Decimal string, in `unit`.
    pub quantity: String,
    /// `kWh`, `month` or `%` (a percent of the charges before taxes, in cents).
    pub unit: String,
    /// Cents per unit, or the percent for `%` (decimal string).
    pub rate: String,
    pub amount_cents: i64,
}

/// Energy, Delivery, Credits (when any), Taxes and fees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ChargesGroup {
    pub name: String,
    pub total_cents: i64,
    pub charges: Vec<InvoiceCharge>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct InvoiceUsageDay {
    pub date: NaiveDate,
    pub consumption: String,
    pub generation: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct InvoiceUsage {
    pub total_kwh: String,
    pub generation_kwh: String,
    pub daily: Vec<InvoiceUsageDay>,
}

/// One attempt at paying an invoice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Payment {
    pub uuid: Uuid,
    pub invoice_number: String,
    pub amount_cents: i64,
    /// `succeeded`, `failed` or `pending`.
    pub status: String,
    pub attempted_at: Timestamp,
    /// The processor's decline code when failed.
    pub failure_code: Option<String>,
    /// How much of this payment went back to the card in all (0 when none did).
    pub refunded_cents: i64,
    /// Each refund of this payment, oldest first.
    pub refunds: Vec<PaymentRefund>,
    /// When the cardholder disputed this payment with their bank; null when not disputed.
    pub disputed_at: Option<Timestamp>,
}

/// Money of a succeeded payment sent back to the card, by the provider or at the processor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PaymentRefund {
    pub amount_cents: i64,
    pub refunded_at: Timestamp,
}

/// `GET /v1/account/billing/invoices/{invoice_number}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct InvoiceDetail {
    #[serde(flatten)]
    pub invoice: Invoice,
    pub charges_groups: Vec<ChargesGroup>,
    pub usage: InvoiceUsage,
    pub payments: Vec<Payment>,
}

/// A month of usage, kWh (decimal strings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct UsageMonth {
    /// `YYYY-MM`.
    pub month: String,
    pub consumption: String,
    pub generation: String,
    pub vehicle_charging: String,
    pub eligible_vehicle_charging: String,
}

/// `GET .../usage/monthly`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct MonthlyUsage {
    pub year: i32,
    pub units: String,
    pub months: Vec<UsageMonth>,
    pub next: Option<String>,
    pub previous: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct UsageDay {
    pub date: NaiveDate,
    pub consumption: String,
    pub generation: String,
    pub vehicle_charging: String,
    pub eligible_vehicle_charging: String,
}

/// `GET .../usage/daily`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct DailyUsage {
    pub year: i32,
    pub month: u32,
    pub units: String,
    pub days: Vec<UsageDay>,
    pub next: Option<String>,
    pub previous: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct UsageInterval {
    pub start: Timestamp,
    pub consumption: String,
    pub generation: String,
}

/// `GET .../usage/intervals`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct IntervalUsage {
    pub start: Timestamp,
    pub end: Timestamp,
    pub interval_minutes: u32,
    pub units: String,
    pub intervals: Vec<UsageInterval>,
    pub next: Option<String>,
    pub previous: Option<String>,
}

/// A cycle's meter read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct MeterRead {
    pub read_date: NaiveDate,
    pub start_date: NaiveDate,
    /// Inclusive.
    pub end_date: NaiveDate,
    pub kwh: String,
    /// `actual` or `estimated`.
    #[serde(rename = "type")]
    pub kind: String,
}
