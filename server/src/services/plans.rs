//! The plan use cases: whether a place is open to retail choice, the directory's searches
//! (type-ahead, full address, ESI ID), where plans are priced (a meter, or the utilities of a
//! postal code), pricing and storing plans with per-account terms (`enrollment.plan_requested`),
//! benchmarks against the market, and the lookups behind support contacts and the plan
//! documents' pages. Answers are rows; `http::market` renders them.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::Error::{self, Failed, Refused};
use crate::{
    domain::{
        address::{normalize, normalize_unit},
        billing::ContractRates,
        enrollment::StartDateOutOfRange,
        estimate::{annual_cost, last_twelve_months, typical_home_cost, AnnualEstimate, HomeSize},
        events::Event,
        market::{
            eligibility as retail_choice, parse_cutoff, price_expires_at, same_day_move_in,
            start_window, state_in_market, tdu_for_esi_id, BusinessCalendar, DeliveryCharges,
            Enroller, EsiId, EsiPrefix, RateCentsPerKwh, StartWindow, ZipCode, YRAC_VERSION,
        },
        pricing::{
            efl_averages, market_plan, price_plan, GroupTerms, Overrides, PlanRates, PlanType,
            WholesaleCurve, EFL_USAGES_KWH,
        },
        FieldError,
    },
    state::Core,
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        events::NewEvent,
        market::{PlanGroupRow, PlanRow, ServiceAddressRow, TduRow},
        Tx,
    },
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

