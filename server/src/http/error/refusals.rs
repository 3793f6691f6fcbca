//! How each use case's refusal (and the processor's and a field's errors) becomes the one
//! error type: its code, status and message, said once per refusal.

use super::{ApiError, ErrorCode};
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

impl From<services::documents::DocumentRefused> for ApiError {
    fn from(why: services::documents::DocumentRefused) -> Self {
        match why {
            services::documents::DocumentRefused::NotFound => ApiError::not_found("document"),
        }
    }
}
