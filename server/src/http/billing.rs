//! The account's payment method: a payment session for the processor's browser component,
//! then `ensure-payment-method-added` with the `pm_...` id it returned. Card data never passes
//! through `/v1`.

use app::api::{EnsurePaymentMethodIn, ErrorEnvelope, PaymentMethod, PaymentSession, Timestamp};
use axum::{
    extract::State,
    routing::{get, post},
    Router,
};
use chrono::Duration;

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult},
    extract::Json,
    AppState,
};
use crate::{
    domain::tokens,
    store::{self, events::NewEvent, payments::CardRow},
};

/// How long a payment session's client secret can be used.
const SESSION_TTL: Duration = Duration::hours(1);

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/billing/payment-session", post(create_payment_session))
        .route(
            "/billing/ensure-payment-method-added",
            post(ensure_payment_method_added),
        )
        .route("/billing/payment-method", get(get_payment_method))
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
    responses((status = 200, description = "The session", body = PaymentSession)),
    security(("account_token" = []))
)]
pub async fn create_payment_session(
    State(state): State<AppState>,
    principal: AccountPrincipal,
) -> ApiResult<axum::Json<PaymentSession>> {
    let now = state.clock.now();
    let expires_at = now + SESSION_TTL;
    let secret = tokens::issue_client_secret();
    let mut tx = state.db.begin().await?;
    store::payments::insert_session(
        &mut tx,
        principal.app.uuid,
        principal.account_uuid,
        &secret.hash,
        expires_at,
        now,
    )
    .await?;
    tx.commit().await?;
    Ok(axum::Json(PaymentSession {
        client_secret: secret.plain,
        publishable_key: principal.app.payment_publishable_key.clone(),
        expires_at: Timestamp(expires_at),
    }))
}

/// Attach the payment method the processor created; the card is not charged.
#[utoipa::path(
    post, path = "/v1/account/billing/ensure-payment-method-added", tag = "billing",
    request_body = EnsurePaymentMethodIn,
    responses(
        (status = 200, description = "The account's payment method", body = PaymentMethod),
        (status = 404, description = "No such payment method for this account", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn ensure_payment_method_added(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<EnsurePaymentMethodIn>,
) -> ApiResult<axum::Json<PaymentMethod>> {
    let account = principal.account_uuid;
    let card = store::payments::processor_payment_method(
        &state.db,
        principal.app.uuid,
        account,
        input.payment_method_id.trim(),
    )
    .await?
    .ok_or_else(|| ApiError::not_found("payment method").with_param("payment_method_id"))?;
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
    store::status::refresh_status(&mut tx, principal.app.uuid, account, now).await?;
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
