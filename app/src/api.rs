//! The v1 wire format: request and response bodies exactly as partners see them (conventions in
//! `docs/api-conventions.md`).
//! Request types carry what the wire carries (strings, optional fields); the server parses them
//! into domain values at the edge. Response types are what every handler renders.

pub mod market;

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

pub mod background;
pub mod billing;
pub mod enrollment;

/// An RFC 3339 UTC instant, always written with milliseconds and `Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        DateTime::parse_from_rfc3339(&raw)
            .map(|t| Timestamp(t.with_timezone(&Utc)))
            .map_err(|_| serde::de::Error::custom("expected an RFC 3339 timestamp"))
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Timestamp(t)
    }
}

#[cfg(feature = "ssr")]
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .examples(["2026-01-31T17:04:05.123Z"])
            .into()
    }
}

#[cfg(feature = "ssr")]
impl ToSchema for Timestamp {}

/// A PATCH field: absent (leave as is), `null` (clear) or a new value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }

    /// Applies `f` to a present value, keeping absent and null as they are.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Patch<U>, E> {
        Ok(match self {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(v) => Patch::Value(f(v)?),
        })
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Only called when the key is present (absent keys take `Default`).
        Ok(match Option::<T>::deserialize(d)? {
            None => Patch::Null,
            Some(v) => Patch::Value(v),
        })
    }
}

/// The error envelope of every failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ErrorBody {
    /// `invalid_request_error`, `authentication_error`, `permission_error`, `state_error`,
    /// `rate_limit_error` or `api_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Stable machine-readable code.
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    pub request_id: String,
    /// Extra facts some errors carry (`missing`, `earliest_start_date`, `decline_code`, ...).
    #[serde(flatten)]
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub details: BTreeMap<String, serde_json::Value>,
}

/// A page of a listing.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct List<T> {
    pub data: Vec<T>,
    pub has_more: bool,
    pub limit: u32,
    pub offset: u64,
    /// Path and query of the next page; null on the last page.
    pub next_page_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    Sandbox,
    Live,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Live => "live",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sandbox" => Some(Environment::Sandbox),
            "live" => Some(Environment::Live),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Branding {
    pub display_name: String,
    pub logo_url: Option<String>,
    pub primary_color: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct SupportContacts {
    pub name: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub hours: Option<String>,
    pub url: Option<String>,
}

/// `GET /v1/app`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AppOut {
    pub uuid: Uuid,
    pub name: String,
    pub environment: Environment,
    pub slug: String,
    pub branding: Branding,
    pub support: SupportContacts,
    pub allowed_origins: Vec<String>,
    /// The late fee the operator set for the app's customers, percent of a past-due bill's
    /// unpaid amount (decimal string, above 0 and at most 5), charged once as a line of the next
    /// bill; null when the app charges none.
    #[serde(default)]
    pub late_fee_percent: Option<String>,
    pub created_at: Timestamp,
}

/// A postal address as partners send and receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PostalAddress {
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
}

/// A postal address in a request; the server checks it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PostalAddressIn {
    #[cfg_attr(feature = "ssr", schema(max_length = 100, pattern = r"\S"))]
    pub address_1: Option<String>,
    #[cfg_attr(feature = "ssr", schema(max_length = 100))]
    pub address_2: Option<String>,
    #[cfg_attr(feature = "ssr", schema(max_length = 60, pattern = r"\S"))]
    pub city: Option<String>,
    /// Two letters, such as `TX`.
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[A-Za-z]{2}\s*$"))]
    pub state: Option<String>,
    /// `12345` or `12345-6789`.
    #[cfg_attr(feature = "ssr", schema(pattern = r"^\s*[0-9]{5}(-[0-9]{4})?\s*$"))]
    pub postal_code: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AccountStatus {
    NotEnrolled,
    Reviewing,
    NeedsAttention,
    Ready,
    Active,
    Cancelled,
}

