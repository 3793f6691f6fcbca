//! The market through the API: eligibility, address and ESI ID search, plan groups, priced
//! plans (with per-account terms), benchmarks, and the documents behind signed links (PDFs, or
//! with `?format=html` the same text as a page, for reading inside a flow). The use cases are
//! `services::plans`; this module extracts requests and renders answers.

use app::api::{
    market::{
        Address, AddressSearchIn, AppPlansRequestIn, AveragePrices, Benchmark, BenchmarksIn,
        BenchmarksOut, Eligibility, EligibilityIn, EsiIdSearchIn, EstimateBasis,
        FullAddressSearchIn, Plan, PlanDocuments, PlanGroup, PlanRatesOut, PlansOut,
        PlansRequestIn, SupportInfo, Utility,
    },
    ErrorEnvelope, List, Timestamp,
};
use app::format::long_date;
use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::{AccountPrincipal, AppPrincipal},
    error::{ApiError, ApiResult},
    extract::{Json, Path, Query},
    links::{signed_url, SignedLink},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        documents::DocumentKind,
        enrollment::parse_start_date,
        estimate::AnnualEstimate,
        market::{parse_search_limit, RateCentsPerKwh, ZipCode},
        pricing::{GroupTerms, Overrides},
        FieldError,
    },
    services::{
        self,
        documents::{Rendered, Rendition},
        plans::{self, AppPlanRequest, EligibilityFound, FoundAddress, FullAddress, PricedPlan},
    },
    store::{
        self,
        apps::AppRow,
        market::{PlanGroupRow, TduRow},
    },
};

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

/// The path of a contract's document as accepted (EFL, TOS, YRAC, LOA).
pub fn contract_document_path(contract_uuid: Uuid, kind: DocumentKind) -> String {
    format!("/documents/contracts/{contract_uuid}/{}", kind.as_str())
}

/// The path of an expiration notice as sent.
pub fn notice_path(notice_uuid: Uuid) -> String {
    format!("/documents/notices/{notice_uuid}")
}

/// The plan documents as PDFs, opened through signed links: a priced plan's EFL, the TOS and
/// YRAC versions, and a location's documents as they were accepted or sent.
pub fn documents_router() -> Router<AppState> {
    Router::new()
        .route("/documents/efl/{plan_uuid}", get(efl_page))
        .route("/documents/tos/{version}", get(tos_page))
        .route("/documents/yrac/{version}", get(yrac_page))
        .route(
            "/documents/contracts/{contract_uuid}/{kind}",
            get(contract_document),
        )
        .route("/documents/notices/{notice_uuid}", get(notice_document))
}

// ---------------------------------------------------------------------------------------------
// Rendering

