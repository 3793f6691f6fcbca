//! The enrollment steps that attach a home to an account: confirming the service address,
//! accepting a plan (which creates the Location and its Contract), finalizing (which starts
//! the background pipeline: verification, credit check, utility), and the billing address;
//! the account's locations, their documents and cancellation; renewal plans. Each handler
//! extracts the request, makes one call into `services::enrollment` (`services::renewal` for
//! renewals) and renders the answer.

use app::api::{
    enrollment::{
        AcceptPlanIn, AcceptPlanOut, AcceptRenewalIn, AcceptRenewalOut, BillingAddressIn,
        BillingAddressOut, CancelServiceIn, ConfirmAddressIn, Document, DocumentList,
        EnrollmentSummary, FinalizeIn, LocationDocuments, LocationPlan,
    },
    market::PlansOut,
    Account, ErrorEnvelope, Location,
};
use axum::extract::State;
use uuid::Uuid;

// The portal reads the locations from here too.
pub use super::accounts::locations_of;
use super::{
    accounts::{self, location_out, render_contract, render_location},
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path},
    links::signed_url,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        account::parse_postal_address,
        documents::{contract_in_force, DocumentKind, DocumentStatus, LocationDocument},
        enrollment::EnrollmentType,
        market::EsiId,
        FieldError,
    },
    services,
    store::{
        self,
        enrollment::{ContractRow, LocationRow},
    },
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(confirm_address))
        .routes(routes!(accept_plan))
        .routes(routes!(finalize))
        .routes(routes!(enrollment_summary))
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

