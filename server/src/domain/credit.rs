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

super::text_enum! {
    /// Why a check came to the credit review queue: what the bureau last answered.
    pub enum ReviewCause {
        Declined = "declined",
        NotFound = "not_found",
        /// Still frozen when its retries ran out.
        Frozen = "frozen",
        /// Still failing when its retries ran out.
        Error = "error",
    }
}

super::text_enum! {
    /// Where a credit review stands.
    pub enum ReviewStatus {
        /// Waiting for the operator.
        Open = "open",
        /// The operator approved the customer without a deposit: the enrollment goes on.
        Approved = "approved",
        /// The operator asked for a deposit before the enrollment goes on.
        DepositRequired = "deposit_required",
        /// The operator declined, with a reason.
        Declined = "declined",
        /// A later answer of the bureau settled it (the check passed), or a new submission
        /// replaced the check, before anyone decided.
        Withdrawn = "withdrawn",
    }
}

/// Whether a check that answered `state`, with `retry` its next attempt (`None`: no more),
/// goes to the credit review queue: every answer that is not an approval and will not be
/// asked again.
pub fn review_cause(state: CreditState, retry: Option<Duration>) -> Option<ReviewCause> {
    match (state, retry) {
        (CreditState::Declined, _) => Some(ReviewCause::Declined),
        (CreditState::NotFound, _) => Some(ReviewCause::NotFound),
        (CreditState::Frozen, None) => Some(ReviewCause::Frozen),
        (CreditState::Error, None) => Some(ReviewCause::Error),
        _ => None,
    }
}

/// The longest reason a declining operator may give (the customer reads it).
pub const MAX_DECLINE_REASON_CHARS: usize = 500;

/// What the operator decided on a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewDecision {
    Approve,
    /// A deposit of this many cents, at most the rule's maximum.
    RequireDeposit {
        amount_cents: i64,
    },
    Decline {
        reason: String,
    },
}

impl ReviewDecision {
    /// The status the review takes.
    pub fn status(&self) -> ReviewStatus {
        match self {
            ReviewDecision::Approve => ReviewStatus::Approved,
            ReviewDecision::RequireDeposit { .. } => ReviewStatus::DepositRequired,
            ReviewDecision::Decline { .. } => ReviewStatus::Declined,
        }
    }

    /// Where the check stands after the decision: approved is passed; declined is final; a
    /// deposit keeps the enrollment waiting (the check keeps its answer) until it is paid.
    pub fn credit_state(&self, before: CreditState) -> CreditState {
        match self {
            ReviewDecision::Approve => CreditState::Passed,
            ReviewDecision::RequireDeposit { .. } => before,
            ReviewDecision::Decline { .. } => CreditState::Declined,
        }
    }
}

/// Parses the operator's form: `decision` (`approve`, `deposit`, `decline`), the deposit in
/// dollars (`12.34`, at most `max_deposit_cents` and more than zero), the reason of a decline.
pub fn parse_decision(
    decision: &str,
    deposit_dollars: &str,
    reason: &str,
    max_deposit_cents: i64,
) -> Result<ReviewDecision, super::FieldError> {
    match decision.trim() {
        "approve" => Ok(ReviewDecision::Approve),
        "deposit" => {
            let cents = parse_dollars(deposit_dollars).ok_or_else(|| {
                super::FieldError::invalid(
                    "deposit",
                    "the deposit must be an amount in dollars, such as 150.00",
                )
            })?;
            if cents <= 0 {
                return Err(super::FieldError::invalid(
                    "deposit",
                    "the deposit must be more than zero (approve instead)",
                ));
            }
            if cents > max_deposit_cents {
                return Err(super::FieldError::invalid(
                    "deposit",
                    format!(
                        "the deposit may be at most {} (the greater of one-fifth of the \
                         estimated annual bill and two months' estimated bills)",
                        app::format::dollars(max_deposit_cents)
                    ),
                ));
            }
            Ok(ReviewDecision::RequireDeposit {
                amount_cents: cents,
            })
        }
        "decline" => {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(super::FieldError::missing("reason"));
            }
            if reason.chars().count() > MAX_DECLINE_REASON_CHARS {
                return Err(super::FieldError::invalid(
                    "reason",
                    format!("the reason may be at most {MAX_DECLINE_REASON_CHARS} characters"),
                ));
            }
            Ok(ReviewDecision::Decline {
                reason: reason.to_owned(),
            })
        }
        "" => Err(super::FieldError::missing("decision")),
        _ => Err(super::FieldError::invalid(
            "decision",
            "the decision is approve, deposit or decline",
        )),
    }
}

/// Dollars as typed (`150`, `150.5`, `$1,150.00`) in cents; `None` when not an amount.
fn parse_dollars(raw: &str) -> Option<i64> {
    let s: String = raw
        .trim()
        .trim_start_matches('$')
        .chars()
        .filter(|c| *c != ',')
        .collect();
    let (whole, fraction) = match s.split_once('.') {
        Some((w, f)) => (w, f),
        None => (s.as_str(), ""),
    };
    if whole.is_empty()
        || whole.len() > 9
        || fraction.len() > 2
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = match fraction.len() {
        0 => 0,
        1 => fraction.parse::<i64>().ok()? * 10,
        _ => fraction.parse().ok()?,
    };
    Some(whole * 100 + fraction)
}

/// A credit event the sandbox can simulate on an account's latest submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditSimulation {
    Frozen,
    Unfrozen,
    Declined,
    NotFound,
    Error,
    /// Declined, with a deposit asked for at once (as the SSN ending `0005`).
    DepositRequired,
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
    "deposit_required",
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
    "invoice_past_due",
    "service_disconnected",
    "service_reconnected",
    "payment_plan_missed",
    "deposit_refund_due",
];