fn utility(t: &TduRow) -> Utility {
    Utility {
        name: t.name.clone(),
        display_name: t.display_name.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Eligibility

async fn eligibility(state: &AppState, input: EligibilityIn) -> ApiResult<Eligibility> {
    let zip = ZipCode::parse("postal_code", &input.postal_code)?;
    let EligibilityFound {
        likelihood,
        utilities,
    } = plans::eligibility(
        state,
        &zip,
        input.address_1.as_deref(),
        input.address_2.as_deref(),
    )
    .await?;
    Ok(Eligibility {
        eligibility_likelihood: likelihood,
        utilities: utilities.iter().map(utility).collect(),
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

fn render_address(
    FoundAddress {
        address: r,
        utility: u,
    }: FoundAddress,
) -> Address {
    Address {
        // A utility missing from the reference data is shown by its name.
        utility: u.as_ref().map_or_else(
            || Utility {
                name: r.tdu.clone(),
                display_name: r.tdu.clone(),
            },
            utility,
        ),
        address_1: r.address_1,
        address_2: r.address_2,
        city: r.city,
        state: r.state,
        postal_code: r.postal_code,
        esi_id: r.esi_id,
    }
}

async fn type_ahead(state: &AppState, input: AddressSearchIn) -> ApiResult<Vec<Address>> {
    if input.query.trim().is_empty() {
        return Err(FieldError::invalid("query", "query must not be blank").into());
    }
    let limit = parse_search_limit(input.limit)?;
    let zip = input
        .postal_code
        .as_deref()
        .map(|z| ZipCode::parse("postal_code", z))
        .transpose()?;
    let found = plans::type_ahead(state, input.query, zip, limit).await?;
    Ok(found.into_iter().map(render_address).collect())
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

async fn full_search(state: &AppState, input: FullAddressSearchIn) -> ApiResult<Vec<Address>> {
    if input.address_1.trim().is_empty() {
        return Err(FieldError::invalid("address_1", "address_1 must not be blank").into());
    }
    let zip = ZipCode::parse("postal_code", &input.postal_code)?;
    let found = plans::full_address_search(
        state,
        &FullAddress {
            address_1: &input.address_1,
            address_2: input.address_2.as_deref(),
            city: input.city.as_deref(),
            state: input.state.as_deref(),
            postal_code: &zip,
        },
    )
    .await?;
    Ok(found.into_iter().map(render_address).collect())
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
    let found = plans::esi_id_search(&state, &input.esi_id).await?;
    Ok(axum::Json(render_address(found)))
}

// ---------------------------------------------------------------------------------------------
// Plan groups

/// A plan group on the wire: its terms as pricing reads them (`plans::group_terms`).
fn render_group(g: &PlanGroupRow) -> ApiResult<PlanGroup> {
    let GroupTerms {
        name,
        plan_type,
        term_months,
        base_charge_cents_per_month,
        energy_margin_cents_per_kwh,
        partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh,
        early_termination_fee_cents,
        renewable_percent,
        tos_version,
        is_month_to_month_default,
    } = plans::group_terms(g)?;
    Ok(PlanGroup {
        uuid: g.uuid,
        name,
        plan_type: plan_type.as_str().to_owned(),
        term_months,
        base_charge_cents_per_month,
        energy_margin_cents_per_kwh: RateCentsPerKwh(energy_margin_cents_per_kwh).to_wire(),
        partner_commission_cents_per_month,
        solar_buyback_cents_per_kwh: RateCentsPerKwh(solar_buyback_cents_per_kwh).to_wire(),
        early_termination_fee_cents,
        renewable_percent,
        tos_version,
        is_month_to_month_default,
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

pub(super) fn render_plan(state: &AppState, p: &PricedPlan) -> Plan {
    let r = &p.plan;
    Plan {
        plan_uuid: r.uuid,
        plan_group_uuid: r.plan_group_uuid,
        name: r.name.clone(),
        plan_type: r.plan_type.clone(),
        term_months: u32::try_from(r.term_months).unwrap_or(1),
        earliest_start_date: r.earliest_start_date,
        latest_start_date: r.latest_start_date,
        earliest_switch_start_date: p.earliest_switch_start_date,
        expires_at: Timestamp(r.expires_at),
        utility: utility(&p.utility),
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
        estimated_annual_cost_cents: p.estimate.map(|e| e.total_cents),
        estimate_basis: p.estimate.map(|e| estimate_basis(&e, &p.utility)),
    }
}

/// What an estimate rests on, with the words a flow shows beside it.
fn estimate_basis(e: &AnnualEstimate, utility: &TduRow) -> EstimateBasis {
    let description = match e.home_size {
        Some(size) => format!(
            "estimated for a typical {} in {}'s area, not your home's own use",
            size.describe(),
            utility.display_name
        ),
        None => {
            let filled = match e.months_filled {
                0 => String::new(),
                1 => "; one month the meter did not fully report is counted at the others' \
                    average"
                    .to_owned(),
                n => format!(
                    "; {n} months the meter did not fully report are counted at the others' \
                    average"
                ),
            };
            format!(
                "estimated for your home's use from {} to {}{filled}",
                long_date(e.from),
                long_date(e.to)
            )
        }
    };
    EstimateBasis {
        kind: if e.home_size.is_some() {
            "home_profile"
        } else {
            "usage_history"
        }
        .to_owned(),
        from: e.from,
        to: e.to,
        months_of_usage: e.months_of_usage,
        months_estimated: e.months_filled,
        home_size: e.home_size.map(|s| s.as_str().to_owned()),
        description,
    }
}

pub(super) fn render_plans(state: &AppState, priced: &[PricedPlan]) -> axum::Json<PlansOut> {
    axum::Json(PlansOut {
        plans: priced.iter().map(|p| render_plan(state, p)).collect(),
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
    let overrides = Overrides::parse(
        input.term_months,
        input
            .energy_rate_cents_per_kwh
            .as_ref()
            .map(|d| d.0.as_str()),
        input
            .partner_commission_per_month_dollars
            .as_ref()
            .map(|d| d.0.as_str()),
    )?;
    let start = input
        .service_start_date
        .as_deref()
        .map(parse_start_date)
        .transpose()?;
    let priced = plans::app_request_plans(
        &state,
        &AppPlanRequest {
            app: &principal.app,
            account_uuid: input.account_uuid,
            esi_id: input.esi_id.as_deref(),
            postal_code: input.postal_code.as_deref(),
            utility: input.utility.as_deref(),
            plan_group_uuid: input.plan_group_uuid,
            overrides,
            start,
        },
    )
    .await?;
    Ok(render_plans(&state, &priced))
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
    let priced = plans::app_request_account_plans(
        &state,
        &principal.app,
        account_uuid,
        input.esi_id.as_deref(),
        input.home_size.as_deref(),
    )
    .await?;
    Ok(render_plans(&state, &priced))
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
    let priced = plans::account_request_plans(
        &state,
        &principal.app,
        principal.account_uuid,
        input.esi_id.as_deref(),
        principal.plan_group,
        input.home_size.as_deref(),
    )
    .await?;
    Ok(render_plans(&state, &priced))
}

/// How the app's plans compare with the market at 500, 1,000 and 2,000 kWh.
#[utoipa::path(
    post, path = "/v1/app/accounts/enroll/plans/benchmarks", tag = "enrollment",
    request_body = BenchmarksIn,
    responses(
        (status = 200, description = "Market median and plan averages per usage", body = BenchmarksOut),
        (status = 400, description = "Neither esi_id nor postal_code", body = ErrorEnvelope),
        (status = 404, description = "No meter with this ESI ID is in the directory (`esi_id_not_found`)", body = ErrorEnvelope),
        (status = 422, description = "`esi_id_invalid`, `not_in_retail_choice_area`", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn benchmarks(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Json(input): Json<BenchmarksIn>,
) -> ApiResult<axum::Json<BenchmarksOut>> {
    let found = plans::benchmarks(
        &state,
        &principal.app,
        input.esi_id.as_deref(),
        input.postal_code.as_deref(),
    )
    .await?;
    Ok(axum::Json(BenchmarksOut {
        utility: utility(&found.utility),
        benchmarks: found
            .rows
            .iter()
            .map(|b| Benchmark {
                usage_kwh: b.usage_kwh,
                market_median_cents_per_kwh: RateCentsPerKwh(b.market_cents_per_kwh).to_wire(),
                plan_group_uuid: b.plan_group_uuid,
                plan_cents_per_kwh: RateCentsPerKwh(b.plan_cents_per_kwh).to_wire(),
            })
            .collect(),
    }))
}

// ---------------------------------------------------------------------------------------------
// Support contacts

/// The support contacts of a location served by `tdu`: the utility's (outages, meters) and
/// the partner's (everything else). `GET .../locations/{location_uuid}/support-info` serves it
/// once locations exist.
pub async fn support_info(state: &AppState, app: &AppRow, tdu: &str) -> ApiResult<SupportInfo> {
    let t = plans::support_utility(state, tdu).await?;
    Ok(SupportInfo {
        tdu_name: t.display_name,
        tdu_phone: t.phone,
        tdu_outage_phone: t.outage_phone,
        tdu_website: t.website,
        partner_support: super::apps::render(app, None).support,
    })
}

// ---------------------------------------------------------------------------------------------
// Documents

/// A document's bytes as a PDF the browser shows.
pub(super) fn pdf_response(bytes: Vec<u8>, name: &str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/pdf".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{name}.pdf\""),
            ),
        ],
        bytes,
    )
        .into_response()
}

/// `?format=`: `pdf` (the default) or `html`, the same text for reading inside a flow.
#[derive(Debug, Default, Deserialize)]
pub struct FormatQuery {
    format: Option<String>,
}

impl FormatQuery {
    fn rendition(&self) -> Result<Rendition, ApiError> {
        match self.format.as_deref() {
            None | Some("pdf") => Ok(Rendition::Pdf),
            Some("html") => Ok(Rendition::Html),
            Some(_) => Err(FieldError::invalid("format", "format must be pdf or html").into()),
        }
    }
}

/// A document as asked for: the PDF the browser shows, or its HTML rendition.
fn document_response(rendered: Rendered, name: &str) -> Response {
    match rendered {
        Rendered::Pdf(bytes) => pdf_response(bytes, name),
        Rendered::Html(page) => {
            ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
        }
    }
}

/// The Electricity Facts Label of a priced plan.
pub async fn efl_page(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(plan_uuid): Path<Uuid>,
    Query(format): Query<FormatQuery>,
) -> ApiResult<Response> {
    let rendition = format.rendition()?;
    let doc = services::documents::plan_efl(&state, plan_uuid, rendition).await?;
    Ok(document_response(doc, &format!("efl-{plan_uuid}")))
}

/// A version of the Terms of Service that some plan group uses.
pub async fn tos_page(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(version): Path<String>,
    Query(format): Query<FormatQuery>,
) -> ApiResult<Response> {
    let rendition = format.rendition()?;
    let doc = services::documents::tos(&state, &version, rendition).await?;
    Ok(document_response(doc, &format!("tos-{version}")))
}

/// Your Rights as a Customer.
pub async fn yrac_page(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(version): Path<String>,
    Query(format): Query<FormatQuery>,
) -> ApiResult<Response> {
    let rendition = format.rendition()?;
    let doc = services::documents::yrac(&state, &version, rendition)?;
    Ok(document_response(doc, &format!("yrac-{version}")))
}

/// A contract's document as the customer accepted it (stored when accepted).
pub async fn contract_document(
    State(state): State<AppState>,
    _link: SignedLink,
    Path((contract_uuid, kind)): Path<(Uuid, String)>,
    Query(format): Query<FormatQuery>,
) -> ApiResult<Response> {
    let kind = DocumentKind::parse(&kind).ok_or_else(|| ApiError::not_found("document"))?;
    let rendition = format.rendition()?;
    let doc =
        services::documents::contract_document(&state, contract_uuid, kind, rendition).await?;
    Ok(document_response(
        doc,
        &format!("{}-{contract_uuid}", kind.as_str()),
    ))
}

/// An expiration notice as it was sent.
pub async fn notice_document(
    State(state): State<AppState>,
    _link: SignedLink,
    Path(notice_uuid): Path<Uuid>,
) -> ApiResult<Response> {
    let bytes = services::documents::notice_document(&state, notice_uuid).await?;
    Ok(pdf_response(
        bytes,
        &format!("expiration-notice-{notice_uuid}"),
    ))
}
