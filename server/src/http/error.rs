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

use crate::{
    adapters::payments::ProcessorError,
    domain::{
        enrollment::StartDateOutOfRange, processor_events::SignatureError, FieldError,
        FieldErrorKind,
    },
    services::{
        self,
        accounts::AccountRefused,
        billing::BillingRefused,
        corrections::CorrectionRefused,
        credit::SubmitCheckRefused,
        disconnection::PlanRefused,
        enrollment::{
            AcceptPlanRefused, BillingAddressRefused, CancelServiceRefused, ConfirmAddressRefused,
            FinalizeRefused, IdentityRefused,
        },
        flows::{FlowEventRefused, FlowLoginRefused},
        invoices::InvoiceRefused,
        live_payments::ProcessorWebhookRefused,
        plans::PlansRefused,
        processor::PaymentMethodRefused,
        renewal::RenewalRefused,
        sandbox::{ResetRefused, SeedRefused, SimulationRefused},
        usage::UsageRefused,
        webhooks::WebhookRefused,
    },
};

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

    /// An unknown resource, or one of another app or account (never said which).
    /// A token that is not one of ours, or no longer valid.
    pub fn invalid_token() -> Self {
        ApiError::new(ErrorCode::TokenInvalid, "The token is not valid")
    }

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
        format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title></head><body><main><h1>{title}</h1><p>{message}</p>\
             <p><small>Reference: {id}</small></p></main></body></html>",
            message = app::format::html_escape(&self.message),
            id = app::format::html_escape(request_id),
        )
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

impl From<SeedRefused> for ApiError {
    fn from(why: SeedRefused) -> Self {
        match why {
            SeedRefused::AccountNotFound => ApiError::not_found("account"),
            SeedRefused::Pricing(why) => why.into(),
            SeedRefused::EnrollmentCancelled => ApiError::new(
                ErrorCode::ServiceNotActive,
                "This enrollment is cancelled; delete it (sandbox/delete-enrollment) first",
            ),
            SeedRefused::EsiIdInvalid => esi_id_invalid(),
            SeedRefused::EsiIdNotFound => esi_id_not_found(),
            SeedRefused::DirectoryEmpty => {
                enrollment_incomplete("address", "The address directory is empty")
            }
            SeedRefused::NoPlan => {
                enrollment_incomplete("plan", "The app has no plan to offer at this address")
            }
            SeedRefused::PlanNotFound => ApiError::not_found("plan"),
        }
    }
}

impl From<PaymentMethodRefused> for ApiError {
    fn from(why: PaymentMethodRefused) -> Self {
        let bad_secret = |message: &'static str| {
            ApiError::new(ErrorCode::ParameterInvalid, message).with_param("client_secret")
        };
        match why {
            PaymentMethodRefused::KeyInvalid => ApiError::invalid_token(),
            PaymentMethodRefused::Card(e) => {
                let code = match e.code {
                    "invalid_expiry_month" => ErrorCode::InvalidExpiryMonth,
                    "invalid_expiry_year" => ErrorCode::InvalidExpiryYear,
                    "invalid_cvc" => ErrorCode::InvalidCvc,
                    _ => ErrorCode::InvalidNumber,
                };
                ApiError::new(code, e.message).with_param(e.param)
            }
            PaymentMethodRefused::Field(e) => e.into(),
            PaymentMethodRefused::SecretInvalid => bad_secret("The client secret is not valid"),
            PaymentMethodRefused::SessionExpired => {
                bad_secret("The payment session has expired; start a new one")
            }
            PaymentMethodRefused::SessionUsed => {
                bad_secret("The payment session was already used; start a new one")
            }
            // A decline is 402, as the processor answers it, with the card's decline code.
            PaymentMethodRefused::Declined(decline_code) => {
                ApiError::new(ErrorCode::CardDeclined, "The card was declined")
                    .with_param("card.number")
                    .with_detail("decline_code", decline_code)
            }
        }
    }
}

impl From<ProcessorWebhookRefused> for ApiError {
    fn from(why: ProcessorWebhookRefused) -> Self {
        match why {
            ProcessorWebhookRefused::AppMissing | ProcessorWebhookRefused::SecretMissing => {
                ApiError::not_found("app")
            }
            ProcessorWebhookRefused::Signature(why) => ApiError::new(
                ErrorCode::ParameterInvalid,
                match why {
                    SignatureError::Malformed => {
                        "The Stripe-Signature header is missing or malformed"
                    }
                    SignatureError::Mismatch => "The signature does not match the body",
                    SignatureError::Stale => "The signature is too old (or too far ahead)",
                },
            )
            .with_param("Stripe-Signature"),
            ProcessorWebhookRefused::Unreadable => {
                ApiError::new(ErrorCode::BodyMalformed, "The event could not be read")
            }
        }
    }
}

