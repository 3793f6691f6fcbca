//! The event types the service emits, the one list webhook filters are checked against.

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
    "account.status_updated",
    "location.service_active",
    "location.service_canceled",
    "location.usage_history_available",
    "location.renewal_plan_requested",
    "location.renewal_plan_accepted",
    "location.renewal_email_sent",
    "invoice.created",
    "invoice.paid",
    "invoice.past_due",
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
        assert_eq!(EVENT_TYPES.len(), 19);
    }
}