/// The account's location with its contracts, or 404 `resource_missing` (another account's
/// location included).
async fn location_with_contracts(
    state: &AppState,
    account_uuid: Uuid,
    location_uuid: Uuid,
) -> ApiResult<(LocationRow, Vec<ContractRow>)> {
    services::enrollment::location_with_contracts(&state.db, account_uuid, location_uuid)
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
    let (row, _) = location_with_contracts(&state, principal.account_uuid, location_uuid).await?;
    Ok(axum::Json(location_out(&state.db, &row).await?))
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
    let (row, _) = location_with_contracts(&state, principal.account_uuid, location_uuid).await?;
    Ok(axum::Json(
        super::market::support_info(&state, &principal.app, &row.tdu).await?,
    ))
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
    let (_, contracts) =
        location_with_contracts(&state, principal.account_uuid, location_uuid).await?;
    let contract = contract_in_force(&contracts, |c| c.status, |c| c.start_date)
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

/// The location's contracts and each of its documents, as the domain lists them, with a signed
/// link (404 `resource_missing` for another account's location).
async fn documents_of_location(
    state: &AppState,
    principal: &AccountPrincipal,
    location_uuid: Uuid,
) -> ApiResult<(Vec<ContractRow>, Vec<(LocationDocument, String)>)> {
    let (contracts, documents) = services::enrollment::documents_of_location(
        &state.db,
        principal.account_uuid,
        location_uuid,
        crate::domain::market::YRAC_VERSION,
    )
    .await?
    .ok_or_else(|| ApiError::not_found("location"))?;
    let documents = documents
        .into_iter()
        .map(|d| {
            let path = match d.kind {
                DocumentKind::RenewalNotice => super::market::notice_path(d.uuid),
                kind => super::market::contract_document_path(d.contract_uuid, kind),
            };
            let url = signed_url(state, &path);
            (d, url)
        })
        .collect();
    Ok((contracts, documents))
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
    let (contracts, documents) = documents_of_location(&state, &principal, location_uuid).await?;
    let contract = contract_in_force(&contracts, |c| c.status, |c| c.start_date)
        .ok_or_else(|| ApiError::not_found("documents"))?;
    let in_force = |kind: DocumentKind| {
        documents
            .iter()
            .find(|(d, _)| d.kind == kind && d.status == DocumentStatus::Active)
            .map(|(_, url)| url.clone())
    };
    let active = |kind: DocumentKind| {
        in_force(kind)
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("contract without {kind:?}")))
    };
    Ok(axum::Json(LocationDocuments {
        efl: active(DocumentKind::Efl)?,
        tos: active(DocumentKind::Tos)?,
        yrac: active(DocumentKind::Yrac)?,
        loa: in_force(DocumentKind::Loa),
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
    let (_, documents) = documents_of_location(&state, &principal, location_uuid).await?;
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

/// Renewal plans for the location, from 90 days before its fixed contract ends (on the
/// account's clock): priced as for a new customer, each starting only on the day after that
/// end (`earliest_start_date` = `latest_start_date`). Where the location has a whole month of
/// usage in the last twelve, each plan carries `estimated_annual_cost_cents`, what it would
/// have cost over those months (`estimate_basis`), and the plans come cheapest first by it.
/// Event `location.renewal_plan_requested`.
#[utoipa::path(
    post, path = "/v1/account/locations/{location_uuid}/renewal-plans/request", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "Renewal plans (`is_renewal` true)", body = PlansOut),
        (status = 404, description = "No such location on this account", body = ErrorEnvelope),
        (status = 409, description = "`renewal_not_eligible` outside the renewal window", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn request_renewal_plans(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<PlansOut>> {
    let priced = services::renewal::request_renewal_plans(
        &state,
        &principal.app,
        principal.account_uuid,
        location_uuid,
    )
    .await?;
    Ok(super::market::render_plans(&state, &priced))
}

/// Accept a renewal plan (one of the renewal plans, or a plan the app priced for this account
/// with its own terms): queues a `pending` contract from the day after the current one ends,
/// which becomes active that day as the current one ends. Event
/// `location.renewal_plan_accepted`.
#[utoipa::path(
    post, path = "/v1/account/locations/{location_uuid}/renewal-plans/accept", tag = "enrollment",
    params(("location_uuid" = Uuid, Path)),
    request_body = AcceptRenewalIn,
    responses(
        (status = 200, description = "The queued renewal contract", body = AcceptRenewalOut),
        (status = 400, description = "A field missing or malformed", body = ErrorEnvelope),
        (status = 404, description = "No such location on this account, or no such plan for its meter", body = ErrorEnvelope),
        (status = 409, description = "`renewal_not_eligible` outside the renewal window, `plan_already_accepted` (a renewal is already queued) or `plan_expired`", body = ErrorEnvelope),
        (status = 422, description = "`terms_not_accepted`, or `start_date_out_of_range` (with the one allowed day)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn accept_renewal_plan(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Path(location_uuid): Path<Uuid>,
    Json(input): Json<AcceptRenewalIn>,
) -> ApiResult<axum::Json<AcceptRenewalOut>> {
    let terms_accepted = input
        .terms_accepted
        .ok_or_else(|| ApiError::from(FieldError::missing("terms_accepted")))?;
    // Optional: a renewal has one allowed day, which none asks for.
    let start = input
        .service_start_date
        .as_deref()
        .map(crate::domain::enrollment::parse_start_date)
        .transpose()?;
    let contract = services::renewal::accept_renewal(
        &state,
        &services::renewal::AcceptRenewal {
            app: &principal.app,
            account_uuid: principal.account_uuid,
            location_uuid,
            plan_uuid: input.plan_uuid,
            start,
            terms_accepted,
        },
    )
    .await?;
    Ok(axum::Json(AcceptRenewalOut {
        contract: render_contract(&contract)?,
    }))
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
    let location = services::enrollment::cancel_service(
        &state,
        principal.app.uuid,
        principal.account_uuid,
        location_uuid,
        &input.final_service_date,
        &input.reason,
    )
    .await?;
    state.account_changed(principal.account_uuid);
    Ok(axum::Json(location_out(&state.db, &location).await?))
}

async fn render_account(state: &AppState, principal: &AccountPrincipal) -> ApiResult<Account> {
    state.account_changed(principal.account_uuid);
    let row =
        store::accounts::account_of_app(&state.db, principal.app.uuid, principal.account_uuid)
            .await?
            .ok_or_else(|| ApiError::not_found("account"))?;
    accounts::render(state, &row, &principal.app, true).await
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
    services::enrollment::confirm_address(&state, principal.app.uuid, principal.account_uuid, &esi)
        .await?;
    Ok(axum::Json(render_account(&state, &principal).await?))
}

/// Accept a plan for a meter: creates the Location and its Contract.
#[utoipa::path(
    post, path = "/v1/account/enroll/plans/accept", tag = "enrollment",
    request_body = AcceptPlanIn,
    responses(
        (status = 200, description = "The account, its new location and contract", body = AcceptPlanOut),
        (status = 404, description = "No such plan for this account, or no such meter", body = ErrorEnvelope),
        (status = 409, description = "`plan_expired`, `plan_already_accepted` or `already_finalized`. An accepted plan whose price expired before finalize (or whose enrollment was cancelled for it, `expire_pre_active`) is replaced by the new acceptance", body = ErrorEnvelope),
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
        (status = 409, description = "`enrollment_incomplete` (with `missing`), `already_finalized`, `client_agent_not_recorded` (a client agent enrollment whose plan the customer accepted) `plan_expired` (with `expired_at`: the accepted plan's price expired; request plans again and accept one, which replaces it) or `start_date_passed` (with `earliest_start_date` and `latest_start_date`: the accepted start date has passed, or it is today and the utility's same-day cut-off has; accept a plan again with a date in that range, which replaces it)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn finalize(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<FinalizeIn>,
) -> ApiResult<axum::Json<Account>> {
    services::enrollment::finalize(
        &state,
        principal.app.uuid,
        principal.account_uuid,
        input.is_client_agent_enrollment.unwrap_or(false),
    )
    .await?;
    Ok(axum::Json(render_account(&state, &principal).await?))
}

/// What the customer chose so far: the plan (as offered), the card and the billing address.
#[utoipa::path(
    get, path = "/v1/account/enroll/summary", tag = "enrollment",
    responses(
        (status = 200, description = "Each choice, null until made", body = EnrollmentSummary),
        (status = 404, description = "The account is gone", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn enrollment_summary(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<EnrollmentSummary>> {
    let summary =
        services::enrollment::summary(&state, &principal.app, principal.account_uuid).await?;
    Ok(axum::Json(EnrollmentSummary {
        plan: summary
            .plan
            .as_ref()
            .map(|p| super::market::render_plan(&state, p)),
        payment_method: summary.card.as_ref().map(super::billing::render),
        billing_address: summary.billing.as_ref().map(render_billing),
    }))
}

fn render_billing(address: &services::enrollment::BillingAddress) -> BillingAddressOut {
    let row = &address.billing;
    match (row.same_as_service_address, address.service.as_ref()) {
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
    let address = services::enrollment::billing_address(&state.db, principal.account_uuid)
        .await?
        .ok_or_else(|| ApiError::not_found("billing address"))?;
    Ok(axum::Json(render_billing(&address)))
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
    let address = if input.same_as_service_address {
        // An address sent beside it is not used, but a malformed one is still refused.
        if let Some(raw) = input.address {
            parse_postal_address("address", raw)?;
        }
        None
    } else {
        let raw = input
            .address
            .ok_or_else(|| ApiError::from(FieldError::missing("address")))?;
        Some(parse_postal_address("address", raw)?)
    };
    let address = services::enrollment::set_billing_address(
        &state,
        principal.app.uuid,
        principal.account_uuid,
        address,
    )
    .await?;
    state.account_changed(principal.account_uuid);
    Ok(axum::Json(render_billing(&address)))
}
