//! Rules of the credit check: when a check (re)runs, how often a frozen or failed check is
//! retried, which outcomes the customer is told about, and the sandbox's simulated events.

use chrono::Duration;

use super::status::CreditState;

/// A frozen file is looked at again this often (on the account's clock), so that the enrollment
/// moves on by itself once the customer lifts the freeze.
pub const FROZEN_RETRY: Duration = Duration::hours(6);

/// First retry after the bureau could not answer; doubles on each attempt, up to `FROZEN_RETRY`.
pub const ERROR_FIRST_RETRY: Duration = Duration::minutes(5);

/// Attempts of one check before it stops retrying (about 30 days at one look every 6 hours);
/// the account then stays in `needs_attention` until support or a new submission restarts it.
pub const MAX_CHECK_ATTEMPTS: u32 = 120;

/// Whether a submission in `state` should be (re)run when enrollment asks for the check. A check
/// that answered for good (passed, declined, not found) is not asked again.
pub fn should_run(state: CreditState) -> bool {
    matches!(
        state,
        CreditState::Submitted | CreditState::Pending | CreditState::Frozen | CreditState::Error
    )
}

/// When to ask the bureau again after `attempt` (1 for the first) answered `state`; `None` when
/// the answer is final or the attempts are used up.
pub fn next_attempt_in(state: CreditState, attempt: u32) -> Option<Duration> {
    if attempt >= MAX_CHECK_ATTEMPTS {
        return None;
    }
    match state {
        CreditState::Frozen => Some(FROZEN_RETRY),
        CreditState::Error => {
            let doublings = attempt.saturating_sub(1).min(10);
            Some((ERROR_FIRST_RETRY * (1i32 << doublings)).min(FROZEN_RETRY))
        }
        _ => None,
    }
}

/// What the customer is e-mailed when a check moves from `before` to `after` (once per change,
/// never on a retry that answers the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditNotice {
    /// Approved: no deposit, and what happens next.
    Approved,
    /// A link to the bureau's unfreeze portal; the check is retried automatically.
    Frozen,
    /// Declined: support contacts the customer about alternatives.
    Declined,
    /// No credit file found: support contacts the customer about other proof.
    NotFound,
}

pub fn notice_for(before: CreditState, after: CreditState) -> Option<CreditNotice> {
    if before == after {
        return None;
    }
    match after {
        CreditState::Passed => Some(CreditNotice::Approved),
        CreditState::Frozen => Some(CreditNotice::Frozen),
        CreditState::Declined => Some(CreditNotice::Declined),
        CreditState::NotFound => Some(CreditNotice::NotFound),
        _ => None,
    }
}

/// A credit event the sandbox can simulate on an account's latest submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditSimulation {
    Frozen,
    Unfrozen,
    Declined,
    NotFound,
    Error,
}

impl CreditSimulation {
    /// Whether the check runs again at once (an unfreeze waits for the scheduled retry, as it
    /// would with the real bureau).
    pub fn runs_check_now(self) -> bool {
        self != CreditSimulation::Unfrozen
    }
}

/// Every event name `POST /v1/account/sandbox/simulate` knows.
pub const SIMULATED_EVENTS: &[&str] = &[
    "credit_check_frozen",
    "credit_check_unfrozen",
    "credit_declined",
    "credit_not_found",
    "credit_check_error",
    "switch_hold",
    "switch_hold_lifted",
    "verification_hold",
    "meter_deactivated",
    "utility_blocked",
    "utility_accepted",
    "service_active",
    "service_canceled",
    "customer_switched_away",
    "usage_history_available",
    "invoice_generated",
    "payment_failed",
];

/// How the sandbox answers a simulated event name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simulation {
    Credit(CreditSimulation),
    Enrollment(super::enrollment::EnrollmentSimulation),
    Billing(BillingSimulation),
    Unknown,
}

/// The billing events the sandbox simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BillingSimulation {
    /// An off-cycle meter read through today, invoiced at once.
    InvoiceGenerated,
    /// The newest unpaid invoice's charge is declined.
    PaymentFailed,
}

