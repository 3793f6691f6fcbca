//! Wire types of events, webhook endpoints and their deliveries, the sandbox clock and the
//! sandbox e-mail log (with its attachments).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

use super::{Account, Environment, Patch, Timestamp};

/// Something that happened, as listed and as delivered to webhook endpoints.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Event {
    pub uuid: Uuid,
    /// `enrollment.plan_accepted`, `invoice.created`, ...
    #[serde(rename = "type")]
    pub kind: String,
    pub created_at: Timestamp,
    pub environment: Environment,
    /// Ids (`account_uuid`, `location_uuid`, `invoice_number`...) and the few fields a receiver
    /// needs to act.
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub data: serde_json::Value,
}

/// A webhook endpoint. `secret` appears only in the answers of create and rotate-secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct WebhookEndpoint {
    pub uuid: Uuid,
    pub url: String,
    /// Event types sent to this endpoint; empty means all.
    pub event_types: Vec<String>,
    pub description: Option<String>,
    pub disabled: bool,
    /// `endpoint_gone` (it answered 410), `failing_for_5_days` or `disabled_by_app`.
    pub disabled_reason: Option<String>,
    pub created_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `POST /v1/app/webhook-endpoints`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct CreateWebhookEndpointIn {
    /// An absolute `https` URL.
    pub url: String,
    #[serde(default)]
    pub event_types: Vec<String>,
    #[cfg_attr(feature = "ssr", schema(max_length = 500))]
    pub description: Option<String>,
    #[serde(default)]
    pub disabled: bool,
}

/// `PATCH /v1/app/webhook-endpoints/{uuid}`: absent keys stay.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct UpdateWebhookEndpointIn {
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    pub url: Patch<String>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<Vec<String>>))]
    pub event_types: Patch<Vec<String>>,
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, max_length = 500))]
    pub description: Patch<String>,
    /// `false` re-enables an endpoint that was disabled.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<bool>))]
    pub disabled: Patch<bool>,
}

/// The answer of a DELETE.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Deleted {
    pub uuid: Uuid,
    pub deleted: bool,
}

/// One delivery attempt of an event to an endpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Delivery {
    pub uuid: Uuid,
    pub event_uuid: Uuid,
    pub event_type: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// `succeeded`, `failed` or `pending`.
    pub status: String,
    pub response_status: Option<u16>,
    pub error: Option<String>,
    pub attempted_at: Timestamp,
    /// When the next attempt is due; null when none will follow.
    pub next_attempt_at: Option<Timestamp>,
}

/// `POST /v1/app/webhook-endpoints/{uuid}/recover`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct RecoverIn {
    /// Re-send every event created at or after this instant.
    pub since: Timestamp,
}

/// Deliveries scheduled by recover, redeliver and send-test.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct DeliveriesScheduled {
    pub scheduled: u32,
    /// The event sent (send-test and redeliver).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_uuid: Option<Uuid>,
}

/// `POST /v1/app/events/{uuid}/redeliver`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct RedeliverIn {
    /// Only to this endpoint; by default to every enabled endpoint that subscribes to it.
    pub endpoint_uuid: Option<Uuid>,
}

/// `POST /v1/account/sandbox/simulate`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct SimulateIn {
    /// One of `credit_check_frozen`, `credit_check_unfrozen`, `credit_declined`,
    /// `credit_not_found`, `credit_check_error`, `switch_hold`, `switch_hold_lifted`,
    /// `verification_hold`, `meter_deactivated`, `utility_blocked`, `utility_accepted`,
    /// `service_active`, `service_canceled`, `customer_switched_away`,
    /// `usage_history_available`, `invoice_generated`, `payment_failed`.
    pub event: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct SimulateOut {
    /// The event simulated.
    pub event: String,
    pub account: Account,
    /// The account's clock after the simulation.
    pub clock: Timestamp,
    /// Events emitted by the simulation, oldest first.
    pub events: Vec<Event>,
}

/// `POST /v1/account/sandbox/advance-clock`: exactly one of `to` and `days`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AdvanceClockIn {
    /// Move the account's clock to this instant (not before its present).
    pub to: Option<Timestamp>,
    /// Move the account's clock this many days ahead (1 to 3650): to the same time of day in
    /// the market (America/Chicago), so that its date moves by exactly that many days.
    #[cfg_attr(feature = "ssr", schema(minimum = 1, maximum = 3650))]
    pub days: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct AdvanceClockOut {
    pub account: Account,
    /// The account's clock after the move.
    pub clock: Timestamp,
    /// Events emitted on the way, oldest first.
    pub events: Vec<Event>,
}

/// An e-mail the service sent (or, without SMTP, kept).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct Email {
    pub uuid: Uuid,
    pub account_uuid: Option<Uuid>,
    pub template: String,
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
    /// `queued`, `sent`, `stored` (kept without SMTP) or `failed`.
    pub status: String,
    pub created_at: Timestamp,
    pub sent_at: Option<Timestamp>,
    /// The documents it carries (an expiration notice's PDF), without their bytes.
    #[serde(default)]
    pub attachments: Vec<EmailAttachment>,
}

/// A document attached to a sent e-mail.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
pub struct EmailAttachment {
    pub uuid: Uuid,
    /// The file name the message gives it, e.g. `renewal-notice-2027-11-30.pdf`.
    pub filename: String,
    pub content_type: String,
    pub size_bytes: u64,
    /// SHA-256 of the bytes, lowercase hex.
    pub sha256: String,
    /// `GET` it with the AppToken for the bytes:
    /// `/v1/app/sandbox/emails/{email_uuid}/attachments/{attachment_uuid}`.
    pub url: String,
}