/// Why the account is in its status. `unresolved` (with `not_enrolled`) means either that no
/// enrollment step was taken yet or that every step is done and only finalize is left:
/// `enrollment.can_finalize_enrollment` tells the two apart (true only in the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum StatusReason {
    Unresolved,
    PlanNotAccepted,
    MissingAddress,
    MissingIdentity,
    MissingPaymentMethod,
    EnrollmentPendingClientAgent,
    VerificationPending,
    CreditCheckPending,
    UtilitySubmitted,
    CreditNotFound,
    CreditDeclined,
    CreditCheckFrozen,
    CreditCheckError,
    EnrollmentBlockedSwitchHold,
    EnrollmentBlockedVerificationHold,
    EnrollmentBlockedDeactivated,
    UtilityBlocked,
    ServicePending,
    Active,
    /// Service was disconnected for non-payment (with `needs_attention`); once nothing is past
    /// due the utility reconnects it and the account is `active` again.
    ServiceDisconnected,
    CancelledPreStart,
    ExpirePreActive,
    CancelledPostStart,
}

macro_rules! wire_names {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name),+ }
            }
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($name => Some(Self::$variant),)+ _ => None }
            }
        }
    };
}

wire_names!(AccountStatus {
    NotEnrolled => "not_enrolled",
    Reviewing => "reviewing",
    NeedsAttention => "needs_attention",
    Ready => "ready",
    Active => "active",
    Cancelled => "cancelled",
});

wire_names!(StatusReason {
    Unresolved => "unresolved",
    PlanNotAccepted => "plan_not_accepted",
    MissingAddress => "missing_address",
    MissingIdentity => "missing_identity",
    MissingPaymentMethod => "missing_payment_method",
    EnrollmentPendingClientAgent => "enrollment_pending_client_agent",
    VerificationPending => "verification_pending",
    CreditCheckPending => "credit_check_pending",
    UtilitySubmitted => "utility_submitted",
    CreditNotFound => "credit_not_found",
    CreditDeclined => "credit_declined",
    CreditCheckFrozen => "credit_check_frozen",
    CreditCheckError => "credit_check_error",
    EnrollmentBlockedSwitchHold => "enrollment_blocked_switch_hold",
    EnrollmentBlockedVerificationHold => "enrollment_blocked_verification_hold",
    EnrollmentBlockedDeactivated => "enrollment_blocked_deactivated",
    UtilityBlocked => "utility_blocked",
    ServicePending => "service_pending",
    Active => "active",
    CancelledPreStart => "cancelled_pre_start",
    ExpirePreActive => "expire_pre_active",
    CancelledPostStart => "cancelled_post_start",
    ServiceDisconnected => "service_disconnected",
});

/// Where an account stands in enrollment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Enrollment {
    pub can_finalize_enrollment: bool,
    /// Steps still to do: `address`, `plan`, `identity`, `credit_check`, `payment_method`,
    /// `client_agent`.
    pub missing: Vec<String>,
    pub has_confirmed_address: bool,
    pub has_accepted_plan: bool,
    pub is_identity_complete: bool,
    pub is_identity_verified: bool,
    pub has_credit_check: bool,
    pub has_payment_method: bool,
    pub is_billing_address_confirmed: bool,
    pub is_enrollment_finalized: bool,
    pub is_service_active: bool,
}

/// The app an account belongs to, as the account's clients need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AccountApp {
    pub uuid: Uuid,
    pub name: String,
    /// Publishable key of the payment processor, for browser card components.
    pub payment_public_key: String,
}

/// A service location attached to an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Location {
    pub uuid: Uuid,
    pub esi_id: String,
    pub address_1: String,
    pub address_2: Option<String>,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub utility: Option<String>,
    pub service_start_date: Option<NaiveDate>,
    pub final_service_date: Option<NaiveDate>,
    /// Service is on: it started, has not ended, and is not disconnected for non-payment.
    pub is_service_active: bool,
    pub has_usage_history: bool,
    pub estimated_next_reading_date: Option<NaiveDate>,
    pub plan_name: Option<String>,
    pub plan_uuid: Option<Uuid>,
    pub contract_start: Option<NaiveDate>,
    pub contract_end: Option<NaiveDate>,
    /// `pending`, `active`, `disconnected` (for non-payment: `is_service_active` is false
    /// until the utility reconnects it) or `cancelled`.
    pub status: String,
}