pub fn parse_simulation(event: &str) -> Simulation {
    match event {
        "credit_check_frozen" => Simulation::Credit(CreditSimulation::Frozen),
        "credit_check_unfrozen" => Simulation::Credit(CreditSimulation::Unfrozen),
        "credit_declined" => Simulation::Credit(CreditSimulation::Declined),
        "credit_not_found" => Simulation::Credit(CreditSimulation::NotFound),
        "credit_check_error" => Simulation::Credit(CreditSimulation::Error),
        e => match super::enrollment::EnrollmentSimulation::parse(e) {
            Some(sim) => Simulation::Enrollment(sim),
            None => billing_or_unknown(e),
        },
    }
}

fn billing_or_unknown(event: &str) -> Simulation {
    match event {
        "invoice_generated" => Simulation::Billing(BillingSimulation::InvoiceGenerated),
        "payment_failed" => Simulation::Billing(BillingSimulation::PaymentFailed),
        _ => Simulation::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CreditState as C;

    #[test]
    fn frozen_files_are_looked_at_every_six_hours_for_a_month() {
        assert_eq!(next_attempt_in(C::Frozen, 1), Some(Duration::hours(6)));
        assert_eq!(next_attempt_in(C::Frozen, 119), Some(Duration::hours(6)));
        assert_eq!(next_attempt_in(C::Frozen, 120), None);
    }

    #[test]
    fn bureau_errors_back_off_up_to_six_hours() {
        assert_eq!(next_attempt_in(C::Error, 1), Some(Duration::minutes(5)));
        assert_eq!(next_attempt_in(C::Error, 2), Some(Duration::minutes(10)));
        assert_eq!(next_attempt_in(C::Error, 3), Some(Duration::minutes(20)));
        assert_eq!(next_attempt_in(C::Error, 9), Some(Duration::hours(6)));
        assert_eq!(next_attempt_in(C::Error, 60), Some(Duration::hours(6)));
    }

    #[test]
    fn final_answers_are_not_retried() {
        for s in [C::Passed, C::Declined, C::NotFound] {
            assert_eq!(next_attempt_in(s, 1), None);
            assert!(!should_run(s));
        }
        for s in [C::Submitted, C::Pending, C::Frozen, C::Error] {
            assert!(should_run(s));
        }
    }

    #[test]
    fn customers_hear_once_per_change() {
        assert_eq!(
            notice_for(C::Pending, C::Frozen),
            Some(CreditNotice::Frozen)
        );
        assert_eq!(notice_for(C::Frozen, C::Frozen), None);
        assert_eq!(
            notice_for(C::Error, C::Declined),
            Some(CreditNotice::Declined)
        );
        assert_eq!(
            notice_for(C::Pending, C::NotFound),
            Some(CreditNotice::NotFound)
        );
        assert_eq!(notice_for(C::Pending, C::Error), None);
        assert_eq!(
            notice_for(C::Frozen, C::Passed),
            Some(CreditNotice::Approved)
        );
        assert_eq!(notice_for(C::Passed, C::Passed), None);
    }

    #[test]
    fn simulated_event_names() {
        assert_eq!(
            parse_simulation("credit_check_unfrozen"),
            Simulation::Credit(CreditSimulation::Unfrozen)
        );
        assert_eq!(
            parse_simulation("switch_hold"),
            Simulation::Enrollment(super::super::enrollment::EnrollmentSimulation::SwitchHold)
        );
        // Every listed name is known.
        for name in SIMULATED_EVENTS {
            assert_ne!(parse_simulation(name), Simulation::Unknown, "{name}");
        }
        assert_eq!(
            parse_simulation("payment_failed"),
            Simulation::Billing(BillingSimulation::PaymentFailed)
        );
        assert_eq!(parse_simulation("credit_frozen"), Simulation::Unknown);
        assert_eq!(SIMULATED_EVENTS.len(), 17);
        assert!(!CreditSimulation::Unfrozen.runs_check_now());
        assert!(CreditSimulation::Frozen.runs_check_now());
    }
}