fn group_terms(g: &PlanGroupRow) -> Result<GroupTerms> {
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
// Eligibility and the directory's searches

/// How likely a place is open to retail choice, and the utilities that may serve it.
pub struct EligibilityFound {
    pub likelihood: u8,
    pub utilities: Vec<TduRow>,
}

/// Eligibility of a postal code, or of a full address when `address_1` is given: an address
/// found in the directory is certain (`domain::market::eligibility`).
pub async fn eligibility(
    core: &Core,
    zip: &ZipCode,
    address_1: Option<&str>,
    address_2: Option<&str>,
) -> Result<EligibilityFound> {
    let tdus = store::market::tdus(&core.db).await?;
    let mut found = None;
    if let Some(address_1) = address_1.filter(|a| !a.trim().is_empty()) {
        let matches = exact_matches(core, address_1, address_2, None, zip).await?;
        found = matches.into_iter().next().map(|r| r.tdu);
    }
    let zip_rows = match found {
        Some(_) => Vec::new(),
        None => store::market::zip_tdus(&core.db, zip.as_str()).await?,
    };
    let shares: Vec<(&str, i64)> = zip_rows
        .iter()
        .map(|r| (r.tdu.as_str(), r.likelihood))
        .collect();
    let choice = retail_choice(found.as_deref(), &shares);
    Ok(EligibilityFound {
        likelihood: choice.likelihood,
        utilities: choice
            .tdus
            .iter()
            .filter_map(|name| tdus.iter().find(|t| t.name == *name).cloned())
            .collect(),
    })
}

/// A directory entry with its utility (`None` when the reference data lacks it).
pub struct FoundAddress {
    pub address: ServiceAddressRow,
    pub utility: Option<TduRow>,
}

async fn with_utilities(core: &Core, rows: Vec<ServiceAddressRow>) -> Result<Vec<FoundAddress>> {
    let tdus = store::market::tdus(&core.db).await?;
    Ok(rows
        .into_iter()
        .map(|address| FoundAddress {
            utility: tdus.iter().find(|t| t.name == address.tdu).cloned(),
            address,
        })
        .collect())
}

/// Rows of these ESI IDs, in this order.
async fn rows_in_order(core: &Core, esi_ids: Vec<String>) -> Result<Vec<ServiceAddressRow>> {
    let mut rows = store::market::service_addresses(&core.db, &esi_ids).await?;
    rows.sort_by_key(|r| esi_ids.iter().position(|e| *e == r.esi_id));
    Ok(rows)
}

/// Up to `limit` directory entries whose address begins with `query` (or is within a typo of
/// it), in the index's order.
pub async fn type_ahead(
    core: &Core,
    query: String,
    zip: Option<ZipCode>,
    limit: u32,
) -> Result<Vec<FoundAddress>> {
    let index = core.adapters.index();
    let hits = tokio::task::spawn_blocking(move || {
        index.type_ahead(&query, zip.as_ref().map(ZipCode::as_str), limit as usize)
    })
    .await
    .map_err(|e| Failed(e.into()))?;
    let rows = rows_in_order(core, hits.into_iter().map(|h| h.esi_id).collect()).await?;
    with_utilities(core, rows).await
}

/// Directory entries at exactly this address after normalization.
async fn exact_matches(
    core: &Core,
    address_1: &str,
    address_2: Option<&str>,
    city: Option<&str>,
    zip: &ZipCode,
) -> Result<Vec<ServiceAddressRow>> {
    let street = normalize(address_1);
    let unit = address_2.map(normalize_unit).filter(|u| !u.is_empty());
    let index = core.adapters.index();
    let zip_text = zip.as_str().to_owned();
    let hits = tokio::task::spawn_blocking(move || {
        index
            .street(&street, unit.as_deref())
            .into_iter()
            .filter(|h| h.postal_code == zip_text)
            .map(|h| h.esi_id)
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Failed(e.into()))?;
    let city = city.map(normalize).filter(|c| !c.is_empty());
    let mut rows = rows_in_order(core, hits).await?;
    rows.retain(|r| city.as_ref().is_none_or(|c| normalize(&r.city) == *c));
    rows.sort_by(|a, b| (&a.address_2, &a.esi_id).cmp(&(&b.address_2, &b.esi_id)));
    Ok(rows)
}

/// A full address as a search gives it.
pub struct FullAddress<'a> {
    pub address_1: &'a str,
    pub address_2: Option<&'a str>,
    pub city: Option<&'a str>,
    pub state: Option<&'a str>,
    pub postal_code: &'a ZipCode,
}

/// The directory entries at exactly this address (one per meter); none outside the market.
pub async fn full_address_search(core: &Core, a: &FullAddress<'_>) -> Result<Vec<FoundAddress>> {
    if !state_in_market(a.state) {
        return Ok(Vec::new());
    }
    let rows = exact_matches(core, a.address_1, a.address_2, a.city, a.postal_code).await?;
    with_utilities(core, rows).await
}

/// The address of an ESI ID.
pub async fn esi_id_search(core: &Core, raw: &str) -> Result<FoundAddress> {
    let row = directory_entry(core, raw).await?;
    with_utilities(core, vec![row])
        .await?
        .pop()
        .ok_or_else(|| broken("address vanished"))
}

// ---------------------------------------------------------------------------------------------
// Plans

/// Where plans are priced: the utilities, and the meter when known.
struct Target {
    tdus: Vec<TduRow>,
    esi_id: Option<String>,
    postal_code: Option<String>,
}

async fn target_of_esi_id(core: &Core, raw: &str) -> Result<Target> {
    let entry = directory_entry(core, raw).await?;
    Ok(Target {
        tdus: vec![tdu_named(core, &entry.tdu).await?],
        esi_id: Some(entry.esi_id),
        postal_code: Some(entry.postal_code),
    })
}

async fn target_of_postal_code(
    core: &Core,
    raw: &str,
    utility_name: Option<&str>,
) -> Result<Target> {
    let zip = ZipCode::parse("postal_code", raw)?;
    let rows = store::market::zip_tdus(&core.db, zip.as_str()).await?;
    if rows.is_empty() {
        return Err(Refused(PlansRefused::NotInRetailChoiceArea));
    }
    let all = store::market::tdus(&core.db).await?;
    let mut tdus: Vec<TduRow> = rows
        .iter()
        .filter_map(|r| all.iter().find(|t| t.name == r.tdu).cloned())
        .collect();
    if let Some(name) = utility_name {
        let name = name.trim().to_ascii_uppercase();
        if !all.iter().any(|t| t.name == name) {
            return Err(FieldError::invalid("utility", format!("unknown utility {name}")).into());
        }
        tdus.retain(|t| t.name == name);
        if tdus.is_empty() {
            return Err(Refused(PlansRefused::UtilityNotServingPostalCode));
        }
    }
    Ok(Target {
        tdus,
        esi_id: None,
        postal_code: Some(zip.as_str().to_owned()),
    })
}

/// The meter when an ESI ID is given, else the postal code's utilities; `missing` when neither.
async fn target(
    core: &Core,
    esi_id: Option<&str>,
    postal_code: Option<&str>,
    utility: Option<&str>,
    missing: PlansRefused,
) -> Result<Target> {
    match (esi_id, postal_code) {
        (Some(esi), _) => target_of_esi_id(core, esi).await,
        (None, Some(zip)) => target_of_postal_code(core, zip, utility).await,
        (None, None) => Err(Refused(missing)),
    }
}

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
    let today = core
        .clock
        .for_account(&core.db, account_uuid)
        .await?
        .today();
    let window = last_twelve_months(today);
    let months = match super::usage::months_of(core, location, today, &window).await {
        Ok(months) => months,
        Err(Failed(e)) => return Err(Failed(e)),
        Err(Refused(_)) => return Ok(()),
    };
    let gross_receipts = gross_receipts_in(core, &location.city, &location.state).await?;
    for p in plans.iter_mut() {
        if let Some((rates, delivery)) = rates_of(&p.plan) {
            p.estimate = annual_cost(&months, &window, &rates, &delivery, gross_receipts);
        }
    }
    plans.sort_by_key(|p| p.estimate.map_or(i64::MAX, |e| e.total_cents));
    Ok(())
}

