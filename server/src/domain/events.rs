//! The events the service emits: every type (the one list webhook filters are checked
//! against) and, for each, the payload it carries.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

/// Every event type, as partners subscribe to them.
pub const EVENT_TYPES: &[&str] = &[
    "account.created",
    "enrollment.plan_requested",
    "enrollment.plan_accepted",
    "enrollment.identity_updated",
    "enrollment.finalized",
    "account.payment_method_added",
    "account.billing_address_updated",
    "account.payment_failed",
    "account.payment_successful",
    "account.payment_refunded",
    "account.payment_disputed",
    "account.status_updated",
    "account.credit_reviewed",
    "account.deposit_required",
    "account.deposit_paid",
    "account.deposit_refunded",
    "location.service_active",
    "location.service_canceled",
    "location.usage_history_available",
    "location.renewal_plan_requested",
    "location.renewal_plan_accepted",
    "location.renewal_email_sent",
    "invoice.created",
    "invoice.paid",
    "invoice.past_due",
    "invoice.late_fee_charged",
    "account.disconnection_notice_sent",
    "account.final_bill_notice_sent",
    "location.disconnection_requested",
    "location.disconnected",
    "location.reconnection_requested",
    "location.reconnected",
    "account.payment_plan_accepted",
    "account.payment_plan_ended",
    "invoice.corrected",
    "flow.session_ended",
    TEST_EVENT_TYPE,
];

/// The event `send-test` delivers to one endpoint (never fanned out to the others).
pub const TEST_EVENT_TYPE: &str = "webhook.test";

pub fn is_known_event_type(kind: &str) -> bool {
    EVENT_TYPES.contains(&kind)
}

/// Whether an endpoint subscribed to `filter` (empty: every type) receives `kind`.
pub fn endpoint_wants(filter: &[String], kind: &str) -> bool {
    filter.is_empty() || filter.iter().any(|f| f == kind)
}

