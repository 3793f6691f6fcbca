//! The events the service emits: every type (the one list webhook filters are checked
//! against) and, for each, the payload it carries.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use uuid::Uuid;

/// Every event type, as partners subscribe to them.
pub const EVENT_TYPES: &[&str] = &[
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
    "location.disconnection_requested",
    "location.disconnected",
    "location.reconnection_requested",
    "location.reconnected",
    "account.payment_plan_accepted",
    "account.payment_plan_ended",
    "invoice.corrected",
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
    /// dashboard (`source` `operator`) or reported by the processor (`processor`).
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
            Event::ServiceActive { .. } => "location.service_active",
            Event::ServiceCanceled { .. } => "location.service_canceled",
            Event::UsageHistoryAvailable { .. } => "location.usage_history_available",
            Event::RenewalEmailSent { .. } => "location.renewal_email_sent",
            Event::InvoiceCreated { .. } => "invoice.created",
            Event::InvoicePaid { .. } => "invoice.paid",
            Event::InvoicePastDue { .. } => "invoice.past_due",
            Event::InvoiceLateFeeCharged { .. } => "invoice.late_fee_charged",
            Event::DisconnectionNoticeSent { .. } => "account.disconnection_notice_sent",
            Event::DisconnectionRequested(_) => "location.disconnection_requested",
            Event::Disconnected(_) => "location.disconnected",
            Event::ReconnectionRequested(_) => "location.reconnection_requested",
            Event::Reconnected(_) => "location.reconnected",
            Event::PaymentPlanAccepted { .. } => "account.payment_plan_accepted",
            Event::PaymentPlanEnded { .. } => "account.payment_plan_ended",
            Event::InvoiceCorrected { .. } => "invoice.corrected",
            Event::WebhookTest { .. } => TEST_EVENT_TYPE,
        }
    }

    /// The account the event is about (none for a webhook test).
    pub fn account_uuid(&self) -> Option<Uuid> {
        match self {
            Event::PlanRequested { account_uuid, .. }
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
            | Event::ServiceActive { account_uuid, .. }
            | Event::ServiceCanceled { account_uuid, .. }
            | Event::UsageHistoryAvailable { account_uuid, .. }
            | Event::RenewalEmailSent { account_uuid, .. }
            | Event::InvoiceCreated { account_uuid, .. }
            | Event::InvoicePaid { account_uuid, .. }
            | Event::InvoicePastDue { account_uuid, .. }
            | Event::InvoiceLateFeeCharged { account_uuid, .. }
            | Event::DisconnectionNoticeSent { account_uuid, .. }
            | Event::PaymentPlanAccepted { account_uuid, .. }
            | Event::PaymentPlanEnded { account_uuid, .. }
            | Event::InvoiceCorrected { account_uuid, .. } => Some(*account_uuid),
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(EVENT_TYPES.len(), 33);
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