/// Each plan's cost over a typical year of a home of `size` (by default, the size the
/// directory's type of the premise suggests) at the meter `esi_id`, over the same twelve whole
/// months as a renewal's (on the account's clock), with its utility's charges and its city's
/// taxes: a new customer's home has no usage here to go on. The plans keep their order: the
/// estimate is a typical home's, not this one's.
async fn estimate_for_typical_home(
    core: &Core,
    account_uuid: Uuid,
    esi_id: &str,
    size: Option<HomeSize>,
    plans: &mut [PricedPlan],
) -> Result<()> {
    let entry = directory_entry(core, esi_id).await?;
    let size = size.unwrap_or_else(|| HomeSize::of_premise(&entry.premise_type));
    let today = core
        .clock
        .for_account(&core.db, account_uuid)
        .await?
        .today();
    let window = last_twelve_months(today);
    let gross_receipts = gross_receipts_in(core, &entry.city, &entry.state).await?;
    for p in plans.iter_mut() {
        if let Some((rates, delivery)) = rates_of(&p.plan) {
            p.estimate = typical_home_cost(size, &window, &rates, &delivery, gross_receipts);
        }
    }
    Ok(())
}

/// The gross receipts percent of a city's bills (none outside the cities the table knows).
async fn gross_receipts_in(core: &Core, city: &str, state: &str) -> Result<Decimal> {
    let mut tx = core.db.begin().await?;
    Ok(
        store::market::city_gross_receipts_percent(&mut tx, city, state)
            .await?
            .and_then(|t| t.trim().parse::<Decimal>().ok())
            .unwrap_or_default(),
    )
}

/// A priced plan's rates as a bill reads them; `None` when its stored decimals do not parse.
fn rates_of(r: &PlanRow) -> Option<(ContractRates, DeliveryCharges)> {
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

/// An app's plan request: for a meter or a postal code, optionally for one of its accounts,
/// with per-account terms (which need that account) and a start date.
pub struct AppPlanRequest<'a> {
    pub app: &'a AppRow,
    pub account_uuid: Option<Uuid>,
    pub esi_id: Option<&'a str>,
    pub postal_code: Option<&'a str>,
    /// Which of the postal code's utilities, when several serve it.
    pub utility: Option<&'a str>,
    pub plan_group_uuid: Option<Uuid>,
    pub overrides: Overrides,
    pub start: Option<NaiveDate>,
}