impl From<WebhookRefused> for ApiError {
    fn from(why: WebhookRefused) -> Self {
        match why {
            WebhookRefused::EndpointNotFound => ApiError::not_found("webhook endpoint"),
            WebhookRefused::EventNotFound => ApiError::not_found("event"),
            WebhookRefused::TargetEndpointNotFound => {
                ApiError::not_found("webhook endpoint").with_param("endpoint_uuid")
            }
            WebhookRefused::UrlNotAllowed(m) => {
                ApiError::new(ErrorCode::UrlNotAllowed, m).with_param("url")
            }
            WebhookRefused::Field(e) => e.into(),
        }
    }
}

impl From<AccountRefused> for ApiError {
    fn from(why: AccountRefused) -> Self {
        match why {
            AccountRefused::AccountNotFound => ApiError::not_found("account"),
            AccountRefused::Field(e) => e.into(),
            AccountRefused::PlanAcceptedFirst => ApiError::new(
                ErrorCode::ClientAgentNotRecorded,
                "The customer already accepted a plan on this account: record-client-agent must \
                 precede plans/accept in a client agent enrollment",
            ),
        }
    }
}

impl From<FlowLoginRefused> for ApiError {
    fn from(why: FlowLoginRefused) -> Self {
        match why {
            FlowLoginRefused::Field(e) => e.into(),
            FlowLoginRefused::AccountNotFound => ApiError::not_found("account"),
            FlowLoginRefused::PlanGroupNotFound => {
                ApiError::not_found("plan group").with_param("plan_group_uuid")
            }
            FlowLoginRefused::AppNotReady(missing) => ApiError::app_not_ready(&missing),
        }
    }
}

impl From<FlowEventRefused> for ApiError {
    fn from(why: FlowEventRefused) -> Self {
        match why {
            FlowEventRefused::Field(e) => e.into(),
            FlowEventRefused::NotAFlow => ApiError::new(
                ErrorCode::ScopeDenied,
                "Only a flow session records flow events",
            ),
        }
    }
}

impl From<UsageRefused> for ApiError {
    fn from(why: UsageRefused) -> Self {
        match why {
            UsageRefused::LocationNotFound => {
                ApiError::not_found("location").with_param("location_uuid")
            }
            UsageRefused::Field(e) => e.into(),
        }
    }
}

/// 409 `enrollment_incomplete`, naming the one step still `missing`.
fn enrollment_incomplete(missing: &str, message: &'static str) -> ApiError {
    ApiError::new(ErrorCode::EnrollmentIncomplete, message)
        .with_detail("missing", serde_json::json!([missing]))
}

fn esi_id_invalid() -> ApiError {
    ApiError::new(
        ErrorCode::EsiIdInvalid,
        "esi_id must be the 17 or 22 digits of an ESI ID",
    )
    .with_param("esi_id")
}

fn esi_id_not_found() -> ApiError {
    ApiError::new(ErrorCode::EsiIdNotFound, "No meter has this ESI ID").with_param("esi_id")
}

impl From<ConfirmAddressRefused> for ApiError {
    fn from(why: ConfirmAddressRefused) -> Self {
        match why {
            ConfirmAddressRefused::EsiIdNotFound => esi_id_not_found(),
        }
    }
}

impl From<FinalizeRefused> for ApiError {
    fn from(why: FinalizeRefused) -> Self {
        match why {
            FinalizeRefused::AccountNotFound => ApiError::not_found("account"),
            FinalizeRefused::AlreadyFinalized => ApiError::new(
                ErrorCode::AlreadyFinalized,
                "The enrollment is already finalized",
            ),
            FinalizeRefused::ClientAgentNotRecorded => ApiError::new(
                ErrorCode::ClientAgentNotRecorded,
                "Call record-client-agent before accepting the plan of a client agent enrollment",
            ),
            FinalizeRefused::PlanExpired(expired_at) => ApiError::new(
                ErrorCode::PlanExpired,
                "The accepted plan's price expired before the enrollment was finalized: request \
                 plans again (POST /v1/account/enroll/plans/request) and accept one, which \
                 replaces this acceptance, then finalize",
            )
            .with_detail(
                "expired_at",
                expired_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            ),
            FinalizeRefused::StartDatePassed(range) => ApiError::new(
                ErrorCode::StartDatePassed,
                format!(
                    "The accepted start date can no longer be kept (it has passed, or the \
                     utility's same-day cut-off has): accept a plan again with a start date \
                     between {} and {}, which replaces this acceptance, then finalize",
                    range.earliest, range.latest
                ),
            )
            .with_detail("earliest_start_date", range.earliest.to_string())
            .with_detail("latest_start_date", range.latest.to_string()),
            FinalizeRefused::Incomplete(missing) => ApiError::new(
                ErrorCode::EnrollmentIncomplete,
                format!("Finish these steps first: {}", missing.join(", ")),
            )
            .with_detail("missing", missing),
        }
    }
}

