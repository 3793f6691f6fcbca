//! E-mail templates: each renders a subject, a plain-text body and an HTML body in the app's
//! branding. The HTML escapes every value it is given.

mod billing;
mod collections;
mod credit;
mod enrollment;
mod layout;
mod renewal;
#[cfg(test)]
mod tests;

pub use billing::{
    AuthenticatePayment, BillReady, CardChanged, DepositPaidOut, PastDueNotice, PaymentFailed,
    PaymentReceipt,
};
pub use collections::CollectionsMail;
pub use credit::CreditReviewMail;
pub use enrollment::{LetterOfAuthorization, ServiceNotice, UtilityContact};
use layout::layout;
pub use renewal::{MonthToMonthOffer, RenewalConfirmed, RenewalOffer};

/// The sending app's branding.
#[derive(Debug, Clone, Default)]
pub struct Brand {
    pub display_name: String,
    /// `#rrggbb`; a neutral blue when absent or malformed.
    pub primary_color: Option<String>,
    pub support_email: Option<String>,
    /// Shown above the message when it is an `http(s)` URL.
    pub logo_url: Option<String>,
    pub support_phone: Option<String>,
    pub support_url: Option<String>,
    pub support_hours: Option<String>,
}

/// A link the reader is asked to follow.
#[derive(Debug, Clone)]
pub struct Action {
    pub label: String,
    pub url: String,
}

/// Every e-mail the service sends. Later features add their messages here.
#[derive(Debug, Clone)]
pub enum Template {
    /// A plain notice: a greeting, paragraphs, an optional button.
    Notice {
        subject: String,
        first_name: String,
        paragraphs: Vec<String>,
        action: Option<Action>,
    },
    /// The renewal reminder sent 90, 60 and 30 days before a fixed contract ends.
    RenewalReminder {
        first_name: String,
        contract_end: chrono::NaiveDate,
        days_left: i64,
        renewal_url: String,
        /// The final notice states the month-to-month plan the contract rolls onto.
        month_to_month: Option<MonthToMonthOffer>,
        /// A fixed plan the customer can renew onto, whose EFL the notice carries.
        offer: Option<RenewalOffer>,
    },
    /// The credit check found the customer's file frozen: a link to the bureau's unfreeze
    /// portal; the check is retried automatically.
    CreditFrozen {
        first_name: String,
        unfreeze_url: String,
        /// The single-use link to the hosted page that explains the freeze and retries the
        /// check at once.
        retry_url: Option<String>,
    },
    /// The soft credit check passed: no deposit, and what happens next.
    CreditApproved {
        first_name: String,
    },
    /// The credit check declined the customer or found no file: the enrollment goes to the
    /// credit review, whose decision is e-mailed.
    CreditNotApproved {
        first_name: String,
        /// No credit file was found (rather than declined).
        not_found: bool,
    },
    /// The operator's decision on a credit check the bureau did not approve, what happens next
    /// and a single-use link where the customer acts on it.
    CreditReviewed {
        first_name: String,
        decision: CreditReviewMail,
        link: String,
    },
    /// The record that the partner accepted a plan on the customer's behalf (client agent
    /// enrollment), with how to cancel.
    LetterOfAuthorization(LetterOfAuthorization),
    /// A new bill: amount, due date, the auto-pay date when a card is on file, and where to
    /// see it.
    BillReady(BillReady),
    /// An automatic payment was declined: what happens next and how to change the card.
    PaymentFailed(PaymentFailed),
    /// The card's bank wants the customer to confirm a payment: the link to do it.
    AuthenticatePayment(AuthenticatePayment),
    /// A bill still unpaid the day after its due date: how to pay it.
    PastDue(PastDueNotice),
    /// Disconnection for non-payment and payment plans.
    Collections(CollectionsMail),
    /// The enrollment was finalized: what happens next.
    EnrollmentReceived(ServiceNotice),
    /// The utility confirmed the start date.
    ServiceScheduled(ServiceNotice),
    /// Service started at the location.
    ServiceActive(ServiceNotice),
    /// A renewal was accepted: the plan, when it starts, and its documents attached.
    RenewalConfirmed(RenewalConfirmed),
    /// A payment was received: a receipt.
    PaymentReceipt(PaymentReceipt),
    DepositPaidOut(DepositPaidOut),
    /// The card on file changed: a notice, so that a change nobody asked for is seen.
    CardChanged(CardChanged),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub text: String,
    pub html: String,
}

