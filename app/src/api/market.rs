//! Wire types of the market: eligibility, address search, plan groups, plans, benchmarks and
//! support contacts.

use chrono::NaiveDate;
use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

use super::{SupportContacts, Timestamp};

/// A decimal given as a JSON string or number; kept as its text for exact parsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DecimalText(pub String);

impl<'de> Deserialize<'de> for DecimalText {
    // The browser reads only what a decimal can be: going through `serde_json::Value` would put
    // a reader of every JSON shape in the flows' bundles.
    #[cfg(feature = "hydrate")]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DecimalVisitor)
    }

    #[cfg(not(feature = "hydrate"))]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => Ok(DecimalText(s)),
            serde_json::Value::Number(n) => Ok(DecimalText(n.to_string())),
            _ => Err(serde::de::Error::custom(
                "expected a decimal string or number",
            )),
        }
    }
}

#[cfg(feature = "hydrate")]
struct DecimalVisitor;

#[cfg(feature = "hydrate")]
impl serde::de::Visitor<'_> for DecimalVisitor {
    type Value = DecimalText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a decimal string or number")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<DecimalText, E> {
        Ok(DecimalText(s.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, s: String) -> Result<DecimalText, E> {
        Ok(DecimalText(s))
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<DecimalText, E> {
        Ok(DecimalText(n.to_string()))
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<DecimalText, E> {
        Ok(DecimalText(n.to_string()))
    }

    /// Written as the browser writes numbers (the shortest text that reads back the same, as
    /// `serde_json` writes them), without Rust's float formatting in the bundle.
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<DecimalText, E> {
        js_sys::Number::from(n)
            .to_string_with_radix(10)
            .map(|s| DecimalText(s.into()))
            .map_err(|_| E::custom("not a decimal"))
    }
}

#[cfg(feature = "ssr")]
impl utoipa::PartialSchema for DecimalText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A decimal, as a string (exact) or a number"))
            .examples(["12.3450"])
            .into()
    }
}

#[cfg(feature = "ssr")]
impl ToSchema for DecimalText {}

/// A delivery utility (TDU).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Utility {
    /// `ONCOR`, `CENTERPOINT`, `AEP_CENTRAL`, `AEP_NORTH`, `TNMP` or `LPL`.
    pub name: String,
    pub display_name: String,
}

/// `POST .../enroll/eligibility`: a postal code, or a full address with one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EligibilityIn {
    /// Five digits.
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}\s*$"))]
    pub postal_code: String,
    #[serde(default)]
    pub address_1: Option<String>,
    #[serde(default)]
    pub address_2: Option<String>,
    #[serde(default)]
    pub city: Option<String>,
    #[serde(default)]
    pub state: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Eligibility {
    /// 0 to 100: the likelihood that the address is in a retail choice area.
    pub eligibility_likelihood: u8,
    pub utilities: Vec<Utility>,
}

/// A service address with its meter, as the utilities format it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Address {
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub esi_id: String,
    pub utility: Utility,
}

/// `POST .../enroll/address-search`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AddressSearchIn {
    /// The beginning of an address, as typed.
    #[cfg_attr(feature = "ssr", schema(min_length = 1, pattern = r"\S"))]
    pub query: String,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}\s*$"))]
    pub postal_code: Option<String>,
    /// 1 to 50, default 10.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 50))]
    pub limit: Option<u32>,
}

/// `POST .../enroll/full-address-search`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FullAddressSearchIn {
    #[cfg_attr(feature = "ssr", schema(min_length = 1, pattern = r"\S"))]
    pub address_1: String,
    #[serde(default)]
    pub address_2: Option<String>,
    #[serde(default)]
    pub city: Option<String>,
    #[serde(default)]
    pub state: Option<String>,
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}\s*$"))]
    pub postal_code: String,
}

/// `POST /v1/account/enroll/esi-id-search`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EsiIdSearchIn {
    /// 17 or 22 digits.
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: String,
}

/// A type of plan of the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PlanGroup {
    pub uuid: Uuid,
    pub name: String,
    /// `fixed` or `month_to_month`.
    pub plan_type: String,
    pub term_months: u32,
    pub base_charge_cents_per_month: i64,
    /// Cents per kWh over the wholesale price.
    pub energy_margin_cents_per_kwh: String,
    pub partner_commission_cents_per_month: i64,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
    pub renewable_percent: u8,
    pub tos_version: String,
    pub is_month_to_month_default: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PlanRatesOut {
    pub energy_cents_per_kwh: String,
    /// The retail base charge (the partner's commission included).
    pub base_charge_cents_per_month: i64,
    pub tdu_fixed_cents_per_month: i64,
    pub tdu_cents_per_kwh: String,
    pub solar_buyback_cents_per_kwh: String,
    pub early_termination_fee_cents: i64,
}

/// The EFL's average prices, cents per kWh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AveragePrices {
    pub kwh_500: String,
    pub kwh_1000: String,
    pub kwh_2000: String,
}