impl From<CancelServiceRefused> for ApiError {
    fn from(why: CancelServiceRefused) -> Self {
        match why {
            CancelServiceRefused::Invalid(e) => e.into(),
            CancelServiceRefused::AccountNotFound => ApiError::not_found("account"),
            CancelServiceRefused::LocationNotFound => ApiError::not_found("location"),
            CancelServiceRefused::NotFinalized => enrollment_incomplete(
                "finalize",
                "This enrollment is not finalized; there is no service to cancel",
            ),
            CancelServiceRefused::NotActive => ApiError::new(
                ErrorCode::ServiceNotActive,
                "Service at this location is already cancelled or its cancellation is scheduled",
            ),
        }
    }
}

impl From<BillingAddressRefused> for ApiError {
    fn from(why: BillingAddressRefused) -> Self {
        match why {
            BillingAddressRefused::ServiceAddressNotConfirmed => {
                enrollment_incomplete("address", "Confirm the service address first")
            }
        }
    }
}

/// A start date outside the allowed range, with that range.
fn start_date_out_of_range(range: StartDateOutOfRange) -> ApiError {
    ApiError::new(
        ErrorCode::StartDateOutOfRange,
        format!(
            "service_start_date must be between {} and {}",
            range.earliest, range.latest
        ),
    )
    .with_param("service_start_date")
    .with_detail("earliest_start_date", range.earliest.to_string())
    .with_detail("latest_start_date", range.latest.to_string())
}

impl From<RenewalRefused> for ApiError {
    fn from(why: RenewalRefused) -> Self {
        use RenewalRefused as R;
        match why {
            R::LocationNotFound => ApiError::not_found("location"),
            R::NotEligible => ApiError::new(
                ErrorCode::RenewalNotEligible,
                "Renewal opens 90 days before an active fixed-term contract ends",
            ),
            R::AlreadyAccepted => ApiError::new(
                ErrorCode::PlanAlreadyAccepted,
                "A renewal plan is already accepted for this location",
            ),
            R::PlanNotFound => ApiError::not_found("plan").with_param("plan_uuid"),
            R::PricedForAnotherMeter => ApiError::new(
                ErrorCode::ResourceMissing,
                "This plan was priced for another meter; request renewal plans for this location",
            )
            .with_param("plan_uuid"),
            R::PlanExpired => ApiError::new(
                ErrorCode::PlanExpired,
                "This plan's price has expired; request renewal plans again",
            ),
            R::TermsNotAccepted => ApiError::new(
                ErrorCode::TermsNotAccepted,
                "terms_accepted must be true to accept a plan",
            )
            .with_param("terms_accepted"),
            R::StartDateOutOfRange(range) => start_date_out_of_range(range),
            R::Plans(why) => why.into(),
        }
    }
}

impl From<IdentityRefused> for ApiError {
    fn from(why: IdentityRefused) -> Self {
        match why {
            IdentityRefused::AccountNotFound => ApiError::not_found("account"),
            IdentityRefused::Invalid(e) => e.into(),
        }
    }
}

impl From<SubmitCheckRefused> for ApiError {
    fn from(why: SubmitCheckRefused) -> Self {
        match why {
            SubmitCheckRefused::AccountNotFound => ApiError::not_found("account"),
            SubmitCheckRefused::AppNotReady(missing) => ApiError::app_not_ready(&missing),
        }
    }
}

impl From<ResetRefused> for ApiError {
    fn from(why: ResetRefused) -> Self {
        match why {
            ResetRefused::AccountNotFound => ApiError::not_found("account"),
        }
    }
}