/// What happened, with its payload: one variant per event type, so that every place that
/// announces a change builds the same fields. `kind()` is the type partners subscribe to and
/// `data()` the event's `data` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Event {
    /// A new account of the app (through the API or the hosted sign-up).
    AccountCreated {
        account_uuid: Uuid,
        account_number: String,
    },
    PlanRequested {
        account_uuid: Uuid,
        esi_id: Option<String>,
        postal_code: Option<String>,
        plan_uuids: Vec<Uuid>,
        is_custom: bool,
    },
    PlanAccepted {
        account_uuid: Uuid,
        location_uuid: Uuid,
        plan_uuid: Uuid,
        contract_uuid: Uuid,
        service_start_date: NaiveDate,
        accepted_by: String,
    },
    RenewalPlanRequested {
        account_uuid: Uuid,
        location_uuid: Uuid,
        plan_uuids: Vec<Uuid>,
    },
    RenewalPlanAccepted {
        account_uuid: Uuid,
        location_uuid: Uuid,
        plan_uuid: Uuid,
        contract_uuid: Uuid,
        service_start_date: NaiveDate,
        accepted_by: String,
    },
    IdentityUpdated {
        account_uuid: Uuid,
        is_identity_complete: bool,
    },
    Finalized {
        account_uuid: Uuid,
        is_client_agent_enrollment: bool,
    },
    PaymentMethodAdded {
        account_uuid: Uuid,
        card_brand: String,
        card_last4: String,
    },
    BillingAddressUpdated {
        account_uuid: Uuid,
        same_as_service_address: bool,
    },
    PaymentFailed(PaymentAttempt),
    PaymentSuccessful(PaymentAttempt),
    /// (Part of) a succeeded payment went back to the card: refunded by the operator from the
    /// dashboard (`source` `operator`), by a correction of the bill that left it overpaid
    /// (`correction`), or reported by the processor (`processor`).
    PaymentRefunded {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        payment_uuid: Uuid,
        /// This refund.
        amount_cents: i64,
        /// Everything refunded of the payment so far, this refund included.
        refunded_cents: i64,
        source: String,
    },
    /// The cardholder disputed a payment with their bank, as the processor reported.
    PaymentDisputed {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        payment_uuid: Uuid,
        amount_cents: i64,
    },
    StatusUpdated {
        account_uuid: Uuid,
        status: String,
        status_reason: String,
        previous_status: String,
        previous_status_reason: String,
    },
    /// The operator decided on a check the bureau did not approve.
    CreditReviewed {
        account_uuid: Uuid,
        review_uuid: Uuid,
        /// `approved`, `deposit_required` or `declined`.
        decision: String,
        /// What the bureau answered: `declined`, `not_found`, `frozen` or `error`.
        cause: String,
        deposit_cents: Option<i64>,
        /// Why it was declined (the customer is told too).
        reason: Option<String>,
    },
    DepositRequired {
        account_uuid: Uuid,
        deposit_uuid: Uuid,
        amount_cents: i64,
    },
    DepositPaid {
        account_uuid: Uuid,
        deposit_uuid: Uuid,
        amount_cents: i64,
    },
    /// The deposit comes back with its interest: as credits on the next bills after 12
    /// on-time payments (`reason` `on_time_payments`), or applied to the final bill
    /// (`final_bill`).
    DepositRefunded {
        account_uuid: Uuid,
        deposit_uuid: Uuid,
        amount_cents: i64,
        interest_cents: i64,
        refunded_cents: i64,
        reason: String,
        invoice_number: String,
    },
    ServiceActive {
        account_uuid: Uuid,
        location_uuid: Uuid,
        service_start_date: Option<NaiveDate>,
    },
    ServiceCanceled {
        account_uuid: Uuid,
        location_uuid: Uuid,
        final_service_date: Option<NaiveDate>,
        reason: String,
    },
    UsageHistoryAvailable {
        account_uuid: Uuid,
        location_uuid: Uuid,
    },
    RenewalEmailSent {
        account_uuid: Uuid,
        location_uuid: Uuid,
        contract_end: NaiveDate,
        days_left: i64,
    },
    InvoiceCreated {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        total_cents: i64,
        invoice_date: NaiveDate,
        payment_due_date: NaiveDate,
        status: String,
    },
    InvoicePaid {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        total_cents: i64,
        paid_at: DateTime<Utc>,
    },
    InvoicePastDue {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        total_cents: i64,
        payment_due_date: NaiveDate,
    },
    /// A late fee on a past-due bill (`penalized_invoice_number`), charged as a line of the
    /// next bill (`invoice_number`).
    InvoiceLateFeeCharged {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        penalized_invoice_number: String,
        base_cents: i64,
        /// Percent of `base_cents`, decimal string.
        percent: String,
        amount_cents: i64,
    },
    /// A written notice that service may be disconnected for the unpaid bill
    /// `invoice_number`, on `earliest_disconnection_date` at the earliest.
    DisconnectionNoticeSent {
        account_uuid: Uuid,
        location_uuid: Uuid,
        disconnection_uuid: Uuid,
        invoice_number: String,
        amount_cents: i64,
        notice_date: NaiveDate,
        earliest_disconnection_date: NaiveDate,
    },
    /// A final bill (the location no longer served) turned past due: the customer was told in
    /// writing what is owed, how to pay, and whom to ask for payment arrangements. No
    /// disconnection follows: there is no service left to disconnect.
    FinalBillNoticeSent {
        account_uuid: Uuid,
        location_uuid: Uuid,
        invoice_number: String,
        amount_cents: i64,
        /// Everything of the account past due, this bill included.
        past_due_cents: i64,
    },
    /// The utility was asked to disconnect the location for non-payment.
    DisconnectionRequested(ServiceOrder),
    /// The utility disconnected the location.
    Disconnected(ServiceOrder),
    /// Paid: the utility was asked to reconnect the location.
    ReconnectionRequested(ServiceOrder),
    /// The utility reconnected the location.
    Reconnected(ServiceOrder),
    PaymentPlanAccepted {
        account_uuid: Uuid,
        plan_uuid: Uuid,
        total_cents: i64,
        months: u32,
        instalment_cents: i64,
        /// `customer_request` or `weather_emergency`.
        reason: String,
        /// The unpaid bills the plan took over.
        invoice_numbers: Vec<String>,
    },
    PaymentPlanEnded {
        account_uuid: Uuid,
        plan_uuid: Uuid,
        /// `completed`, or `defaulted` (an instalment went unpaid).
        status: String,
        /// Not billed yet when it ended: due on the next bill.
        remaining_cents: i64,
    },
    /// The operator cancelled `original_invoice_number` (voided) and issued
    /// `invoice_number` with the corrected lines; `credit_note_number` cancels the original's
    /// amount.
    InvoiceCorrected {
        account_uuid: Uuid,
        location_uuid: Uuid,
        original_invoice_number: String,
        credit_note_number: String,
        invoice_number: String,
        reason: String,
        /// The corrected total.
        total_cents: i64,
        /// Paid on the cancelled bill, counted on the new one.
        paid_cents: i64,
        /// Still due on the new bill.
        due_cents: i64,
        /// Overpaid: credited on the next bill.
        credit_cents: i64,
        /// Overpaid: refunded to the card the bill was paid with.
        refunded_cents: i64,
    },
    /// A flow session ended (`domain::flow_events::session_state`): its summary.
    FlowSessionEnded {
        account_uuid: Uuid,
        flow_session_id: Uuid,
        scope: String,
        outcome: String,
        steps_reached: Vec<String>,
        last_step: Option<String>,
        duration_seconds: i64,
        started_at: DateTime<Utc>,
    },
    WebhookTest {
        endpoint_uuid: Uuid,
    },
}

/// A request to the utility about a location's service, as its events tell it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServiceOrder {
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub disconnection_uuid: Uuid,
    pub invoice_number: String,
}

/// A charge of an invoice, as its success and failure events tell it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaymentAttempt {
    pub account_uuid: Uuid,
    pub location_uuid: Uuid,
    pub invoice_number: String,
    pub payment_uuid: Uuid,
    pub amount_cents: i64,
    pub failure_code: Option<String>,
}

