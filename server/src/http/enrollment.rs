//! The enrollment steps that attach a home to an account: confirming the service address,
//! accepting a plan (which creates the Location and its Contract), finalizing (which starts
//! the background pipeline: verification, credit check, utility), and the billing address.

use app::api::{
    enrollment::{
        AcceptPlanIn, AcceptPlanOut, BillingAddressIn, BillingAddressOut, CancelServiceIn,
        ConfirmAddressIn, Contract, Document, DocumentList, FinalizeIn, LocationDocuments,
        LocationPlan,
    },
    Account, ErrorEnvelope, Location, Timestamp,
};
use axum::extract::State;
use chrono::NaiveDate;
use uuid::Uuid;

use super::{
    accounts,
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path},
    links::signed_url,
    routes, ApiRouter, AppState,
};
use crate::{
    clock::AccountClock,
    domain::{
        account::parse_postal_address,
        documents::{
            contract_in_force, ContractTerms, DocumentKind, DocumentStatus, LocationDocument,
        },
        enrollment::{
            check_cancellation, missing_steps, renewal_window_open, start_of_market_day,
            EnrollmentFacts, EnrollmentType,
        },
        market::EsiId,
        FieldError,
    },
    outbox::{self, JobKind, NewJob},
    services,
    store::{
        self,
        enrollment::{
            BillingAddressRow, ConfirmedAddressRow, ContractRow, EnrollmentRow, LocationRow,
        },
        events::NewEvent,
    },
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(confirm_address))
        .routes(routes!(accept_plan))
        .routes(routes!(finalize))
        .routes(routes!(get_billing_address, put_billing_address))
        .routes(routes!(get_location))
        .routes(routes!(location_support_info))
        .routes(routes!(cancel_service))
        .routes(routes!(location_plan))
        .routes(routes!(location_documents))
        .routes(routes!(location_all_documents))
        .routes(routes!(request_renewal_plans))
        .routes(routes!(accept_renewal_plan))
}

/// The account's location, or 404 `resource_missing` (another account's location included).
async fn location_row(
    state: &AppState,
    account_uuid: Uuid,
    location_uuid: Uuid,
) -> ApiResult<LocationRow> {
    store::enrollment::location_of_account(&state.db, account_uuid, location_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("location"))
}

/// One location of this account, with the plan of its contract in force.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The location", body = Location),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_location(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<Location>> {
    let row = location_row(&state, principal.account_uuid, location_uuid).await?;
    let contracts =
        store::enrollment::contracts_of_account(&state.db, principal.account_uuid).await?;
    let reads = store::billing::read_dates_of_account(&state.db, principal.account_uuid).await?;
    Ok(axum::Json(render_location(&row, &contracts, &reads)))
}

/// Whom to call about this location: the utility (TDU) for outages and meters, the partner for
/// everything else.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/support-info", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The utility's and the partner's contacts", body = app::api::market::SupportInfo),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn location_support_info(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<app::api::market::SupportInfo>> {
    let row = location_row(&state, principal.account_uuid, location_uuid).await?;
    Ok(axum::Json(
        super::market::support_info(&state, &principal.app, &row.tdu).await?,
    ))
}

/// The location's contracts (404 `resource_missing` for another account's location).
async fn contracts_of_location(
    state: &AppState,
    principal: &AccountPrincipal,
    location_uuid: Uuid,
) -> ApiResult<Vec<ContractRow>> {
    location_row(state, principal.account_uuid, location_uuid).await?;
    let mut contracts =
        store::enrollment::contracts_of_account(&state.db, principal.account_uuid).await?;
    contracts.retain(|c| c.location_uuid == location_uuid);
    Ok(contracts)
}

/// The plan of the location's contract in force, with that contract.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/plan", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The plan in force", body = LocationPlan),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn location_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<LocationPlan>> {
    let contracts = contracts_of_location(&state, &principal, location_uuid).await?;
    let contract = contract_in_force(&contracts, |c| c.status.as_str(), |c| c.start_date)
        .ok_or_else(|| ApiError::not_found("plan"))?;
    let contract = render_contract(contract)?;
    Ok(axum::Json(LocationPlan {
        uuid: contract.plan_uuid,
        name: contract.plan_name.clone(),
        plan_type: contract.plan_type.clone(),
        // Every plan offered bills energy at one rate in every hour.
        rate_structure: "flat".to_owned(),
        rates: contract.rates.clone(),
        contract,
    }))
}

