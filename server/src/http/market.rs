//! The market through the API: eligibility, address and ESI ID search, plan groups, priced
//! plans (with per-account terms), benchmarks, and the plan documents' pages.

use std::str::FromStr;

use app::api::{
    market::{
        Address, AddressSearchIn, AppPlansRequestIn, AveragePrices, Benchmark, BenchmarksIn,
        BenchmarksOut, Eligibility, EligibilityIn, EsiIdSearchIn, FullAddressSearchIn, Plan,
        PlanDocuments, PlanGroup, PlanRatesOut, PlansOut, PlansRequestIn, SupportInfo, Utility,
    },
    ErrorEnvelope, List, Timestamp,
};
use app::format::{dollars, html_escape};
use axum::{extract::State, response::Html, routing::get, Router};
use chrono::{Duration, NaiveDate};
use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::{AccountPrincipal, AppPrincipal},
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path, Query},
    links::{signed_url, SignedLink},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        address::{normalize, normalize_unit},
        market::{
            eligibility_likelihood, parse_dollars_to_cents, price_expiry_date, round4,
            start_window, tdu_for_esi_id, BusinessCalendar, Enroller, EsiId, EsiPrefix,
            RateCentsPerKwh, ZipCode,
        },
        pricing::{
            efl_averages, price_plan, GroupTerms, Overrides, PlanRates, PlanType, TduCharges,
            WholesaleCurve,
        },
        FieldError,
    },
    store::{
        self,
        accounts::AccountRow,
        apps::AppRow,
        events::NewEvent,
        market::{PlanGroupRow, PlanRow, ServiceAddressRow, TduRow},
    },
};

/// The version of the regulator's customer-rights text every plan links to.
pub const YRAC_VERSION: &str = "2024.1";
const DEFAULT_SEARCH_LIMIT: u32 = 10;
const MAX_SEARCH_LIMIT: u32 = 50;
const MAX_TERM_MONTHS: u32 = 36;

pub fn app_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(list_plan_groups))
        .routes(routes!(app_eligibility))
        .routes(routes!(app_address_search))
        .routes(routes!(app_full_address_search))
        .routes(routes!(app_request_plans))
        .routes(routes!(benchmarks))
        .routes(routes!(app_request_account_plans))
}

pub fn account_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(account_eligibility))
        .routes(routes!(account_address_search))
        .routes(routes!(account_full_address_search))
        .routes(routes!(esi_id_search))
        .routes(routes!(account_request_plans))
}

/// The paths of the plan documents' pages; the API hands them out signed (`links::signed_url`).
pub fn efl_path(plan_uuid: Uuid) -> String {
    format!("/documents/efl/{plan_uuid}")
}

pub fn tos_path(version: &str) -> String {
    format!("/documents/tos/{version}")
}

pub fn yrac_path(version: &str) -> String {
    format!("/documents/yrac/{version}")
}

/// Pages of the plan documents (the PDFs come with the documents), opened through signed links.
pub fn documents_router() -> Router<AppState> {
    Router::new()
        .route("/documents/efl/{plan_uuid}", get(efl_page))
        .route("/documents/tos/{version}", get(tos_page))
        .route("/documents/yrac/{version}", get(yrac_page))
}

// ---------------------------------------------------------------------------------------------
// Reference data

async fn utility_of(state: &AppState, tdu: &str) -> ApiResult<TduRow> {
    store::market::tdus(&state.db)
        .await?
        .into_iter()
        .find(|t| t.name == tdu)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("unknown utility {tdu}")))
}

fn utility(t: &TduRow) -> Utility {
    Utility {
        name: t.name.clone(),
        display_name: t.display_name.clone(),
    }
}

async fn esi_prefixes(state: &AppState) -> ApiResult<Vec<EsiPrefix>> {
    Ok(store::market::esi_prefixes(&state.db)
        .await?
        .into_iter()
        .map(|p| EsiPrefix {
            prefix: p.prefix,
            tdu: p.tdu,
            esi_id_length: usize::try_from(p.esi_id_length).unwrap_or(0),
        })
        .collect())
}

fn esi_id_invalid() -> ApiError {
    ApiError::new(
        ErrorCode::EsiIdInvalid,
        "esi_id must be the 17 or 22 digits of a meter of a utility open to retail choice",
    )
    .with_param("esi_id")
}

/// Parses an ESI ID (422 `esi_id_invalid`) and finds it in the directory (404
/// `esi_id_not_found`).
async fn directory_entry(state: &AppState, raw: &str) -> ApiResult<ServiceAddressRow> {
    let esi = EsiId::parse(raw).ok_or_else(esi_id_invalid)?;
    let prefixes = esi_prefixes(state).await?;
    tdu_for_esi_id(&esi, &prefixes).ok_or_else(esi_id_invalid)?;
    store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::EsiIdNotFound,
                "No meter with this ESI ID is in the directory",
            )
            .with_param("esi_id")
        })
}