impl Event {
    /// The event's type, as partners subscribe to it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::AccountCreated { .. } => "account.created",
            Event::PlanRequested { .. } => "enrollment.plan_requested",
            Event::PlanAccepted { .. } => "enrollment.plan_accepted",
            Event::RenewalPlanRequested { .. } => "location.renewal_plan_requested",
            Event::RenewalPlanAccepted { .. } => "location.renewal_plan_accepted",
            Event::IdentityUpdated { .. } => "enrollment.identity_updated",
            Event::Finalized { .. } => "enrollment.finalized",
            Event::PaymentMethodAdded { .. } => "account.payment_method_added",
            Event::BillingAddressUpdated { .. } => "account.billing_address_updated",
            Event::PaymentFailed(_) => "account.payment_failed",
            Event::PaymentSuccessful(_) => "account.payment_successful",
            Event::PaymentRefunded { .. } => "account.payment_refunded",
            Event::PaymentDisputed { .. } => "account.payment_disputed",
            Event::StatusUpdated { .. } => "account.status_updated",
            Event::CreditReviewed { .. } => "account.credit_reviewed",
            Event::DepositRequired { .. } => "account.deposit_required",
            Event::DepositPaid { .. } => "account.deposit_paid",
            Event::DepositRefunded { .. } => "account.deposit_refunded",
            Event::ServiceActive { .. } => "location.service_active",
            Event::ServiceCanceled { .. } => "location.service_canceled",
            Event::UsageHistoryAvailable { .. } => "location.usage_history_available",
            Event::RenewalEmailSent { .. } => "location.renewal_email_sent",
            Event::InvoiceCreated { .. } => "invoice.created",
            Event::InvoicePaid { .. } => "invoice.paid",
            Event::InvoicePastDue { .. } => "invoice.past_due",
            Event::InvoiceLateFeeCharged { .. } => "invoice.late_fee_charged",
            Event::DisconnectionNoticeSent { .. } => "account.disconnection_notice_sent",
            Event::FinalBillNoticeSent { .. } => "account.final_bill_notice_sent",
            Event::DisconnectionRequested(_) => "location.disconnection_requested",
            Event::Disconnected(_) => "location.disconnected",
            Event::ReconnectionRequested(_) => "location.reconnection_requested",
            Event::Reconnected(_) => "location.reconnected",
            Event::PaymentPlanAccepted { .. } => "account.payment_plan_accepted",
            Event::PaymentPlanEnded { .. } => "account.payment_plan_ended",
            Event::InvoiceCorrected { .. } => "invoice.corrected",
            Event::FlowSessionEnded { .. } => "flow.session_ended",
            Event::WebhookTest { .. } => TEST_EVENT_TYPE,
        }
    }

    /// The account the event is about (none for a webhook test).
    pub fn account_uuid(&self) -> Option<Uuid> {
        match self {
            Event::AccountCreated { account_uuid, .. }
            | Event::PlanRequested { account_uuid, .. }
            | Event::PlanAccepted { account_uuid, .. }
            | Event::RenewalPlanRequested { account_uuid, .. }
            | Event::RenewalPlanAccepted { account_uuid, .. }
            | Event::IdentityUpdated { account_uuid, .. }
            | Event::Finalized { account_uuid, .. }
            | Event::PaymentMethodAdded { account_uuid, .. }
            | Event::BillingAddressUpdated { account_uuid, .. }
            | Event::PaymentRefunded { account_uuid, .. }
            | Event::PaymentDisputed { account_uuid, .. }
            | Event::StatusUpdated { account_uuid, .. }
            | Event::CreditReviewed { account_uuid, .. }
            | Event::DepositRequired { account_uuid, .. }
            | Event::DepositPaid { account_uuid, .. }
            | Event::DepositRefunded { account_uuid, .. }
            | Event::ServiceActive { account_uuid, .. }
            | Event::ServiceCanceled { account_uuid, .. }
            | Event::UsageHistoryAvailable { account_uuid, .. }
            | Event::RenewalEmailSent { account_uuid, .. }
            | Event::InvoiceCreated { account_uuid, .. }
            | Event::InvoicePaid { account_uuid, .. }
            | Event::InvoicePastDue { account_uuid, .. }
            | Event::InvoiceLateFeeCharged { account_uuid, .. }
            | Event::DisconnectionNoticeSent { account_uuid, .. }
            | Event::FinalBillNoticeSent { account_uuid, .. }
            | Event::PaymentPlanAccepted { account_uuid, .. }
            | Event::PaymentPlanEnded { account_uuid, .. }
            | Event::InvoiceCorrected { account_uuid, .. }
            | Event::FlowSessionEnded { account_uuid, .. } => Some(*account_uuid),
            Event::PaymentFailed(p) | Event::PaymentSuccessful(p) => Some(p.account_uuid),
            Event::DisconnectionRequested(o)
            | Event::Disconnected(o)
            | Event::ReconnectionRequested(o)
            | Event::Reconnected(o) => Some(o.account_uuid),
            Event::WebhookTest { .. } => None,
        }
    }

    /// The event's `data` object.
    pub fn data(&self) -> serde_json::Value {
        // Plain structs of ids, strings, numbers and dates always serialize.
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The JSON type of a field of an event's `data`, as the API reference documents it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Uuid,
    /// An array of uuids.
    Uuids,
    /// An array of strings.
    Texts,
    Text,
    Integer,
    Boolean,
    /// `YYYY-MM-DD`, the market's day.
    Date,
    /// RFC 3339, UTC.
    Timestamp,
}