impl Template {
    /// The name stored with the e-mail.
    pub fn name(&self) -> &'static str {
        match self {
            Template::Notice { .. } => "notice",
            Template::RenewalReminder { .. } => "renewal_reminder",
            Template::CreditFrozen { .. } => "credit_frozen",
            Template::CreditApproved { .. } => "credit_approved",
            Template::CreditNotApproved {
                not_found: false, ..
            } => "credit_declined",
            Template::CreditNotApproved {
                not_found: true, ..
            } => "credit_not_found",
            Template::CreditReviewed {
                decision: CreditReviewMail::Approved,
                ..
            } => "credit_review_approved",
            Template::CreditReviewed {
                decision: CreditReviewMail::DepositRequired { .. },
                ..
            } => "credit_deposit_required",
            Template::CreditReviewed {
                decision: CreditReviewMail::Declined { .. },
                ..
            } => "credit_review_declined",
            Template::CreditReviewed {
                decision: CreditReviewMail::DepositWaived { .. },
                ..
            } => "credit_deposit_waived",
            Template::LetterOfAuthorization(_) => "letter_of_authorization",
            Template::BillReady(_) => "bill_ready",
            Template::PaymentFailed(_) => "payment_failed",
            Template::AuthenticatePayment(_) => "authenticate_payment",
            Template::PastDue(_) => "past_due",
            Template::Collections(m) => m.name(),
            Template::EnrollmentReceived(_) => "enrollment_received",
            Template::ServiceScheduled(_) => "service_scheduled",
            Template::ServiceActive(_) => "service_active",
            Template::RenewalConfirmed(_) => "renewal_confirmed",
            Template::PaymentReceipt(_) => "payment_receipt",
            Template::DepositPaidOut(_) => "deposit_paid_out",
            Template::CardChanged(_) => "card_changed",
        }
    }

    pub fn render(&self, brand: &Brand) -> Rendered {
        match self {
            Template::RenewalConfirmed(r) => renewal::confirmed(brand, r),
            Template::PaymentReceipt(p) => billing::payment_receipt(brand, p),
            Template::DepositPaidOut(d) => billing::deposit_paid_out(brand, d),
            Template::CardChanged(c) => billing::card_changed(brand, c),
            Template::BillReady(b) => billing::bill_ready(brand, b),
            Template::PaymentFailed(p) => billing::payment_failed(brand, p),
            Template::Collections(m) => m.render(brand),
            Template::AuthenticatePayment(p) => billing::authenticate_payment(brand, p),
            Template::PastDue(p) => billing::past_due(brand, p),
            Template::EnrollmentReceived(n) => enrollment::enrollment_received(brand, n),
            Template::ServiceScheduled(n) => enrollment::service_scheduled(brand, n),
            Template::ServiceActive(n) => enrollment::service_active(brand, n),
            Template::LetterOfAuthorization(l) => enrollment::letter_of_authorization(brand, l),
            Template::Notice {
                subject,
                first_name,
                paragraphs,
                action,
            } => layout(brand, subject, first_name, paragraphs, action.as_ref()),
            Template::RenewalReminder {
                first_name,
                contract_end,
                days_left,
                renewal_url,
                month_to_month,
                offer,
            } => renewal::reminder(
                brand,
                first_name,
                contract_end,
                days_left,
                renewal_url,
                month_to_month,
                offer,
            ),
            Template::CreditFrozen {
                first_name,
                unfreeze_url,
                retry_url,
            } => credit::frozen(brand, first_name, unfreeze_url, retry_url),
            Template::CreditApproved { first_name } => credit::approved(brand, first_name),
            Template::CreditReviewed {
                first_name,
                decision,
                link,
            } => credit::reviewed(brand, first_name, decision, link),
            Template::CreditNotApproved {
                first_name,
                not_found,
            } => credit::not_approved(brand, first_name, not_found),
        }
    }
}
