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
use crate::services::processor::create_payment_method as create_payment_method_for;

pub fn router() -> ApiRouter {
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