/// One field of an event's `data`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDoc {
    pub name: &'static str,
    pub ty: FieldType,
    /// The field may be `null`.
    pub nullable: bool,
    pub about: &'static str,
}

/// What an event type means and the fields its `data` carries: the OpenAPI's schema of each
/// type and the README's table are written from this; a test holds it to what `Event::data`
/// really serializes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventDoc {
    pub kind: &'static str,
    pub about: &'static str,
    pub fields: &'static [FieldDoc],
}

const fn field(name: &'static str, ty: FieldType, about: &'static str) -> FieldDoc {
    FieldDoc {
        name,
        ty,
        nullable: false,
        about,
    }
}

const fn nullable(name: &'static str, ty: FieldType, about: &'static str) -> FieldDoc {
    FieldDoc {
        name,
        ty,
        nullable: true,
        about,
    }
}

/// The fields of the disconnection and reconnection events (`ServiceOrder`).
const SERVICE_ORDER_FIELDS: &[FieldDoc] = &[
    field("account_uuid", FieldType::Uuid, "The account."),
    field("location_uuid", FieldType::Uuid, "The location."),
    field(
        "disconnection_uuid",
        FieldType::Uuid,
        "The disconnection notice it follows.",
    ),
    field("invoice_number", FieldType::Text, "The unpaid bill."),
];