/// Each of the location's documents, as the domain lists them, with a signed link.
async fn documents_of_location(
    state: &AppState,
    principal: &AccountPrincipal,
    location_uuid: Uuid,
) -> ApiResult<Vec<(LocationDocument, String)>> {
    let contracts = contracts_of_location(state, principal, location_uuid).await?;
    let mut terms = Vec::with_capacity(contracts.len());
    for c in &contracts {
        let yrac_version = store::market::plan_by_uuid(&state.db, c.plan_uuid)
            .await?
            .map(|p| p.yrac_version)
            .unwrap_or_else(|| crate::domain::market::YRAC_VERSION.to_owned());
        terms.push(ContractTerms {
            uuid: c.uuid,
            plan_uuid: c.plan_uuid,
            tos_version: c.tos_version.clone(),
            yrac_version,
            start_date: c.start_date,
            status: c.status.clone(),
        });
    }
    Ok(crate::domain::documents::location_documents(&terms)
        .into_iter()
        .map(|d| {
            let path = match d.kind {
                DocumentKind::Efl => super::market::efl_path(d.plan_uuid),
                DocumentKind::Tos => super::market::tos_path(&d.version),
                DocumentKind::Yrac => super::market::yrac_path(&d.version),
            };
            let url = signed_url(state, &path);
            (d, url)
        })
        .collect())
}

/// Links to the documents in force at the location (signed; each opens in a browser for
/// about an hour).
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/documents", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The documents in force", body = LocationDocuments),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn location_documents(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<LocationDocuments>> {
    let contracts = contracts_of_location(&state, &principal, location_uuid).await?;
    let contract = contract_in_force(&contracts, |c| c.status.as_str(), |c| c.start_date)
        .ok_or_else(|| ApiError::not_found("documents"))?;
    let documents = documents_of_location(&state, &principal, location_uuid).await?;
    let active = |kind: DocumentKind| {
        documents
            .iter()
            .find(|(d, _)| d.kind == kind && d.status == DocumentStatus::Active)
            .map(|(_, url)| url.clone())
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("contract without {kind:?}")))
    };
    Ok(axum::Json(LocationDocuments {
        efl: active(DocumentKind::Efl)?,
        tos: active(DocumentKind::Tos)?,
        yrac: active(DocumentKind::Yrac)?,
        loa: None,
        contract_start: contract.start_date,
        contract_end: contract.end_date,
    }))
}