/// A consumer's account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Account {
    pub uuid: Uuid,
    pub account_number: String,
    pub email: String,
    pub first_name: String,
    pub last_name: String,
    /// E.164, e.g. `+15125550123`.
    pub phone: Option<String>,
    /// Never filled in list responses.
    pub date_of_birth: Option<NaiveDate>,
    pub preliminary_address: Option<PostalAddress>,
    pub renewals_url: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub created_at: Timestamp,
    pub status: AccountStatus,
    pub status_reason: StatusReason,
    pub client_agent_accepted: bool,
    pub client_agent_accepted_at: Option<Timestamp>,
    pub is_service_active: bool,
    pub enrollment: Enrollment,
    pub locations: Vec<Location>,
    pub app: AccountApp,
    /// The security deposit a credit review asked of the account, as `GET /v1/account/deposit`
    /// shows it; `null` when none was asked.
    #[serde(default)]
    pub deposit: Option<Deposit>,
}

/// A security deposit asked of the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Deposit {
    pub uuid: Uuid,
    pub amount_cents: i64,
    /// `required` (not paid yet), `paid` (held; in instalments, from the first half),
    /// `refunded` (credited on the bills after 12 bills in a row paid on time), `applied` (to
    /// the final bill) or `waived` (by the operator, `waiver` says why).
    pub status: String,
    /// What the customer paid toward it (instalments count once billed).
    pub paid_cents: i64,
    /// Interest earned so far: simple interest at the deployment's yearly rate, to today while
    /// it is held.
    pub interest_cents: i64,
    /// What comes back in all, deposit and interest, once it is `refunded` or `applied`.
    pub refunded_cents: i64,
    /// Instalments not yet on a bill.
    #[serde(default)]
    pub instalments_due_cents: i64,
    /// Of what the final bill could not take, what was refunded to the card that paid it.
    #[serde(default)]
    pub paid_out_cents: i64,
    /// Of what the final bill could not take, what is still owed to the customer (the operator
    /// pays it back by other means).
    #[serde(default)]
    pub owed_cents: i64,
    /// `senior`, `family_violence` or `good_credit_letter` when the operator waived it.
    #[serde(default)]
    pub waiver: Option<String>,
    #[cfg_attr(feature = "ssr", schema(value_type = String, format = DateTime))]
    pub created_at: Timestamp,
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, format = DateTime))]
    pub paid_at: Option<Timestamp>,
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, format = DateTime))]
    pub refunded_at: Option<Timestamp>,
}

/// `POST /v1/app/accounts`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct CreateAccountIn {
    #[cfg_attr(feature = "ssr", schema(format = Email, max_length = 254))]
    pub email: String,
    #[cfg_attr(
        feature = "ssr",
        schema(min_length = 1, max_length = 100, pattern = r"\S")
    )]
    pub first_name: String,
    #[cfg_attr(
        feature = "ssr",
        schema(min_length = 1, max_length = 100, pattern = r"\S")
    )]
    pub last_name: String,
    #[serde(default)]
    pub phone: Option<String>,
    /// `YYYY-MM-DD`; the customer must be 18 or older.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = Date))]
    pub date_of_birth: Option<String>,
    #[serde(default)]
    pub preliminary_address: Option<PostalAddressIn>,
    /// An absolute `https` URL (`http` on localhost in sandbox).
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(max_length = 2048))]
    pub renewals_url: Option<String>,
    /// Up to 20 keys; values are strings of at most 500 characters.
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, String>>,
}