/// Every event type's documentation, in `EVENT_TYPES`' order.
pub const EVENT_DOCS: &[EventDoc] = &[
    EventDoc {
        kind: "account.created",
        about: "A new account of the app, made through the API or the hosted sign-up.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field(
                "account_number",
                FieldType::Text,
                "The account's number, as bills print it.",
            ),
        ],
    },
    EventDoc {
        kind: "enrollment.plan_requested",
        about: "Plans were priced for the account.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            nullable(
                "esi_id",
                FieldType::Text,
                "The meter priced for, when one was given.",
            ),
            nullable(
                "postal_code",
                FieldType::Text,
                "The ZIP code priced for, when no meter was given.",
            ),
            field("plan_uuids", FieldType::Uuids, "The plans priced."),
            field(
                "is_custom",
                FieldType::Boolean,
                "Priced with the app's own terms for this account.",
            ),
        ],
    },
    EventDoc {
        kind: "enrollment.plan_accepted",
        about: "A plan was accepted: the location and its contract exist.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            field("plan_uuid", FieldType::Uuid, "The plan accepted."),
            field("contract_uuid", FieldType::Uuid, "The contract made."),
            field(
                "service_start_date",
                FieldType::Date,
                "The start date asked for.",
            ),
            field(
                "accepted_by",
                FieldType::Text,
                "`customer` or `client_agent`.",
            ),
        ],
    },
    EventDoc {
        kind: "enrollment.identity_updated",
        about: "The customer's identity details changed.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field(
                "is_identity_complete",
                FieldType::Boolean,
                "Whether every identity detail enrollment needs is given.",
            ),
        ],
    },
    EventDoc {
        kind: "enrollment.finalized",
        about: "The enrollment was finalized and goes to verification.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field(
                "is_client_agent_enrollment",
                FieldType::Boolean,
                "Finalized by the partner on the customer's behalf.",
            ),
        ],
    },
    EventDoc {
        kind: "account.payment_method_added",
        about: "A card became the account's payment method.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("card_brand", FieldType::Text, "`visa`, `mastercard`, ..."),
            field(
                "card_last4",
                FieldType::Text,
                "The card's last four digits.",
            ),
        ],
    },
    EventDoc {
        kind: "account.billing_address_updated",
        about: "The billing address was set.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field(
                "same_as_service_address",
                FieldType::Boolean,
                "Bills go to the service address.",
            ),
        ],
    },
    EventDoc {
        kind: "account.payment_failed",
        about: "A charge of an invoice was declined.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("payment_uuid", FieldType::Uuid, "The payment attempt."),
            field("amount_cents", FieldType::Integer, "The amount tried."),
            nullable(
                "failure_code",
                FieldType::Text,
                "Why it failed (`card_declined`, `insufficient_funds`, ...).",
            ),
        ],
    },
    EventDoc {
        kind: "account.payment_successful",
        about: "An invoice was paid.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("payment_uuid", FieldType::Uuid, "The payment."),
            field("amount_cents", FieldType::Integer, "The amount paid."),
            nullable("failure_code", FieldType::Text, "Always null."),
        ],
    },
    EventDoc {
        kind: "account.payment_refunded",
        about: "(Part of) a paid invoice's payment went back to the card.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("payment_uuid", FieldType::Uuid, "The payment refunded."),
            field("amount_cents", FieldType::Integer, "This refund."),
            field(
                "refunded_cents",
                FieldType::Integer,
                "Everything refunded of the payment so far, this refund included.",
            ),
            field(
                "source",
                FieldType::Text,
                "`operator` (refunded from the dashboard), `correction` (the overpayment a correction of the bill left, refunded as the operator chose) or `processor` (reported by the card processor).",
            ),
        ],
    },
    EventDoc {
        kind: "account.payment_disputed",
        about: "The cardholder disputed a payment with their bank, as the card processor reported.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("payment_uuid", FieldType::Uuid, "The payment disputed."),
            field("amount_cents", FieldType::Integer, "The amount disputed."),
        ],
    },
    EventDoc {
        kind: "account.status_updated",
        about: "The account's status or its reason changed.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("status", FieldType::Text, "The new status."),
            field("status_reason", FieldType::Text, "The new reason."),
            field("previous_status", FieldType::Text, "The status before."),
            field(
                "previous_status_reason",
                FieldType::Text,
                "The reason before.",
            ),
        ],
    },
    EventDoc {
        kind: "account.credit_reviewed",
        about: "The operator decided on a credit check the bureau did not approve.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("review_uuid", FieldType::Uuid, "The review."),
            field(
                "decision",
                FieldType::Text,
                "`approved`, `deposit_required` or `declined`.",
            ),
            field(
                "cause",
                FieldType::Text,
                "What the bureau answered: `declined`, `not_found`, `frozen` or `error`.",
            ),
            nullable(
                "deposit_cents",
                FieldType::Integer,
                "The deposit asked for.",
            ),
            nullable("reason", FieldType::Text, "Why it was declined."),
        ],
    },
    EventDoc {
        kind: "account.deposit_required",
        about: "A deposit is needed before the enrollment goes on.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("deposit_uuid", FieldType::Uuid, "The deposit."),
            field("amount_cents", FieldType::Integer, "Its amount."),
        ],
    },
    EventDoc {
        kind: "account.deposit_paid",
        about: "The required deposit was paid.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("deposit_uuid", FieldType::Uuid, "The deposit."),
            field("amount_cents", FieldType::Integer, "The amount paid."),
        ],
    },
    EventDoc {
        kind: "account.deposit_refunded",
        about: "The deposit comes back with its interest: credited on the bills after 12 bills in a row paid on time, or applied to the final bill.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("deposit_uuid", FieldType::Uuid, "The deposit."),
            field("amount_cents", FieldType::Integer, "The deposit held."),
            field("interest_cents", FieldType::Integer, "The interest it earned."),
            field(
                "refunded_cents",
                FieldType::Integer,
                "What comes back in all, deposit and interest.",
            ),
            field(
                "reason",
                FieldType::Text,
                "`on_time_payments` or `final_bill`.",
            ),
            field(
                "invoice_number",
                FieldType::Text,
                "The bill carrying the first credit line.",
            ),
        ],
    },
    EventDoc {
        kind: "location.service_active",
        about: "Service started at a location.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            nullable(
                "service_start_date",
                FieldType::Date,
                "The day service started.",
            ),
        ],
    },
    EventDoc {
        kind: "location.service_canceled",
        about: "Service ended, or will end, at a location.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            nullable(
                "final_service_date",
                FieldType::Date,
                "The last day of service.",
            ),
            field(
                "reason",
                FieldType::Text,
                "`moving`, `switching`, `other`, `customer_switched_away`, ...",
            ),
        ],
    },
    EventDoc {
        kind: "location.usage_history_available",
        about: "The utility's usage history of a location arrived.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
        ],
    },
    EventDoc {
        kind: "location.renewal_plan_requested",
        about: "Renewal plans were priced for a location.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            field("plan_uuids", FieldType::Uuids, "The plans priced."),
        ],
    },
    EventDoc {
        kind: "location.renewal_plan_accepted",
        about:
            "A renewal plan was accepted: its contract starts the day after the current one ends.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            field("plan_uuid", FieldType::Uuid, "The plan accepted."),
            field("contract_uuid", FieldType::Uuid, "The renewal's contract."),
            field("service_start_date", FieldType::Date, "The day it starts."),
            field(
                "accepted_by",
                FieldType::Text,
                "`customer` or `client_agent`.",
            ),
        ],
    },
    EventDoc {
        kind: "location.renewal_email_sent",
        about: "An expiration notice was e-mailed.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            field("contract_end", FieldType::Date, "The contract's last day."),
            field(
                "days_left",
                FieldType::Integer,
                "Days from the notice to the end.",
            ),
        ],
    },
    EventDoc {
        kind: "invoice.created",
        about: "An invoice was issued.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("total_cents", FieldType::Integer, "Its total."),
            field("invoice_date", FieldType::Date, "The day it was issued."),
            field("payment_due_date", FieldType::Date, "The day it is due."),
            field("status", FieldType::Text, "Its status."),
        ],
    },
    EventDoc {
        kind: "invoice.paid",
        about: "An invoice was paid in full.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("total_cents", FieldType::Integer, "Its total."),
            field("paid_at", FieldType::Timestamp, "When it was paid."),
        ],
    },
    EventDoc {
        kind: "invoice.past_due",
        about: "An invoice was not paid by its due date.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("invoice_number", FieldType::Text, "The invoice."),
            field("total_cents", FieldType::Integer, "Its total."),
            field("payment_due_date", FieldType::Date, "The day it was due."),
        ],
    },
    EventDoc {
        kind: "invoice.late_fee_charged",
        about: "A late fee on a past-due bill was charged as a line of the next bill.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field(
                "invoice_number",
                FieldType::Text,
                "The bill that charges the fee.",
            ),
            field(
                "penalized_invoice_number",
                FieldType::Text,
                "The past-due bill.",
            ),
            field(
                "base_cents",
                FieldType::Integer,
                "The unpaid amount the fee is on.",
            ),
            field(
                "percent",
                FieldType::Text,
                "The fee's percent, as a decimal string.",
            ),
            field("amount_cents", FieldType::Integer, "The fee."),
        ],
    },
    EventDoc {
        kind: "account.disconnection_notice_sent",
        about: "A written notice that service may be disconnected for an unpaid bill.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location."),
            field("disconnection_uuid", FieldType::Uuid, "The notice (see `GET /v1/account/billing/disconnections`)."),
            field("invoice_number", FieldType::Text, "The unpaid bill."),
            field("amount_cents", FieldType::Integer, "The amount to pay to avoid it."),
            field("notice_date", FieldType::Date, "The day the notice was sent."),
            field("earliest_disconnection_date", FieldType::Date, "The first day service may be disconnected."),
        ],
    },
    EventDoc {
        kind: "account.final_bill_notice_sent",
        about: "A final bill (service at the location ended) turned past due: the customer was told in writing what is owed, how to pay, and whom to ask for payment arrangements. No disconnection follows.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location no longer served."),
            field("invoice_number", FieldType::Text, "The unpaid final bill."),
            field("amount_cents", FieldType::Integer, "The bill's amount."),
            field("past_due_cents", FieldType::Integer, "Everything of the account past due, this bill included."),
        ],
    },
    EventDoc {
        kind: "location.disconnection_requested",
        about: "The utility was asked to disconnect the location for non-payment.",
        fields: SERVICE_ORDER_FIELDS,
    },
    EventDoc {
        kind: "location.disconnected",
        about: "The utility disconnected the location.",
        fields: SERVICE_ORDER_FIELDS,
    },
    EventDoc {
        kind: "location.reconnection_requested",
        about: "Nothing is past due any more: the utility was asked to reconnect the location.",
        fields: SERVICE_ORDER_FIELDS,
    },
    EventDoc {
        kind: "location.reconnected",
        about: "The utility reconnected the location.",
        fields: SERVICE_ORDER_FIELDS,
    },
    EventDoc {
        kind: "account.payment_plan_accepted",
        about: "A deferred payment plan took the unpaid bills over.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("plan_uuid", FieldType::Uuid, "The payment plan."),
            field("total_cents", FieldType::Integer, "The balance the plan spreads."),
            field("months", FieldType::Integer, "Its instalments, one per bill."),
            field("instalment_cents", FieldType::Integer, "Each instalment."),
            field("reason", FieldType::Text, "`customer_request` or `weather_emergency`."),
            field("invoice_numbers", FieldType::Texts, "The unpaid bills the plan took over."),
        ],
    },
    EventDoc {
        kind: "account.payment_plan_ended",
        about: "A payment plan ended.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("plan_uuid", FieldType::Uuid, "The payment plan."),
            field("status", FieldType::Text, "`completed`, or `defaulted` (an instalment went unpaid)."),
            field("remaining_cents", FieldType::Integer, "Not billed yet when it ended: due on the next bill."),
        ],
    },
    EventDoc {
        kind: "invoice.corrected",
        about: "The operator cancelled a bill and issued it again with corrected lines.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("location_uuid", FieldType::Uuid, "The location billed."),
            field("original_invoice_number", FieldType::Text, "The cancelled bill (voided)."),
            field("credit_note_number", FieldType::Text, "The credit note cancelling its amount."),
            field("invoice_number", FieldType::Text, "The corrected bill."),
            field("reason", FieldType::Text, "Why, as the customer was told."),
            field("total_cents", FieldType::Integer, "The corrected total."),
            field("paid_cents", FieldType::Integer, "Paid on the cancelled bill, counted on the new one."),
            field("due_cents", FieldType::Integer, "Still due on the new bill."),
            field("credit_cents", FieldType::Integer, "Overpaid: credited on the next bill."),
            field("refunded_cents", FieldType::Integer, "Overpaid: refunded to the card the bill was paid with (`account.payment_refunded` with `source` `correction`)."),
        ],
    },
    EventDoc {
        kind: "flow.session_ended",
        about: "A flow session ended: completed, left (`exited`, or `handed_off` to another flow), or abandoned (no event for 10 minutes); sent once per session, within 15 minutes of its end.",
        fields: &[
            field("account_uuid", FieldType::Uuid, "The account."),
            field("flow_session_id", FieldType::Uuid, "The session, as its `service-flow-event` messages name it."),
            field("scope", FieldType::Text, "The flow: `enrollment`, `update-payment-method`, `billing`, `documents` or `renewal`."),
            field("outcome", FieldType::Text, "`completed`, `exited`, `handed_off` or `abandoned`."),
            field("steps_reached", FieldType::Texts, "The steps shown, in the order first shown."),
            nullable("last_step", FieldType::Text, "The last step shown (none when the flow never showed one)."),
            field("duration_seconds", FieldType::Integer, "From the session's first event to the one that ended it (its last, when abandoned)."),
            field("started_at", FieldType::Timestamp, "When the flow link was opened."),
        ],
    },
    EventDoc {
        kind: "webhook.test",
        about: "A test event sent to one endpoint from the dashboard or the API.",
        fields: &[field(
            "endpoint_uuid",
            FieldType::Uuid,
            "The endpoint tested.",
        )],
    },
];

