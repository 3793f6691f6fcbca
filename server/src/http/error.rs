//! The one error type of the HTTP layer. Every failure — a rule broken, a bad token, a malformed
//! body, an unknown route, a panic — is rendered here into the envelope described in
//! `docs/api-conventions.md`. Codes are listed once, with their status and type, in
//! `error_codes!`.

use std::{borrow::Cow, collections::BTreeMap};

use app::api::{ErrorBody, ErrorEnvelope};
use axum::{
    http::{header, HeaderName, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::services;

mod refusals;

tokio::task_local! {
    /// The id of the request being served, for error bodies and logs.
    pub static REQUEST_ID: String;
}

pub fn current_request_id() -> String {
    REQUEST_ID
        .try_with(Clone::clone)
        .unwrap_or_else(|_| "req_unknown".to_owned())
}

/// The `type` of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    InvalidRequest,
    Authentication,
    Permission,
    State,
    RateLimit,
    Api,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::InvalidRequest => "invalid_request_error",
            ErrorType::Authentication => "authentication_error",
            ErrorType::Permission => "permission_error",
            ErrorType::State => "state_error",
            ErrorType::RateLimit => "rate_limit_error",
            ErrorType::Api => "api_error",
        }
    }
}

macro_rules! error_codes {
    ($($variant:ident => ($name:literal, $status:ident, $kind:ident)),+ $(,)?) => {
        /// Every error code the API returns.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode { $($variant),+ }

        impl ErrorCode {
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $name),+ }
            }
            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status),+ }
            }
            pub fn error_type(self) -> ErrorType {
                match self { $(ErrorCode::$variant => ErrorType::$kind),+ }
            }
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];
        }
    };
}

error_codes! {
    ParameterMissing => ("parameter_missing", BAD_REQUEST, InvalidRequest),
    ParameterInvalid => ("parameter_invalid", BAD_REQUEST, InvalidRequest),
    BodyMalformed => ("body_malformed", BAD_REQUEST, InvalidRequest),
    BodyTooLarge => ("body_too_large", PAYLOAD_TOO_LARGE, InvalidRequest),
    ContentTypeUnsupported => ("content_type_unsupported", UNSUPPORTED_MEDIA_TYPE, InvalidRequest),
    UriTooLong => ("uri_too_long", URI_TOO_LONG, InvalidRequest),
    HeadersTooLarge => ("headers_too_large", REQUEST_HEADER_FIELDS_TOO_LARGE, InvalidRequest),
    TokenMissing => ("token_missing", UNAUTHORIZED, Authentication),
    TokenInvalid => ("token_invalid", UNAUTHORIZED, Authentication),
    TokenExpired => ("token_expired", UNAUTHORIZED, Authentication),
    TokenWrongType => ("token_wrong_type", FORBIDDEN, Permission),
    ScopeDenied => ("scope_denied", FORBIDDEN, Permission),
    SandboxOnly => ("sandbox_only", FORBIDDEN, Permission),
    EmailChangeRequiresAppToken => ("email_change_requires_app_token", FORBIDDEN, Permission),
    LinkInvalid => ("link_invalid", FORBIDDEN, Permission),
    LinkExpired => ("link_expired", FORBIDDEN, Permission),
    CsrfFailed => ("csrf_failed", FORBIDDEN, Permission),
    ResourceMissing => ("resource_missing", NOT_FOUND, InvalidRequest),
    MethodNotAllowed => ("method_not_allowed", METHOD_NOT_ALLOWED, InvalidRequest),
    EnrollmentIncomplete => ("enrollment_incomplete", CONFLICT, State),
    ClientAgentNotRecorded => ("client_agent_not_recorded", CONFLICT, State),
    AlreadyFinalized => ("already_finalized", CONFLICT, State),
    PlanExpired => ("plan_expired", CONFLICT, State),
    StartDatePassed => ("start_date_passed", CONFLICT, State),
    PlanAlreadyAccepted => ("plan_already_accepted", CONFLICT, State),
    RenewalNotEligible => ("renewal_not_eligible", CONFLICT, State),
    ServiceNotActive => ("service_not_active", CONFLICT, State),
    NothingToBill => ("nothing_to_bill", CONFLICT, State),
    InvoiceNotPayable => ("invoice_not_payable", CONFLICT, State),
    PaymentPlanNotOffered => ("payment_plan_not_offered", CONFLICT, State),
    NothingPending => ("nothing_pending", CONFLICT, State),
    PaymentMethodMissing => ("payment_method_missing", CONFLICT, State),
    AppNotReady => ("app_not_ready", CONFLICT, State),
    IdempotencyKeyInProgress => ("idempotency_key_in_progress", CONFLICT, State),
    TermsNotAccepted => ("terms_not_accepted", UNPROCESSABLE_ENTITY, InvalidRequest),
    ConsentRequired => ("consent_required", UNPROCESSABLE_ENTITY, InvalidRequest),
    StartDateOutOfRange => ("start_date_out_of_range", UNPROCESSABLE_ENTITY, InvalidRequest),
    EsiIdInvalid => ("esi_id_invalid", UNPROCESSABLE_ENTITY, InvalidRequest),
    EsiIdNotFound => ("esi_id_not_found", NOT_FOUND, InvalidRequest),
    NotInRetailChoiceArea => ("not_in_retail_choice_area", UNPROCESSABLE_ENTITY, InvalidRequest),
    IdempotencyKeyReused => ("idempotency_key_reused", UNPROCESSABLE_ENTITY, InvalidRequest),
    CardDeclined => ("card_declined", PAYMENT_REQUIRED, InvalidRequest),
    InvalidNumber => ("invalid_number", BAD_REQUEST, InvalidRequest),
    InvalidExpiryMonth => ("invalid_expiry_month", BAD_REQUEST, InvalidRequest),
    InvalidExpiryYear => ("invalid_expiry_year", BAD_REQUEST, InvalidRequest),
    InvalidCvc => ("invalid_cvc", BAD_REQUEST, InvalidRequest),
    UrlNotAllowed => ("url_not_allowed", UNPROCESSABLE_ENTITY, InvalidRequest),
    RateLimited => ("rate_limited", TOO_MANY_REQUESTS, RateLimit),
    InternalError => ("internal_error", INTERNAL_SERVER_ERROR, Api),
    ServiceUnavailable => ("service_unavailable", SERVICE_UNAVAILABLE, Api),
}