/// Prices and stores the plans of an app's request.
pub async fn app_request_plans(core: &Core, req: &AppPlanRequest<'_>) -> Result<Vec<PricedPlan>> {
    if req.overrides.is_custom() && req.account_uuid.is_none() {
        return Err(Refused(PlansRefused::CustomTermsWithoutAccount));
    }
    let account = match req.account_uuid {
        Some(uuid) => Some(
            store::accounts::account_of_app(&core.db, req.app.uuid, uuid)
                .await?
                .ok_or(Refused(PlansRefused::RequestedAccountNotFound))?,
        ),
        None => None,
    };
    let target = target(
        core,
        req.esi_id,
        req.postal_code,
        req.utility,
        PlansRefused::EsiIdOrPostalCodeMissing,
    )
    .await?;
    request_plans(
        core,
        PlanRequest {
            app: req.app,
            account: account.as_ref(),
            target,
            group: req.plan_group_uuid,
            overrides: req.overrides,
            start: req.start,
            renewal: None,
        },
    )
    .await
}

async fn account_of(core: &Core, app: &AppRow, account_uuid: Uuid) -> Result<AccountRow> {
    store::accounts::account_of_app(&core.db, app.uuid, account_uuid)
        .await?
        .ok_or(Refused(PlansRefused::AccountNotFound))
}

/// Prices and stores the app's plans for one of its accounts at an ESI ID, each with its cost
/// over a typical year of a home of `home_size` there.
pub async fn app_request_account_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    esi_id: Option<&str>,
    home_size: Option<&str>,
) -> Result<Vec<PricedPlan>> {
    let size = home_size_of(home_size)?;
    let account = account_of(core, app, account_uuid).await?;
    let esi = esi_id.ok_or(Refused(PlansRefused::EsiIdMissing))?;
    let mut plans = plans_at_meter(core, app, &account, esi, None).await?;
    estimate_for_typical_home(core, account_uuid, esi, size, &mut plans).await?;
    Ok(plans)
}

/// Prices and stores the plans an account may choose from (those of `plan_group` only, when
/// its session is bound to one) at an ESI ID, else at its confirmed service address, each with
/// its cost over a typical year of a home of `home_size` there.
pub async fn account_request_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    esi_id: Option<&str>,
    plan_group: Option<Uuid>,
    home_size: Option<&str>,
) -> Result<Vec<PricedPlan>> {
    let size = home_size_of(home_size)?;
    let account = account_of(core, app, account_uuid).await?;
    let esi = match esi_id {
        Some(esi) => esi.to_owned(),
        None => store::enrollment::confirmed_address(&core.db, account_uuid)
            .await?
            .map(|a| a.esi_id)
            .ok_or(Refused(PlansRefused::EsiIdMissing))?,
    };
    let mut plans = plans_at_meter(core, app, &account, &esi, plan_group).await?;
    estimate_for_typical_home(core, account_uuid, &esi, size, &mut plans).await?;
    Ok(plans)
}

/// A request's `home_size`, checked before anything is priced.
fn home_size_of(raw: Option<&str>) -> Result<Option<HomeSize>> {
    raw.map(|s| {
        HomeSize::parse(s).ok_or_else(|| {
            FieldError::invalid("home_size", "home_size must be small, medium or large").into()
        })
    })
    .transpose()
}

/// Prices and stores the app's plans for an account's meter, as `plans/request` does with no
/// start date (sandbox demo data picks one of them).
pub async fn price_account_plans(
    core: &Core,
    app: &AppRow,
    account: &AccountRow,
    esi_id: &str,
) -> Result<Vec<PricedPlan>> {
    plans_at_meter(core, app, account, esi_id, None).await
}

