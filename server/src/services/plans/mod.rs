//! The plan use cases: whether a place is open to retail choice, the directory's searches
//! (type-ahead, full address, ESI ID), where plans are priced (a meter, or the utilities of a
//! postal code), pricing and storing plans with per-account terms (`enrollment.plan_requested`),
//! benchmarks against the market, and the lookups behind support contacts and the plan
//! documents' pages. Answers are rows; `http::market` renders them.

mod benchmarks;
mod estimate;
mod requests;
mod search;

use std::str::FromStr;

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::Error::{self, Failed, Refused};
use crate::{
    domain::{
        enrollment::StartDateOutOfRange,
        market::{tdu_for_esi_id, BusinessCalendar, DeliveryCharges, EsiId, EsiPrefix},
        pricing::{GroupTerms, PlanType, WholesaleCurve},
        FieldError,
    },
    state::Core,
    store::{
        self,
        market::{PlanGroupRow, ServiceAddressRow, TduRow},
    },
};
pub use benchmarks::{benchmarks, BenchmarkRow, Benchmarks};
pub use estimate::{estimate_for_home, PricedPlan};
pub use requests::{
    accepted_plan, account_request_plans, app_request_account_plans, app_request_plans,
    month_to_month_plan, price_account_plans, renewal_offer_plan, request_renewal_plans,
    AppPlanRequest, Offer,
};
pub use search::{
    eligibility, esi_id_search, full_address_search, type_ahead, EligibilityFound, FoundAddress,
    FullAddress,
};

/// Why the plan service refused a request; nothing was written.
#[derive(Debug)]
pub enum PlansRefused {
    /// Not the 17 or 22 digits of a meter of a utility open to retail choice.
    EsiIdInvalid,
    /// A well-formed ESI ID that no meter of the directory has.
    EsiIdNotFound,
    /// No ESI ID, and nothing to take one from.
    EsiIdMissing,
    /// Neither an ESI ID nor a postal code, where either would do.
    EsiIdOrPostalCodeMissing,
    /// A field of the request found malformed on the way (a postal code, a utility's name).
    Invalid(FieldError),
    /// No utility open to retail choice serves the postal code.
    NotInRetailChoiceArea,
    /// The utility asked for does not serve the postal code.
    UtilityNotServingPostalCode,
    /// Per-account terms without the account they bind the plans to.
    CustomTermsWithoutAccount,
    /// The `account_uuid` of the request names no account of the app.
    RequestedAccountNotFound,
    /// The account of the path or of the token is gone.
    AccountNotFound,
    /// The `plan_group_uuid` of the request names no plan group of the app.
    PlanGroupNotFound,
    StartDateOutOfRange(StartDateOutOfRange),
}

impl From<FieldError> for Error<PlansRefused> {
    fn from(err: FieldError) -> Self {
        Refused(PlansRefused::Invalid(err))
    }
}

type Result<T> = std::result::Result<T, Error<PlansRefused>>;

/// A stored row this program wrote that cannot be read back.
fn broken(what: impl std::fmt::Display) -> Error<PlansRefused> {
    Failed(anyhow::anyhow!("{what}"))
}

// ---------------------------------------------------------------------------------------------
// Reference data

async fn tdu_named(core: &Core, tdu: &str) -> Result<TduRow> {
    store::market::tdus(&core.db)
        .await?
        .into_iter()
        .find(|t| t.name == tdu)
        .ok_or_else(|| broken(format!("unknown utility {tdu}")))
}

async fn esi_prefixes(core: &Core) -> Result<Vec<EsiPrefix>> {
    Ok(store::market::esi_prefix_rules(&core.db).await?)
}

/// The directory entry of an ESI ID of a utility open to retail choice.
async fn directory_entry(core: &Core, raw: &str) -> Result<ServiceAddressRow> {
    let esi = EsiId::parse(raw).ok_or(Refused(PlansRefused::EsiIdInvalid))?;
    let prefixes = esi_prefixes(core).await?;
    tdu_for_esi_id(&esi, &prefixes).ok_or(Refused(PlansRefused::EsiIdInvalid))?;
    store::market::service_address(&core.db, esi.as_str())
        .await?
        .ok_or(Refused(PlansRefused::EsiIdNotFound))
}

async fn calendar(core: &Core) -> Result<&BusinessCalendar> {
    Ok(core.business_calendar().await?)
}

fn decimal(stored: &str) -> Result<Decimal> {
    Decimal::from_str(stored).map_err(|e| broken(format!("stored decimal: {e}")))
}

/// The wholesale curve of a load zone, with the zone's usual retail margin and base charge.
async fn wholesale_curve(core: &Core, zone: &str) -> Result<(WholesaleCurve, Decimal, i64)> {
    let row = store::market::load_zone(&core.db, zone)
        .await?
        .ok_or_else(|| broken(format!("no load zone {zone}")))?;
    let factors = store::market::wholesale_seasonality(&core.db).await?;
    let mut monthly_factors = [Decimal::ONE; 12];
    for (month, factor) in factors {
        if let Some(slot) = usize::try_from(month - 1)
            .ok()
            .and_then(|i| monthly_factors.get_mut(i))
        {
            *slot = decimal(&factor)?;
        }
    }
    Ok((
        WholesaleCurve {
            zone: row.name,
            base_cents_per_kwh: decimal(&row.wholesale_base_cents_per_kwh)?,
            daily_spread_cents_per_kwh: decimal(&row.wholesale_daily_spread_cents_per_kwh)?,
            monthly_factors,
        },
        decimal(&row.market_margin_cents_per_kwh)?,
        row.market_base_charge_cents,
    ))
}

async fn delivery_charges(core: &Core, tdu: &str, on: NaiveDate) -> Result<DeliveryCharges> {
    let row = store::market::tdu_charges_on(&core.db, tdu, on)
        .await?
        .ok_or_else(|| broken(format!("no charges of {tdu} on {on}")))?;
    DeliveryCharges::from_stored(row.fixed_cents_per_month, &row.cents_per_kwh)
        .ok_or_else(|| broken(format!("stored decimal {:?}", row.cents_per_kwh)))
}

/// A stored plan group's terms, as pricing reads them.
pub fn group_terms(g: &PlanGroupRow) -> Result<GroupTerms> {
    Ok(GroupTerms {
        name: g.name.clone(),
        plan_type: PlanType::parse(&g.plan_type)
            .ok_or_else(|| broken(format!("plan type {}", g.plan_type)))?,
        term_months: u32::try_from(g.term_months).unwrap_or(1),
        base_charge_cents_per_month: g.base_charge_cents_per_month,
        energy_margin_cents_per_kwh: decimal(&g.energy_margin_cents_per_kwh)?,
        partner_commission_cents_per_month: g.partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh: decimal(&g.solar_buyback_cents_per_kwh)?,
        early_termination_fee_cents: g.early_termination_fee_cents,
        renewable_percent: u8::try_from(g.renewable_percent).unwrap_or(0),
        tos_version: g.tos_version.clone(),
        is_month_to_month_default: g.is_month_to_month_default,
    })
}

// ---------------------------------------------------------------------------------------------
// Support contacts

/// The utility serving a location, whose contacts (outages, meters) its support info gives.
pub async fn support_utility(core: &Core, tdu: &str) -> Result<TduRow> {
    tdu_named(core, tdu).await
}