async fn calendar(state: &AppState) -> ApiResult<BusinessCalendar> {
    Ok(BusinessCalendar::new(
        store::market::federal_holidays(&state.db).await?,
    ))
}

fn decimal(stored: &str) -> ApiResult<Decimal> {
    Decimal::from_str(stored)
        .map_err(|e| ApiError::internal(anyhow::anyhow!("stored decimal: {e}")))
}

async fn wholesale_curve(
    state: &AppState,
    zone: &str,
) -> ApiResult<(WholesaleCurve, Decimal, i64)> {
    let row = store::market::load_zone(&state.db, zone)
        .await?
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("no load zone {zone}")))?;
    let factors = store::market::wholesale_seasonality(&state.db).await?;
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

async fn tdu_charges(state: &AppState, tdu: &str, on: NaiveDate) -> ApiResult<TduCharges> {
    let row = store::market::tdu_charges_on(&state.db, tdu, on)
        .await?
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("no charges of {tdu} on {on}")))?;
    Ok(TduCharges {
        fixed_cents_per_month: row.fixed_cents_per_month,
        cents_per_kwh: decimal(&row.cents_per_kwh)?,
    })
}

fn group_terms(g: &PlanGroupRow) -> ApiResult<GroupTerms> {
    Ok(GroupTerms {
        name: g.name.clone(),
        plan_type: PlanType::parse(&g.plan_type)
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("plan type {}", g.plan_type)))?,
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
// Eligibility

async fn eligibility(state: &AppState, input: EligibilityIn) -> ApiResult<Eligibility> {
    let zip = ZipCode::parse("postal_code", &input.postal_code)?;
    let tdus = store::market::tdus(&state.db).await?;
    let named = |name: &str| tdus.iter().find(|t| t.name == name).map(utility);
    // A full address found in the directory is certain.
    if let Some(address_1) = input.address_1.as_deref().filter(|a| !a.trim().is_empty()) {
        let found = exact_matches(state, address_1, input.address_2.as_deref(), None, &zip).await?;
        if let Some(first) = found.first() {
            return Ok(Eligibility {
                eligibility_likelihood: 100,
                utilities: named(&first.tdu).into_iter().collect(),
            });
        }
    }
    let rows = store::market::zip_tdus(&state.db, zip.as_str()).await?;
    let likelihoods: Vec<i64> = rows.iter().map(|r| r.likelihood).collect();
    Ok(Eligibility {
        eligibility_likelihood: eligibility_likelihood(&likelihoods),
        utilities: rows.iter().filter_map(|r| named(&r.tdu)).collect(),
    })
}

/// Check whether a postal code (or full address) is open to retail choice.
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/eligibility", tag = "enrollment",
    request_body = EligibilityIn,
    responses(
        (status = 200, description = "0 when the address is outside retail choice", body = Eligibility),
        (status = 400, description = "Missing or malformed postal code", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn app_eligibility(
    State(state): State<AppState>,
    _principal: AppPrincipal,
    Json(input): Json<EligibilityIn>,
) -> ApiResult<axum::Json<Eligibility>> {
    Ok(axum::Json(eligibility(&state, input).await?))
}

/// Check whether a postal code (or full address) is open to retail choice.
#[utoipa::path(
    post, path = "/v1/account/enroll/eligibility", tag = "enrollment",
    request_body = EligibilityIn,
    responses(
        (status = 200, description = "0 when the address is outside retail choice", body = Eligibility),
        (status = 400, description = "Missing or malformed postal code", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn account_eligibility(
    State(state): State<AppState>,
    _principal: AccountPrincipal,
    Json(input): Json<EligibilityIn>,
) -> ApiResult<axum::Json<Eligibility>> {
    Ok(axum::Json(eligibility(&state, input).await?))
}

// ---------------------------------------------------------------------------------------------
// Address search

async fn render_addresses(
    state: &AppState,
    rows: Vec<ServiceAddressRow>,
) -> ApiResult<Vec<Address>> {
    let tdus = store::market::tdus(&state.db).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let utility = tdus.iter().find(|t| t.name == r.tdu).map_or_else(
                || Utility {
                    name: r.tdu.clone(),
                    display_name: r.tdu.clone(),
                },
                utility,
            );
            Address {
                address_1: r.address_1,
                address_2: r.address_2,
                city: r.city,
                state: r.state,
                postal_code: r.postal_code,
                esi_id: r.esi_id,
                utility,
            }
        })
        .collect())
}

/// Rows of these ESI IDs, in this order.
async fn rows_in_order(
    state: &AppState,
    esi_ids: Vec<String>,
) -> ApiResult<Vec<ServiceAddressRow>> {
    let mut rows = store::market::service_addresses(&state.db, &esi_ids).await?;
    rows.sort_by_key(|r| esi_ids.iter().position(|e| *e == r.esi_id));
    Ok(rows)
}

async fn type_ahead(state: &AppState, input: AddressSearchIn) -> ApiResult<Vec<Address>> {
    if input.query.trim().is_empty() {
        return Err(FieldError::invalid("query", "query must not be blank").into());
    }
    let limit = input.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
        return Err(
            FieldError::invalid("limit", format!("limit must be 1 to {MAX_SEARCH_LIMIT}")).into(),
        );
    }
    let zip = input
        .postal_code
        .as_deref()
        .map(|z| ZipCode::parse("postal_code", z))
        .transpose()?;
    let query = input.query;
    let index = state.adapters.index();
    let hits = tokio::task::spawn_blocking(move || {
        index.type_ahead(&query, zip.as_ref().map(ZipCode::as_str), limit as usize)
    })
    .await
    .map_err(ApiError::internal)?;
    let rows = rows_in_order(state, hits.into_iter().map(|h| h.esi_id).collect()).await?;
    render_addresses(state, rows).await
}

/// Type-ahead search on the beginning of an address (tolerates small typos).
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/address-search", tag = "enrollment",
    request_body = AddressSearchIn,
    responses(
        (status = 200, description = "Matching addresses, in no guaranteed order", body = Vec<Address>),
        (status = 400, description = "Blank query, bad limit or postal code", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn app_address_search(
    State(state): State<AppState>,
    _principal: AppPrincipal,
    Json(input): Json<AddressSearchIn>,
) -> ApiResult<axum::Json<Vec<Address>>> {
    Ok(axum::Json(type_ahead(&state, input).await?))
}

/// Type-ahead search on the beginning of an address (tolerates small typos).
#[utoipa::path(
    post, path = "/v1/account/enroll/address-search", tag = "enrollment",
    request_body = AddressSearchIn,
    responses(
        (status = 200, description = "Matching addresses, in no guaranteed order", body = Vec<Address>),
        (status = 400, description = "Blank query, bad limit or postal code", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn account_address_search(
    State(state): State<AppState>,
    _principal: AccountPrincipal,
    Json(input): Json<AddressSearchIn>,
) -> ApiResult<axum::Json<Vec<Address>>> {
    Ok(axum::Json(type_ahead(&state, input).await?))
}

/// Directory entries at exactly this address after normalization.
async fn exact_matches(
    state: &AppState,
    address_1: &str,
    address_2: Option<&str>,
    city: Option<&str>,
    zip: &ZipCode,
) -> ApiResult<Vec<ServiceAddressRow>> {
    let street = normalize(address_1);
    let unit = address_2.map(normalize_unit).filter(|u| !u.is_empty());
    let index = state.adapters.index();
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
    .map_err(ApiError::internal)?;
    let city = city.map(normalize).filter(|c| !c.is_empty());
    let mut rows = rows_in_order(state, hits).await?;
    rows.retain(|r| city.as_ref().is_none_or(|c| normalize(&r.city) == *c));
    rows.sort_by(|a, b| (&a.address_2, &a.esi_id).cmp(&(&b.address_2, &b.esi_id)));
    Ok(rows)
}

async fn full_search(state: &AppState, input: FullAddressSearchIn) -> ApiResult<Vec<Address>> {
    if input.address_1.trim().is_empty() {
        return Err(FieldError::invalid("address_1", "address_1 must not be blank").into());
    }
    let zip = ZipCode::parse("postal_code", &input.postal_code)?;
    if let Some(s) = input
        .state
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        if !s.eq_ignore_ascii_case("TX") && !s.eq_ignore_ascii_case("texas") {
            return Ok(Vec::new());
        }
    }
    let rows = exact_matches(
        state,
        &input.address_1,
        input.address_2.as_deref(),
        input.city.as_deref(),
        &zip,
    )
    .await?;
    render_addresses(state, rows).await
}

/// Exact address search after normalization (street suffixes, directionals, unit forms).
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/full-address-search", tag = "enrollment",
    request_body = FullAddressSearchIn,
    responses(
        (status = 200, description = "Zero, one, or several (one per meter) addresses", body = Vec<Address>),
        (status = 400, description = "Missing address or malformed postal code", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn app_full_address_search(
    State(state): State<AppState>,
    _principal: AppPrincipal,
    Json(input): Json<FullAddressSearchIn>,
) -> ApiResult<axum::Json<Vec<Address>>> {
    Ok(axum::Json(full_search(&state, input).await?))
}

/// Exact address search after normalization (street suffixes, directionals, unit forms).
#[utoipa::path(
    post, path = "/v1/account/enroll/full-address-search", tag = "enrollment",
    request_body = FullAddressSearchIn,
    responses(
        (status = 200, description = "Zero, one, or several (one per meter) addresses", body = Vec<Address>),
        (status = 400, description = "Missing address or malformed postal code", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn account_full_address_search(
    State(state): State<AppState>,
    _principal: AccountPrincipal,
    Json(input): Json<FullAddressSearchIn>,
) -> ApiResult<axum::Json<Vec<Address>>> {
    Ok(axum::Json(full_search(&state, input).await?))
}

/// The address of an ESI ID.
#[utoipa::path(
    post, path = "/v1/account/enroll/esi-id-search", tag = "enrollment",
    request_body = EsiIdSearchIn,
    responses(
        (status = 200, description = "The meter's address", body = Address),
        (status = 404, description = "`esi_id_not_found`", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`: not an ESI ID of an open utility", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn esi_id_search(
    State(state): State<AppState>,
    _principal: AccountPrincipal,
    Json(input): Json<EsiIdSearchIn>,
) -> ApiResult<axum::Json<Address>> {
    let row = directory_entry(&state, &input.esi_id).await?;
    let mut rendered = render_addresses(&state, vec![row]).await?;
    rendered
        .pop()
        .map(axum::Json)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("address vanished")))
}

// ---------------------------------------------------------------------------------------------
// Plan groups

fn render_group(g: &PlanGroupRow) -> ApiResult<PlanGroup> {
    Ok(PlanGroup {
        uuid: g.uuid,
        name: g.name.clone(),
        plan_type: g.plan_type.clone(),
        term_months: u32::try_from(g.term_months).unwrap_or(1),
        base_charge_cents_per_month: g.base_charge_cents_per_month,
        energy_margin_cents_per_kwh: RateCentsPerKwh(decimal(&g.energy_margin_cents_per_kwh)?)
            .to_wire(),
        partner_commission_cents_per_month: g.partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh: RateCentsPerKwh(decimal(&g.solar_buyback_cents_per_kwh)?)
            .to_wire(),
        early_termination_fee_cents: g.early_termination_fee_cents,
        renewable_percent: u8::try_from(g.renewable_percent).unwrap_or(0),
        tos_version: g.tos_version.clone(),
        is_month_to_month_default: g.is_month_to_month_default,
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PlanGroupsQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
}

/// The app's plan groups.
#[utoipa::path(
    get, path = "/v1/app/plan-groups", tag = "app",
    params(PlanGroupsQuery),
    responses((status = 200, description = "The plan groups, in the app's order", body = List<PlanGroup>)),
    security(("app_token" = []))
)]
pub async fn list_plan_groups(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(q): Query<PlanGroupsQuery>,
) -> ApiResult<axum::Json<List<PlanGroup>>> {
    let page = Page::parse(q.limit, q.offset)?;
    let groups = store::market::plan_groups_of_app(&state.db, principal.app.uuid).await?;
    let rendered = groups
        .iter()
        .skip(usize::try_from(page.offset).unwrap_or(usize::MAX))
        .take(page.limit as usize + 1)
        .map(render_group)
        .collect::<ApiResult<Vec<_>>>()?;
    Ok(axum::Json(page.list(rendered, "/v1/app/plan-groups", &[])))
}

// ---------------------------------------------------------------------------------------------
// Plans

/// Where plans are priced: the utilities, and the meter when known.
struct Target {
    tdus: Vec<TduRow>,
    esi_id: Option<String>,
    postal_code: Option<String>,
}

async fn target_of_esi_id(state: &AppState, raw: &str) -> ApiResult<Target> {
    let entry = directory_entry(state, raw).await?;
    Ok(Target {
        tdus: vec![utility_of(state, &entry.tdu).await?],
        esi_id: Some(entry.esi_id),
        postal_code: Some(entry.postal_code),
    })
}

async fn target_of_postal_code(
    state: &AppState,
    raw: &str,
    utility_name: Option<&str>,
) -> ApiResult<Target> {
    let zip = ZipCode::parse("postal_code", raw)?;
    let rows = store::market::zip_tdus(&state.db, zip.as_str()).await?;
    if rows.is_empty() {
        return Err(ApiError::new(
            ErrorCode::NotInRetailChoiceArea,
            "This postal code is not served by a utility open to retail choice",
        )
        .with_param("postal_code"));
    }
    let all = store::market::tdus(&state.db).await?;
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
            return Err(ApiError::new(
                ErrorCode::NotInRetailChoiceArea,
                "This utility does not serve this postal code",
            )
            .with_param("utility"));
        }
    }
    Ok(Target {
        tdus,
        esi_id: None,
        postal_code: Some(zip.as_str().to_owned()),
    })
}

struct PlanRequest<'a> {
    app: &'a AppRow,
    account: Option<&'a AccountRow>,
    target: Target,
    group: Option<Uuid>,
    overrides: Overrides,
    start: Option<NaiveDate>,
}

fn start_out_of_range(earliest: NaiveDate, latest: NaiveDate) -> ApiError {
    ApiError::new(
        ErrorCode::StartDateOutOfRange,
        format!("service_start_date must be between {earliest} and {latest}"),
    )
    .with_param("service_start_date")
    .with_detail("earliest_start_date", earliest.to_string())
    .with_detail("latest_start_date", latest.to_string())
}

/// Prices and stores the app's plans for an account's meter, as `plans/request` does with no
/// start date (sandbox demo data picks one of them).
pub async fn price_account_plans(
    state: &AppState,
    app: &AppRow,
    account: &AccountRow,
    esi_id: &str,
) -> ApiResult<Vec<Plan>> {
    let target = target_of_esi_id(state, esi_id).await?;
    request_plans(
        state,
        PlanRequest {
            app,
            account: Some(account),
            target,
            group: None,
            overrides: Overrides::default(),
            start: None,
        },
    )
    .await
}

/// Prices the plans of a request, stores them and (for an account) emits
/// `enrollment.plan_requested`, all in one transaction.
async fn request_plans(state: &AppState, req: PlanRequest<'_>) -> ApiResult<Vec<Plan>> {
    // An account's plans are priced on the account's clock (a sandbox account lives in its own
    // time), so that accepting them, which reads that clock, sees the same day.
    let (now, today) = match req.account {
        Some(a) => {
            let clock = state.clock.for_account(&state.db, a.uuid).await?;
            (clock.now(), clock.today())
        }
        None => (state.clock.now(), state.clock.today()),
    };
    let cal = calendar(state).await?;
    let enroller = match req.account {
        Some(a) if a.client_agent_accepted_at.is_some() => Enroller::ClientAgent,
        _ => Enroller::Customer,
    };
    let window = start_window(today, enroller, &cal);
    if let Some(start) = req.start {
        if start < window.earliest || start > window.latest {
            return Err(start_out_of_range(window.earliest, window.latest));
        }
    }
    let expires_at = now + Duration::days((price_expiry_date(today, &cal) - today).num_days());
    let mut groups = store::market::plan_groups_of_app(&state.db, req.app.uuid).await?;
    if let Some(wanted) = req.group {
        groups.retain(|g| g.uuid == wanted);
        if groups.is_empty() {
            return Err(ApiError::not_found("plan group").with_param("plan_group_uuid"));
        }
    }
    let mut rows = Vec::new();
    for tdu in &req.target.tdus {
        let charges = tdu_charges(state, &tdu.name, today).await?;
        let (curve, _, _) = wholesale_curve(state, &tdu.load_zone).await?;
        let start = req.start.unwrap_or(window.earliest_switch);
        for g in &groups {
            let terms = group_terms(g)?;
            let term = req.overrides.term_months.unwrap_or(terms.term_months);
            let wholesale = match terms.plan_type {
                PlanType::Fixed => curve.term_price(today, start, term),
                PlanType::MonthToMonth => curve.spot(today),
            };
            let rates = price_plan(&terms, &req.overrides, wholesale, &charges);
            rows.push(plan_row(
                &req, g, &terms, tdu, &rates, wholesale, window, expires_at, now,
            ));
        }
    }
    let mut tx = state.db.begin().await?;
    for row in &rows {
        store::market::insert_plan(&mut tx, row).await?;
    }
    if let Some(account) = req.account {
        store::events::insert_event(
            &mut tx,
            &NewEvent {
                app_uuid: req.app.uuid,
                account_uuid: Some(account.uuid),
                kind: "enrollment.plan_requested",
                data: serde_json::json!({
                    "account_uuid": account.uuid,
                    "esi_id": req.target.esi_id,
                    "postal_code": req.target.postal_code,
                    "plan_uuids": rows.iter().map(|r| r.uuid).collect::<Vec<_>>(),
                    "is_custom": req.overrides.is_custom(),
                }),
                created_at: now,
            },
        )
        .await?;
    }
    tx.commit().await?;
    let tdus = &req.target.tdus;
    rows.iter()
        .map(|r| render_plan(state, r, tdus, window.earliest_switch))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn plan_row(
    req: &PlanRequest<'_>,
    group: &PlanGroupRow,
    terms: &GroupTerms,
    tdu: &TduRow,
    rates: &PlanRates,
    wholesale: Decimal,
    window: crate::domain::market::StartWindow,
    expires_at: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
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
        is_renewal: false,
        created_at: now,
    }
}

fn render_plan(
    state: &AppState,
    r: &PlanRow,
    tdus: &[TduRow],
    earliest_switch: NaiveDate,
) -> ApiResult<Plan> {
    let tdu = tdus
        .iter()
        .find(|t| t.name == r.tdu)
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("plan of another utility")))?;
    Ok(Plan {
        plan_uuid: r.uuid,
        plan_group_uuid: r.plan_group_uuid,
        name: r.name.clone(),
        plan_type: r.plan_type.clone(),
        term_months: u32::try_from(r.term_months).unwrap_or(1),
        earliest_start_date: r.earliest_start_date,
        latest_start_date: r.latest_start_date,
        earliest_switch_start_date: earliest_switch.max(r.earliest_start_date),
        expires_at: Timestamp(r.expires_at),
        utility: utility(tdu),
        rates: PlanRatesOut {
            energy_cents_per_kwh: r.energy_cents_per_kwh.clone(),
            base_charge_cents_per_month: r.base_charge_cents_per_month,
            tdu_fixed_cents_per_month: r.tdu_fixed_cents_per_month,
            tdu_cents_per_kwh: r.tdu_cents_per_kwh.clone(),
            solar_buyback_cents_per_kwh: r.solar_buyback_cents_per_kwh.clone(),
            early_termination_fee_cents: r.early_termination_fee_cents,
        },
        average_price_cents_per_kwh: AveragePrices {
            kwh_500: r.average_500.clone(),
            kwh_1000: r.average_1000.clone(),
            kwh_2000: r.average_2000.clone(),
        },
        renewable_percent: u8::try_from(r.renewable_percent).unwrap_or(0),
        documents: PlanDocuments {
            efl: signed_url(state, &efl_path(r.uuid)),
            tos: signed_url(state, &tos_path(&r.tos_version)),
            yrac: signed_url(state, &yrac_path(&r.yrac_version)),
        },
        is_renewal: r.is_renewal,
        account_uuid: r.is_custom.then_some(r.account_uuid).flatten(),
    })
}

fn parse_overrides(input: &AppPlansRequestIn) -> Result<Overrides, FieldError> {
    let term_months = input
        .term_months
        .map(|t| {
            if (1..=MAX_TERM_MONTHS).contains(&t) {
                Ok(t)
            } else {
                Err(FieldError::invalid(
                    "term_months",
                    format!("term_months must be 1 to {MAX_TERM_MONTHS}"),
                ))
            }
        })
        .transpose()?;
    let energy = input
        .energy_rate_cents_per_kwh
        .as_ref()
        .map(|d| RateCentsPerKwh::parse("energy_rate_cents_per_kwh", &d.0).map(|r| r.0))
        .transpose()?;
    let commission = input
        .partner_commission_per_month_dollars
        .as_ref()
        .map(|d| parse_dollars_to_cents("partner_commission_per_month_dollars", &d.0))
        .transpose()?;
    Ok(Overrides {
        term_months,
        energy_cents_per_kwh: energy.map(round4),
        partner_commission_cents_per_month: commission,
    })
}

/// Request priced plans by ESI ID or postal code, optionally with per-account terms.
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/plans/request", tag = "enrollment",
    request_body = AppPlansRequestIn,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for the same key")),
    responses(
        (status = 200, description = "Priced plans; custom terms bind them to `account_uuid`", body = PlansOut),
        (status = 400, description = "A field is missing or invalid", body = ErrorEnvelope),
        (status = 404, description = "Unknown account or plan group; `esi_id_not_found`", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`, `not_in_retail_choice_area`, `start_date_out_of_range`", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn app_request_plans(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Json(input): Json<AppPlansRequestIn>,
) -> ApiResult<axum::Json<PlansOut>> {
    let overrides = parse_overrides(&input)?;
    let start = input
        .service_start_date
        .as_deref()
        .map(crate::domain::enrollment::parse_start_date)
        .transpose()?;
    if overrides.is_custom() && input.account_uuid.is_none() {
        return Err(ApiError::from(FieldError::missing("account_uuid"))
            .with_detail("reason", "custom terms are bound to an account"));
    }
    let account = match input.account_uuid {
        Some(uuid) => Some(
            store::accounts::account_of_app(&state.db, principal.app.uuid, uuid)
                .await?
                .ok_or_else(|| ApiError::not_found("account").with_param("account_uuid"))?,
        ),
        None => None,
    };
    let target = match (input.esi_id.as_deref(), input.postal_code.as_deref()) {
        (Some(esi), _) => target_of_esi_id(&state, esi).await?,
        (None, Some(zip)) => target_of_postal_code(&state, zip, input.utility.as_deref()).await?,
        (None, None) => {
            return Err(ApiError::from(FieldError::missing("esi_id"))
                .with_detail("alternative", "postal_code"))
        }
    };
    let plans = request_plans(
        &state,
        PlanRequest {
            app: &principal.app,
            account: account.as_ref(),
            target,
            group: input.plan_group_uuid,
            overrides,
            start,
        },
    )
    .await?;
    Ok(axum::Json(PlansOut { plans }))
}

/// Request priced plans for one of the app's accounts at an ESI ID.
#[utoipa::path(
    post, path = "/v1/app/accounts/{account_uuid}/enroll/plans/request", tag = "enrollment",
    params(("account_uuid" = Uuid, Path), ("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for the same key")),
    request_body = PlansRequestIn,
    responses(
        (status = 200, description = "Priced plans", body = PlansOut),
        (status = 400, description = "esi_id is missing", body = ErrorEnvelope),
        (status = 404, description = "No such account; `esi_id_not_found`", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn app_request_account_plans(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
    Json(input): Json<PlansRequestIn>,
) -> ApiResult<axum::Json<PlansOut>> {
    let account = store::accounts::account_of_app(&state.db, principal.app.uuid, account_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    let esi = input.esi_id.ok_or_else(|| FieldError::missing("esi_id"))?;
    let target = target_of_esi_id(&state, &esi).await?;
    let plans = request_plans(
        &state,
        PlanRequest {
            app: &principal.app,
            account: Some(&account),
            target,
            group: None,
            overrides: Overrides::default(),
            start: None,
        },
    )
    .await?;
    Ok(axum::Json(PlansOut { plans }))
}

/// Request priced plans for this account at an ESI ID.
#[utoipa::path(
    post, path = "/v1/account/enroll/plans/request", tag = "enrollment",
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for the same key")),
    request_body = PlansRequestIn,
    responses(
        (status = 200, description = "Priced plans", body = PlansOut),
        (status = 400, description = "esi_id is missing (and no address is confirmed)", body = ErrorEnvelope),
        (status = 404, description = "`esi_id_not_found`", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn account_request_plans(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<PlansRequestIn>,
) -> ApiResult<axum::Json<PlansOut>> {
    let account =
        store::accounts::account_of_app(&state.db, principal.app.uuid, principal.account_uuid)
            .await?
            .ok_or_else(|| ApiError::not_found("account"))?;
    // Without an ESI ID, the confirmed service address's.
    let esi = match input.esi_id {
        Some(esi) => esi,
        None => store::enrollment::confirmed_address(&state.db, principal.account_uuid)
            .await?
            .map(|a| a.esi_id)
            .ok_or_else(|| FieldError::missing("esi_id"))?,
    };
    let target = target_of_esi_id(&state, &esi).await?;
    let plans = request_plans(
        &state,
        PlanRequest {
            app: &principal.app,
            account: Some(&account),
            target,
            group: principal.plan_group,
            overrides: Overrides::default(),
            start: None,
        },
    )
    .await?;
    Ok(axum::Json(PlansOut { plans }))
}

/// How the app's plans compare with the market at 500, 1,000 and 2,000 kWh.
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/plans/benchmarks", tag = "enrollment",
    request_body = BenchmarksIn,
    responses(
        (status = 200, description = "Market median and plan averages per usage", body = BenchmarksOut),
        (status = 400, description = "Neither esi_id nor postal_code", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`, `not_in_retail_choice_area`", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn benchmarks(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Json(input): Json<BenchmarksIn>,
) -> ApiResult<axum::Json<BenchmarksOut>> {
    let target = match (input.esi_id.as_deref(), input.postal_code.as_deref()) {
        (Some(esi), _) => target_of_esi_id(&state, esi).await?,
        (None, Some(zip)) => target_of_postal_code(&state, zip, None).await?,
        (None, None) => return Err(FieldError::missing("esi_id").into()),
    };
    let Some(tdu) = target.tdus.first() else {
        return Err(ApiError::internal(anyhow::anyhow!("no utility")));
    };
    let today = state.clock.today();
    let cal = calendar(&state).await?;
    let start = start_window(today, Enroller::Customer, &cal).earliest_switch;
    let charges = tdu_charges(&state, &tdu.name, today).await?;
    let (curve, market_margin, market_base) = wholesale_curve(&state, &tdu.load_zone).await?;
    // The market's typical plan: a 12-month fixed product at the zone's usual margin and base.
    let market = GroupTerms {
        name: "market".into(),
        plan_type: PlanType::Fixed,
        term_months: 12,
        base_charge_cents_per_month: market_base,
        energy_margin_cents_per_kwh: market_margin,
        partner_commission_cents_per_month: 0,
        solar_buyback_cents_per_kwh: Decimal::ZERO,
        early_termination_fee_cents: 0,
        renewable_percent: 0,
        tos_version: String::new(),
        is_month_to_month_default: false,
    };
    let market_rates = price_plan(
        &market,
        &Overrides::default(),
        curve.term_price(today, start, 12),
        &charges,
    );
    let market_avgs = efl_averages(&market_rates);
    let mut out = Vec::new();
    for g in store::market::plan_groups_of_app(&state.db, principal.app.uuid).await? {
        let terms = group_terms(&g)?;
        let wholesale = match terms.plan_type {
            PlanType::Fixed => curve.term_price(today, start, terms.term_months),
            PlanType::MonthToMonth => curve.spot(today),
        };
        let avgs = efl_averages(&price_plan(
            &terms,
            &Overrides::default(),
            wholesale,
            &charges,
        ));
        for (i, usage) in [500u32, 1000, 2000].into_iter().enumerate() {
            out.push(Benchmark {
                usage_kwh: usage,
                market_median_cents_per_kwh: RateCentsPerKwh(market_avgs[i]).to_wire(),
                plan_group_uuid: g.uuid,
                plan_cents_per_kwh: RateCentsPerKwh(avgs[i]).to_wire(),
            });
        }
    }
    Ok(axum::Json(BenchmarksOut {
        utility: utility(tdu),
        benchmarks: out,
    }))
}

// ---------------------------------------------------------------------------------------------
// Support contacts

/// The support contacts of a location served by `tdu`: the utility's (outages, meters) and
/// the partner's (everything else). `GET .../locations/{location_uuid}/support-info` serves it
/// once locations exist.
pub async fn support_info(state: &AppState, app: &AppRow, tdu: &str) -> ApiResult<SupportInfo> {
    let t = utility_of(state, tdu).await?;
    Ok(SupportInfo {
        tdu_name: t.display_name,
        tdu_phone: t.phone,
        tdu_outage_phone: t.outage_phone,
        tdu_website: t.website,
        partner_support: super::apps::render(app).support,
    })
}

// ---------------------------------------------------------------------------------------------
// Document pages

fn page(title: &str, rows: &[(&str, String)]) -> Html<String> {
    let body: String = rows
        .iter()
        .map(|(k, v)| {
            format!(
                "<tr><th>{}</th><td>{}</td></tr>",
                html_escape(k),
                html_escape(v)
            )
        })
        .collect();
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\
         <body><h1>{t}</h1><table>{body}</table></body></html>",
        t = html_escape(title)
    ))
}

/// The Electricity Facts Label of a priced plan (as a page until the PDF exists).
pub async fn efl_page(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(plan_uuid): Path<Uuid>,
) -> ApiResult<Html<String>> {
    let p = store::market::plan_by_uuid(&state.db, plan_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("document"))?;
    let tdu = utility_of(&state, &p.tdu).await?;
    Ok(page(
        &format!("Electricity Facts Label: {}", p.name),
        &[
            ("Price type", p.plan_type.replace('_', "-")),
            ("Contract term", format!("{} months", p.term_months)),
            (
                "Energy charge",
                format!("{}¢ per kWh", p.energy_cents_per_kwh),
            ),
            (
                "Base charge",
                format!("{} per month", dollars(p.base_charge_cents_per_month)),
            ),
            ("Delivery utility", tdu.display_name),
            (
                "TDU delivery charges",
                format!(
                    "{} per month and {}¢ per kWh",
                    dollars(p.tdu_fixed_cents_per_month),
                    p.tdu_cents_per_kwh
                ),
            ),
            (
                "Solar buyback credit",
                format!("{}¢ per exported kWh", p.solar_buyback_cents_per_kwh),
            ),
            (
                "Average price at 500 kWh",
                format!("{}¢ per kWh", p.average_500),
            ),
            (
                "Average price at 1,000 kWh",
                format!("{}¢ per kWh", p.average_1000),
            ),
            (
                "Average price at 2,000 kWh",
                format!("{}¢ per kWh", p.average_2000),
            ),
            (
                "Early termination fee",
                dollars(p.early_termination_fee_cents),
            ),
            ("Renewable content", format!("{}%", p.renewable_percent)),
            ("Terms of Service version", p.tos_version),
            ("Your Rights as a Customer version", p.yrac_version),
        ],
    ))
}

/// A version of the Terms of Service that some plan group uses.
pub async fn tos_page(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(version): Path<String>,
) -> ApiResult<Html<String>> {
    if !store::market::tos_version_exists(&state.db, &version).await? {
        return Err(ApiError::not_found("document"));
    }
    Ok(page(
        &format!("Terms of Service, version {version}"),
        &[
            ("Version", version.clone()),
            ("Expiration notices", "At least three notices in the last third of a fixed term, the last at least 30 days before its end.".to_owned()),
            ("Rollover", "Without a new agreement, service continues month to month at the variable price under these terms.".to_owned()),
        ],
    ))
}

/// Your Rights as a Customer.
pub async fn yrac_page(_link: SignedLink, Path(version): Path<String>) -> ApiResult<Html<String>> {
    if version != YRAC_VERSION {
        return Err(ApiError::not_found("document"));
    }
    Ok(page(
        &format!("Your Rights as a Customer, version {version}"),
        &[
            ("Version", version.clone()),
            (
                "Switching",
                "Nobody may switch your provider without your authorization.".to_owned(),
            ),
            (
                "Disputes",
                "You may dispute a bill with us and then with the regulator.".to_owned(),
            ),
            (
                "Privacy",
                "Your information is not released without your consent.".to_owned(),
            ),
            (
                "Disconnection",
                "Service is not disconnected without at least 10 days' written notice.".to_owned(),
            ),
        ],
    ))
}
