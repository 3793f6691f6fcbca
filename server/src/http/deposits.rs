//! The account's security deposit, when a credit review asked for one: where it stands
//! (amount, status, paid, interest, refunded), and paying it with the saved card
//! (`services::deposits`).

use app::api::{ErrorEnvelope, Timestamp};
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    routes, ApiRouter, AppState,
};
use crate::{
    services::{
        self,
        deposits::{self, DepositRefused},
    },
    store::credit_reviews::DepositRow,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(get_deposit))
        .routes(routes!(pay_deposit))
}

/// A security deposit asked of the account.
#[derive(Debug, Serialize, ToSchema)]
pub struct Deposit {
    pub uuid: Uuid,
    pub amount_cents: i64,
    /// `required` (not paid yet), `paid`, `refunded`, `applied` (to the final bill) or
    /// `waived`.
    pub status: String,
    pub paid_cents: i64,
    /// Interest earned so far, at the operator's yearly rate.
    pub interest_cents: i64,
    pub refunded_cents: i64,
    #[schema(value_type = String, format = DateTime)]
    pub created_at: Timestamp,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub paid_at: Option<Timestamp>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub refunded_at: Option<Timestamp>,
}

fn render(d: &DepositRow) -> Deposit {
    Deposit {
        uuid: d.uuid,
        amount_cents: d.amount_cents,
        status: d.status.clone(),
        paid_cents: d.paid_cents,
        interest_cents: d.interest_cents,
        refunded_cents: d.refunded_cents,
        created_at: Timestamp(d.created_at),
        paid_at: d.paid_at.map(Timestamp),
        refunded_at: d.refunded_at.map(Timestamp),
    }
}

fn refused(e: services::Error<DepositRefused>) -> ApiError {
    match e {
        services::Error::Failed(e) => ApiError::internal(e),
        services::Error::Refused(why) => match why {
            DepositRefused::NoDeposit => ApiError::not_found("deposit"),
            DepositRefused::AccountMissing => ApiError::not_found("account"),
            DepositRefused::NoCard => ApiError::new(
                ErrorCode::PaymentMethodMissing,
                "There is no card on file; add one (billing/payment-session) first",
            ),
            DepositRefused::Declined(code) => {
                ApiError::new(ErrorCode::CardDeclined, "The card was declined")
                    .with_detail("decline_code", code)
            }
            DepositRefused::Processor(e) => e.into(),
        },
    }
}

#[utoipa::path(
    get, path = "/v1/account/deposit", tag = "billing",
    responses(
        (status = 200, description = "The account's latest deposit", body = Deposit),
        (status = 404, description = "No deposit was asked of this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_deposit(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<Deposit>> {
    deposits::deposit_of(&state, principal.account_uuid)
        .await?
        .map(|d| axum::Json(render(&d)))
        .ok_or_else(|| ApiError::not_found("deposit"))
}

#[utoipa::path(
    post, path = "/v1/account/deposit/pay", tag = "billing",
    responses(
        (status = 200, description = "The deposit, paid (a paid one is answered as it is)", body = Deposit),
        (status = 402, description = "The card was declined (`card_declined`, with `decline_code`)", body = ErrorEnvelope),
        (status = 404, description = "No deposit was asked of this account", body = ErrorEnvelope),
        (status = 409, description = "No card on file (`payment_method_missing`)", body = ErrorEnvelope),
        (status = 503, description = "The processor cannot be reached now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn pay_deposit(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<Deposit>> {
    let paid = deposits::pay_deposit(&state, &principal.app, principal.account_uuid)
        .await
        .map_err(refused)?;
    state.account_changed(principal.account_uuid);
    Ok(axum::Json(render(&paid)))
}