impl From<SimulationRefused> for ApiError {
    fn from(why: SimulationRefused) -> Self {
        use SimulationRefused as R;
        match why {
            R::UnknownEvent => {
                FieldError::invalid("event", "not an event the sandbox can simulate").into()
            }
            R::AccountNotFound => ApiError::not_found("account"),
            R::NoCreditCheck => enrollment_incomplete(
                "credit_check",
                "Submit a credit check (enroll/credit-check) before simulating its outcome",
            ),
            R::NotFinalized => enrollment_incomplete(
                "finalize",
                "Finalize the enrollment before simulating the utility's answers",
            ),
            R::NoActiveService => ApiError::new(
                ErrorCode::ServiceNotActive,
                "Service is not active at any location of this account yet \
                 (sandbox/seed-demo-data or the service_active simulation starts it)",
            ),
            R::NothingToBill => ApiError::new(
                ErrorCode::NothingToBill,
                "The meter was already read through today; advance the clock first",
            ),
            R::NothingToPay => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "No invoice is waiting for payment (simulate invoice_generated first)",
            ),
            R::Billing(why) => why.into(),
            R::NothingPending => ApiError::new(
                ErrorCode::NothingPending,
                "No disconnection or reconnection is waiting (a past-due bill's notice comes \
                 first: simulate invoice_past_due)",
            ),
            R::NoPlanInstalment => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "No running payment plan has an instalment on an open bill (accept a plan, \
                 then simulate invoice_generated)",
            ),
            R::NoDepositHeld => ApiError::new(
                ErrorCode::NothingPending,
                "No deposit is held (a paid deposit comes back; SSN 123-45-0005 asks for one)",
            ),
        }
    }
}

impl From<CorrectionRefused> for ApiError {
    fn from(why: CorrectionRefused) -> Self {
        use CorrectionRefused as R;
        match why {
            R::Field(e) => e.into(),
            R::InvoiceMissing => ApiError::not_found("invoice"),
            R::Voided => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "This bill was cancelled already; correct the bill issued in its place",
            ),
            R::CreditNote => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "A credit note is not corrected; correct the bill issued in its place",
            ),
            R::LocationMissing => ApiError::not_found("location"),
            R::Unbillable(why) => BillingRefused::Unbillable(why).into(),
            R::NotPaidByCard => FieldError::invalid(
                "overpayment",
                "Nothing overpaid on this bill was paid by a card that can be refunded; credit \
                 it on the next bill",
            )
            .into(),
            R::RefundRefused(reason) => FieldError::invalid(
                "overpayment",
                format!(
                    "The card processor refused the refund ({reason}); credit it on the next bill"
                ),
            )
            .into(),
            R::Processor(e) => e.into(),
        }
    }
}

impl From<PlanRefused> for ApiError {
    fn from(why: PlanRefused) -> Self {
        match why {
            PlanRefused::AccountMissing => ApiError::not_found("account"),
            PlanRefused::NothingUnpaid => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "Nothing is unpaid: there is no balance to spread over a payment plan",
            ),
            PlanRefused::PlanActive => ApiError::new(
                ErrorCode::PaymentPlanNotOffered,
                "A payment plan is running already",
            ),
            PlanRefused::NotOwed => ApiError::new(
                ErrorCode::PaymentPlanNotOffered,
                "No payment plan can be offered online after more than two disconnection \
                 notices in 12 months; the customer may call about payment arrangements",
            ),
            PlanRefused::ServiceEnded => ApiError::new(
                ErrorCode::PaymentPlanNotOffered,
                "Service has ended, so no following bill can carry a payment plan's \
                 instalments; the customer may call about payment arrangements",
            ),
        }
    }
}

impl From<AcceptPlanRefused> for ApiError {
    fn from(why: AcceptPlanRefused) -> Self {
        use AcceptPlanRefused as R;
        match why {
            R::PlanNotFound => ApiError::not_found("plan").with_param("plan_uuid"),
            R::EsiIdMissing => FieldError::missing("esi_id").into(),
            R::EsiIdInvalid => ApiError::new(
                ErrorCode::EsiIdInvalid,
                "esi_id must be the 17 or 22 digits of an ESI ID",
            )
            .with_param("esi_id"),
            R::EsiIdNotFound => ApiError::new(ErrorCode::EsiIdNotFound, "No meter has this ESI ID")
                .with_param("esi_id"),
            R::PricedForAnotherMeter => ApiError::new(
                ErrorCode::EsiIdInvalid,
                "This plan was priced for another meter; request plans for this ESI ID",
            )
            .with_param("esi_id"),
            R::PlanExpired => ApiError::new(
                ErrorCode::PlanExpired,
                "This plan's price has expired; request plans again",
            ),
            R::AccountNotFound => ApiError::not_found("account"),
            R::StartDateOutOfRange(range) => start_date_out_of_range(range),
            R::AlreadyFinalized => ApiError::new(
                ErrorCode::AlreadyFinalized,
                "The enrollment is finalized; its plan can no longer change",
            ),
            R::PlanAlreadyAccepted => ApiError::new(
                ErrorCode::PlanAlreadyAccepted,
                "A plan is already accepted for this account's location",
            ),
        }
    }
}