/// `PATCH /v1/app/accounts/{account_uuid}`: absent keys stay, `null` clears an optional field.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct UpdateAccountIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, format = Email, max_length = 254))]
    pub email: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(
            value_type = Option<String>,
            min_length = 1,
            max_length = 100,
            pattern = r"\S"
        )
    )]
    pub first_name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(
            value_type = Option<String>,
            min_length = 1,
            max_length = 100,
            pattern = r"\S"
        )
    )]
    pub last_name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    pub phone: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, format = Date))]
    pub date_of_birth: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<PostalAddressIn>))]
    pub preliminary_address: Patch<PostalAddressIn>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, max_length = 2048))]
    pub renewals_url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<BTreeMap<String, String>>))]
    pub metadata: Patch<BTreeMap<String, String>>,
}

/// An AccountToken.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct TokenOut {
    pub token: String,
    pub expires_at: Timestamp,
}

/// `GET /healthz`, `GET /readyz`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Health {
    pub status: String,
    /// `/readyz` only: where rate limits are counted. `shared` (through Redis, by every
    /// instance), `local` (per instance: no Redis configured, or Redis is unreachable and the
    /// instance limits alone until it answers again) or `off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limits: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct P {
        #[serde(default)]
        phone: Patch<String>,
    }

    #[test]
    fn patch_tells_absent_from_null_from_value() {
        let absent: P = serde_json::from_str("{}").unwrap();
        let null: P = serde_json::from_str(r#"{"phone": null}"#).unwrap();
        let value: P = serde_json::from_str(r#"{"phone": "5125550123"}"#).unwrap();
        assert_eq!(absent.phone, Patch::Absent);
        assert_eq!(null.phone, Patch::Null);
        assert_eq!(value.phone, Patch::Value("5125550123".to_owned()));
    }

    #[test]
    fn timestamps_are_written_with_milliseconds_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-03-01T12:00:00+00:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            serde_json::to_string(&Timestamp(t)).unwrap(),
            "\"2026-03-01T12:00:00.000Z\""
        );
    }

    #[test]
    fn status_names_round_trip() {
        for s in ["not_enrolled", "needs_attention", "cancelled"] {
            assert_eq!(AccountStatus::parse(s).unwrap().as_str(), s);
        }
        assert_eq!(
            serde_json::to_string(&StatusReason::EnrollmentBlockedSwitchHold).unwrap(),
            "\"enrollment_blocked_switch_hold\""
        );
    }
}

/// `POST /v1/account/billing/payment-session`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PaymentSession {
    /// Single use: creates one payment method with the processor.
    pub client_secret: String,
    pub publishable_key: String,
    pub expires_at: Timestamp,
}

/// `POST /v1/account/billing/ensure-payment-method-added`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EnsurePaymentMethodIn {
    /// The `pm_...` id the processor returned.
    #[cfg_attr(feature = "ssr", schema(min_length = 1))]
    pub payment_method_id: String,
}

/// The account's saved payment method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct PaymentMethod {
    /// Always `card`.
    #[serde(rename = "type")]
    pub kind: String,
    pub card_brand: String,
    pub card_last4: String,
    pub card_exp_month: u32,
    pub card_exp_year: i32,
    pub card_postal_code: Option<String>,
}

/// `POST /v1/account/enroll/credit-check`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct CreditCheckIn {
    /// Nine digits; dashes allowed.
    #[cfg_attr(
        feature = "ssr",
        schema(pattern = r"^\s*([0-9]{9}|[0-9]{3}-[0-9]{2}-[0-9]{4})\s*$")
    )]
    pub ssn: String,
    /// Must be true: the customer agrees to a soft credit check.
    pub consent: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct CreditCheckOut {
    /// `submitted` until the check runs (after finalize), then `pending`, `passed`, ...
    pub status: String,
    pub ssn_last4: String,
}

