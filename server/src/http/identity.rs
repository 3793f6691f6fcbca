//! The customer's identity during enrollment: the identity fields (`PATCH enroll/identity`)
//! and the SSN with consent to a soft credit check (`enroll/credit-check`). The SSN is sealed
//! at rest; only its last four digits are ever shown.

use app::api::{
    CreditCheckIn, CreditCheckOut, ErrorEnvelope, IdentityIn, IdentityOut, UpdateAccountIn,
};
use axum::{extract::State, http::StatusCode};

use super::{
    auth::AccountPrincipal,
    error::{ApiError, ApiResult, ErrorCode},
    extract::Json,
    routes, ApiRouter, AppState,
};
use crate::{domain::account::parse_ssn, services};

pub fn router() -> ApiRouter {
    ApiRouter::new()
        .routes(routes!(update_identity))
        .routes(routes!(submit_credit_check))
}

/// Update the identity fields needed to start service. The verified e-mail is not one of them:
/// it changes only with the AppToken (`PATCH /v1/app/accounts/{account_uuid}`).
#[utoipa::path(
    patch, path = "/v1/account/enroll/identity", tag = "enrollment",
    request_body = IdentityIn,
    responses(
        (status = 200, description = "The identity", body = IdentityOut),
        (status = 400, description = "A field is invalid", body = ErrorEnvelope),
        (status = 403, description = "`email_change_requires_app_token`: the verified e-mail changes only through PATCH /v1/app/accounts/{account_uuid}", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn update_identity(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<IdentityIn>,
) -> ApiResult<axum::Json<IdentityOut>> {
    // An AccountToken may live in a browser; the e-mail receives sign-in links and notices, so
    // only the partner's backend may change it. Any `email` key is refused, even null.
    if !input.email.is_absent() {
        return Err(ApiError::new(
            ErrorCode::EmailChangeRequiresAppToken,
            "The e-mail changes only with the AppToken: PATCH /v1/app/accounts/{account_uuid}",
        )
        .with_param("email"));
    }
    let profile = services::enrollment::update_identity(
        &state,
        &principal.app,
        principal.account_uuid,
        UpdateAccountIn {
            first_name: input.first_name,
            last_name: input.last_name,
            phone: input.phone,
            date_of_birth: input.date_of_birth,
            ..UpdateAccountIn::default()
        },
    )
    .await?;
    state.account_changed(principal.account_uuid);
    Ok(axum::Json(IdentityOut {
        is_identity_complete: profile.is_identity_complete(),
        first_name: profile.first_name,
        last_name: profile.last_name,
        phone: profile.phone,
        email: profile.email,
        date_of_birth: profile.date_of_birth,
    }))
}

/// Submit the SSN with consent; the soft check runs once the enrollment is finalized, or at once
/// for a client agent enrollment. Answers the stored state of the submission: `submitted`.
#[utoipa::path(
    post, path = "/v1/account/enroll/credit-check", tag = "enrollment",
    request_body = CreditCheckIn,
    responses(
        (status = 202, description = "Accepted; the check runs in the background", body = CreditCheckOut),
        (status = 400, description = "The SSN is not valid", body = ErrorEnvelope),
        (status = 422, description = "Consent was not given (`consent_required`)", body = ErrorEnvelope),
    ),
    security(("account_token" = []))
)]
pub async fn submit_credit_check(
    State(state): State<AppState>,
    principal: AccountPrincipal,
    Json(input): Json<CreditCheckIn>,
) -> ApiResult<(StatusCode, axum::Json<CreditCheckOut>)> {
    if !input.consent {
        return Err(ApiError::new(
            ErrorCode::ConsentRequired,
            "consent must be true: the customer agrees to a soft credit check",
        )
        .with_param("consent"));
    }
    let ssn = parse_ssn("ssn", &input.ssn)?;
    let stored =
        services::credit::submit_check(&state, principal.app.uuid, principal.account_uuid, &ssn)
            .await?;
    state.account_changed(principal.account_uuid);
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(CreditCheckOut {
            status: stored.as_str().to_owned(),
            ssn_last4: ssn.last4().to_owned(),
        }),
    ))
}
