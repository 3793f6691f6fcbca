//! Accounts: created, listed, read and updated by the partner's backend (`/v1/app/accounts`),
//! AccountTokens for them, and the account's own view (`GET /v1/account`).

use std::sync::Arc;

use app::api::{
    enrollment::Contract, Account, AccountApp, CreateAccountIn, ErrorEnvelope, List, Location,
    RecordClientAgentIn, Timestamp, TokenOut, UpdateAccountIn,
};
use axum::{
    body::Bytes,
    extract::State,
    http::{header::CONTENT_TYPE, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use chrono::NaiveDate;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{
    auth::{AccountPrincipal, AppPrincipal},
    error::{ApiError, ApiResult, ErrorCode},
    extract::{Json, Path, Query},
    pagination::Page,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        documents::contract_in_force,
        enrollment::{enrollment, EnrollmentFacts},
        status::AccountStatus,
    },
    services::accounts,
    store::{
        self,
        accounts::{AccountFilter, AccountRow},
        apps::AppRow,
        enrollment::{ContractRow, LocationRow},
    },
};

pub fn app_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(create_account, list_accounts))
        .routes(routes!(get_account, update_account))
        .routes(routes!(create_account_token))
        .routes(routes!(record_client_agent))
}

pub fn account_router() -> ApiRouter {
    ApiRouter::new().routes(routes!(get_own_account))
}

/// Renders an account with its locations and deposit; `date_of_birth` only where one account
/// is shown.
pub(crate) async fn render(
    core: &crate::state::Core,
    row: &AccountRow,
    app: &AppRow,
    include_date_of_birth: bool,
) -> ApiResult<Account> {
    let locations = locations_of(&core.db, row.uuid).await?;
    let deposit = crate::services::deposits::view(core, row.uuid)
        .await?
        .map(|d| super::deposits::render(&d));
    render_with(row, app, include_date_of_birth, locations, deposit)
}

fn render_with(
    row: &AccountRow,
    app: &AppRow,
    include_date_of_birth: bool,
    locations: Vec<app::api::Location>,
    deposit: Option<app::api::Deposit>,
) -> ApiResult<Account> {
    let profile = row.profile().map_err(ApiError::internal)?;
    let status = row.status.into();
    let status_reason = row.status_reason.into();
    let facts = EnrollmentFacts {
        has_confirmed_address: row.has_confirmed_address,
        has_accepted_plan: row.has_accepted_plan,
        is_identity_complete: profile.is_identity_complete(),
        is_identity_verified: row.is_identity_verified,
        has_credit_check: row.has_credit_check,
        has_payment_method: row.has_payment_method,
        is_billing_address_confirmed: row.is_billing_address_confirmed,
        is_enrollment_finalized: row.is_enrollment_finalized,
        is_service_active: row.is_service_active,
    };
    Ok(Account {
        uuid: row.uuid,
        account_number: row.account_number.clone(),
        email: profile.email,
        first_name: profile.first_name,
        last_name: profile.last_name,
        phone: profile.phone,
        date_of_birth: profile.date_of_birth.filter(|_| include_date_of_birth),
        preliminary_address: profile.preliminary_address,
        renewals_url: profile.renewals_url,
        metadata: profile.metadata,
        created_at: Timestamp(row.created_at),
        status,
        status_reason,
        client_agent_accepted: row.client_agent_accepted_at.is_some(),
        client_agent_accepted_at: row.client_agent_accepted_at.map(Timestamp),
        is_service_active: facts.is_service_active,
        enrollment: enrollment(&facts),
        locations,
        app: AccountApp {
            uuid: app.uuid,
            name: app.name.clone(),
            payment_public_key: app.payment_publishable_key.clone(),
        },
        deposit,
    })
}

