//! Wire types of the enrollment steps: address confirmation, plan acceptance, finalize and the
//! billing address.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

use super::{
    market::{Plan, PlanRatesOut},
    Account, Location, PaymentMethod, PostalAddressIn, Timestamp,
};

/// `POST /v1/account/enroll/confirm-address`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ConfirmAddressIn {
    /// 17 or 22 digits.
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: String,
}

/// `POST /v1/account/enroll/plans/accept`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AcceptPlanIn {
    pub plan_uuid: Uuid,
    /// The meter the plan is for; creates the Location. Defaults to the meter the plan was
    /// priced for, else the confirmed service address.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: Option<String>,
    /// `YYYY-MM-DD`, between the plan's `earliest_start_date` and `latest_start_date`.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub service_start_date: Option<String>,
    /// Alias of `service_start_date`.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub start_date: Option<String>,
    /// Must be true.
    #[serde(default)]
    pub terms_accepted: Option<bool>,
    /// `switch` or `move_in`; inferred from the start date when absent.
    #[serde(default)]
    pub enrollment_type: Option<String>,
}

/// The terms of an accepted plan at a location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Contract {
    pub uuid: Uuid,
    pub plan_uuid: Uuid,
    pub plan_name: String,
    pub plan_type: String,
    pub start_date: NaiveDate,
    /// Null for month-to-month.
    pub end_date: Option<NaiveDate>,
    pub term_months: u32,
    pub rates: PlanRatesOut,
    /// `pending`, `active`, `ended` or `cancelled`.
    pub status: String,
    pub accepted_at: Timestamp,
    /// `customer` or `client_agent`.
    pub accepted_by: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AcceptPlanOut {
    pub account: Account,
    pub location: Location,
    pub contract: Contract,
}

/// `POST /v1/account/locations/{location_uuid}/renewal-plans/accept`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AcceptRenewalIn {
    pub plan_uuid: Uuid,
    /// `YYYY-MM-DD`: the day after the current contract ends (the renewal plans'
    /// `earliest_start_date`), the only day allowed; omitted, the renewal starts that day.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub service_start_date: Option<String>,
    /// Must be true.
    #[serde(default)]
    pub terms_accepted: Option<bool>,
}

/// The renewal contract, queued (`pending`) until its start date.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AcceptRenewalOut {
    pub contract: Contract,
}

/// `POST /v1/account/enroll/finalize`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FinalizeIn {
    /// True when the partner enrolls the customer as client agent.
    #[serde(default)]
    pub is_client_agent_enrollment: Option<bool>,
}

/// `PUT /v1/account/billing/address`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct BillingAddressIn {
    pub same_as_service_address: bool,
    /// Required when `same_as_service_address` is false.
    #[serde(default)]
    pub address: Option<PostalAddressIn>,
}

/// The billing address, always filled (the service address when the same).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct BillingAddressOut {
    pub same_as_service_address: bool,
    pub address_1: Option<String>,
    pub address_2: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub postal_code: Option<String>,
}

/// `GET /v1/account/enroll/summary`: what the customer chose so far, as a review shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EnrollmentSummary {
    /// The plan of the first location's contract, as it was offered; null before a plan is
    /// accepted.
    pub plan: Option<Plan>,
    /// The card on file; null before one is added.
    pub payment_method: Option<PaymentMethod>,
    /// Null while no address is known (no service address confirmed, no other given).
    pub billing_address: Option<BillingAddressOut>,
}

/// `POST /v1/account/locations/{location_uuid}/cancel-service`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct CancelServiceIn {
    /// `YYYY-MM-DD`: the last day of service, from today to 90 days out (on the account's clock).
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub final_service_date: String,
    /// `moving`, `switching` or `other`.
    pub reason: String,
}

/// `GET /v1/account/locations/{location_uuid}/plan`: the plan of the contract in force.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct LocationPlan {
    /// The plan's uuid (`plan_uuid` of the contract).
    pub uuid: Uuid,
    pub name: String,
    /// `fixed` or `month_to_month`.
    pub plan_type: String,
    /// How the energy charge is structured: `flat` (one rate in every hour).
    pub rate_structure: String,
    pub contract: Contract,
    pub rates: PlanRatesOut,
}

/// `GET /v1/account/locations/{location_uuid}/documents`: signed links (valid about an hour)
/// to the documents in force.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct LocationDocuments {
    pub efl: String,
    pub tos: String,
    pub yrac: String,
    /// The Letter of Authorization of a client agent enrollment, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loa: Option<String>,
    pub contract_start: NaiveDate,
    pub contract_end: Option<NaiveDate>,
}

/// A document of a location.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Document {
    pub uuid: Uuid,
    /// `efl`, `tos`, `yrac`, `loa` or `renewal_notice`.
    pub kind: String,
    pub version: String,
    /// A signed link, valid about an hour.
    pub url: String,
    pub effective_date: NaiveDate,
    /// `active`, `superseded` or `queued` (a contract that starts later, such as a renewal).
    pub status: String,
}

/// `GET /v1/account/locations/{location_uuid}/all-documents`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct DocumentList {
    pub data: Vec<Document>,
}