/// Absolute, signed links that a browser opens with no token for about an hour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PlanDocuments {
    pub efl: String,
    pub tos: String,
    pub yrac: String,
}

/// A priced offer of a plan group for one utility.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Plan {
    pub plan_uuid: Uuid,
    pub plan_group_uuid: Uuid,
    pub name: String,
    /// `fixed` or `month_to_month`.
    pub plan_type: String,
    pub term_months: u32,
    /// Earliest start of any kind (a move-in).
    pub earliest_start_date: NaiveDate,
    pub latest_start_date: NaiveDate,
    /// Earliest start of a switch (3 business days out).
    pub earliest_switch_start_date: NaiveDate,
    pub expires_at: Timestamp,
    pub utility: Utility,
    pub rates: PlanRatesOut,
    pub average_price_cents_per_kwh: AveragePrices,
    pub renewable_percent: u8,
    pub documents: PlanDocuments,
    pub is_renewal: bool,
    /// Set on custom plans: only this account may accept them.
    pub account_uuid: Option<Uuid>,
    /// What the plan would cost over a year, energy, base charge, delivery, solar credits,
    /// taxes and fees in: for renewal plans of a location with usage, over the home's own last
    /// twelve whole months (the plans come cheapest first by it; `null` without a whole month
    /// of usage); for the plans of an account at a meter (`enroll/plans/request`), over a
    /// typical year of a home of the size asked for (`home_size`), an estimate only, the plans
    /// in their usual order. `null` otherwise.
    #[serde(default)]
    pub estimated_annual_cost_cents: Option<i64>,
    /// What `estimated_annual_cost_cents` rests on.
    #[serde(default)]
    pub estimate_basis: Option<EstimateBasis>,
}

/// The usage a plan's estimated cost was computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EstimateBasis {
    /// `usage_history`: the home's own meter data; `home_profile`: a typical home of
    /// `home_size` in the plan's utility's area, not the home's own use.
    pub kind: String,
    /// The first day of the twelve months, and the last (for `home_profile`, the months the
    /// typical year is billed over: the same twelve whole months before this one).
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// Whole months of the home's own usage (0 for `home_profile`).
    pub months_of_usage: u32,
    /// Months the meter did not report in full, counted at the average of the others.
    pub months_estimated: u32,
    /// For `home_profile`: `small` (an apartment, or under 1,200 sq ft), `medium` (1,200 to
    /// 2,500 sq ft) or `large` (over 2,500 sq ft).
    #[serde(default)]
    pub home_size: Option<String>,
    /// What the estimate rests on, in words to show beside it: "estimated for your home's use
    /// from November 1, 2025 to October 31, 2026", "estimated for a typical mid-size home
    /// (1,200 to 2,500 sq ft) in Oncor Electric Delivery's area, not your home's own use".
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PlansOut {
    pub plans: Vec<Plan>,
}

/// `POST /v1/account/enroll/plans/request` and `POST /v1/app/accounts/{uuid}/enroll/plans/request`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PlansRequestIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: Option<String>,
    /// The home's size, for each plan's yearly estimate (`estimated_annual_cost_cents`):
    /// `small` (an apartment, or under 1,200 sq ft), `medium` (1,200 to 2,500 sq ft) or
    /// `large` (over 2,500 sq ft). Without it, an apartment counts as small and any other
    /// home as medium.
    #[serde(default)]
    pub home_size: Option<String>,
}

/// `POST /v1/app/accounts/enroll/plans/request`: by ESI ID or postal code, with optional
/// per-account terms (which bind the plans to `account_uuid`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AppPlansRequestIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}\s*$"))]
    pub postal_code: Option<String>,
    /// Utility name, when the postal code is served by several.
    #[serde(default)]
    pub utility: Option<String>,
    #[serde(default)]
    pub account_uuid: Option<Uuid>,
    #[serde(default)]
    pub plan_group_uuid: Option<Uuid>,
    /// 1 to 36 (fixed plans).
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 36))]
    pub term_months: Option<u32>,
    #[serde(default)]
    pub energy_rate_cents_per_kwh: Option<DecimalText>,
    #[serde(default)]
    pub partner_commission_per_month_dollars: Option<DecimalText>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub service_start_date: Option<String>,
}

/// `POST /v1/app/accounts/enroll/plans/benchmarks`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct BenchmarksIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*([0-9]{17}|[0-9]{22})\s*$"))]
    pub esi_id: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}\s*$"))]
    pub postal_code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Benchmark {
    pub usage_kwh: u32,
    pub market_median_cents_per_kwh: String,
    pub plan_group_uuid: Uuid,
    pub plan_cents_per_kwh: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct BenchmarksOut {
    pub utility: Utility,
    pub benchmarks: Vec<Benchmark>,
}

/// `GET /v1/account/locations/{location_uuid}/support-info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct SupportInfo {
    pub tdu_name: String,
    pub tdu_phone: String,
    pub tdu_outage_phone: Option<String>,
    pub tdu_website: String,
    pub partner_support: SupportContacts,
}
