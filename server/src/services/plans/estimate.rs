//! What each priced plan would cost over a year: over the home's own last twelve whole months
//! of usage, or over a typical home's year where there is no usage to go on.

use chrono::NaiveDate;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::{directory_entry, Result};
use crate::services::Error::{Failed, Refused};
use crate::{
    domain::{
        billing::ContractRates,
        estimate::{annual_cost, last_twelve_months, typical_home_cost, AnnualEstimate, HomeSize},
        market::DeliveryCharges,
    },
    state::Core,
    store::{
        self,
        market::{PlanRow, TduRow},
    },
};

/// A priced plan as stored, with its utility and the earliest day it can start as a switch.
pub struct PricedPlan {
    pub plan: PlanRow,
    pub utility: TduRow,
    pub earliest_switch_start_date: NaiveDate,
    /// What it would have cost over the home's last twelve months of usage, where the location
    /// has usage to go on.
    pub estimate: Option<AnnualEstimate>,
}

/// Each plan's cost over the location's last twelve whole months of usage (on the account's
/// clock), the plans ordered by it, cheapest first (ties keep their order). Plans stay as they
/// are when the location has no whole month of usage, or the plan's rates cannot be read.
pub async fn estimate_for_home(
    core: &Core,
    account_uuid: Uuid,
    location: &store::enrollment::LocationRow,
    plans: &mut [PricedPlan],
) -> Result<()> {
    let (today, window) = estimate_window(core, account_uuid).await?;
    let months = match crate::services::usage::months_of(core, location, today, &window).await {
        Ok(months) => months,
        Err(Failed(e)) => return Err(Failed(e)),
        Err(Refused(_)) => return Ok(()),
    };
    price_each(
        core,
        &location.city,
        &location.state,
        plans,
        |rates, delivery, gross| annual_cost(&months, &window, rates, delivery, gross),
    )
    .await?;
    plans.sort_by_key(|p| p.estimate.map_or(i64::MAX, |e| e.total_cents));
    Ok(())
}

/// Each plan's cost over a typical year of a home of `size` (by default, the size the
/// directory's type of the premise suggests) at the meter `esi_id`, over the same twelve whole
/// months as a renewal's (on the account's clock), with its utility's charges and its city's
/// taxes: a new customer's home has no usage here to go on. The plans keep their order: the
/// estimate is a typical home's, not this one's.
pub(super) async fn estimate_for_typical_home(
    core: &Core,
    account_uuid: Uuid,
    esi_id: &str,
    size: Option<HomeSize>,
    plans: &mut [PricedPlan],
) -> Result<()> {
    let entry = directory_entry(core, esi_id).await?;
    let size = size.unwrap_or_else(|| HomeSize::of_premise(&entry.premise_type));
    let (_, window) = estimate_window(core, account_uuid).await?;
    price_each(
        core,
        &entry.city,
        &entry.state,
        plans,
        |rates, delivery, gross| typical_home_cost(size, &window, rates, delivery, gross),
    )
    .await
}

/// The account's today and the twelve whole months before it that an estimate covers.
pub(super) async fn estimate_window(
    core: &Core,
    account_uuid: Uuid,
) -> Result<(NaiveDate, Vec<NaiveDate>)> {
    let today = core
        .clock
        .for_account(&core.db, account_uuid)
        .await?
        .today();
    Ok((today, last_twelve_months(today)))
}

/// Each plan's estimate as `cost` reckons it from the plan's rates and the gross receipts
/// percent of the home's city; a plan whose stored rates cannot be read keeps its own.
pub(super) async fn price_each(
    core: &Core,
    city: &str,
    state: &str,
    plans: &mut [PricedPlan],
    cost: impl Fn(&ContractRates, &DeliveryCharges, Decimal) -> Option<AnnualEstimate>,
) -> Result<()> {
    let gross_receipts = gross_receipts_in(core, city, state).await?;
    for p in plans.iter_mut() {
        if let Some((rates, delivery)) = rates_of(&p.plan) {
            p.estimate = cost(&rates, &delivery, gross_receipts);
        }
    }
    Ok(())
}

/// The gross receipts percent of a city's bills (none outside the cities the table knows).
pub(super) async fn gross_receipts_in(core: &Core, city: &str, state: &str) -> Result<Decimal> {
    let mut tx = core.db.begin().await?;
    Ok(
        store::market::city_gross_receipts_percent(&mut tx, city, state)
            .await?
            .and_then(|t| t.trim().parse::<Decimal>().ok())
            .unwrap_or_default(),
    )
}

/// A priced plan's rates as a bill reads them; `None` when its stored decimals do not parse.
pub(super) fn rates_of(r: &PlanRow) -> Option<(ContractRates, DeliveryCharges)> {
    Some((
        ContractRates {
            energy_cents_per_kwh: r.energy_cents_per_kwh.trim().parse().ok()?,
            base_charge_cents_per_month: r.base_charge_cents_per_month,
            solar_buyback_cents_per_kwh: r.solar_buyback_cents_per_kwh.trim().parse().ok()?,
        },
        DeliveryCharges {
            fixed_cents_per_month: r.tdu_fixed_cents_per_month,
            cents_per_kwh: r.tdu_cents_per_kwh.trim().parse().ok()?,
        },
    ))
}
