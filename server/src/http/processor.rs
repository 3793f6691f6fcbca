//! The built-in test-mode payment processor's public endpoint (outside `/v1`): the browser's
//! card component posts card data here with a sandbox app's publishable key and a payment
//! session's client secret, and gets a `pm_...` id back. Only brand, last four, expiry, postal
//! code and a fingerprint are kept.

use app::api::{
    ErrorEnvelope, ProcessorCardOut, ProcessorPaymentMethodIn, ProcessorPaymentMethodOut,
};
use axum::{extract::State, http::HeaderMap};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::{auth::bearer, error::ApiResult, extract::Json, routes, ApiRouter, AppState};
use crate::services::{
    live_payments::{receive_webhook, Received},
    processor::create_payment_method as create_payment_method_for,
};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        // The processor's servers call this one; no browser does, so it has no CORS headers.
        .routes(routes!(processor_webhook))
        .merge(built_in_router())
}

fn built_in_router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(create_payment_method))
        .layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::mirror_request())
                .allow_methods([axum::http::Method::POST])
                .allow_headers([
                    axum::http::header::AUTHORIZATION,
                    axum::http::header::CONTENT_TYPE,
                ]),
        )
}

/// Create a payment method from card data (publishable key and client secret).
#[utoipa::path(
    post, path = "/processor/v1/payment_methods", tag = "processor",
    request_body = ProcessorPaymentMethodIn,
    responses(
        (status = 200, description = "The payment method", body = ProcessorPaymentMethodOut),
        (status = 400, description = "Bad number, expiry, CVC or client secret", body = ErrorEnvelope),
        (status = 402, description = "The card was declined (`card_declined`, `decline_code`)", body = ErrorEnvelope),
    ),
    security(("publishable_key" = []))
)]
pub async fn create_payment_method(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(input): Json<ProcessorPaymentMethodIn>,
) -> ApiResult<axum::Json<ProcessorPaymentMethodOut>> {
    let key = bearer(&headers)?;
    let created = create_payment_method_for(&state, key, &input).await?;
    Ok(axum::Json(ProcessorPaymentMethodOut {
        id: created.card.id,
        card: ProcessorCardOut {
            brand: created.card.brand,
            last4: created.card.last4,
            exp_month: created.exp_month,
            exp_year: created.card.exp_year,
        },
    }))
}

/// What we answer a delivery of the processor's webhook.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct ProcessorWebhookOut {
    /// Always true: the event is handled (now, or before when it was delivered again).
    pub received: bool,
    /// True when this event had been handled before and nothing changed.
    pub duplicate: bool,
}

/// Receive the card processor's webhook for a live app.
///
/// The processor's events about the app's payments (`payment_intent.succeeded`,
/// `payment_intent.payment_failed`, `charge.refunded`, `charge.dispute.created`) and the cards
/// it saved for the app's accounts (`setup_intent.succeeded`), signed in
/// `Stripe-Signature` with the signing secret the operator set for the app (`apps
/// set-payment-keys --webhook-secret`). Each event is handled once; a delivery signed more than
/// five minutes from now is refused.
#[utoipa::path(
    post, path = "/processor/webhooks/{app_uuid}", tag = "processor",
    params(("app_uuid" = uuid::Uuid, Path, description = "The live app the processor's events are about")),
    request_body(content = String, content_type = "application/json", description = "The processor's event, as it sent it"),
    responses(
        (status = 200, description = "Handled (or handled before)", body = ProcessorWebhookOut),
        (status = 400, description = "Missing, wrong or stale signature, or an unreadable event", body = ErrorEnvelope),
        (status = 404, description = "No live app of this id with a webhook signing secret", body = ErrorEnvelope),
    ),
)]
pub async fn processor_webhook(
    State(state): State<AppState>,
    axum::extract::Path(app_uuid): axum::extract::Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<axum::Json<ProcessorWebhookOut>> {
    let Ok(app_uuid) = app_uuid.parse::<uuid::Uuid>() else {
        return Err(super::error::ApiError::not_found("app"));
    };
    let signature = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok());
    let received = receive_webhook(&state, app_uuid, signature, &body).await?;
    Ok(axum::Json(ProcessorWebhookOut {
        received: true,
        duplicate: received == Received::AlreadyHandled,
    }))
}
