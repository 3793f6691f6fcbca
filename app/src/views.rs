//! What the browser flows read of v1 answers: the fields they show or decide on, nothing else
//! (serde skips the rest). Same names and shapes as `api`, fewer fields: every field parsed in
//! the browser is code a partner's page downloads. Dates stay the API's `YYYY-MM-DD` text
//! (which sorts as the dates do): the flows only compare and show them.

use crate::api::{
    enrollment::BillingAddressOut,
    market::{AveragePrices, PlanDocuments, PlanRatesOut},
    Enrollment, PostalAddress,
};
use serde::Deserialize;

/// Of `api::Account`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Account {
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub date_of_birth: Option<String>,
    pub preliminary_address: Option<PostalAddress>,
    /// The account's status and its reason, as the API names them.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub status_reason: String,
    pub enrollment: Enrollment,
    pub locations: Vec<Location>,
    pub app: AccountApp,
    /// The enrollment's last screen offers to pay a deposit still due.
    #[cfg(any(feature = "ssr", feature = "enrollment"))]
    #[serde(default)]
    pub deposit: Option<Deposit>,
}

/// Of `api::Deposit`.
#[cfg(any(feature = "ssr", feature = "enrollment"))]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Deposit {
    pub amount_cents: i64,
    pub status: String,
}

/// Of `api::AccountApp`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AccountApp {
    pub payment_public_key: String,
}

/// Of `api::Location`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Location {
    /// Passed back in paths as it came (only the flows that call location paths read it).
    #[cfg(any(feature = "ssr", feature = "documents", feature = "renewal"))]
    pub uuid: String,
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub service_start_date: Option<String>,
    pub plan_name: Option<String>,
    pub contract_start: Option<String>,
    #[cfg(any(feature = "ssr", feature = "renewal"))]
    pub contract_end: Option<String>,
}

/// Of `api::market::Plan`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plan {
    /// Passed back as it came: the browser never needs it as a UUID.
    pub plan_uuid: String,
    pub name: String,
    pub plan_type: String,
    pub term_months: u32,
    pub earliest_start_date: String,
    pub latest_start_date: String,
    pub earliest_switch_start_date: String,
    pub rates: PlanRatesOut,
    pub average_price_cents_per_kwh: AveragePrices,
    pub renewable_percent: u8,
    pub documents: PlanDocuments,
    /// What the plan would cost over a year: the home's own last year for a renewal, a
    /// typical home's for enrollment.
    #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
    #[serde(default)]
    pub estimated_annual_cost_cents: Option<i64>,
    #[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
    #[serde(default)]
    pub estimate_basis: Option<EstimateBasis>,
}

/// Of `api::market::EstimateBasis`: what an estimate rests on, in the server's words.
#[cfg(any(feature = "ssr", feature = "enrollment", feature = "renewal"))]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EstimateBasis {
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plans {
    pub plans: Vec<Plan>,
}

/// Of `api::enrollment::EnrollmentSummary`: what the enrollment's review shows.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Summary {
    pub plan: Option<Plan>,
    pub payment_method: Option<PaymentMethod>,
    pub billing_address: Option<BillingAddressOut>,
}

/// Of `api::PaymentSession`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentSession {
    pub client_secret: String,
    pub publishable_key: String,
}

/// Of `api::PaymentMethod`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentMethod {
    pub card_brand: String,
    pub card_last4: String,
}

/// Of `api::PaymentMethod`, as the payment method flow shows the card on file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CardOnFile {
    pub card_brand: String,
    pub card_last4: String,
    pub card_exp_month: u32,
    pub card_exp_year: i32,
}

/// Of `api::billing::Invoice`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Invoice {
    pub number: String,
    pub invoice_date: String,
    pub payment_due_date: String,
    pub billing_period_start: String,
    pub billing_period_end: String,
    pub total_cents: i64,
    pub total_kwh: String,
    /// `open`, `paid`, `past_due` or `voided`.
    pub status: String,
    pub pdf: String,
}

/// A page of invoices (`api::List<Invoice>`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Invoices {
    pub data: Vec<Invoice>,
    pub has_more: bool,
}

/// Of `api::billing::InvoiceDetail`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InvoiceDetail {
    #[serde(flatten)]
    pub invoice: Invoice,
    pub charges_groups: Vec<ChargesGroup>,
    pub usage: InvoiceUsage,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChargesGroup {
    pub name: String,
    pub total_cents: i64,
    pub charges: Vec<Charge>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Charge {
    pub description: String,
    pub amount_cents: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InvoiceUsage {
    pub daily: Vec<UsageDay>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UsageDay {
    pub date: String,
    pub consumption: String,
}

/// `GET /v1/account/billing/payment-plan`: the plan offered now (null when none) and the
/// account's plans, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentPlans {
    pub offer: Option<PlanOffer>,
    pub plans: Vec<PaymentPlan>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanOffer {
    pub unpaid_cents: i64,
    pub months: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaymentPlan {
    /// `active`, `completed` or `defaulted`.
    pub status: String,
    pub total_cents: i64,
    pub instalments: Vec<PlanInstalment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanInstalment {
    pub amount_cents: i64,
    /// The bill carrying it; null until billed.
    pub invoice_uuid: Option<String>,
}

/// Of `api::billing::Payment`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Payment {
    pub amount_cents: i64,
    pub status: String,
}

/// Of `api::enrollment::LocationDocuments`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ActiveDocuments {
    pub efl: String,
    pub tos: String,
    pub yrac: String,
    #[serde(default)]
    pub loa: Option<String>,
    pub contract_start: String,
    pub contract_end: Option<String>,
}

/// Of `api::enrollment::Document`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Document {
    pub kind: String,
    pub version: String,
    pub url: String,
    pub effective_date: String,
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Documents {
    pub data: Vec<Document>,
}

/// Of `api::enrollment::Contract`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Contract {
    pub plan_name: String,
    pub start_date: String,
    pub end_date: Option<String>,
}
