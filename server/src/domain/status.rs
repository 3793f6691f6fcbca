//! An account's `status`/`status_reason`, derived by one pure function from the facts of its
//! enrollment. The stored status is whatever this function last said; every change is
//! historized and announced (`account.status_updated`).

use app::api::{AccountStatus, StatusReason};

/// Where the credit check stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CreditState {
    /// No SSN (with consent) given yet.
    #[default]
    NotSubmitted,
    /// SSN on file; the check has not run yet (it runs after finalize, or at once for client
    /// agent enrollments).
    Submitted,
    Pending,
    Passed,
    Frozen,
    Declined,
    NotFound,
    /// The bureau could not answer; the check is retried.
    Error,
}

impl CreditState {
    pub fn as_str(self) -> &'static str {
        match self {
            CreditState::NotSubmitted => "not_submitted",
            CreditState::Submitted => "submitted",
            CreditState::Pending => "pending",
            CreditState::Passed => "passed",
            CreditState::Frozen => "frozen",
            CreditState::Declined => "declined",
            CreditState::NotFound => "not_found",
            CreditState::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<CreditState> {
        [
            CreditState::NotSubmitted,
            CreditState::Submitted,
            CreditState::Pending,
            CreditState::Passed,
            CreditState::Frozen,
            CreditState::Declined,
            CreditState::NotFound,
            CreditState::Error,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VerificationState {
    #[default]
    NotStarted,
    Pending,
    Passed,
    Hold,
}

impl VerificationState {
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationState::NotStarted => "not_started",
            VerificationState::Pending => "pending",
            VerificationState::Passed => "passed",
            VerificationState::Hold => "hold",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::NotStarted, Self::Pending, Self::Passed, Self::Hold]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UtilityState {
    #[default]
    NotSubmitted,
    Submitted,
    /// Accepted; service starts on the start date.
    Accepted,
    SwitchHold,
    Deactivated,
    Rejected,
}

impl UtilityState {
    pub fn as_str(self) -> &'static str {
        match self {
            UtilityState::NotSubmitted => "not_submitted",
            UtilityState::Submitted => "submitted",
            UtilityState::Accepted => "accepted",
            UtilityState::SwitchHold => "switch_hold",
            UtilityState::Deactivated => "deactivated",
            UtilityState::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::NotSubmitted,
            Self::Submitted,
            Self::Accepted,
            Self::SwitchHold,
            Self::Deactivated,
            Self::Rejected,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancellation {
    PreStart,
    PostStart,
    /// The plan's price expired before verification completed.
    ExpiredPreActive,
}

impl Cancellation {
    pub fn as_str(self) -> &'static str {
        match self {
            Cancellation::PreStart => "pre_start",
            Cancellation::PostStart => "post_start",
            Cancellation::ExpiredPreActive => "expired_pre_active",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::PreStart, Self::PostStart, Self::ExpiredPreActive]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// The facts the status is derived from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusFacts {
    pub has_confirmed_address: bool,
    pub has_accepted_plan: bool,
    pub is_identity_complete: bool,
    pub has_payment_method: bool,
    pub is_client_agent_flow: bool,
    pub is_finalized: bool,
    pub credit: CreditState,
    pub verification: VerificationState,
    pub utility: UtilityState,
    pub is_service_active: bool,
    /// A location the service started at is disconnected for non-payment (and none is active).
    pub is_disconnected: bool,
    pub cancellation: Option<Cancellation>,
}

impl StatusFacts {
    fn has_credit_check(&self) -> bool {
        self.credit != CreditState::NotSubmitted
    }

    /// No enrollment step taken yet (identity given at account creation does not count).
    fn nothing_started(&self) -> bool {
        !self.has_confirmed_address
            && !self.has_accepted_plan
            && !self.has_credit_check()
            && !self.has_payment_method
    }
}

/// The one status function.
pub fn derive_status(f: &StatusFacts) -> (AccountStatus, StatusReason) {
    use AccountStatus as S;
    use StatusReason as R;

    if let Some(c) = f.cancellation {
        return (
            S::Cancelled,
            match c {
                Cancellation::PreStart => R::CancelledPreStart,
                Cancellation::PostStart => R::CancelledPostStart,
                Cancellation::ExpiredPreActive => R::ExpirePreActive,
            },
        );
    }
    if f.is_service_active {
        return (S::Active, R::Active);
    }
    // Disconnected for non-payment: the customer's payment (or a plan) brings service back.
    if f.is_disconnected {
        return (S::NeedsAttention, R::ServiceDisconnected);
    }
    if f.utility == UtilityState::Accepted {
        return (S::Ready, R::ServicePending);
    }
    // Problems that need someone's attention, before or after finalize (client agent
    // enrollments run the credit check before finalize).
    let attention = match (f.credit, f.verification, f.utility) {
        (CreditState::Frozen, _, _) => Some(R::CreditCheckFrozen),
        (CreditState::Declined, _, _) => Some(R::CreditDeclined),
        (CreditState::NotFound, _, _) => Some(R::CreditNotFound),
        (CreditState::Error, _, _) => Some(R::CreditCheckError),
        (_, VerificationState::Hold, _) => Some(R::EnrollmentBlockedVerificationHold),
        (_, _, UtilityState::SwitchHold) => Some(R::EnrollmentBlockedSwitchHold),
        (_, _, UtilityState::Deactivated) => Some(R::EnrollmentBlockedDeactivated),
        (_, _, UtilityState::Rejected) => Some(R::UtilityBlocked),
        _ => None,
    };
    if let Some(reason) = attention {
        return (S::NeedsAttention, reason);
    }
    if f.is_finalized {
        let reason = if f.verification != VerificationState::Passed {
            R::VerificationPending
        } else if f.credit != CreditState::Passed {
            R::CreditCheckPending
        } else {
            R::UtilitySubmitted
        };
        return (S::Reviewing, reason);
    }
    if f.is_client_agent_flow
        && f.has_confirmed_address
        && f.is_identity_complete
        && f.has_credit_check()
        && f.has_payment_method
    {
        return (S::NotEnrolled, R::EnrollmentPendingClientAgent);
    }
    if f.nothing_started() {
        return (S::NotEnrolled, R::Unresolved);
    }
    let reason = if !f.has_confirmed_address {
        R::MissingAddress
    } else if !f.has_accepted_plan && !f.is_client_agent_flow {
        R::PlanNotAccepted
    } else if !f.is_identity_complete || !f.has_credit_check() {
        R::MissingIdentity
    } else if !f.has_payment_method {
        R::MissingPaymentMethod
    } else {
        // Every step is done; only finalize is left.
        R::Unresolved
    };
    (S::NotEnrolled, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccountStatus as S;
    use StatusReason as R;

    fn complete() -> StatusFacts {
        StatusFacts {
            has_confirmed_address: true,
            has_accepted_plan: true,
            is_identity_complete: true,
            has_payment_method: true,
            credit: CreditState::Submitted,
            ..Default::default()
        }
    }

    fn finalized() -> StatusFacts {
        StatusFacts {
            is_finalized: true,
            verification: VerificationState::Pending,
            ..complete()
        }
    }

    fn passed() -> StatusFacts {
        StatusFacts {
            verification: VerificationState::Passed,
            credit: CreditState::Passed,
            utility: UtilityState::Submitted,
            ..finalized()
        }
    }

    #[test]
    fn every_status_pair_is_reachable() {
        let cases: Vec<(StatusFacts, (S, R))> = vec![
            (StatusFacts::default(), (S::NotEnrolled, R::Unresolved)),
            (
                StatusFacts {
                    is_identity_complete: true,
                    ..Default::default()
                },
                (S::NotEnrolled, R::Unresolved),
            ),
            (
                StatusFacts {
                    has_payment_method: true,
                    ..Default::default()
                },
                (S::NotEnrolled, R::MissingAddress),
            ),
            (
                StatusFacts {
                    has_confirmed_address: true,
                    ..Default::default()
                },
                (S::NotEnrolled, R::PlanNotAccepted),
            ),
            (
                StatusFacts {
                    credit: CreditState::NotSubmitted,
                    ..complete()
                },
                (S::NotEnrolled, R::MissingIdentity),
            ),
            (
                StatusFacts {
                    is_identity_complete: false,
                    ..complete()
                },
                (S::NotEnrolled, R::MissingIdentity),
            ),
            (
                StatusFacts {
                    has_payment_method: false,
                    ..complete()
                },
                (S::NotEnrolled, R::MissingPaymentMethod),
            ),
            (complete(), (S::NotEnrolled, R::Unresolved)),
            (
                StatusFacts {
                    is_client_agent_flow: true,
                    has_accepted_plan: false,
                    ..complete()
                },
                (S::NotEnrolled, R::EnrollmentPendingClientAgent),
            ),
            (finalized(), (S::Reviewing, R::VerificationPending)),
            (
                StatusFacts {
                    verification: VerificationState::Passed,
                    credit: CreditState::Pending,
                    ..finalized()
                },
                (S::Reviewing, R::CreditCheckPending),
            ),
            (passed(), (S::Reviewing, R::UtilitySubmitted)),
            (
                StatusFacts {
                    credit: CreditState::NotFound,
                    ..finalized()
                },
                (S::NeedsAttention, R::CreditNotFound),
            ),
            (
                StatusFacts {
                    credit: CreditState::Declined,
                    ..finalized()
                },
                (S::NeedsAttention, R::CreditDeclined),
            ),
            (
                StatusFacts {
                    credit: CreditState::Frozen,
                    ..finalized()
                },
                (S::NeedsAttention, R::CreditCheckFrozen),
            ),
            (
                StatusFacts {
                    credit: CreditState::Error,
                    ..finalized()
                },
                (S::NeedsAttention, R::CreditCheckError),
            ),
            (
                StatusFacts {
                    utility: UtilityState::SwitchHold,
                    ..passed()
                },
                (S::NeedsAttention, R::EnrollmentBlockedSwitchHold),
            ),
            (
                StatusFacts {
                    verification: VerificationState::Hold,
                    ..finalized()
                },
                (S::NeedsAttention, R::EnrollmentBlockedVerificationHold),
            ),
            (
                StatusFacts {
                    utility: UtilityState::Deactivated,
                    ..passed()
                },
                (S::NeedsAttention, R::EnrollmentBlockedDeactivated),
            ),
            (
                StatusFacts {
                    utility: UtilityState::Rejected,
                    ..passed()
                },
                (S::NeedsAttention, R::UtilityBlocked),
            ),
            (
                StatusFacts {
                    utility: UtilityState::Accepted,
                    ..passed()
                },
                (S::Ready, R::ServicePending),
            ),
            (
                StatusFacts {
                    utility: UtilityState::Accepted,
                    is_service_active: true,
                    ..passed()
                },
                (S::Active, R::Active),
            ),
            (
                StatusFacts {
                    utility: UtilityState::Accepted,
                    is_disconnected: true,
                    ..passed()
                },
                (S::NeedsAttention, R::ServiceDisconnected),
            ),
            (
                StatusFacts {
                    cancellation: Some(Cancellation::PreStart),
                    ..passed()
                },
                (S::Cancelled, R::CancelledPreStart),
            ),
            (
                StatusFacts {
                    cancellation: Some(Cancellation::ExpiredPreActive),
                    ..finalized()
                },
                (S::Cancelled, R::ExpirePreActive),
            ),
            (
                StatusFacts {
                    cancellation: Some(Cancellation::PostStart),
                    is_service_active: true,
                    ..passed()
                },
                (S::Cancelled, R::CancelledPostStart),
            ),
        ];
        let mut seen = std::collections::HashSet::new();
        for (facts, expected) in cases {
            assert_eq!(derive_status(&facts), expected, "{facts:?}");
            seen.insert(expected);
        }
        // Every pair an account can show, enrollment_pending_client_agent included.
        assert_eq!(seen.len(), 23);
    }

    #[test]
    fn a_frozen_credit_check_shows_before_finalize_in_the_client_agent_flow() {
        let f = StatusFacts {
            is_client_agent_flow: true,
            has_accepted_plan: false,
            credit: CreditState::Frozen,
            ..complete()
        };
        assert_eq!(derive_status(&f), (S::NeedsAttention, R::CreditCheckFrozen));
        let unfrozen = StatusFacts {
            credit: CreditState::Passed,
            ..f
        };
        assert_eq!(
            derive_status(&unfrozen),
            (S::NotEnrolled, R::EnrollmentPendingClientAgent)
        );
    }

    #[test]
    fn cancellation_wins_over_everything() {
        let f = StatusFacts {
            cancellation: Some(Cancellation::PreStart),
            credit: CreditState::Frozen,
            ..finalized()
        };
        assert_eq!(derive_status(&f), (S::Cancelled, R::CancelledPreStart));
    }
}
