//! The steps of the enrollment flow and where a customer resumes: the first step the account
//! still needs, in the order the flow asks for them.

use crate::views::Account;

/// A screen of the enrollment flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Finding the home: prefilled, type-ahead, or by ESI ID; then confirming it.
    Address,
    Plan,
    Identity,
    Credit,
    Payment,
    Billing,
    Review,
    Done,
}

impl Step {
    /// The steps a customer fills in, as the progress indicator counts them.
    pub const FORMS: [Step; 6] = [
        Step::Address,
        Step::Plan,
        Step::Identity,
        Step::Credit,
        Step::Payment,
        Step::Billing,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Step::Address => "Your home",
            Step::Plan => "Choose a plan",
            Step::Identity => "About you",
            Step::Credit => "Credit check",
            Step::Payment => "Payment",
            Step::Billing => "Billing address",
            Step::Review => "Review",
            Step::Done => "Enrollment received",
        }
    }

    /// The step's name in the page (`data-step`), for styles and tests.
    pub fn slug(self) -> &'static str {
        match self {
            Step::Address => "address",
            Step::Plan => "plan",
            Step::Identity => "identity",
            Step::Credit => "credit",
            Step::Payment => "payment",
            Step::Billing => "billing",
            Step::Review => "review",
            Step::Done => "done",
        }
    }

    /// The step Back leads to: the one before among the steps to fill in (the last of them
    /// from review); none from the first step and from done.
    pub fn previous(self) -> Option<Step> {
        match self {
            Step::Review => Some(Step::Billing),
            _ => Self::FORMS.get(self.number()?.checked_sub(2)?).copied(),
        }
    }

    /// 1-based position among the steps to fill in, `None` for review and done.
    pub fn number(self) -> Option<usize> {
        Self::FORMS.iter().position(|s| *s == self).map(|i| i + 1)
    }
}

/// Where the flow goes next: the first step the account still needs, review when nothing is
/// missing, done once the enrollment is finalized.
pub fn next_step(account: &Account) -> Step {
    let e = &account.enrollment;
    if e.is_enrollment_finalized {
        return Step::Done;
    }
    let todo = [
        (
            Step::Address,
            e.has_confirmed_address || e.has_accepted_plan,
        ),
        (Step::Plan, e.has_accepted_plan),
        (Step::Identity, e.is_identity_complete),
        (Step::Credit, e.has_credit_check),
        (Step::Payment, e.has_payment_method),
        (Step::Billing, e.is_billing_address_confirmed),
    ];
    todo.into_iter()
        .find(|(_, done)| !done)
        .map(|(step, _)| step)
        .unwrap_or(Step::Review)
}

/// The step that completes a name of `enrollment.missing` (as `finalize` reports it).
pub fn step_of_missing(name: &str) -> Option<Step> {
    match name {
        "address" => Some(Step::Address),
        "plan" => Some(Step::Plan),
        "identity" => Some(Step::Identity),
        "credit_check" => Some(Step::Credit),
        "payment_method" => Some(Step::Payment),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Enrollment;

    fn account(e: Enrollment) -> Account {
        let mut a: Account = serde_json::from_value(serde_json::json!({
            "uuid": "7f1d7a5e-9a39-4a7e-9d3b-2b1f2f0c0a11", "account_number": "SB-1",
            "email": "ana@example.com", "first_name": "Ana", "last_name": "Díaz",
            "phone": null, "date_of_birth": null, "preliminary_address": null,
            "renewals_url": null, "metadata": {}, "created_at": "2026-01-01T00:00:00.000Z",
            "status": "not_enrolled", "status_reason": "unresolved",
            "client_agent_accepted": false, "client_agent_accepted_at": null,
            "is_service_active": false,
            "enrollment": {
                "can_finalize_enrollment": false, "missing": [], "has_confirmed_address": false,
                "has_accepted_plan": false, "is_identity_complete": false,
                "is_identity_verified": false, "has_credit_check": false,
                "has_payment_method": false, "is_billing_address_confirmed": false,
                "is_enrollment_finalized": false, "is_service_active": false
            },
            "locations": [],
            "app": {"uuid": "7f1d7a5e-9a39-4a7e-9d3b-2b1f2f0c0a12", "name": "A", "payment_public_key": "pk_test_x"}
        }))
        .expect("account");
        a.enrollment = e;
        a
    }

    fn fresh() -> Enrollment {
        Enrollment {
            can_finalize_enrollment: false,
            missing: vec![],
            has_confirmed_address: false,
            has_accepted_plan: false,
            is_identity_complete: false,
            is_identity_verified: false,
            has_credit_check: false,
            has_payment_method: false,
            is_billing_address_confirmed: false,
            is_enrollment_finalized: false,
            is_service_active: false,
        }
    }

    #[test]
    fn a_new_account_starts_at_the_address() {
        assert_eq!(next_step(&account(fresh())), Step::Address);
    }

    #[test]
    fn the_flow_resumes_at_the_first_step_still_needed() {
        let mut e = fresh();
        e.has_confirmed_address = true;
        assert_eq!(next_step(&account(e.clone())), Step::Plan);
        e.has_accepted_plan = true;
        e.is_identity_complete = true;
        assert_eq!(next_step(&account(e.clone())), Step::Credit);
        e.has_credit_check = true;
        assert_eq!(next_step(&account(e.clone())), Step::Payment);
        e.has_payment_method = true;
        assert_eq!(next_step(&account(e.clone())), Step::Billing);
        e.is_billing_address_confirmed = true;
        assert_eq!(next_step(&account(e.clone())), Step::Review);
        e.is_enrollment_finalized = true;
        assert_eq!(next_step(&account(e)), Step::Done);
    }

    #[test]
    fn steps_done_out_of_order_are_skipped() {
        let mut e = fresh();
        e.has_payment_method = true;
        e.is_identity_complete = true;
        e.has_confirmed_address = true;
        assert_eq!(next_step(&account(e)), Step::Plan);
    }

    #[test]
    fn missing_names_lead_to_their_steps() {
        assert_eq!(step_of_missing("credit_check"), Some(Step::Credit));
        assert_eq!(step_of_missing("payment_method"), Some(Step::Payment));
        assert_eq!(step_of_missing("client_agent"), None);
        assert_eq!(Step::Payment.number(), Some(5));
        assert_eq!(Step::Review.number(), None);
    }

    #[test]
    fn back_leads_to_the_step_before() {
        assert_eq!(Step::Address.previous(), None);
        assert_eq!(Step::Plan.previous(), Some(Step::Address));
        assert_eq!(Step::Credit.previous(), Some(Step::Identity));
        assert_eq!(Step::Billing.previous(), Some(Step::Payment));
        assert_eq!(Step::Review.previous(), Some(Step::Billing));
        assert_eq!(Step::Done.previous(), None);
    }
}