/// `PATCH /v1/account/enroll/identity`: absent keys stay, `null` clears phone or date of birth.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct IdentityIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(
            value_type = Option<String>,
            min_length = 1,
            max_length = 100,
            pattern = r"\S"
        )
    )]
    pub first_name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(
            value_type = Option<String>,
            min_length = 1,
            max_length = 100,
            pattern = r"\S"
        )
    )]
    pub last_name: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    pub phone: Patch<String>,
    /// Refused (403 `email_change_requires_app_token`): the verified e-mail changes only with
    /// the AppToken, through `PATCH /v1/app/accounts/{account_uuid}`.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, deprecated))]
    pub email: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    pub date_of_birth: Patch<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct IdentityOut {
    pub first_name: String,
    pub last_name: String,
    pub phone: Option<String>,
    pub email: String,
    pub date_of_birth: Option<NaiveDate>,
    pub is_identity_complete: bool,
}

/// Card data sent by the browser to the payment processor (never to `/v1`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ProcessorPaymentMethodIn {
    pub client_secret: String,
    pub card: ProcessorCardIn,
    #[serde(default)]
    pub billing_details: ProcessorBillingDetails,
}

#[derive(Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ProcessorCardIn {
    pub number: String,
    pub exp_month: u32,
    pub exp_year: i32,
    pub cvc: String,
}

impl std::fmt::Debug for ProcessorCardIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProcessorCardIn([redacted])")
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ProcessorBillingDetails {
    #[serde(default)]
    pub postal_code: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ProcessorPaymentMethodOut {
    /// `pm_...`: pass it to `ensure-payment-method-added`.
    pub id: String,
    pub card: ProcessorCardOut,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct ProcessorCardOut {
    pub brand: String,
    pub last4: String,
    pub exp_month: u32,
    pub exp_year: i32,
}

/// `POST /v1/app/accounts/{account_uuid}/record-client-agent`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct RecordClientAgentIn {
    /// When the customer granted the limited power of attorney; defaults to now.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(format = DateTime))]
    pub client_agent_accepted_at: Option<String>,
}

/// `POST /v1/app/accounts/{account_uuid}/flow-login` (`scope` may also come as a query
/// parameter).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowLoginIn {
    /// `enrollment`, `update-payment-method`, `billing`, `documents` or `renewal`.
    #[serde(default)]
    pub scope: Option<String>,
    /// Offer only this plan group's plans in the enrollment flow.
    #[serde(default)]
    pub plan_group_uuid: Option<Uuid>,
}

/// `POST /v1/account/flow-events`: what happened in the flow (the `service-flow-event`
/// message's fields; its other fields are ignored).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowEventIn {
    /// `opened`, `step_viewed`, `error_shown`, `exited`, `completed` or `handed_off`.
    #[serde(default)]
    pub name: Option<String>,
    /// The step shown (required for `step_viewed`): a lowercase slug such as `plan`.
    #[serde(default)]
    pub step: Option<String>,
    /// The code of the error shown (required for `error_shown`, refused otherwise).
    #[serde(default)]
    pub error_code: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowEventOut {
    /// The flow session's public id, as its messages and `flow.session_ended` name it.
    pub flow_session_id: Uuid,
}

/// One step of a flow funnel.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowFunnelStep {
    pub step: String,
    /// Sessions that showed this step.
    pub sessions: i64,
    /// Of the sessions started, as a percent with one decimal (`"62.5"`).
    pub share_percent: String,
}

/// `GET /v1/app/flow-funnel`: an app's flow sessions of one scope opened over a period.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowFunnelOut {
    pub scope: String,
    /// The period's first market day (America/Chicago): sessions count on the market day they
    /// opened, on the service's clock.
    pub from: NaiveDate,
    /// Its last market day (included).
    pub to: NaiveDate,
    pub sessions_started: i64,
    /// In the order of the flow's views, then any other step by sessions reaching it.
    pub steps: Vec<FlowFunnelStep>,
    pub sessions_completed: i64,
    /// Of the sessions started, as a percent with one decimal.
    pub completion_percent: String,
    /// Median time from a completed session's first event to its completion; null when none
    /// completed.
    pub median_duration_seconds: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct FlowLoginOut {
    /// Open it in an iframe or webview; it works once, within 10 minutes.
    pub login_link: String,
    pub scope: String,
    pub expires_at: Timestamp,
}