/// The app's plans (of `group`, when given) for an account's meter, with no start date.
async fn plans_at_meter(
    core: &Core,
    app: &AppRow,
    account: &AccountRow,
    esi_id: &str,
    group: Option<Uuid>,
) -> Result<Vec<PricedPlan>> {
    let target = target_of_esi_id(core, esi_id).await?;
    request_plans(
        core,
        PlanRequest {
            app,
            account: Some(account),
            target,
            group,
            overrides: Overrides::default(),
            start: None,
            renewal: None,
        },
    )
    .await
}

/// Prices and stores the app's plans for renewing an account's location at its meter, with
/// the same model as a new customer's, each starting on `start` only (the day after the
/// contract in force ends), announced by `location.renewal_plan_requested`.
pub async fn request_renewal_plans(
    core: &Core,
    app: &AppRow,
    account_uuid: Uuid,
    location_uuid: Uuid,
    esi_id: &str,
    start: NaiveDate,
) -> Result<Vec<PricedPlan>> {
    let account = account_of(core, app, account_uuid).await?;
    let target = target_of_esi_id(core, esi_id).await?;
    request_plans(
        core,
        PlanRequest {
            app,
            account: Some(&account),
            target,
            group: None,
            overrides: Overrides::default(),
            start: None,
            renewal: Some(Renewal {
                location_uuid,
                start,
            }),
        },
    )
    .await
}

/// The app's month-to-month plan for a location's meter from `start` (the day after a fixed
/// contract ends), priced today with the same model as a new customer's and not stored: what
/// a contract nobody renews rolls onto. Its group is the app's month-to-month default (else
/// its first month-to-month group); `None` when the app has none.
pub async fn month_to_month_plan(
    core: &Core,
    tx: &mut Tx,
    offer: Offer<'_>,
) -> Result<Option<PlanRow>> {
    // Read in the caller's transaction, which may have just added the group.
    let groups = store::market::plan_groups_of_app(&mut *tx, offer.app.uuid).await?;
    offer_of_groups(core, offer, groups, |groups| {
        let monthly = PlanType::MonthToMonth.as_str();
        groups
            .iter()
            .position(|g| g.is_month_to_month_default && g.plan_type == monthly)
            .or_else(|| groups.iter().position(|g| g.plan_type == monthly))
    })
    .await
}

/// A plan the account accepted, as it was offered: with its utility, and the earliest switch
/// date of the account's start window today. `None` when the plan is not the account's.
pub async fn accepted_plan(
    core: &Core,
    account: &AccountRow,
    plan_uuid: Uuid,
) -> Result<Option<PricedPlan>> {
    let Some(plan) = store::market::plan_by_uuid(&core.db, plan_uuid).await? else {
        return Ok(None);
    };
    if plan.account_uuid.is_some_and(|a| a != account.uuid) {
        return Ok(None);
    }
    let utility = tdu_named(core, &plan.tdu).await?;
    let today = core
        .clock
        .for_account(&core.db, account.uuid)
        .await?
        .today();
    let enroller = crate::domain::enrollment::enroller(account.client_agent_accepted_at);
    // Only the switch date is read here, which no same-day move-in changes.
    let window = start_window(today, enroller, calendar(core).await?, false);
    Ok(Some(PricedPlan {
        earliest_switch_start_date: window.earliest_switch.max(plan.earliest_start_date),
        plan,
        utility,
        estimate: None,
    }))
}

/// The fixed-rate plan an expiration notice offers for a location's meter from `start` (the
/// day after its contract ends), priced today with the same model as a new customer's and not
/// stored: the app's first fixed group with the term the customer has now, else its first
/// fixed group; `None` when the app has none.
pub async fn renewal_offer_plan(
    core: &Core,
    offer: Offer<'_>,
    term_months: i64,
) -> Result<Option<PlanRow>> {
    let groups = store::market::plan_groups_of_app(&core.db, offer.app.uuid).await?;
    offer_of_groups(core, offer, groups, |groups| {
        let fixed = PlanType::Fixed.as_str();
        groups
            .iter()
            .position(|g| g.plan_type == fixed && g.term_months == term_months)
            .or_else(|| groups.iter().position(|g| g.plan_type == fixed))
    })
    .await
}