/// A failure on its way to the client.
#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    /// Where an endpoint answers a code with another status (the processor's 402).
    status: Option<StatusCode>,
    message: Cow<'static, str>,
    param: Option<String>,
    details: BTreeMap<String, serde_json::Value>,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// What went wrong inside, for 5xx logs; never sent.
    source: Option<anyhow::Error>,
    /// Rendered as a small HTML page rather than JSON: the request came from a person's
    /// browser (a link opened in a tab), not from code.
    page: bool,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A live app that has not passed its readiness checklist: what it lacks, by name.
    pub fn app_not_ready(missing: &[crate::domain::apps::ReadinessItem]) -> Self {
        let names: Vec<&str> = missing.iter().map(|m| m.code()).collect();
        ApiError::new(
            ErrorCode::AppNotReady,
            format!(
                "this live app is not ready for customers yet; it still needs: {}",
                names.join(", ")
            ),
        )
        .with_detail("missing", names)
    }

    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        ApiError {
            code,
            status: None,
            message: message.into(),
            param: None,
            details: BTreeMap::new(),
            headers: Vec::new(),
            source: None,
            page: false,
        }
    }

    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// Answer with an HTML page that says what went wrong, for a person in a browser.
    pub fn as_page(mut self) -> Self {
        self.page = true;
        self
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn param(&self) -> Option<&str> {
        self.param.as_deref()
    }

    /// A token that is not one of ours, or no longer valid.
    pub fn invalid_token() -> Self {
        ApiError::new(ErrorCode::TokenInvalid, "The token is not valid")
    }

    /// An unknown resource, or one of another app or account (never said which).
    pub fn not_found(what: &str) -> Self {
        ApiError::new(ErrorCode::ResourceMissing, format!("No such {what}"))
    }

    /// A form without this session's CSRF token (or a session that ended meanwhile).
    pub fn csrf_failed() -> Self {
        ApiError::new(
            ErrorCode::CsrfFailed,
            "This form has expired. Go back, reload the page and send it again.",
        )
    }

    pub fn internal(err: impl Into<anyhow::Error>) -> Self {
        let mut e = ApiError::new(
            ErrorCode::InternalError,
            "Something went wrong on our side. Retry later, quoting the request_id if it persists.",
        );
        e.source = Some(err.into());
        e
    }

    pub fn body(&self, request_id: String) -> ErrorEnvelope {
        ErrorEnvelope {
            error: ErrorBody {
                kind: self.code.error_type().as_str().to_owned(),
                code: self.code.as_str().to_owned(),
                message: self.message.to_string(),
                param: self.param.clone(),
                request_id,
                details: self.details.clone(),
            },
        }
    }
}