/// Create an account for a customer.
#[utoipa::path(
    post, path = "/v1/app/accounts", tag = "accounts",
    request_body = CreateAccountIn,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for the same key")),
    responses(
        (status = 201, description = "The new account", body = Account),
        (status = 400, description = "A field is missing or invalid", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn create_account(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Json(input): Json<CreateAccountIn>,
) -> ApiResult<(StatusCode, axum::Json<Account>)> {
    let row = accounts::create_account(&state, principal.app.uuid, principal.environment(), input)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(render(&state, &row, &principal.app, true).await?),
    ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListAccountsQuery {
    /// 1 to 100, default 20.
    limit: Option<u32>,
    offset: Option<u64>,
    /// Only accounts with this e-mail address (at most 254 characters, as an address is).
    #[param(max_length = 254)]
    email: Option<String>,
    /// Only accounts in this status.
    status: Option<String>,
}

/// List the app's accounts, newest first.
#[utoipa::path(
    get, path = "/v1/app/accounts", tag = "accounts",
    params(ListAccountsQuery),
    responses(
        (status = 200, description = "A page of accounts (without dates of birth)", body = List<Account>),
        (status = 400, description = "A parameter is invalid", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn list_accounts(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Query(q): Query<ListAccountsQuery>,
) -> ApiResult<axum::Json<List<Account>>> {
    let page = Page::parse(q.limit, q.offset)?;
    // No address is longer: a longer filter is a mistake, not a search that finds nothing.
    if q.email.as_deref().is_some_and(|e| e.chars().count() > 254) {
        return Err(ApiError::new(
            ErrorCode::ParameterInvalid,
            "email is at most 254 characters",
        )
        .with_param("email"));
    }
    let email = q.email.as_deref().map(|e| e.trim().to_lowercase());
    let status = match q.status.as_deref() {
        None => None,
        Some(status) => Some(AccountStatus::parse(status).ok_or_else(|| {
            ApiError::new(
                ErrorCode::ParameterInvalid,
                format!("unknown status {status}"),
            )
            .with_param("status")
        })?),
    };
    let rows = store::accounts::list_accounts(
        &state.db,
        &AccountFilter {
            app_uuid: principal.app.uuid,
            email: email.as_deref(),
            status,
            limit: page.limit,
            offset: page.offset,
        },
    )
    .await?;
    let mut accounts = Vec::with_capacity(rows.len());
    for row in &rows {
        accounts.push(render(&state, row, &principal.app, false).await?);
    }
    Ok(axum::Json(page.list(
        accounts,
        "/v1/app/accounts",
        &[("email", email.as_deref()), ("status", q.status.as_deref())],
    )))
}

/// An account as the one-account reads show it, rendered once per cache fill: these reads are
/// the hottest path of the API.
pub struct AccountView {
    pub row: AccountRow,
    pub json: Bytes,
}

impl AccountView {
    fn response(&self) -> Response {
        (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            self.json.clone(),
        )
            .into_response()
    }
}

/// The account, from this instance's cache when it was read within the cache's TTL.
async fn account_view(state: &AppState, app: &AppRow, uuid: Uuid) -> ApiResult<Arc<AccountView>> {
    let view = state
        .http
        .caches
        .accounts
        .get_or_fill(
            &uuid,
            || state.clock.now(),
            || async {
                let row = store::accounts::account_of_app(&state.db, app.uuid, uuid)
                    .await?
                    .ok_or_else(|| ApiError::not_found("account"))?;
                let json = serde_json::to_vec(&render(state, &row, app, true).await?)
                    .map_err(ApiError::internal)?;
                Ok::<_, ApiError>(Arc::new(AccountView {
                    row,
                    json: Bytes::from(json),
                }))
            },
        )
        .await?;
    if view.row.app_uuid == app.uuid {
        return Ok(view);
    }
    Err(ApiError::not_found("account"))
}

async fn account_of(
    state: &AppState,
    principal: &AppPrincipal,
    uuid: Uuid,
) -> ApiResult<Arc<AccountView>> {
    account_view(state, &principal.app, uuid).await
}

/// Get one of the app's accounts.
#[utoipa::path(
    get, path = "/v1/app/accounts/{account_uuid}", tag = "accounts",
    params(("account_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The account", body = Account),
        (status = 404, description = "No such account in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn get_account(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
) -> ApiResult<Response> {
    Ok(account_of(&state, &principal, account_uuid)
        .await?
        .response())
}

/// Update an account: absent fields stay, `null` clears an optional one.
#[utoipa::path(
    patch, path = "/v1/app/accounts/{account_uuid}", tag = "accounts",
    params(("account_uuid" = Uuid, Path)),
    request_body = UpdateAccountIn,
    responses(
        (status = 200, description = "The updated account", body = Account),
        (status = 400, description = "A field is invalid", body = ErrorEnvelope),
        (status = 404, description = "No such account in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn update_account(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
    Json(input): Json<UpdateAccountIn>,
) -> ApiResult<axum::Json<Account>> {
    let row = accounts::update_account(
        &state,
        principal.app.uuid,
        principal.environment(),
        account_uuid,
        input,
    )
    .await?;
    state.account_changed(row.uuid);
    Ok(axum::Json(
        render(&state, &row, &principal.app, true).await?,
    ))
}

/// Record that the partner holds the customer's limited power of attorney (client agent
/// enrollment). Must precede plan acceptance.
#[utoipa::path(
    post, path = "/v1/app/accounts/{account_uuid}/record-client-agent", tag = "accounts",
    params(("account_uuid" = Uuid, Path)),
    request_body = RecordClientAgentIn,
    responses(
        (status = 200, description = "The account", body = Account),
        (status = 400, description = "The time is invalid or in the future", body = ErrorEnvelope),
        (status = 404, description = "No such account in this app", body = ErrorEnvelope),
        (status = 409, description = "`client_agent_not_recorded`: the customer already accepted a plan (record-client-agent must precede plans/accept)", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn record_client_agent(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
    Json(input): Json<RecordClientAgentIn>,
) -> ApiResult<axum::Json<Account>> {
    let row = accounts::record_client_agent(
        &state,
        principal.app.uuid,
        account_uuid,
        input.client_agent_accepted_at.as_deref(),
    )
    .await?;
    state.account_changed(account_uuid);
    Ok(axum::Json(
        render(&state, &row, &principal.app, true).await?,
    ))
}

/// Issue an AccountToken (60 minutes, this account only).
#[utoipa::path(
    post, path = "/v1/app/accounts/{account_uuid}/token", tag = "accounts",
    params(("account_uuid" = Uuid, Path)),
    responses(
        (status = 200, description = "The token, shown once", body = TokenOut),
        (status = 404, description = "No such account in this app", body = ErrorEnvelope),
    ),
    security(("app_token" = []))
)]
pub async fn create_account_token(
    State(state): State<AppState>,
    principal: AppPrincipal,
    Path(account_uuid): Path<Uuid>,
) -> ApiResult<axum::Json<TokenOut>> {
    let row = &account_of(&state, &principal, account_uuid).await?.row;
    let (token, expires_at) = accounts::issue_account_token(&state, row.uuid).await?;
    Ok(axum::Json(TokenOut {
        token,
        expires_at: Timestamp(expires_at),
    }))
}

/// The account of the AccountToken.
#[utoipa::path(
    get, path = "/v1/account", tag = "account",
    responses(
        (status = 200, description = "The account", body = Account),
        (status = 401, description = "Missing, invalid or expired token", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_own_account(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<Response> {
    let view = account_view(&state, &principal.app, principal.account_uuid).await?;
    Ok(view.response())
}

/// One location as partners see it, with its contract in force and next reading.
pub async fn location_out(db: &store::Db, location: &LocationRow) -> ApiResult<Location> {
    let contracts = store::enrollment::contracts_of_account(db, location.account_uuid).await?;
    let reads = store::billing::read_dates_of_account(db, location.account_uuid).await?;
    Ok(render_location(location, &contracts, &reads))
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
pub fn render_location(
    l: &LocationRow,
    contracts: &[ContractRow],
    reads: &[(Uuid, NaiveDate)],
) -> Location {
    let own: Vec<&ContractRow> = contracts
        .iter()
        .filter(|c| c.location_uuid == l.uuid)
        .collect();
    let contract = contract_in_force(&own, |c| c.status, |c| c.start_date).copied();
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
        // Off while the utility has it disconnected for non-payment.
        is_service_active: l.is_energized(),
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
        status: if l.is_service_active && l.is_disconnected {
            "disconnected".to_owned()
        } else {
            l.status.to_string()
        },
    }
}

pub fn render_contract(c: &ContractRow) -> ApiResult<Contract> {
    Ok(Contract {
        uuid: c.uuid,
        plan_uuid: c.plan_uuid,
        plan_name: c.plan_name.clone(),
        plan_type: c.plan_type.clone(),
        start_date: c.start_date,
        end_date: c.end_date,
        term_months: u32::try_from(c.term_months).unwrap_or_default(),
        rates: serde_json::from_str(&c.rates).map_err(ApiError::internal)?,
        status: c.status.to_string(),
        accepted_at: Timestamp(c.accepted_at),
        accepted_by: c.accepted_by.clone(),
    })
}