/// Every document of the location: in force, queued (a contract that starts later) and
/// superseded.
#[utoipa::path(
    get, path = "/v1/account/locations/{location_uuid}/all-documents", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "Every document of the location", body = DocumentList),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn location_all_documents(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<DocumentList>> {
    let documents = documents_of_location(&state, &principal, location_uuid).await?;
    Ok(axum::Json(DocumentList {
        data: documents
            .into_iter()
            .map(|(d, url)| Document {
                uuid: d.uuid,
                kind: d.kind.as_str().to_owned(),
                version: d.version,
                url,
                effective_date: d.effective_date,
                status: d.status.as_str().to_owned(),
            })
            .collect(),
    }))
}

/// The renewal window of the location's contract in force: 409 `renewal_not_eligible` outside
/// it. Inside it, renewal plans are not priced yet: 503 until they are.
async fn renewal_gate(
    state: &AppState,
    principal: &AccountPrincipal,
    location_uuid: Uuid,
) -> ApiResult<ApiError> {
    let contracts = contracts_of_location(state, principal, location_uuid).await?;
    let today = account_clock(state, principal.account_uuid).await?.today();
    let open = contract_in_force(&contracts, |c| c.status.as_str(), |c| c.start_date)
        .filter(|c| c.status == "active")
        .is_some_and(|c| renewal_window_open(c.end_date, today));
    if !open {
        return Err(ApiError::new(
            ErrorCode::RenewalNotEligible,
            "Renewal opens 90 days before an active fixed-term contract ends",
        ));
    }
    Ok(ApiError::new(
        ErrorCode::ServiceUnavailable,
        "Renewal plans cannot be requested through the API yet; the customer receives the renewal e-mails",
    ))
}

/// Renewal plans for the location (from 90 days before its fixed contract ends).
#[utoipa::path(
    post, path = "/v1/account/locations/{location_uuid}/renewal-plans/request", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
        (status = 409, description = "`renewal_not_eligible` outside the renewal window", body = ErrorEnvelope),
        (status = 503, description = "Renewal plans are not offered through the API yet", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn request_renewal_plans(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiError {
    match renewal_gate(&state, &principal, location_uuid).await {
        Ok(e) | Err(e) => e,
    }
}

/// Accept a renewal plan for the location.
#[utoipa::path(
    post, path = "/v1/account/locations/{location_uuid}/renewal-plans/accept", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
        (status = 409, description = "`renewal_not_eligible` outside the renewal window", body = ErrorEnvelope),
        (status = 503, description = "Renewal plans are not offered through the API yet", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn accept_renewal_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiError {
    match renewal_gate(&state, &principal, location_uuid).await {
        Ok(e) | Err(e) => e,
    }
}

/// Cancel service at this location. Before service started it cancels at once (contract
/// cancelled, location cancelled, account `cancelled/cancelled_pre_start`, event
/// `location.service_canceled`), and the final service date is today. After service started it
/// schedules the end on the account's clock: on `final_service_date` the contract ends, the
/// location is deactivated and the account moves to `cancelled/cancelled_post_start` with
/// `location.service_canceled`. Answers the Location (with its `final_service_date`).
#[utoipa::path(
    post, path = "/v1/account/locations/{location_uuid}/cancel-service", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    request_body = CancelServiceIn,
    responses(
        (status = 200, description = "The location, cancelled or with its cancellation scheduled", body = Location),
        (status = 400, description = "final_service_date not a date, in the past or more than 90 days out; reason not moving, switching or other (`parameter_invalid`)", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
        (status = 409, description = "Not finalized yet (`enrollment_incomplete`), or already cancelled or its cancellation already scheduled (`service_not_active`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn cancel_service(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Json(input): Json<CancelServiceIn>,
) -> ApiResult<axum::Json<Location>> {
    let (app_uuid, account_uuid) = (principal.app.uuid, principal.account_uuid);
    let clock = account_clock(&state, account_uuid).await?;
    let (final_date, reason) =
        check_cancellation(&input.final_service_date, &input.reason, clock.today())?;
    let now = clock.now();
    let mut tx = state.db.begin().await?;
    store::accounts::account_of_app_for_update(&mut tx, app_uuid, account_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    let mut location = store::enrollment::locations_of_account_tx(&mut tx, account_uuid)
        .await?
        .into_iter()
        .find(|l| l.uuid == location_uuid)
        .ok_or_else(|| ApiError::not_found("location"))?;
    let Some(mut e) = store::enrollment::enrollment_tx(&mut tx, account_uuid).await? else {
        return Err(ApiError::new(
            ErrorCode::EnrollmentIncomplete,
            "This enrollment is not finalized; there is no service to cancel",
        )
        .with_detail("missing", serde_json::json!(["finalize"])));
    };
    if e.cancellation.is_some()
        || location.status == "cancelled"
        || location.final_service_date.is_some()
    {
        return Err(ApiError::new(
            ErrorCode::ServiceNotActive,
            "Service at this location is already cancelled or its cancellation is scheduled",
        ));
    }
    if location.is_service_active {
        location.final_service_date = Some(final_date);
        location.updated_at = now;
        store::enrollment::update_location(&mut tx, &location).await?;
        outbox::enqueue(
            &mut tx,
            &clock,
            &NewJob {
                kind: JobKind::ServiceEnd,
                payload: &serde_json::json!({
                    "app_uuid": app_uuid,
                    "location_uuid": location.uuid,
                    "reason": reason.as_str(),
                }),
                account_uuid: Some(account_uuid),
                run_at: start_of_market_day(final_date).max(now),
                max_attempts: 20,
            },
        )
        .await?;
    } else {
        services::enrollment::cancel_location(
            &mut tx,
            app_uuid,
            &mut e,
            &mut location,
            clock.today(),
            reason.as_str(),
            now,
        )
        .await?;
        store::enrollment::update_enrollment(&mut tx, &e).await?;
        store::status::update_status(&mut tx, app_uuid, account_uuid, now).await?;
    }
    tx.commit().await?;
    state.http.caches.accounts.invalidate(&account_uuid);
    let contracts = store::enrollment::contracts_of_account(&state.db, account_uuid).await?;
    let reads = store::billing::read_dates_of_account(&state.db, account_uuid).await?;
    Ok(axum::Json(render_location(&location, &contracts, &reads)))
}

/// The locations of an account as partners see them.
pub async fn locations_of(db: &store::Db, account_uuid: Uuid) -> ApiResult<Vec<Location>> {
    let locations = store::enrollment::locations_of_account(db, account_uuid).await?;
    if locations.is_empty() {
        return Ok(Vec::new());
    }
    let contracts = store::enrollment::contracts_of_account(db, account_uuid).await?;
    let reads = store::billing::read_dates_of_account(db, account_uuid).await?;
    Ok(locations
        .iter()
        .map(|l| render_location(l, &contracts, &reads))
        .collect())
}

/// `reads`: the account's meter read dates by location, newest first.
fn render_location(
    l: &LocationRow,
    contracts: &[ContractRow],
    reads: &[(Uuid, NaiveDate)],
) -> Location {
    let own: Vec<&ContractRow> = contracts
        .iter()
        .filter(|c| c.location_uuid == l.uuid)
        .collect();
    let contract = contract_in_force(&own, |c| c.status.as_str(), |c| c.start_date).copied();
    Location {
        uuid: l.uuid,
        esi_id: l.esi_id.clone(),
        address_1: l.address_1.clone(),
        address_2: l.address_2.clone(),
        city: l.city.clone(),
        state: l.state.clone(),
        postal_code: l.postal_code.clone(),
        utility: Some(l.tdu.clone()),
        service_start_date: l.service_start_date,
        final_service_date: l.final_service_date,
        is_service_active: l.is_service_active,
        has_usage_history: l.has_usage_history,
        // The cycle after the last read (or after the service start) while service lasts.
        estimated_next_reading_date: l
            .is_service_active
            .then(|| {
                reads
                    .iter()
                    .find(|(loc, _)| *loc == l.uuid)
                    .map(|(_, d)| *d)
                    .or(l.service_start_date)
            })
            .flatten()
            .map(|after| crate::domain::usage::next_read_date(&l.esi_id, after)),
        plan_name: contract.map(|c| c.plan_name.clone()),
        plan_uuid: contract.map(|c| c.plan_uuid),
        contract_start: contract.map(|c| c.start_date),
        contract_end: contract.and_then(|c| c.end_date),
        status: l.status.clone(),
    }
}

fn render_contract(c: &ContractRow) -> ApiResult<Contract> {
    Ok(Contract {
        uuid: c.uuid,
        plan_uuid: c.plan_uuid,
        plan_name: c.plan_name.clone(),
        plan_type: c.plan_type.clone(),
        start_date: c.start_date,
        end_date: c.end_date,
        term_months: u32::try_from(c.term_months).unwrap_or_default(),
        rates: serde_json::from_str(&c.rates).map_err(ApiError::internal)?,
        status: c.status.clone(),
        accepted_at: Timestamp(c.accepted_at),
        accepted_by: c.accepted_by.clone(),
    })
}

async fn account_clock(state: &AppState, account_uuid: Uuid) -> ApiResult<AccountClock> {
    Ok(state.clock.for_account(&state.db, account_uuid).await?)
}

async fn render_account(state: &AppState, principal: &AccountPrincipal) -> ApiResult<Account> {
    state
        .http
        .caches
        .accounts
        .invalidate(&principal.account_uuid);
    let row =
        store::accounts::account_of_app(&state.db, principal.app.uuid, principal.account_uuid)
            .await?
            .ok_or_else(|| ApiError::not_found("account"))?;
    accounts::render(&state.db, &row, &principal.app, true).await
}

fn parse_esi_id(raw: &str) -> ApiResult<EsiId> {
    EsiId::parse(raw).ok_or_else(|| {
        ApiError::new(
            ErrorCode::EsiIdInvalid,
            "esi_id must be the 17 or 22 digits of an ESI ID",
        )
        .with_param("esi_id")
    })
}

async fn service_address(
    state: &AppState,
    esi: &EsiId,
) -> ApiResult<store::market::ServiceAddressRow> {
    store::market::service_address(&state.db, esi.as_str())
        .await?
        .ok_or_else(|| {
            ApiError::new(ErrorCode::EsiIdNotFound, "No meter has this ESI ID").with_param("esi_id")
        })
}

/// Confirm the service address and ESI ID the customer recognised.
#[utoipa::path(
    post, path = "/v1/account/enroll/confirm-address", tag = "enrollment",
    request_body = ConfirmAddressIn,
    responses(
        (status = 200, description = "The account", body = Account),
        (status = 404, description = "No meter has this ESI ID (`esi_id_not_found`)", body = ErrorEnvelope),
        (status = 422, description = "Not an ESI ID (`esi_id_invalid`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn confirm_address(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<ConfirmAddressIn>,
) -> ApiResult<axum::Json<Account>> {
    let esi = parse_esi_id(&input.esi_id)?;
    let address = service_address(&state, &esi).await?;
    let now = account_clock(&state, principal.account_uuid).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_confirmed_address(
        &mut tx,
        principal.account_uuid,
        &ConfirmedAddressRow {
            esi_id: address.esi_id,
            address_1: address.address_1,
            address_2: address.address_2,
            city: address.city,
            state: address.state,
            postal_code: address.postal_code,
            tdu: address.tdu,
        },
        now,
    )
    .await?;
    // Confirming the address may be the last prerequisite of a client agent enrollment.
    crate::services::status::refresh_status(
        &mut tx,
        &state.clock,
        &state.db,
        principal.app.uuid,
        principal.account_uuid,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(axum::Json(render_account(&state, &principal).await?))
}

/// Accept a plan for a meter: creates the Location and its Contract.
#[utoipa::path(
    post, path = "/v1/account/enroll/plans/accept", tag = "enrollment",
    request_body = AcceptPlanIn,
    responses(
        (status = 200, description = "The account, its new location and contract", body = AcceptPlanOut),
        (status = 404, description = "No such plan for this account, or no such meter", body = ErrorEnvelope),
        (status = 409, description = "`plan_expired`, `plan_already_accepted` or `already_finalized`", body = ErrorEnvelope),
        (status = 422, description = "`terms_not_accepted`, `start_date_out_of_range` (with the allowed range) or `esi_id_invalid`", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn accept_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<AcceptPlanIn>,
) -> ApiResult<axum::Json<AcceptPlanOut>> {
    match input.terms_accepted {
        None => return Err(FieldError::missing("terms_accepted").into()),
        Some(false) => {
            return Err(ApiError::new(
                ErrorCode::TermsNotAccepted,
                "terms_accepted must be true to accept a plan",
            )
            .with_param("terms_accepted"))
        }
        Some(true) => {}
    }
    let raw_start = input
        .service_start_date
        .as_deref()
        .or(input.start_date.as_deref())
        .ok_or_else(|| ApiError::from(FieldError::missing("service_start_date")))?;
    let start = crate::domain::enrollment::parse_start_date(raw_start)?;
    let requested_type = input
        .enrollment_type
        .as_deref()
        .map(|t| {
            EnrollmentType::parse(t).ok_or_else(|| {
                ApiError::from(FieldError::invalid(
                    "enrollment_type",
                    "enrollment_type must be switch or move_in",
                ))
            })
        })
        .transpose()?;
    let esi_id = input.esi_id.as_deref().map(parse_esi_id).transpose()?;
    let accepted = services::enrollment::accept_plan(
        &state,
        &services::enrollment::AcceptPlan {
            app: &principal.app,
            account_uuid: principal.account_uuid,
            plan_uuid: input.plan_uuid,
            start,
            requested_type,
            esi_id,
        },
    )
    .await?;
    Ok(axum::Json(AcceptPlanOut {
        account: render_account(&state, &principal).await?,
        location: render_location(
            &accepted.location,
            std::slice::from_ref(&accepted.contract),
            &[],
        ),
        contract: render_contract(&accepted.contract)?,
    }))
}

/// Submit the enrollment: verification, credit check and the utility follow in the background.
#[utoipa::path(
    post, path = "/v1/account/enroll/finalize", tag = "enrollment",
    request_body = FinalizeIn,
    responses(
        (status = 200, description = "The account, now reviewing", body = Account),
        (status = 409, description = "`enrollment_incomplete` (with `missing`), `already_finalized` or `client_agent_not_recorded`", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn finalize(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<FinalizeIn>,
) -> ApiResult<axum::Json<Account>> {
    let account_uuid = principal.account_uuid;
    let clock = account_clock(&state, account_uuid).await?;
    let now = clock.now();
    let is_client_agent = input.is_client_agent_enrollment.unwrap_or(false);
    let mut tx = state.db.begin().await?;
    let account =
        store::accounts::account_of_app_for_update(&mut tx, principal.app.uuid, account_uuid)
            .await?
            .ok_or_else(|| ApiError::not_found("account"))?;
    if account.is_enrollment_finalized {
        return Err(ApiError::new(
            ErrorCode::AlreadyFinalized,
            "The enrollment is already finalized",
        ));
    }
    if is_client_agent {
        let contracts = store::enrollment::contracts_of_account_tx(&mut tx, account_uuid).await?;
        let recorded_first = account.client_agent_accepted_at.is_some_and(|at| {
            contracts
                .iter()
                .filter(|c| c.status == "pending")
                .all(|c| at <= c.accepted_at)
        });
        if !recorded_first {
            return Err(ApiError::new(
                ErrorCode::ClientAgentNotRecorded,
                "Call record-client-agent before accepting the plan of a client agent enrollment",
            ));
        }
    }
    let profile = account.profile().map_err(ApiError::internal)?;
    let missing = missing_steps(&EnrollmentFacts {
        has_confirmed_address: account.has_confirmed_address,
        has_accepted_plan: account.has_accepted_plan,
        is_identity_complete: profile.is_identity_complete(),
        has_credit_check: account.has_credit_check,
        has_payment_method: account.has_payment_method,
        ..Default::default()
    });
    if !missing.is_empty() {
        return Err(ApiError::new(
            ErrorCode::EnrollmentIncomplete,
            format!("Finish these steps first: {}", missing.join(", ")),
        )
        .with_detail("missing", missing));
    }
    store::enrollment::insert_enrollment(
        &mut tx,
        &EnrollmentRow {
            account_uuid,
            finalized_at: now,
            is_client_agent,
            verification: "pending".to_owned(),
            utility: "not_submitted".to_owned(),
            cancellation: None,
            updated_at: now,
        },
    )
    .await?;
    outbox::enqueue_account_job(
        &mut tx,
        &clock,
        JobKind::EnrollmentVerify,
        principal.app.uuid,
        account_uuid,
        now + chrono::Duration::minutes(1),
    )
    .await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: principal.app.uuid,
            account_uuid: Some(account_uuid),
            kind: "enrollment.finalized",
            data: serde_json::json!({
                "account_uuid": account_uuid,
                "is_client_agent_enrollment": is_client_agent,
            }),
            created_at: now,
        },
    )
    .await?;
    store::status::update_status(&mut tx, principal.app.uuid, account_uuid, now).await?;
    tx.commit().await?;
    Ok(axum::Json(render_account(&state, &principal).await?))
}

fn render_billing(
    row: &BillingAddressRow,
    service: Option<&ConfirmedAddressRow>,
) -> BillingAddressOut {
    match (row.same_as_service_address, service) {
        (true, Some(s)) => BillingAddressOut {
            same_as_service_address: true,
            address_1: Some(s.address_1.clone()),
            address_2: s.address_2.clone(),
            city: Some(s.city.clone()),
            state: Some(s.state.clone()),
            postal_code: Some(s.postal_code.clone()),
        },
        _ => BillingAddressOut {
            same_as_service_address: row.same_as_service_address,
            address_1: row.address_1.clone(),
            address_2: row.address_2.clone(),
            city: row.city.clone(),
            state: row.state.clone(),
            postal_code: row.postal_code.clone(),
        },
    }
}

/// The billing address (the service address unless another was given).
#[utoipa::path(
    get, path = "/v1/account/billing/address", tag = "billing",
    responses(
        (status = 200, description = "The billing address", body = BillingAddressOut),
        (status = 404, description = "No address known yet", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_billing_address(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<BillingAddressOut>> {
    let service = store::enrollment::confirmed_address(&state.db, principal.account_uuid).await?;
    let billing = store::enrollment::billing_address(&state.db, principal.account_uuid)
        .await?
        .unwrap_or(BillingAddressRow {
            same_as_service_address: true,
            address_1: None,
            address_2: None,
            city: None,
            state: None,
            postal_code: None,
        });
    if billing.same_as_service_address && service.is_none() {
        return Err(ApiError::not_found("billing address"));
    }
    Ok(axum::Json(render_billing(&billing, service.as_ref())))
}

/// Set the billing address: the service address, or another one.
#[utoipa::path(
    put, path = "/v1/account/billing/address", tag = "billing",
    request_body = BillingAddressIn,
    responses(
        (status = 200, description = "The billing address", body = BillingAddressOut),
        (status = 400, description = "The address is missing or invalid", body = ErrorEnvelope),
        (status = 409, description = "Same as a service address not confirmed yet (`enrollment_incomplete`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn put_billing_address(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<BillingAddressIn>,
) -> ApiResult<axum::Json<BillingAddressOut>> {
    let service = store::enrollment::confirmed_address(&state.db, principal.account_uuid).await?;
    let row = if input.same_as_service_address {
        if service.is_none() {
            return Err(ApiError::new(
                ErrorCode::EnrollmentIncomplete,
                "Confirm the service address first",
            )
            .with_detail("missing", vec!["address"]));
        }
        BillingAddressRow {
            same_as_service_address: true,
            address_1: None,
            address_2: None,
            city: None,
            state: None,
            postal_code: None,
        }
    } else {
        let raw = input
            .address
            .ok_or_else(|| ApiError::from(FieldError::missing("address")))?;
        let a = parse_postal_address("address", raw)?;
        BillingAddressRow {
            same_as_service_address: false,
            address_1: Some(a.address_1),
            address_2: a.address_2,
            city: Some(a.city),
            state: Some(a.state),
            postal_code: Some(a.postal_code),
        }
    };
    let now = account_clock(&state, principal.account_uuid).await?.now();
    let mut tx = state.db.begin().await?;
    store::enrollment::insert_billing_address(&mut tx, principal.account_uuid, &row, now).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: principal.app.uuid,
            account_uuid: Some(principal.account_uuid),
            kind: "account.billing_address_updated",
            data: serde_json::json!({
                "account_uuid": principal.account_uuid,
                "same_as_service_address": row.same_as_service_address,
            }),
            created_at: now,
        },
    )
    .await?;
    tx.commit().await?;
    state
        .http
        .caches
        .accounts
        .invalidate(&principal.account_uuid);
    Ok(axum::Json(render_billing(&row, service.as_ref())))
}

/// Sandbox demo data: finalizes the utility side at once. Without a location, confirms the
/// account's confirmed address (else the first directory address) and accepts the first plan
/// priced for it; fills a missing phone, date of birth, passed credit check and test card;
/// marks verification passed, the utility accepted and service active since 95 days ago (the
/// contract starts then), with `location.service_active` and
/// `location.usage_history_available`; then bills the cycles since (usage, reads, invoices,
/// auto-pay of those already due).
pub async fn seed_demo(state: &AppState, principal: &AccountPrincipal) -> ApiResult<()> {
    let (app_uuid, account_uuid) = (principal.app.uuid, principal.account_uuid);
    let clock = account_clock(state, account_uuid).await?;
    let account = store::accounts::account_of_app(&state.db, app_uuid, account_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("account"))?;
    let incomplete = |what: &str, message: &str| {
        ApiError::new(ErrorCode::EnrollmentIncomplete, message.to_owned())
            .with_detail("missing", serde_json::json!([what]))
    };
    let has_location = !store::enrollment::locations_of_account(&state.db, account_uuid)
        .await?
        .is_empty();
    // Without a location: the address and the plan to accept, priced before the transaction.
    let mut new_location = None;
    if !has_location {
        let address = match store::enrollment::confirmed_address(&state.db, account_uuid).await? {
            Some(a) => service_address(state, &parse_esi_id(&a.esi_id)?).await?,
            None => store::market::service_addresses_after(&state.db, "", 1)
                .await?
                .into_iter()
                .next()
                .ok_or_else(|| incomplete("address", "The address directory is empty"))?,
        };
        let plans =
            services::plans::price_account_plans(state, &principal.app, &account, &address.esi_id)
                .await?;
        let plan_uuid = plans
            .first()
            .map(|p| p.plan.uuid)
            .ok_or_else(|| incomplete("plan", "The app has no plan to offer at this address"))?;
        let plan = store::market::plan_by_uuid(&state.db, plan_uuid)
            .await?
            .ok_or_else(|| ApiError::not_found("plan"))?;
        new_location = Some((address, plan));
    }
    let now =
        services::sandbox::seed_demo(state, app_uuid, account_uuid, &clock, new_location).await?;
    state.http.caches.accounts.invalidate(&account_uuid);
    // The cycles since `start`: reads, invoices, auto-pay of those already due.
    crate::jobs::sandbox::advance_account(state, account_uuid, now).await?;
    Ok(())
}