/// How the sandbox answers a simulated event name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Simulation {
    Credit(CreditSimulation),
    Enrollment(super::enrollment::EnrollmentSimulation),
    Billing(BillingSimulation),
    /// `deposit_refund_due`: the held deposit is earned back now; the next bill credits it.
    DepositRefundDue,
    Unknown,
}

/// The billing events the sandbox simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BillingSimulation {
    /// An off-cycle meter read through today, invoiced at once.
    InvoiceGenerated,
    /// The newest unpaid invoice's charge is declined.
    PaymentFailed,
    /// The newest open invoice turns past due now (with its disconnection notice).
    InvoicePastDue,
    /// The newest pending disconnection is asked of the utility and carried out now.
    ServiceDisconnected,
    /// The pending reconnection is carried out now.
    ServiceReconnected,
    /// The bill with the running payment plan's newest instalment turns past due now.
    PaymentPlanMissed,
}

pub fn parse_simulation(event: &str) -> Simulation {
    match event {
        "credit_check_frozen" => Simulation::Credit(CreditSimulation::Frozen),
        "credit_check_unfrozen" => Simulation::Credit(CreditSimulation::Unfrozen),
        "credit_declined" => Simulation::Credit(CreditSimulation::Declined),
        "credit_not_found" => Simulation::Credit(CreditSimulation::NotFound),
        "credit_check_error" => Simulation::Credit(CreditSimulation::Error),
        "deposit_required" => Simulation::Credit(CreditSimulation::DepositRequired),
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
        "invoice_past_due" => Simulation::Billing(BillingSimulation::InvoicePastDue),
        "service_disconnected" => Simulation::Billing(BillingSimulation::ServiceDisconnected),
        "service_reconnected" => Simulation::Billing(BillingSimulation::ServiceReconnected),
        "payment_plan_missed" => Simulation::Billing(BillingSimulation::PaymentPlanMissed),
        "deposit_refund_due" => Simulation::DepositRefundDue,
        _ => Simulation::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_final_answers_that_are_not_approvals_go_to_review() {
        let later = Some(Duration::hours(6));
        assert_eq!(
            review_cause(CreditState::Declined, None),
            Some(ReviewCause::Declined)
        );
        assert_eq!(
            review_cause(CreditState::NotFound, None),
            Some(ReviewCause::NotFound)
        );
        assert_eq!(review_cause(CreditState::Frozen, later), None);
        assert_eq!(
            review_cause(CreditState::Frozen, None),
            Some(ReviewCause::Frozen)
        );
        assert_eq!(review_cause(CreditState::Error, later), None);
        assert_eq!(
            review_cause(CreditState::Error, None),
            Some(ReviewCause::Error)
        );
        assert_eq!(review_cause(CreditState::Passed, None), None);
        // The last attempt of a frozen or failing check is the one that opens a review.
        let last = next_attempt_in(CreditState::Frozen, MAX_CHECK_ATTEMPTS);
        assert_eq!(
            review_cause(CreditState::Frozen, last),
            Some(ReviewCause::Frozen)
        );
    }

    #[test]
    fn decisions_parse_with_their_limits() {
        assert_eq!(
            parse_decision("approve", "", "", 0),
            Ok(ReviewDecision::Approve)
        );
        assert_eq!(
            parse_decision("deposit", "$1,50.5", "", 20_000),
            Ok(ReviewDecision::RequireDeposit {
                amount_cents: 15_050
            })
        );
        assert_eq!(
            parse_decision("deposit", "200", "", 20_000),
            Ok(ReviewDecision::RequireDeposit {
                amount_cents: 20_000
            })
        );
        for bad in ["200.01", "0", "-5", "abc", "1.234", ""] {
            let e = parse_decision("deposit", bad, "", 20_000).unwrap_err();
            assert_eq!(e.param, "deposit", "{bad}");
        }
        assert_eq!(
            parse_decision("decline", "", "  No proof of identity.  ", 0),
            Ok(ReviewDecision::Decline {
                reason: "No proof of identity.".to_owned()
            })
        );
        assert_eq!(
            parse_decision("decline", "", " ", 0).unwrap_err().param,
            "reason"
        );
        let long = "x".repeat(MAX_DECLINE_REASON_CHARS + 1);
        assert_eq!(
            parse_decision("decline", "", &long, 0).unwrap_err().param,
            "reason"
        );
        assert_eq!(
            parse_decision("maybe", "", "", 0).unwrap_err().param,
            "decision"
        );
        assert_eq!(parse_decision("", "", "", 0).unwrap_err().param, "decision");
    }

    #[test]
    fn an_approval_passes_the_check_and_a_deposit_keeps_it_waiting() {
        assert_eq!(
            ReviewDecision::Approve.credit_state(CreditState::NotFound),
            CreditState::Passed
        );
        let deposit = ReviewDecision::RequireDeposit { amount_cents: 1 };
        assert_eq!(
            deposit.credit_state(CreditState::Declined),
            CreditState::Declined
        );
        let decline = ReviewDecision::Decline { reason: "x".into() };
        assert_eq!(
            decline.credit_state(CreditState::Frozen),
            CreditState::Declined
        );
        assert_eq!(deposit.status(), ReviewStatus::DepositRequired);
    }
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
            parse_simulation("deposit_required"),
            Simulation::Credit(CreditSimulation::DepositRequired)
        );
        assert_eq!(
            parse_simulation("payment_failed"),
            Simulation::Billing(BillingSimulation::PaymentFailed)
        );
        assert_eq!(parse_simulation("credit_frozen"), Simulation::Unknown);
        assert_eq!(SIMULATED_EVENTS.len(), 23);
        assert!(!CreditSimulation::Unfrozen.runs_check_now());
        assert!(CreditSimulation::Frozen.runs_check_now());
    }
}
