//! The account's payment method: a payment session for the processor's browser component,
//! then `ensure-payment-method-added` with the `pm_...` id it returned. Card data never passes
//! through `/v1`. Sandbox apps use the built-in test-mode processor, live apps the real one
//! with their own keys (`market::payments`).

use app::api::{EnsurePaymentMethodIn, ErrorEnvelope, PaymentMethod, PaymentSession, Timestamp};
use axum::{
    extract::State,
    routing::{get, post},
    Router,
};

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::Json,
    AppState,
};
use crate::{
    market::payments::{processor_for, PaymentProcessor, ProcessorError},
    store::{self, events::NewEvent, payments::CardRow},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/billing/payment-session", post(create_payment_session))
        .route(
            "/billing/ensure-payment-method-added",
            post(ensure_payment_method_added),
        )
        .route("/billing/payment-method", get(get_payment_method))
}

/// The processor's errors as answers: a missing payment method is a 404; a processor that is
/// not configured or does not answer is a 503, logged without any key.
fn processor_error(e: ProcessorError) -> ApiError {
    match e {
        ProcessorError::NotFound => {
            ApiError::not_found("payment method").with_param("payment_method_id")
        }
        ProcessorError::NotConfigured(why) => {
            tracing::warn!(reason = why, "card payments not configured");
            ApiError::new(ErrorCode::ServiceUnavailable, why)
        }
        ProcessorError::Unavailable(why) => {
            tracing::warn!(reason = %why, "payment processor unavailable");
            ApiError::new(
                ErrorCode::ServiceUnavailable,
                "The payment processor is not available right now; try again shortly",
            )
        }
        ProcessorError::Database(why) => ApiError::internal(anyhow::anyhow!(why)),
    }
}

pub fn render(card: &CardRow) -> PaymentMethod {
    PaymentMethod {
        kind: "card".to_owned(),
        card_brand: card.brand.clone(),
        card_last4: card.last4.clone(),
        card_exp_month: u32::try_from(card.exp_month).unwrap_or_default(),
        card_exp_year: card.exp_year,
        card_postal_code: card.postal_code.clone(),
    }
}

/// Start adding (or replacing) a card: a single-use client secret for the processor.
#[utoipa::path(
    post, path = "/v1/account/billing/payment-session", tag = "billing",
    responses(
        (status = 200, description = "The session", body = PaymentSession),
        (status = 503, description = "The app cannot take cards now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn create_payment_session(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentSession>> {
    let processor = processor_for(&state, &principal.app)
        .await
        .map_err(processor_error)?;
    let session = processor
        .start_session(principal.account_uuid)
        .await
        .map_err(processor_error)?;
    Ok(axum::Json(PaymentSession {
        client_secret: session.client_secret,
        publishable_key: session.publishable_key,
        expires_at: Timestamp(session.expires_at),
    }))
}

/// Attach the payment method the processor created; the card is not charged.
#[utoipa::path(
    post, path = "/v1/account/billing/ensure-payment-method-added", tag = "billing",
    request_body = EnsurePaymentMethodIn,
    responses(
        (status = 200, description = "The account's payment method", body = PaymentMethod),
        (status = 404, description = "No such payment method for this account", body = ErrorEnvelope),
        (status = 503, description = "The processor cannot be reached now (`service_unavailable`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn ensure_payment_method_added(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<EnsurePaymentMethodIn>,
) -> ApiResult<axum::Json<PaymentMethod>> {
    let account = principal.account_uuid;
    let card = processor_for(&state, &principal.app)
        .await
        .map_err(processor_error)?
        .read_card(account, input.payment_method_id.trim())
        .await
        .map_err(processor_error)?;
    let current = store::payments::current_payment_method(&state.db, account).await?;
    if current.as_ref() == Some(&card) {
        return Ok(axum::Json(render(&card)));
    }
    let now = state.clock.now();
    let mut tx = state.db.begin().await?;
    store::payments::attach_payment_method(&mut tx, account, &card, now).await?;
    store::events::insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: principal.app.uuid,
            account_uuid: Some(account),
            kind: "account.payment_method_added",
            data: serde_json::json!({
                "account_uuid": account,
                "card_brand": card.brand,
                "card_last4": card.last4,
            }),
            created_at: now,
        },
    )
    .await?;
    crate::jobs::credit::refresh_status(
        &mut tx,
        &state.clock,
        &state.db,
        principal.app.uuid,
        account,
        now,
    )
    .await?;
    tx.commit().await?;
    state.caches.accounts.invalidate(&account);
    Ok(axum::Json(render(&card)))
}

/// The account's current payment method.
#[utoipa::path(
    get, path = "/v1/account/billing/payment-method", tag = "billing",
    responses(
        (status = 200, description = "The payment method", body = PaymentMethod),
        (status = 404, description = "None yet", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn get_payment_method(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentMethod>> {
    store::payments::current_payment_method(&state.db, principal.account_uuid)
        .await?
        .map(|c| axum::Json(render(&c)))
        .ok_or_else(|| ApiError::not_found("payment method"))
}
