//! What an account still needs before its enrollment can be finalized.

use app::api::{AccountStatus, Enrollment, StatusReason};

/// The status of a newly created account.
pub const INITIAL_STATUS: (AccountStatus, StatusReason) =
    (AccountStatus::NotEnrolled, StatusReason::Unresolved);

/// The facts of an account's enrollment, as stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnrollmentFacts {
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

/// The steps still missing, in the order a customer meets them.
pub fn missing_steps(f: &EnrollmentFacts) -> Vec<&'static str> {
    [
        (!f.has_confirmed_address, "address"),
        (!f.has_accepted_plan, "plan"),
        (!f.is_identity_complete, "identity"),
        (!f.has_credit_check, "credit_check"),
        (!f.has_payment_method, "payment_method"),
    ]
    .into_iter()
    .filter_map(|(missing, step)| missing.then_some(step))
    .collect()
}

pub fn enrollment(f: &EnrollmentFacts) -> Enrollment {
    let missing = missing_steps(f);
    Enrollment {
        can_finalize_enrollment: missing.is_empty() && !f.is_enrollment_finalized,
        missing: missing.into_iter().map(str::to_owned).collect(),
        has_confirmed_address: f.has_confirmed_address,
        has_accepted_plan: f.has_accepted_plan,
        is_identity_complete: f.is_identity_complete,
        is_identity_verified: f.is_identity_verified,
        has_credit_check: f.has_credit_check,
        has_payment_method: f.has_payment_method,
        is_billing_address_confirmed: f.is_billing_address_confirmed,
        is_enrollment_finalized: f.is_enrollment_finalized,
        is_service_active: f.is_service_active,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_account_misses_every_step() {
        let e = enrollment(&EnrollmentFacts::default());
        assert_eq!(
            e.missing,
            [
                "address",
                "plan",
                "identity",
                "credit_check",
                "payment_method"
            ]
        );
        assert!(!e.can_finalize_enrollment);
    }

    #[test]
    fn finalizing_needs_every_step_and_happens_once() {
        let mut f = EnrollmentFacts {
            has_confirmed_address: true,
            has_accepted_plan: true,
            is_identity_complete: true,
            has_credit_check: true,
            has_payment_method: true,
            ..Default::default()
        };
        assert!(enrollment(&f).can_finalize_enrollment);
        f.is_enrollment_finalized = true;
        assert!(!enrollment(&f).can_finalize_enrollment);
        f.is_enrollment_finalized = false;
        f.has_payment_method = false;
        let e = enrollment(&f);
        assert_eq!(e.missing, ["payment_method"]);
        assert!(!e.can_finalize_enrollment);
    }
}