impl ApiError {
    fn page_html(&self, request_id: &str) -> String {
        let title = match self.code {
            ErrorCode::LinkInvalid | ErrorCode::LinkExpired => "This link is invalid or expired",
            _ => "This page cannot be shown",
        };
        let message = self.message.to_string();
        let id = request_id.to_owned();
        use leptos::prelude::*;
        super::html::document(view! {
            <html lang="en">
                <head>
                    <meta charset="utf-8"/>
                    <meta name="viewport" content="width=device-width, initial-scale=1"/>
                    <title>{title}</title>
                </head>
                <body>
                    <main>
                        <h1>{title}</h1>
                        <p>{message}</p>
                        <p><small>"Reference: " {id}</small></p>
                    </main>
                </body>
            </html>
        })
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        ApiError::internal(err)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(err: anyhow::Error) -> Self {
        ApiError::internal(err)
    }
}

impl<R: Into<ApiError>> From<services::Error<R>> for ApiError {
    fn from(err: services::Error<R>) -> Self {
        match err {
            services::Error::Refused(why) => why.into(),
            services::Error::Failed(e) => ApiError::internal(e),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let request_id = current_request_id();
        let status = self.status.unwrap_or_else(|| self.code.status());
        if status.is_server_error() {
            match &self.source {
                Some(source) => tracing::error!(%request_id, error = ?source, "request failed"),
                None => tracing::error!(%request_id, code = self.code.as_str(), "request failed"),
            }
        }
        let mut response = if self.page {
            (status, axum::response::Html(self.page_html(&request_id))).into_response()
        } else {
            (status, axum::Json(self.body(request_id))).into_response()
        };
        let headers = response.headers_mut();
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        for (name, value) in self.headers {
            headers.insert(name, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conventions page, whose status table lists every code.
    const CONVENTIONS: &str = include_str!("../../../docs/api-conventions.md");

    #[test]
    fn a_declined_card_is_402_everywhere() {
        assert_eq!(
            ErrorCode::CardDeclined.status(),
            StatusCode::PAYMENT_REQUIRED
        );
    }

    #[test]
    fn codes_are_unique_and_have_the_types_of_their_statuses() {
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            let expected = match code.status().as_u16() {
                401 => ErrorType::Authentication,
                403 => ErrorType::Permission,
                409 => ErrorType::State,
                429 => ErrorType::RateLimit,
                500..=599 => ErrorType::Api,
                _ => ErrorType::InvalidRequest,
            };
            assert_eq!(code.error_type(), expected, "{}", code.as_str());
            // Documented under its own status, and only there.
            let rows: Vec<&str> = CONVENTIONS
                .lines()
                .filter(|l| l.contains(&format!("`{}`", code.as_str())))
                .filter(|l| l.starts_with("| 4") || l.starts_with("| 5"))
                .collect();
            assert_eq!(
                rows.len(),
                1,
                "{} in the status table: {rows:?}",
                code.as_str()
            );
            let status = code.status().as_u16().to_string();
            let statuses = rows[0].split('|').nth(1).unwrap_or_default();
            assert!(
                statuses.split(',').any(|s| s.trim() == status),
                "{} is {status}, documented as {statuses}",
                code.as_str()
            );
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                serde_json::Value::String(code.as_str().to_owned())
            );
        }
    }
}
