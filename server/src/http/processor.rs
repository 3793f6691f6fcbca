//! The built-in test-mode payment processor's public endpoint (outside `/v1`): the browser's
//! card component posts card data here with a sandbox app's publishable key and a payment
//! session's client secret, and gets a `pm_...` id back. Only brand, last four, expiry, postal
//! code and a fingerprint are kept.

use app::api::{
    ErrorEnvelope, ProcessorCardOut, ProcessorPaymentMethodIn, ProcessorPaymentMethodOut,
};
use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::{
    auth::{bearer, invalid_token},
    error::{ApiError, ApiResult, ErrorCode},
    extract::Json,
    routes, ApiRouter, AppState,
};
use crate::{
    domain::{
        account::parse_postal_code,
        cards::{self, CardError, CardNumber, TestCardBehavior},
        tokens,
    },
    store::{self, payments::CardRow},
};

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

fn card_error(e: CardError) -> ApiError {
    let code = match e.code {
        "invalid_expiry_month" => ErrorCode::InvalidExpiryMonth,
        "invalid_expiry_year" => ErrorCode::InvalidExpiryYear,
        "invalid_cvc" => ErrorCode::InvalidCvc,
        _ => ErrorCode::InvalidNumber,
    };
    ApiError::new(code, e.message).with_param(e.param)
}

fn bad_secret(message: &'static str) -> ApiError {
    ApiError::new(ErrorCode::ParameterInvalid, message).with_param("client_secret")
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
    // Live apps' cards go to the real processor with their own keys, never here.
    let app = store::apps::app_by_publishable_key(&state.db, key)
        .await?
        .filter(|a| a.environment == app::api::Environment::Sandbox.as_str())
        .ok_or_else(invalid_token)?;
    let now = state.clock.now();

    let number = CardNumber::parse(&input.card.number).map_err(card_error)?;
    let brand = number.brand();
    let (exp_month, exp_year) = cards::parse_expiry(
        input.card.exp_month,
        input.card.exp_year,
        state.clock.today(),
    )
    .map_err(card_error)?;
    cards::parse_cvc(input.card.cvc.trim(), brand).map_err(card_error)?;
    let postal_code = input
        .billing_details
        .postal_code
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .map(|p| parse_postal_code("billing_details.postal_code", p))
        .transpose()?;

    let mut tx = state.db.begin().await?;
    let session = store::payments::session_by_secret_hash(
        &mut tx,
        &tokens::hash_token(input.client_secret.trim()),
    )
    .await?
    .filter(|s| s.app_uuid == app.uuid)
    .ok_or_else(|| bad_secret("The client secret is not valid"))?;
    if session.expires_at <= now {
        return Err(bad_secret(
            "The payment session has expired; start a new one",
        ));
    }
    if session.used_at.is_some() {
        return Err(bad_secret(
            "The payment session was already used; start a new one",
        ));
    }
    let behavior = number.test_behavior();
    if let TestCardBehavior::Declined(decline_code) = behavior {
        // A declined card leaves the session usable, so the customer can try another card.
        return Err(
            ApiError::new(ErrorCode::CardDeclined, "The card was declined")
                .with_status(StatusCode::PAYMENT_REQUIRED)
                .with_param("card.number")
                .with_detail("decline_code", decline_code),
        );
    }
    let card = CardRow {
        id: tokens::payment_method_id(),
        brand: brand.as_str().to_owned(),
        last4: number.last4().to_owned(),
        exp_month: i32::try_from(exp_month).unwrap_or_default(),
        exp_year,
        postal_code,
        fingerprint: number.fingerprint(&app.uuid.to_string()),
    };
    store::payments::insert_processor_payment_method(
        &mut tx,
        app.uuid,
        session.account_uuid,
        &card,
        behavior == TestCardBehavior::ChargesFail,
        now,
    )
    .await?;
    if !store::payments::use_session(&mut tx, session.uuid, now).await? {
        return Err(bad_secret(
            "The payment session was already used; start a new one",
        ));
    }
    tx.commit().await?;
    Ok(axum::Json(ProcessorPaymentMethodOut {
        id: card.id,
        card: ProcessorCardOut {
            brand: card.brand,
            last4: card.last4,
            exp_month,
            exp_year,
        },
    }))
}
