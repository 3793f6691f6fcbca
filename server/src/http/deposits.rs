//! The account's security deposit, when a credit review asked for one: where it stands
//! (amount, status, paid, interest, refunded), and paying it with the saved card
//! (`services::deposits`).

use app::api::{Deposit, ErrorEnvelope, Timestamp};
use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::parse_json,
    routes, ApiRouter, AppState,
};
use crate::services::{
    self,
    deposits::{self, DepositRefused, DepositView},
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(get_deposit))
        .routes(routes!(pay_deposit))
}

/// The deposit as the API shows it (`GET /v1/account/deposit` and the account's `deposit`).
pub(crate) fn render(v: &DepositView) -> Deposit {
    let d = &v.row;
    Deposit {
        uuid: d.uuid,
        amount_cents: d.amount_cents,
        status: d.status.clone(),
        paid_cents: d.paid_cents,
        interest_cents: v.interest_cents,
        refunded_cents: d.refunded_cents,
        instalments_due_cents: v.instalments_due_cents,
        paid_out_cents: d.paid_out_cents,
        owed_cents: v.owed_cents(),
        waiver: d.waiver.clone(),
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
    deposits::view(&state, principal.account_uuid)
        .await?
        .map(|d| axum::Json(render(&d)))
        .ok_or_else(|| ApiError::not_found("deposit"))
}

/// `POST /v1/account/deposit/pay`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct PayDepositIn {
    /// Pay half now and the rest in two lines on the next two bills (the deposit counts as
    /// paid, and the enrollment goes on, from the first half).
    #[serde(default)]
    pub instalments: bool,
}

#[utoipa::path(
    post, path = "/v1/account/deposit/pay", tag = "billing",
    request_body(content = Option<PayDepositIn>, description = "Optional: `{\"instalments\": true}` pays half now"),
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
    body: axum::body::Bytes,
) -> ApiResult<axum::Json<Deposit>> {
    // No body, or `null`, pays it all now; anything else is read as every body is (an object).
    let input: PayDepositIn = if body.is_empty() || body.trim_ascii() == b"null" {
        PayDepositIn::default()
    } else {
        parse_json(&body)?
    };
    let paid = deposits::pay_deposit(
        &state,
        &principal.app,
        principal.account_uuid,
        input.instalments,
    )
    .await
    .map_err(refused)?;
    state.account_changed(principal.account_uuid);
    Ok(axum::Json(render(&paid)))
}
