//! An account's `status`/`status_reason`, derived by one pure function from the facts of its
//! enrollment. The stored status is whatever this function last said; every change is
//! historized and announced (`account.status_updated`).

use app::api;

super::text_enum! {
    /// An account's status as stored (`accounts.status`, its history): the wire's
    /// `app::api::AccountStatus` is made from it, never stored itself.
    pub enum AccountStatus {
        NotEnrolled = "not_enrolled",
        Reviewing = "reviewing",
        NeedsAttention = "needs_attention",
        Ready = "ready",
        Active = "active",
        Cancelled = "cancelled",
    }
}

super::text_enum! {
    /// Why the account is in its status, as stored (`accounts.status_reason`); the wire's
    /// `app::api::StatusReason` is made from it.
    pub enum StatusReason {
        Unresolved = "unresolved",
        PlanNotAccepted = "plan_not_accepted",
        MissingAddress = "missing_address",
        MissingIdentity = "missing_identity",
        MissingPaymentMethod = "missing_payment_method",
        EnrollmentPendingClientAgent = "enrollment_pending_client_agent",
        VerificationPending = "verification_pending",
        CreditCheckPending = "credit_check_pending",
        UtilitySubmitted = "utility_submitted",
        CreditNotFound = "credit_not_found",
        CreditDeclined = "credit_declined",
        CreditCheckFrozen = "credit_check_frozen",
        CreditCheckError = "credit_check_error",
        EnrollmentBlockedSwitchHold = "enrollment_blocked_switch_hold",
        EnrollmentBlockedVerificationHold = "enrollment_blocked_verification_hold",
        EnrollmentBlockedDeactivated = "enrollment_blocked_deactivated",
        UtilityBlocked = "utility_blocked",
        ServicePending = "service_pending",
        Active = "active",
        ServiceDisconnected = "service_disconnected",
        CancelledPreStart = "cancelled_pre_start",
        ExpirePreActive = "expire_pre_active",
        CancelledPostStart = "cancelled_post_start",
    }
}

impl From<AccountStatus> for api::AccountStatus {
    fn from(s: AccountStatus) -> Self {
        match s {
            AccountStatus::NotEnrolled => api::AccountStatus::NotEnrolled,
            AccountStatus::Reviewing => api::AccountStatus::Reviewing,
            AccountStatus::NeedsAttention => api::AccountStatus::NeedsAttention,
            AccountStatus::Ready => api::AccountStatus::Ready,
            AccountStatus::Active => api::AccountStatus::Active,
            AccountStatus::Cancelled => api::AccountStatus::Cancelled,
        }
    }
}

impl From<StatusReason> for api::StatusReason {
    fn from(r: StatusReason) -> Self {
        use api::StatusReason as W;
        use StatusReason as R;
        match r {
            R::Unresolved => W::Unresolved,
            R::PlanNotAccepted => W::PlanNotAccepted,
            R::MissingAddress => W::MissingAddress,
            R::MissingIdentity => W::MissingIdentity,
            R::MissingPaymentMethod => W::MissingPaymentMethod,
            R::EnrollmentPendingClientAgent => W::EnrollmentPendingClientAgent,
            R::VerificationPending => W::VerificationPending,
            R::CreditCheckPending => W::CreditCheckPending,
            R::UtilitySubmitted => W::UtilitySubmitted,
            R::CreditNotFound => W::CreditNotFound,
            R::CreditDeclined => W::CreditDeclined,
            R::CreditCheckFrozen => W::CreditCheckFrozen,
            R::CreditCheckError => W::CreditCheckError,
            R::EnrollmentBlockedSwitchHold => W::EnrollmentBlockedSwitchHold,
            R::EnrollmentBlockedVerificationHold => W::EnrollmentBlockedVerificationHold,
            R::EnrollmentBlockedDeactivated => W::EnrollmentBlockedDeactivated,
            R::UtilityBlocked => W::UtilityBlocked,
            R::ServicePending => W::ServicePending,
            R::Active => W::Active,
            R::ServiceDisconnected => W::ServiceDisconnected,
            R::CancelledPreStart => W::CancelledPreStart,
            R::ExpirePreActive => W::ExpirePreActive,
            R::CancelledPostStart => W::CancelledPostStart,
        }
    }
}