/// Whom and what a renewal's single offer is priced for: a location's meter, from `start`.
#[derive(Clone, Copy)]
pub struct Offer<'a> {
    pub app: &'a AppRow,
    pub account: &'a AccountRow,
    pub location_uuid: Uuid,
    pub esi_id: &'a str,
    pub start: NaiveDate,
}

/// A plan of the group `pick` chooses among the app's `groups` (`None` when it chooses none)
/// for a location's meter from the offer's start, priced as a renewal is.
async fn offer_of_groups(
    core: &Core,
    offer: Offer<'_>,
    groups: Vec<PlanGroupRow>,
    pick: impl FnOnce(&[PlanGroupRow]) -> Option<usize>,
) -> Result<Option<PlanRow>> {
    let Offer {
        app,
        account,
        location_uuid,
        esi_id,
        start,
    } = offer;
    let Some(group) = pick(&groups).and_then(|i| groups.get(i)) else {
        return Ok(None);
    };
    let clock = core.clock.for_account(&core.db, account.uuid).await?;
    let (now, today) = (clock.now(), clock.today());
    let target = target_of_esi_id(core, esi_id).await?;
    let Some(tdu) = target.tdus.first().cloned() else {
        return Ok(None);
    };
    let req = PlanRequest {
        app,
        account: Some(account),
        target,
        group: Some(group.uuid),
        overrides: Overrides::default(),
        start: Some(start),
        renewal: Some(Renewal {
            location_uuid,
            start,
        }),
    };
    let window = StartWindow {
        earliest: start,
        earliest_switch: start,
        latest: start,
    };
    let terms = group_terms(group)?;
    let charges = delivery_charges(core, &tdu.name, today).await?;
    let (curve, _, _) = wholesale_curve(core, &tdu.load_zone).await?;
    let wholesale = curve.price_for(terms.plan_type, today, start, terms.term_months);
    let rates = price_plan(&terms, &req.overrides, wholesale, &charges);
    let expires_at = price_expires_at(now, today, calendar(core).await?);
    Ok(Some(plan_row(
        &req, group, &terms, &tdu, &rates, wholesale, window, expires_at, now,
    )))
}

/// What makes a plan request a renewal's: the location it renews and the one day its plans
/// start.
#[derive(Clone, Copy)]
struct Renewal {
    location_uuid: Uuid,
    start: NaiveDate,
}

struct PlanRequest<'a> {
    app: &'a AppRow,
    account: Option<&'a AccountRow>,
    target: Target,
    group: Option<Uuid>,
    overrides: Overrides,
    start: Option<NaiveDate>,
    renewal: Option<Renewal>,
}

