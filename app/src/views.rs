//! What the browser flows read of v1 answers: the fields they show or decide on, nothing else
//! (serde skips the rest). Same names and shapes as `api`, fewer fields: every field parsed in
//! the browser is code a partner's page downloads. Dates stay the API's `YYYY-MM-DD` text
//! (which sorts as the dates do): the flows only compare and show them.

use crate::api::{
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
    pub enrollment: Enrollment,
    pub locations: Vec<Location>,
    pub app: AccountApp,
}

/// Of `api::AccountApp`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AccountApp {
    pub name: String,
    pub payment_public_key: String,
}

/// Of `api::Location`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Location {
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub service_start_date: Option<String>,
    pub plan_name: Option<String>,
    pub contract_start: Option<String>,
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
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Plans {
    pub plans: Vec<Plan>,
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