impl From<PlansRefused> for ApiError {
    fn from(why: PlansRefused) -> Self {
        use PlansRefused as R;
        match why {
            R::EsiIdInvalid => ApiError::new(
                ErrorCode::EsiIdInvalid,
                "esi_id must be the 17 or 22 digits of a meter of a utility open to retail choice",
            )
            .with_param("esi_id"),
            R::EsiIdNotFound => ApiError::new(
                ErrorCode::EsiIdNotFound,
                "No meter with this ESI ID is in the directory",
            )
            .with_param("esi_id"),
            R::EsiIdMissing => FieldError::missing("esi_id").into(),
            R::EsiIdOrPostalCodeMissing => ApiError::from(FieldError::missing("esi_id"))
                .with_detail("alternative", "postal_code"),
            R::Invalid(field) => field.into(),
            R::NotInRetailChoiceArea => ApiError::new(
                ErrorCode::NotInRetailChoiceArea,
                "This postal code is not served by a utility open to retail choice",
            )
            .with_param("postal_code"),
            R::UtilityNotServingPostalCode => ApiError::new(
                ErrorCode::NotInRetailChoiceArea,
                "This utility does not serve this postal code",
            )
            .with_param("utility"),
            R::CustomTermsWithoutAccount => ApiError::from(FieldError::missing("account_uuid"))
                .with_detail("reason", "custom terms are bound to an account"),
            R::RequestedAccountNotFound => {
                ApiError::not_found("account").with_param("account_uuid")
            }
            R::AccountNotFound => ApiError::not_found("account"),
            R::PlanGroupNotFound => ApiError::not_found("plan group").with_param("plan_group_uuid"),
            R::StartDateOutOfRange(range) => start_date_out_of_range(range),
        }
    }
}

/// The processor's errors: a missing payment method is a 404; a processor that is not
/// configured or does not answer is a 503, logged without any key.
impl From<ProcessorError> for ApiError {
    fn from(e: ProcessorError) -> Self {
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
}

impl From<InvoiceRefused> for ApiError {
    fn from(why: InvoiceRefused) -> Self {
        use InvoiceRefused as R;
        match why {
            R::InvoiceMissing => ApiError::not_found("invoice").with_param("invoice_number"),
            R::LinkedInvoiceMissing => ApiError::not_found("invoice"),
            R::AccountMissing => ApiError::not_found("account"),
            R::LocationMissing => ApiError::not_found("location"),
            R::NotPayable { number, status } => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                format!("Invoice {number} is {status}; there is nothing to pay"),
            ),
            R::NoCard => ApiError::new(
                ErrorCode::PaymentMethodMissing,
                "There is no card on file; add one (billing/payment-session) first",
            ),
            R::Processor(e) => e.into(),
        }
    }
}

impl From<BillingRefused> for ApiError {
    fn from(why: BillingRefused) -> Self {
        match why {
            BillingRefused::NoActiveService => ApiError::new(
                ErrorCode::ServiceNotActive,
                "Service is not active at any location of this account yet \
                 (sandbox/seed-demo-data or the service_active simulation starts it)",
            ),
            BillingRefused::NothingToBill => ApiError::new(
                ErrorCode::NothingToBill,
                "The meter was already read through today; advance the clock first",
            ),
            // Stored data that cannot be read is never billed as $0; the account's state, not
            // the request, is what cannot go on, and the reason is safe to show.
            BillingRefused::Unbillable(why) => ApiError::new(
                ErrorCode::NothingToBill,
                format!("This account cannot be billed now: {why}"),
            ),
            BillingRefused::NothingToPay => ApiError::new(
                ErrorCode::InvoiceNotPayable,
                "No invoice is waiting for payment (simulate invoice_generated first)",
            ),
        }
    }
}

impl From<FieldError> for ApiError {
    fn from(err: FieldError) -> Self {
        let code = match err.kind {
            FieldErrorKind::Missing => ErrorCode::ParameterMissing,
            FieldErrorKind::Invalid => ErrorCode::ParameterInvalid,
        };
        ApiError::new(code, err.message).with_param(err.param)
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

impl From<services::documents::DocumentRefused> for ApiError {
    fn from(why: services::documents::DocumentRefused) -> Self {
        match why {
            services::documents::DocumentRefused::NotFound => ApiError::not_found("document"),
        }
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