/// Prices the plans of a request, stores them and (for an account) emits
/// `enrollment.plan_requested`, all in one transaction.
async fn request_plans(core: &Core, req: PlanRequest<'_>) -> Result<Vec<PricedPlan>> {
    // An account's plans are priced on the account's clock (a sandbox account lives in its own
    // time), so that accepting them, which reads that clock, sees the same day.
    let (now, today) = match req.account {
        Some(a) => {
            let clock = core.clock.for_account(&core.db, a.uuid).await?;
            (clock.now(), clock.today())
        }
        None => (core.clock.now(), core.clock.today()),
    };
    let cal = calendar(core).await?;
    let enroller =
        crate::domain::enrollment::enroller(req.account.and_then(|a| a.client_agent_accepted_at));
    // Each utility has its own window: some start a move-in the same day, until their cut-off.
    let window_of = |tdu: &TduRow| match req.renewal {
        Some(r) => StartWindow {
            earliest: r.start,
            earliest_switch: r.start,
            latest: r.start,
        },
        None => {
            let cutoff = parse_cutoff(tdu.same_day_cutoff.as_deref());
            start_window(today, enroller, cal, same_day_move_in(now, cutoff, cal))
        }
    };
    let windows: Vec<(&TduRow, StartWindow)> =
        req.target.tdus.iter().map(|t| (t, window_of(t))).collect();
    if let Some(start) = req.start {
        if !windows.iter().any(|(_, w)| w.allows(start)) {
            let earliest = windows.iter().map(|(_, w)| w.earliest).min();
            let latest = windows.iter().map(|(_, w)| w.latest).max();
            let next_day = start_window(today, enroller, cal, false);
            return Err(Refused(PlansRefused::StartDateOutOfRange(
                StartDateOutOfRange {
                    earliest: earliest.unwrap_or(next_day.earliest),
                    latest: latest.unwrap_or(next_day.latest),
                },
            )));
        }
    }
    let expires_at = price_expires_at(now, today, cal);
    let mut groups = store::market::plan_groups_of_app(&core.db, req.app.uuid).await?;
    if let Some(wanted) = req.group {
        groups.retain(|g| g.uuid == wanted);
        if groups.is_empty() {
            return Err(Refused(PlansRefused::PlanGroupNotFound));
        }
    }
    let mut priced = Vec::new();
    for (tdu, window) in windows {
        // Where a ZIP code is split, a utility that cannot start on the day asked for has no
        // plans for it.
        if req.start.is_some_and(|s| !window.allows(s)) {
            continue;
        }
        let start = req.start.unwrap_or(window.earliest_switch);
        let charges = delivery_charges(core, &tdu.name, today).await?;
        let (curve, _, _) = wholesale_curve(core, &tdu.load_zone).await?;
        for g in &groups {
            let terms = group_terms(g)?;
            let term = req.overrides.term_months.unwrap_or(terms.term_months);
            let wholesale = curve.price_for(terms.plan_type, today, start, term);
            let rates = price_plan(&terms, &req.overrides, wholesale, &charges);
            let plan = plan_row(
                &req, g, &terms, tdu, &rates, wholesale, window, expires_at, now,
            );
            priced.push(PricedPlan {
                earliest_switch_start_date: window.earliest_switch.max(plan.earliest_start_date),
                plan,
                utility: tdu.clone(),
                estimate: None,
            });
        }
    }
    let mut tx = core.db.begin().await?;
    for p in &priced {
        store::market::insert_plan(&mut tx, &p.plan).await?;
    }
    if let Some(account) = req.account {
        let plan_uuids = priced.iter().map(|p| p.plan.uuid).collect();
        let event = match req.renewal {
            Some(r) => Event::RenewalPlanRequested {
                account_uuid: account.uuid,
                location_uuid: r.location_uuid,
                plan_uuids,
            },
            None => Event::PlanRequested {
                account_uuid: account.uuid,
                esi_id: req.target.esi_id.clone(),
                postal_code: req.target.postal_code.clone(),
                plan_uuids,
                is_custom: req.overrides.is_custom(),
            },
        };
        store::events::insert_event(&mut tx, &NewEvent::of(req.app.uuid, &event, now)).await?;
    }
    tx.commit().await?;
    Ok(priced)
}