/// The documentation of an event type.
pub fn event_doc(kind: &str) -> Option<&'static EventDoc> {
    EVENT_DOCS.iter().find(|d| d.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One event of every type, every optional field given.
    fn samples() -> Vec<Event> {
        let id = Uuid::from_u128(7);
        let day = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        let at = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let attempt = PaymentAttempt {
            account_uuid: id,
            location_uuid: id,
            invoice_number: "INV-1".to_owned(),
            payment_uuid: id,
            amount_cents: 100,
            failure_code: Some("card_declined".to_owned()),
        };
        let order = ServiceOrder {
            account_uuid: id,
            location_uuid: id,
            disconnection_uuid: id,
            invoice_number: "I".to_owned(),
        };
        vec![
            Event::AccountCreated {
                account_uuid: id,
                account_number: "A-1".to_owned(),
            },
            Event::PlanRequested {
                account_uuid: id,
                esi_id: Some("1".to_owned()),
                postal_code: Some("75201".to_owned()),
                plan_uuids: vec![id],
                is_custom: false,
            },
            Event::PlanAccepted {
                account_uuid: id,
                location_uuid: id,
                plan_uuid: id,
                contract_uuid: id,
                service_start_date: day,
                accepted_by: "customer".to_owned(),
            },
            Event::IdentityUpdated {
                account_uuid: id,
                is_identity_complete: true,
            },
            Event::Finalized {
                account_uuid: id,
                is_client_agent_enrollment: false,
            },
            Event::PaymentMethodAdded {
                account_uuid: id,
                card_brand: "visa".to_owned(),
                card_last4: "4242".to_owned(),
            },
            Event::BillingAddressUpdated {
                account_uuid: id,
                same_as_service_address: true,
            },
            Event::PaymentFailed(attempt.clone()),
            Event::PaymentSuccessful(attempt),
            Event::PaymentRefunded {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                payment_uuid: id,
                amount_cents: 1,
                refunded_cents: 1,
                source: "operator".to_owned(),
            },
            Event::PaymentDisputed {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                payment_uuid: id,
                amount_cents: 1,
            },
            Event::StatusUpdated {
                account_uuid: id,
                status: "a".to_owned(),
                status_reason: "b".to_owned(),
                previous_status: "c".to_owned(),
                previous_status_reason: "d".to_owned(),
            },
            Event::CreditReviewed {
                account_uuid: id,
                review_uuid: id,
                decision: "declined".to_owned(),
                cause: "declined".to_owned(),
                deposit_cents: Some(1),
                reason: Some("r".to_owned()),
            },
            Event::DepositRequired {
                account_uuid: id,
                deposit_uuid: id,
                amount_cents: 1,
            },
            Event::DepositPaid {
                account_uuid: id,
                deposit_uuid: id,
                amount_cents: 1,
            },
            Event::DepositRefunded {
                account_uuid: id,
                deposit_uuid: id,
                amount_cents: 1,
                interest_cents: 1,
                refunded_cents: 2,
                reason: "final_bill".to_owned(),
                invoice_number: "I".to_owned(),
            },
            Event::ServiceActive {
                account_uuid: id,
                location_uuid: id,
                service_start_date: Some(day),
            },
            Event::ServiceCanceled {
                account_uuid: id,
                location_uuid: id,
                final_service_date: Some(day),
                reason: "moving".to_owned(),
            },
            Event::UsageHistoryAvailable {
                account_uuid: id,
                location_uuid: id,
            },
            Event::RenewalPlanRequested {
                account_uuid: id,
                location_uuid: id,
                plan_uuids: vec![id],
            },
            Event::RenewalPlanAccepted {
                account_uuid: id,
                location_uuid: id,
                plan_uuid: id,
                contract_uuid: id,
                service_start_date: day,
                accepted_by: "customer".to_owned(),
            },
            Event::RenewalEmailSent {
                account_uuid: id,
                location_uuid: id,
                contract_end: day,
                days_left: 30,
            },
            Event::InvoiceCreated {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                total_cents: 1,
                invoice_date: day,
                payment_due_date: day,
                status: "open".to_owned(),
            },
            Event::InvoicePaid {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                total_cents: 1,
                paid_at: at,
            },
            Event::InvoicePastDue {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                total_cents: 1,
                payment_due_date: day,
            },
            Event::InvoiceLateFeeCharged {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                penalized_invoice_number: "H".to_owned(),
                base_cents: 1,
                percent: "5".to_owned(),
                amount_cents: 1,
            },
            Event::DisconnectionNoticeSent {
                account_uuid: id,
                location_uuid: id,
                disconnection_uuid: id,
                invoice_number: "I".to_owned(),
                amount_cents: 1,
                notice_date: day,
                earliest_disconnection_date: day,
            },
            Event::FinalBillNoticeSent {
                account_uuid: id,
                location_uuid: id,
                invoice_number: "I".to_owned(),
                amount_cents: 1,
                past_due_cents: 1,
            },
            Event::DisconnectionRequested(order.clone()),
            Event::Disconnected(order.clone()),
            Event::ReconnectionRequested(order.clone()),
            Event::Reconnected(order),
            Event::PaymentPlanAccepted {
                account_uuid: id,
                plan_uuid: id,
                total_cents: 1,
                months: 2,
                instalment_cents: 1,
                reason: "customer_request".to_owned(),
                invoice_numbers: vec!["I".to_owned()],
            },
            Event::PaymentPlanEnded {
                account_uuid: id,
                plan_uuid: id,
                status: "completed".to_owned(),
                remaining_cents: 0,
            },
            Event::InvoiceCorrected {
                account_uuid: id,
                location_uuid: id,
                original_invoice_number: "H".to_owned(),
                credit_note_number: "I".to_owned(),
                invoice_number: "J".to_owned(),
                reason: "meter misread".to_owned(),
                total_cents: 1,
                paid_cents: 1,
                due_cents: 0,
                credit_cents: 0,
                refunded_cents: 0,
            },
            Event::FlowSessionEnded {
                account_uuid: id,
                flow_session_id: id,
                scope: "enrollment".to_owned(),
                outcome: "completed".to_owned(),
                steps_reached: vec!["address".to_owned()],
                last_step: Some("done".to_owned()),
                duration_seconds: 60,
                started_at: at,
            },
            Event::WebhookTest { endpoint_uuid: id },
        ]
    }

    #[test]
    fn every_type_is_documented_with_exactly_the_fields_it_carries() {
        let kinds: Vec<&str> = EVENT_DOCS.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, EVENT_TYPES);
        let samples = samples();
        let sampled: Vec<&str> = samples.iter().map(Event::kind).collect();
        assert_eq!(sampled, EVENT_TYPES, "one sample per type, in order");
        for event in samples {
            let doc = event_doc(event.kind()).unwrap();
            let data = event.data();
            let object = data.as_object().unwrap();
            let mut carried: Vec<&str> = object.keys().map(String::as_str).collect();
            let mut documented: Vec<&str> = doc.fields.iter().map(|f| f.name).collect();
            carried.sort_unstable();
            documented.sort_unstable();
            assert_eq!(carried, documented, "{}", doc.kind);
            for f in doc.fields {
                let v = &object[f.name];
                let ok = match f.ty {
                    FieldType::Uuid => v.as_str().is_some_and(|s| s.parse::<Uuid>().is_ok()),
                    FieldType::Uuids => v.as_array().is_some_and(|a| {
                        a.iter()
                            .all(|x| x.as_str().is_some_and(|s| s.parse::<Uuid>().is_ok()))
                    }),
                    FieldType::Texts => v
                        .as_array()
                        .is_some_and(|a| a.iter().all(|x| x.is_string())),
                    FieldType::Text => v.is_string(),
                    FieldType::Integer => v.is_i64(),
                    FieldType::Boolean => v.is_boolean(),
                    FieldType::Date => v.as_str().is_some_and(|s| s.parse::<NaiveDate>().is_ok()),
                    FieldType::Timestamp => v
                        .as_str()
                        .is_some_and(|s| s.parse::<DateTime<Utc>>().is_ok()),
                };
                assert!(ok, "{}.{}: {v}", doc.kind, f.name);
            }
        }
    }

    #[test]
    fn empty_filters_take_everything() {
        assert!(endpoint_wants(&[], "invoice.paid"));
        let only = vec!["invoice.paid".to_owned()];
        assert!(endpoint_wants(&only, "invoice.paid"));
        assert!(!endpoint_wants(&only, "invoice.created"));
    }

    #[test]
    fn the_spec_events_are_known() {
        assert!(is_known_event_type("location.renewal_email_sent"));
        assert!(is_known_event_type("account.status_updated"));
        assert!(!is_known_event_type("account.deleted"));
        assert_eq!(EVENT_TYPES.len(), 37);
    }

    #[test]
    fn an_event_carries_its_type_and_only_its_fields() {
        let account_uuid = Uuid::nil();
        let e = Event::Finalized {
            account_uuid,
            is_client_agent_enrollment: true,
        };
        assert!(is_known_event_type(e.kind()));
        assert_eq!(
            e.data(),
            serde_json::json!({"account_uuid": account_uuid, "is_client_agent_enrollment": true})
        );
        let paid = Event::PaymentFailed(PaymentAttempt {
            account_uuid,
            location_uuid: account_uuid,
            invoice_number: "INV-1".to_owned(),
            payment_uuid: account_uuid,
            amount_cents: 1234,
            failure_code: Some("card_declined".to_owned()),
        });
        assert_eq!(paid.kind(), "account.payment_failed");
        assert_eq!(paid.data()["amount_cents"], 1234);
        let renewal = Event::RenewalPlanRequested {
            account_uuid,
            location_uuid: account_uuid,
            plan_uuids: vec![account_uuid],
        };
        assert_eq!(renewal.kind(), "location.renewal_plan_requested");
        assert!(is_known_event_type(renewal.kind()));
        assert_eq!(
            renewal.data(),
            serde_json::json!({"account_uuid": account_uuid, "location_uuid": account_uuid,
                "plan_uuids": [account_uuid]})
        );
    }
}