super::text_enum! {
    /// Where the credit check stands (`credit_checks.status`).
    #[derive(Default)]
    pub enum CreditState {
        /// No SSN (with consent) given yet.
        #[default]
        NotSubmitted = "not_submitted",
        /// SSN on file; the check has not run yet (it runs after finalize, or at once for
        /// client agent enrollments).
        Submitted = "submitted",
        Pending = "pending",
        Passed = "passed",
        Frozen = "frozen",
        Declined = "declined",
        NotFound = "not_found",
        /// The bureau could not answer; the check is retried.
        Error = "error",
    }
}

super::text_enum! {
    /// Where the identity verification of a finalized enrollment stands
    /// (`enrollments.verification`).
    #[derive(Default)]
    pub enum VerificationState {
        #[default]
        NotStarted = "not_started",
        Pending = "pending",
        Passed = "passed",
        Hold = "hold",
    }
}

super::text_enum! {
    /// Where a finalized enrollment stands with the utility (`enrollments.utility`).
    #[derive(Default)]
    pub enum UtilityState {
        #[default]
        NotSubmitted = "not_submitted",
        Submitted = "submitted",
        /// Accepted; service starts on the start date.
        Accepted = "accepted",
        SwitchHold = "switch_hold",
        Deactivated = "deactivated",
        Rejected = "rejected",
    }
}

super::text_enum! {
    /// How an enrollment was cancelled (`enrollments.cancellation`, null while it is not).
    pub enum Cancellation {
        PreStart = "pre_start",
        PostStart = "post_start",
        /// The plan's price expired before verification completed.
        ExpiredPreActive = "expired_pre_active",
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

    /// Each stored enum reads back what it writes, and refuses a name it does not know.
    fn round_trips<T: Copy + PartialEq + std::fmt::Debug>(
        all: &[T],
        as_str: fn(T) -> &'static str,
        parse: fn(&str) -> Option<T>,
    ) {
        for &v in all {
            assert_eq!(parse(as_str(v)), Some(v), "{v:?}");
        }
        let names: std::collections::HashSet<_> = all.iter().map(|&v| as_str(v)).collect();
        assert_eq!(names.len(), all.len(), "stored names are distinct");
        for unknown in ["", "Passed", "unknown", "pre-start"] {
            assert_eq!(parse(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn stored_states_round_trip_and_refuse_unknown_names() {
        round_trips(
            VerificationState::ALL,
            VerificationState::as_str,
            VerificationState::parse,
        );
        round_trips(UtilityState::ALL, UtilityState::as_str, UtilityState::parse);
        round_trips(Cancellation::ALL, Cancellation::as_str, Cancellation::parse);
        round_trips(
            AccountStatus::ALL,
            AccountStatus::as_str,
            AccountStatus::parse,
        );
        round_trips(StatusReason::ALL, StatusReason::as_str, StatusReason::parse);
        assert_eq!(VerificationState::default(), VerificationState::NotStarted);
        assert_eq!(UtilityState::default(), UtilityState::NotSubmitted);
    }

    #[test]
    fn credit_states_keep_their_stored_names() {
        round_trips(CreditState::ALL, CreditState::as_str, CreditState::parse);
        // Rows written before the enum carry these names, and the API shows them.
        let names: Vec<_> = CreditState::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            [
                "not_submitted",
                "submitted",
                "pending",
                "passed",
                "frozen",
                "declined",
                "not_found",
                "error",
            ]
        );
        assert_eq!(CreditState::default(), CreditState::NotSubmitted);
        assert_eq!(CreditState::parse("on_ice"), None);
    }

    #[test]
    fn stored_statuses_keep_their_wire_names() {
        for &s in AccountStatus::ALL {
            assert_eq!(api::AccountStatus::from(s).as_str(), s.as_str());
        }
        for &r in StatusReason::ALL {
            assert_eq!(api::StatusReason::from(r).as_str(), r.as_str());
        }
    }
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