/// A priced plan's row: its own copy of what its group said when it was priced (name, type,
/// term, rates, fees, commission, Terms of Service) and of that group's version, so that a
/// later edit of the group changes no plan already priced, nor the contracts accepted with it.
#[allow(clippy::too_many_arguments)]
fn plan_row(
    req: &PlanRequest<'_>,
    group: &PlanGroupRow,
    terms: &GroupTerms,
    tdu: &TduRow,
    rates: &PlanRates,
    wholesale: Decimal,
    window: StartWindow,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> PlanRow {
    let [a500, a1000, a2000] = efl_averages(rates);
    let wire = |d: Decimal| RateCentsPerKwh(d).to_wire();
    let custom = req.overrides.is_custom();
    PlanRow {
        uuid: Uuid::new_v4(),
        app_uuid: req.app.uuid,
        plan_group_uuid: group.uuid,
        account_uuid: req.account.map(|a| a.uuid),
        is_custom: custom,
        esi_id: req.target.esi_id.clone(),
        postal_code: req.target.postal_code.clone(),
        tdu: tdu.name.clone(),
        name: if custom {
            format!("{} (custom)", terms.name)
        } else {
            terms.name.clone()
        },
        plan_type: terms.plan_type.as_str().to_owned(),
        term_months: i64::from(rates.term_months),
        earliest_start_date: window.earliest,
        latest_start_date: window.latest,
        expires_at,
        energy_cents_per_kwh: wire(rates.energy_cents_per_kwh),
        base_charge_cents_per_month: rates.base_charge_cents_per_month,
        tdu_fixed_cents_per_month: rates.tdu_fixed_cents_per_month,
        tdu_cents_per_kwh: wire(rates.tdu_cents_per_kwh),
        solar_buyback_cents_per_kwh: wire(rates.solar_buyback_cents_per_kwh),
        early_termination_fee_cents: rates.early_termination_fee_cents,
        partner_commission_cents_per_month: rates.partner_commission_cents_per_month,
        renewable_percent: i64::from(terms.renewable_percent),
        wholesale_cents_per_kwh: wire(wholesale),
        average_500: wire(a500),
        average_1000: wire(a1000),
        average_2000: wire(a2000),
        tos_version: terms.tos_version.clone(),
        yrac_version: YRAC_VERSION.to_owned(),
        is_renewal: req.renewal.is_some(),
        created_at: now,
        plan_group_version: group.version,
    }
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

/// One plan group's average price beside the market's, at one EFL usage.
pub struct BenchmarkRow {
    pub usage_kwh: u32,
    pub market_cents_per_kwh: Decimal,
    pub plan_group_uuid: Uuid,
    pub plan_cents_per_kwh: Decimal,
}

/// How the app's plans compare with the market's typical plan in one utility's area.
pub struct Benchmarks {
    pub utility: TduRow,
    pub rows: Vec<BenchmarkRow>,
}

/// Prices the market's typical plan and each of the app's plan groups (nothing stored) at an
/// ESI ID, or at a postal code's first utility, and compares their EFL averages.
pub async fn benchmarks(
    core: &Core,
    app: &AppRow,
    esi_id: Option<&str>,
    postal_code: Option<&str>,
) -> Result<Benchmarks> {
    let target = target(core, esi_id, postal_code, None, PlansRefused::EsiIdMissing).await?;
    let Some(tdu) = target.tdus.into_iter().next() else {
        return Err(broken("no utility"));
    };
    let today = core.clock.today();
    let cal = calendar(core).await?;
    let start = start_window(today, Enroller::Customer, cal, false).earliest_switch;
    let charges = delivery_charges(core, &tdu.name, today).await?;
    let (curve, market_margin, market_base) = wholesale_curve(core, &tdu.load_zone).await?;
    let averages = |terms: &GroupTerms| {
        let wholesale = curve.price_for(terms.plan_type, today, start, terms.term_months);
        efl_averages(&price_plan(
            terms,
            &Overrides::default(),
            wholesale,
            &charges,
        ))
    };
    let market = averages(&market_plan(market_margin, market_base));
    let mut rows = Vec::new();
    for g in store::market::plan_groups_of_app(&core.db, app.uuid).await? {
        let plan = averages(&group_terms(&g)?);
        for (i, usage_kwh) in EFL_USAGES_KWH.into_iter().enumerate() {
            rows.push(BenchmarkRow {
                usage_kwh,
                market_cents_per_kwh: market[i],
                plan_group_uuid: g.uuid,
                plan_cents_per_kwh: plan[i],
            });
        }
    }
    Ok(Benchmarks { utility: tdu, rows })
}

// ---------------------------------------------------------------------------------------------
// Support contacts

/// The utility serving a location, whose contacts (outages, meters) its support info gives.
pub async fn support_utility(core: &Core, tdu: &str) -> Result<TduRow> {
    tdu_named(core, tdu).await
}
