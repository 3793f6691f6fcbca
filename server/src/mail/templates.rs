//! E-mail templates: each renders a subject, a plain-text body and an HTML body in the app's
//! branding. The HTML escapes every value it is given.

use app::format::{html_escape, long_date};

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

/// What a renewal confirmation states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalConfirmed {
    pub first_name: String,
    pub plan_name: String,
    /// None for a month-to-month plan.
    pub term_months: Option<i64>,
    pub energy_cents_per_kwh: String,
    pub start_date: chrono::NaiveDate,
    pub end_date: Option<chrono::NaiveDate>,
    /// The titles of the documents attached.
    pub attached: Vec<String>,
}

/// What a payment receipt states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentReceipt {
    pub first_name: String,
    pub amount_cents: i64,
    /// "Visa ending in 4242".
    pub card: Option<String>,
    pub invoice_number: Option<String>,
    /// It paid the security deposit a credit review asked for.
    pub deposit: bool,
    pub paid_on: chrono::NaiveDate,
    /// The processor's reference of the payment.
    pub reference: String,
    /// What is still owed on the invoice after this payment.
    pub balance_cents: Option<i64>,
}

/// What goes back to the card of a deposit the final bill did not take in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepositPaidOut {
    pub first_name: String,
    pub amount_cents: i64,
    /// "Visa ending in 4242", the card on the account (the refund goes to the card that paid
    /// the deposit).
    pub card: Option<String>,
    pub paid_on: chrono::NaiveDate,
}

/// What a card-change notice states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardChanged {
    pub first_name: String,
    /// "Visa ending in 4242".
    pub card: String,
    pub previous: Option<String>,
    pub changed_on: chrono::NaiveDate,
}

/// What the operator decided, as the customer's e-mail tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditReviewMail {
    Approved,
    DepositRequired {
        amount_cents: i64,
    },
    Declined {
        reason: String,
    },
    /// The operator recorded why no deposit may be asked (`Waiver::describe`).
    DepositWaived {
        waiver: String,
    },
}

/// What a bill-ready e-mail states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BillReady {
    pub first_name: String,
    pub invoice_number: String,
    pub period_start: chrono::NaiveDate,
    pub period_end: chrono::NaiveDate,
    pub total_cents: i64,
    /// Whole kWh, as the customer reads them.
    pub kwh: String,
    pub due_date: chrono::NaiveDate,
    /// The late fee this bill charges on an earlier bill left unpaid (0: none).
    pub late_fee_cents: i64,
    /// The card charged automatically on the due date ("Visa ending in 4242"), when one is on
    /// file.
    pub auto_pay_card: Option<String>,
    /// The single-use link to the bill on a hosted page.
    pub link: Option<String>,
}

/// What a payment-failed e-mail states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentFailed {
    pub first_name: String,
    pub invoice_number: String,
    pub total_cents: i64,
    pub due_date: chrono::NaiveDate,
    /// When auto-pay tries the card again, if it does.
    pub retry_on: Option<chrono::NaiveDate>,
    /// The single-use link to change the card on a hosted page.
    pub link: Option<String>,
}

/// What the e-mail about a payment waiting for the customer's authentication states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthenticatePayment {
    pub first_name: String,
    pub invoice_number: String,
    pub total_cents: i64,
    pub due_date: chrono::NaiveDate,
    /// The single-use link to the hosted page where the customer confirms it.
    pub link: String,
}

/// What a past-due e-mail states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastDueNotice {
    pub first_name: String,
    pub invoice_number: String,
    pub total_cents: i64,
    pub due_date: chrono::NaiveDate,
    /// The late fee the next bill will charge unless this one is paid first (none: the app
    /// charges none, or the customer is exempt).
    pub late_fee_cents: Option<i64>,
    /// The single-use link to pay the bill on a hosted page.
    pub link: Option<String>,
}

/// The e-mails of disconnection for non-payment and of payment plans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectionsMail {
    /// The written disconnection notice (its PDF rides along).
    DisconnectionNotice {
        first_name: String,
        invoice_number: String,
        amount_cents: i64,
        due_date: chrono::NaiveDate,
        earliest_date: chrono::NaiveDate,
        /// The payment plan the customer may ask for (none when none is owed).
        plan_months: Option<u32>,
        link: Option<String>,
    },
    /// The utility disconnected the service.
    Disconnected {
        first_name: String,
        past_due_cents: i64,
        link: Option<String>,
    },
    /// The utility reconnected the service.
    Reconnected { first_name: String },
    PlanAccepted {
        first_name: String,
        total_cents: i64,
        months: u32,
        instalment_cents: i64,
    },
    PlanEnded {
        first_name: String,
        completed: bool,
        remaining_cents: i64,
    },
    /// A bill was cancelled and issued again with corrected lines.
    Corrected {
        first_name: String,
        original_number: String,
        credit_note_number: String,
        invoice_number: String,
        reason: String,
        total_cents: i64,
        due_cents: i64,
        credit_cents: i64,
        /// Overpaid and refunded to the card the bill was paid with.
        refunded_cents: i64,
        due_date: chrono::NaiveDate,
        link: Option<String>,
    },
    /// The written notice of a final bill left unpaid: the service ended, so nothing is
    /// disconnected; what is owed, how to pay, and whom to ask for payment arrangements.
    FinalBillPastDue {
        first_name: String,
        invoice_number: String,
        amount_cents: i64,
        /// Everything of the account past due, this bill included.
        past_due_cents: i64,
        due_date: chrono::NaiveDate,
        /// The last day of service at the location, when known.
        final_service_date: Option<chrono::NaiveDate>,
        link: Option<String>,
    },
}

impl CollectionsMail {
    fn name(&self) -> &'static str {
        match self {
            CollectionsMail::DisconnectionNotice { .. } => "disconnection_notice",
            CollectionsMail::Disconnected { .. } => "service_disconnected",
            CollectionsMail::Reconnected { .. } => "service_reconnected",
            CollectionsMail::PlanAccepted { .. } => "payment_plan_accepted",
            CollectionsMail::PlanEnded { .. } => "payment_plan_ended",
            CollectionsMail::Corrected { .. } => "invoice_corrected",
            CollectionsMail::FinalBillPastDue { .. } => "final_bill_past_due",
        }
    }

    fn render(&self, brand: &Brand) -> Rendered {
        use app::format::dollars;
        match self {
            CollectionsMail::DisconnectionNotice {
                first_name,
                invoice_number,
                amount_cents,
                due_date,
                earliest_date,
                plan_months,
                link,
            } => {
                let mut paragraphs = vec![
                    format!(
                        "This is a disconnection notice. Your {} electricity bill {} of {} was \
                         due on {} and has not been paid. Unless it is paid, your service may \
                         be disconnected for non-payment on {} or later.",
                        brand.display_name,
                        invoice_number,
                        dollars(*amount_cents),
                        long_date(*due_date),
                        long_date(*earliest_date)
                    ),
                    format!(
                        "To pay, {}. Once the past-due amount is paid, nothing more happens; \
                         service that was disconnected is reconnected.",
                        open_the_app(brand)
                    ),
                ];
                paragraphs.push(match plan_months {
                    Some(m) => format!(
                        "If you cannot pay it all now, you may ask for a payment plan: what you \
                         owe spread over {m} monthly instalments on your next bills, with no \
                         finance charge. Accepting it stops the disconnection."
                    ),
                    None => "If you cannot pay it all now, please contact us about payment \
                        arrangements."
                        .to_owned(),
                });
                paragraphs.push(
                    "Energy assistance programs may help: dial 2-1-1 to find them. If someone \
                     at home is seriously ill or relies on medical equipment, contact us before \
                     that date. The attached notice says how a deposit applies and whom to \
                     contact with a complaint."
                        .to_owned(),
                );
                layout(
                    brand,
                    "Disconnection notice: your electricity bill is unpaid",
                    first_name,
                    &paragraphs,
                    hosted_action("Pay your bill", link.as_ref()).as_ref(),
                )
            }
            CollectionsMail::FinalBillPastDue {
                first_name,
                invoice_number,
                amount_cents,
                past_due_cents,
                due_date,
                final_service_date,
                link,
            } => {
                let ended = match final_service_date {
                    Some(d) => format!("Your service with us ended on {}", long_date(*d)),
                    None => "Your service with us has ended".to_owned(),
                };
                let mut owed = format!(
                    "Your final {} electricity bill {invoice_number} of {} was due on {} and \
                     has not been paid.",
                    brand.display_name,
                    dollars(*amount_cents),
                    long_date(*due_date)
                );
                if past_due_cents > amount_cents {
                    owed.push_str(&format!(
                        " With your other unpaid bills, {} is past due in all.",
                        dollars(*past_due_cents)
                    ));
                }
                let contact = match (&brand.support_phone, &brand.support_email) {
                    (Some(p), Some(e)) => format!("call us at {p} or write to {e}"),
                    (Some(p), None) => format!("call us at {p}"),
                    (None, Some(e)) => format!("write to us at {e}"),
                    (None, None) => format!("contact {} through its app", brand.display_name),
                };
                layout(
                    brand,
                    "Your final electricity bill is unpaid",
                    first_name,
                    &[
                        owed,
                        format!(
                            "{ended}, so nothing will be disconnected, but the amount is still \
                             owed. To pay, {}; the button below opens the bill.",
                            open_the_app(brand)
                        ),
                        format!(
                            "If you cannot pay it all now, {contact} to agree on a payment \
                             arrangement, such as instalments. If you think the bill is wrong, \
                             tell us and we will look into it. Energy assistance programs may \
                             help: dial 2-1-1 to find them."
                        ),
                    ],
                    hosted_action("Pay your bill", link.as_ref()).as_ref(),
                )
            }
            CollectionsMail::Disconnected {
                first_name,
                past_due_cents,
                link,
            } => layout(
                brand,
                "Your electric service was disconnected",
                first_name,
                &[
                    format!(
                        "Your {} electric service was disconnected for non-payment. {} is past \
                         due.",
                        brand.display_name,
                        dollars(*past_due_cents)
                    ),
                    format!(
                        "Once it is paid, or a payment plan is accepted, we ask the utility to \
                         reconnect your service at once. To pay, {}.",
                        open_the_app(brand)
                    ),
                ],
                hosted_action("Pay your bill", link.as_ref()).as_ref(),
            ),
            CollectionsMail::Reconnected { first_name } => layout(
                brand,
                "Your electric service is reconnected",
                first_name,
                &[format!(
                    "Thank you: your {} electric service was reconnected.",
                    brand.display_name
                )],
                None,
            ),
            CollectionsMail::PlanAccepted {
                first_name,
                total_cents,
                months,
                instalment_cents,
            } => layout(
                brand,
                "Your payment plan",
                first_name,
                &[
                    format!(
                        "Your payment plan is in place: {} is spread over {months} monthly \
                         instalments of about {}, each a line of your next bills.",
                        dollars(*total_cents),
                        dollars(*instalment_cents)
                    ),
                    "Please pay each bill by its due date: a bill left unpaid ends the plan, \
                     and what is left of it is then due on the next bill."
                        .to_owned(),
                ],
                None,
            ),
            CollectionsMail::PlanEnded {
                first_name,
                completed,
                remaining_cents,
            } => {
                let text = if *completed {
                    "Your payment plan is complete: every instalment is paid. Thank you.".to_owned()
                } else {
                    format!(
                        "A bill with an instalment of your payment plan was not paid by its due \
                         date, so the plan has ended. The {} it had left is due on your next \
                         bill.",
                        dollars(*remaining_cents)
                    )
                };
                layout(brand, "Your payment plan", first_name, &[text], None)
            }
            CollectionsMail::Corrected {
                first_name,
                original_number,
                credit_note_number,
                invoice_number,
                reason,
                total_cents,
                due_cents,
                credit_cents,
                refunded_cents,
                due_date,
                link,
            } => {
                let mut paragraphs = vec![format!(
                    "We corrected your bill {original_number}: {reason} We cancelled it \
                         (credit note {credit_note_number}) and issued bill {invoice_number} \
                         in its place, for {}.",
                    dollars(*total_cents)
                )];
                paragraphs.push(if *refunded_cents > 0 {
                    let rest = if *credit_cents > 0 {
                        format!(
                            " The other {} is a credit on your next bill.",
                            dollars(*credit_cents)
                        )
                    } else {
                        String::new()
                    };
                    format!(
                        "You had paid more than the corrected amount: we refunded {} to the card \
                         you paid the bill with; your card's statement shows it within a few \
                         business days.{rest}",
                        dollars(*refunded_cents)
                    )
                } else if *credit_cents > 0 {
                    format!(
                        "You had paid more than the corrected amount: the {} you overpaid is \
                         a credit on your next bill.",
                        dollars(*credit_cents)
                    )
                } else if *due_cents > 0 {
                    format!(
                        "{} is due by {}. If you cannot pay it all at once, you may spread it \
                         over a payment plan of monthly instalments.",
                        dollars(*due_cents),
                        long_date(*due_date)
                    )
                } else {
                    "Nothing more is due for it.".to_owned()
                });
                layout(
                    brand,
                    "Your corrected electricity bill",
                    first_name,
                    &paragraphs,
                    hosted_action("See the corrected bill", link.as_ref()).as_ref(),
                )
            }
        }
    }
}

/// What the enrollment's progress e-mails state about the home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceNotice {
    pub first_name: String,
    /// One line, as the customer wrote it.
    pub service_address: Option<String>,
    /// The requested (received), confirmed (scheduled) or actual (active) start date.
    pub start_date: Option<chrono::NaiveDate>,
    pub utility: Option<UtilityContact>,
    /// What the e-mail carries as attachments (the documents' titles), when anything.
    pub attached: Vec<String>,
}

/// The utility that owns the wires, which customers call about outages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UtilityContact {
    pub name: String,
    pub outage_phone: Option<String>,
}

impl UtilityContact {
    fn outage_sentence(&self) -> Option<String> {
        self.outage_phone.as_ref().map(|phone| {
            format!(
                "For a power outage or a downed line, call {} at {phone}, day or night: the \
                 utility looks after the wires and the meter.",
                self.name
            )
        })
    }
}

/// Where the customer sees their account: the partner's app, named as the customer knows it.
fn open_the_app(brand: &Brand) -> String {
    match &brand.support_url {
        Some(url) => format!("open the {} app or visit {url}", brand.display_name),
        None => format!("open the {} app", brand.display_name),
    }
}

/// What a Letter of Authorization states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LetterOfAuthorization {
    pub first_name: String,
    pub last_name: String,
    pub service_address: String,
    pub esi_id: String,
    pub plan_name: String,
    pub energy_cents_per_kwh: String,
    pub term_months: i64,
    pub start_date: chrono::NaiveDate,
    pub authorized_at: chrono::DateTime<chrono::Utc>,
    pub accepted_at: chrono::DateTime<chrono::Utc>,
}

/// The month-to-month plan a fixed contract rolls onto when nobody renews it, as the final
/// expiration notice states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonthToMonthOffer {
    pub plan_name: String,
    pub starts_on: chrono::NaiveDate,
    pub energy_cents_per_kwh: String,
    pub base_charge_cents_per_month: i64,
    /// The EFL's average price at 1,000 kWh a month, delivery included.
    pub average_1000: String,
    /// Whether the notice carries the plan's Electricity Facts Label as an attachment.
    pub efl_attached: bool,
}

/// The fixed plan an expiration notice offers, as priced the day it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenewalOffer {
    pub plan_name: String,
    pub term_months: i64,
    /// The EFL's average price at 1,000 kWh a month, delivery included.
    pub average_1000: String,
    pub priced_on: chrono::NaiveDate,
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
            Template::RenewalConfirmed(r) => {
                let mut paragraphs = vec![format!(
                    "Thank you for renewing with {}. Your new plan is {}: {}, {}\u{a2} per kWh \
                     for energy, starting on {}.",
                    brand.display_name,
                    r.plan_name,
                    match (r.term_months, r.end_date) {
                        (Some(months), Some(end)) =>
                            format!("a fixed rate for {months} months, until {}", long_date(end)),
                        (Some(months), None) => format!("a fixed rate for {months} months"),
                        _ => "a variable rate, month to month".to_owned(),
                    },
                    r.energy_cents_per_kwh,
                    long_date(r.start_date)
                )];
                paragraphs.push(
                    "Your current plan continues until then; you do not need to do anything, \
                     and your service is not interrupted."
                        .to_owned(),
                );
                if !r.attached.is_empty() {
                    paragraphs.push(format!(
                        "Attached are the documents of your new contract, to keep: {}.",
                        list_titles(&r.attached)
                    ));
                }
                layout(
                    brand,
                    "Your renewal is confirmed",
                    &r.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::PaymentReceipt(p) => {
                let mut paragraphs = vec![format!(
                    "We received your payment of {} on {}{}.",
                    app::format::dollars(p.amount_cents),
                    long_date(p.paid_on),
                    p.card
                        .as_ref()
                        .map(|c| format!(" from your {c}"))
                        .unwrap_or_default()
                )];
                if let Some(number) = &p.invoice_number {
                    paragraphs.push(format!("It paid invoice {number}."));
                }
                if p.deposit {
                    paragraphs.push(
                        "It paid your security deposit, which earns interest and comes back to \
                         you after twelve bills in a row paid on time, or is applied to your \
                         final bill."
                            .to_owned(),
                    );
                }
                match p.balance_cents {
                    Some(b) if b > 0 => paragraphs.push(format!(
                        "{} is still due on that bill.",
                        app::format::dollars(b)
                    )),
                    Some(_) => paragraphs.push("That bill is paid in full.".to_owned()),
                    None => {}
                }
                paragraphs.push(format!("Payment reference: {}.", p.reference));
                layout(
                    brand,
                    &format!(
                        "Receipt for your payment of {}",
                        app::format::dollars(p.amount_cents)
                    ),
                    &p.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::DepositPaidOut(d) => layout(
                brand,
                &format!(
                    "{} of your deposit is on its way back to you",
                    app::format::dollars(d.amount_cents)
                ),
                &d.first_name,
                &[
                    format!(
                        "Your security deposit with its interest was applied to your final \
                         {} bill, and {} was left over. On {} we refunded it to the card you \
                         paid the deposit with{}.",
                        brand.display_name,
                        app::format::dollars(d.amount_cents),
                        long_date(d.paid_on),
                        d.card
                            .as_ref()
                            .map(|c| format!(" (your account's card is your {c})"))
                            .unwrap_or_default()
                    ),
                    "Refunds usually show on your statement within 5 to 10 business days."
                        .to_owned(),
                ],
                None,
            ),
            Template::CardChanged(c) => {
                let mut paragraphs = vec![match &c.previous {
                    Some(previous) => format!(
                        "On {}, the card for your {} electricity account changed from your {} \
                         to your {}.",
                        long_date(c.changed_on),
                        brand.display_name,
                        previous,
                        c.card
                    ),
                    None => format!(
                        "On {}, your {} was saved as the card for your {} electricity account.",
                        long_date(c.changed_on),
                        c.card,
                        brand.display_name
                    ),
                }];
                paragraphs.push("Your bills are charged to this card from now on.".to_owned());
                paragraphs.push(format!(
                    "If you did not make this change, {} at once.",
                    reach(brand)
                ));
                layout(
                    brand,
                    "The card on your account changed",
                    &c.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::BillReady(b) => {
                let mut paragraphs = vec![
                    format!(
                        "Your {} electricity bill for {} to {} is {}, for {} kWh.",
                        brand.display_name,
                        long_date(b.period_start),
                        long_date(b.period_end),
                        app::format::dollars(b.total_cents),
                        b.kwh
                    ),
                    format!("Invoice number: {}.", b.invoice_number),
                ];
                if b.late_fee_cents > 0 {
                    paragraphs.push(format!(
                        "It includes a one-time late fee of {} on an earlier bill that was not \
                         paid by its due date; it is shown as its own line.",
                        app::format::dollars(b.late_fee_cents)
                    ));
                }
                if b.total_cents <= 0 {
                    paragraphs.push("There is nothing to pay this time.".to_owned());
                } else {
                    paragraphs.push(format!("Payment is due by {}.", long_date(b.due_date)));
                    paragraphs.push(match &b.auto_pay_card {
                        Some(card) => format!(
                            "Your {card} will be charged automatically on {}; you do not need \
                             to do anything.",
                            long_date(b.due_date)
                        ),
                        None => format!(
                            "There is no card on file for automatic payment: to pay, {}.",
                            open_the_app(brand)
                        ),
                    });
                }
                paragraphs.push(format!(
                    "To see the full bill or download it as a PDF, {}.",
                    open_the_app(brand)
                ));
                layout(
                    brand,
                    &format!("Your {} electricity bill is ready", brand.display_name),
                    &b.first_name,
                    &paragraphs,
                    hosted_action("See your bill", b.link.as_ref()).as_ref(),
                )
            }
            Template::PaymentFailed(p) => {
                let mut paragraphs = vec![format!(
                    "We could not charge your card for your {} electricity bill of {} \
                     (invoice {}).",
                    brand.display_name,
                    app::format::dollars(p.total_cents),
                    p.invoice_number
                )];
                paragraphs.push(match p.retry_on {
                    Some(retry) => format!(
                        "What happens next: we will try your card again on {}. The bill is due \
                         by {}.",
                        long_date(retry),
                        long_date(p.due_date)
                    ),
                    None => format!(
                        "What happens next: we will not try this card again. Please pay the \
                         bill by {} to keep your account in good standing.",
                        long_date(p.due_date)
                    ),
                });
                paragraphs.push(format!(
                    "To use another card, {} and change your payment card there; the next \
                     payment uses the new card.",
                    open_the_app(brand)
                ));
                layout(
                    brand,
                    "We could not charge your card",
                    &p.first_name,
                    &paragraphs,
                    hosted_action("Change your card", p.link.as_ref()).as_ref(),
                )
            }
            Template::Collections(m) => m.render(brand),
            Template::AuthenticatePayment(p) => layout(
                brand,
                "Please confirm your payment",
                &p.first_name,
                &[
                    format!(
                        "Your bank asks you to confirm the payment of your {} electricity bill \
                         of {} (invoice {}) before it goes through.",
                        brand.display_name,
                        app::format::dollars(p.total_cents),
                        p.invoice_number
                    ),
                    format!(
                        "Follow the link and confirm it with your bank; it takes a minute. \
                         Until then the bill is not paid. It is due by {}.",
                        long_date(p.due_date)
                    ),
                ],
                Some(&Action {
                    label: "Confirm the payment".to_owned(),
                    url: p.link.clone(),
                }),
            ),
            Template::PastDue(p) => layout(
                brand,
                "Your electricity bill is past due",
                &p.first_name,
                &[
                    format!(
                        "Your {} electricity bill of {} (invoice {}) was due on {} and has not \
                         been paid.",
                        brand.display_name,
                        app::format::dollars(p.total_cents),
                        p.invoice_number,
                        long_date(p.due_date)
                    ),
                    format!(
                        "Please pay it as soon as possible: {}, where you can pay the bill or \
                         change your payment card. If you already paid, thank you: you can \
                         ignore this message.",
                        open_the_app(brand)
                    ),
                ]
                .into_iter()
                .chain(p.late_fee_cents.filter(|c| *c > 0).map(|c| {
                    format!(
                        "If it is still unpaid when your next bill is issued, that bill will \
                         include a one-time late fee of {}.",
                        app::format::dollars(c)
                    )
                }))
                .collect::<Vec<_>>(),
                hosted_action("Pay your bill", p.link.as_ref()).as_ref(),
            ),
            Template::EnrollmentReceived(n) => {
                let mut paragraphs = vec![match &n.service_address {
                    Some(address) => format!(
                        "We received your enrollment with {} for {address}.",
                        brand.display_name
                    ),
                    None => format!("We received your enrollment with {}.", brand.display_name),
                }];
                if let Some(start) = n.start_date {
                    paragraphs.push(format!(
                        "You asked for your service to start on {}.",
                        long_date(start)
                    ));
                }
                if !n.attached.is_empty() {
                    paragraphs.push(format!(
                        "Attached are the documents of your contract, to keep: {}. They are also \
                         in your account's documents.",
                        list_titles(&n.attached)
                    ));
                }
                paragraphs.push(
                    "What happens next: we check your details and arrange the switch with your \
                     utility. We will e-mail you when the utility confirms your start date, and \
                     again when your service is active. Your lights stay on throughout."
                        .to_owned(),
                );
                layout(
                    brand,
                    "We received your enrollment",
                    &n.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::ServiceScheduled(n) => {
                let when = n
                    .start_date
                    .map(long_date)
                    .unwrap_or_else(|| "the date the utility confirmed".to_owned());
                let mut paragraphs = vec![match &n.service_address {
                    Some(address) => format!(
                        "Your utility confirmed the switch: your {} electricity service at \
                         {address} starts on {when}.",
                        brand.display_name
                    ),
                    None => format!(
                        "Your utility confirmed the switch: your {} electricity service starts \
                         on {when}.",
                        brand.display_name
                    ),
                }];
                paragraphs.push(
                    "You do not need to do anything: there is no interruption and nobody needs \
                     to visit. We will e-mail you again when your service is active."
                        .to_owned(),
                );
                paragraphs.extend(n.utility.as_ref().and_then(UtilityContact::outage_sentence));
                layout(
                    brand,
                    &format!("Your electricity service starts on {when}"),
                    &n.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::ServiceActive(n) => {
                let since = n
                    .start_date
                    .map(|d| format!(" since {}", long_date(d)))
                    .unwrap_or_default();
                let mut paragraphs = vec![match &n.service_address {
                    Some(address) => format!(
                        "Your {} electricity service at {address} is active{since}.",
                        brand.display_name
                    ),
                    None => format!(
                        "Your {} electricity service is active{since}.",
                        brand.display_name
                    ),
                }];
                paragraphs.push(format!(
                    "Your first bill comes after your first monthly meter reading; we will \
                     e-mail you when it is ready. To follow your usage, {}.",
                    open_the_app(brand)
                ));
                paragraphs.extend(n.utility.as_ref().and_then(UtilityContact::outage_sentence));
                layout(
                    brand,
                    "Your electricity service is active",
                    &n.first_name,
                    &paragraphs,
                    None,
                )
            }
            Template::LetterOfAuthorization(l) => layout(
                brand,
                "Your Letter of Authorization",
                &l.first_name,
                &[
                    format!(
                        "On {}, {} accepted an electricity plan on your behalf, under the \
                         limited power of attorney you granted on {}.",
                        long_date(crate::domain::market::market_date(l.accepted_at)),
                        brand.display_name,
                        long_date(crate::domain::market::market_date(l.authorized_at))
                    ),
                    format!("Customer: {} {}", l.first_name, l.last_name),
                    format!(
                        "Service address: {} (ESI ID {})",
                        l.service_address, l.esi_id
                    ),
                    format!(
                        "Plan: {}, {} months at {}¢ per kWh for energy",
                        l.plan_name, l.term_months, l.energy_cents_per_kwh
                    ),
                    format!("Service starts on {}.", long_date(l.start_date)),
                    format!(
                        "If you did not agree to this, or changed your mind, {} before the start \
                         date to cancel at no cost.",
                        reach(brand)
                    ),
                ],
                None,
            ),
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
            } => {
                let end = long_date(*contract_end);
                let mut paragraphs = vec![
                    format!(
                        "Your {} electricity plan ends on {end}.",
                        brand.display_name
                    ),
                    "Choose a renewal plan before then to keep a fixed rate. If you do \
                     nothing, your service continues on a month-to-month plan with a \
                     variable rate."
                        .to_owned(),
                ];
                if let Some(o) = offer {
                    paragraphs.push(format!(
                        "One plan you can renew onto: {}, a fixed rate for {} months, an average \
                         of {}\u{a2} per kWh at 1,000 kWh a month with the utility's delivery \
                         charges, as priced on {}. Its Electricity Facts Label is in the notice \
                         attached; the renewal page shows every plan at today's prices.",
                        o.plan_name,
                        o.term_months,
                        o.average_1000,
                        long_date(o.priced_on)
                    ));
                }
                if let Some(m) = month_to_month {
                    paragraphs.push(format!(
                        "From {} that plan is {}, under the same terms of service: {}\u{a2} \
                         per kWh for energy and a base charge of {} a month, an average of \
                         {}\u{a2} per kWh at 1,000 kWh a month with the utility's delivery \
                         charges.",
                        long_date(m.starts_on),
                        m.plan_name,
                        m.energy_cents_per_kwh,
                        app::format::dollars(m.base_charge_cents_per_month),
                        m.average_1000
                    ));
                    if m.efl_attached {
                        paragraphs.push(
                            "Its Electricity Facts Label is attached to this notice.".to_owned(),
                        );
                    }
                }
                layout(
                    brand,
                    &format!("Your electricity plan ends in {days_left} days"),
                    first_name,
                    &paragraphs,
                    Some(&Action {
                        label: "Choose a renewal plan".to_owned(),
                        url: renewal_url.clone(),
                    }),
                )
            }
            Template::CreditFrozen {
                first_name,
                unfreeze_url,
                retry_url,
            } => layout(
                brand,
                "Action needed: your credit file is frozen",
                first_name,
                &[
                    format!(
                        "We could not complete the soft credit check for your {} electricity \
                         enrollment because your credit file is frozen at the credit bureau.",
                        brand.display_name
                    ),
                    "Lift the freeze (a temporary lift is enough) on the credit bureau's site. \
                     We check again automatically every few hours, and your enrollment continues \
                     as soon as the check goes through; you do not need to contact us. A soft \
                     check does not affect your credit score."
                        .to_owned(),
                ]
                .into_iter()
                .chain(retry_url.as_ref().map(|_| {
                    format!(
                        "The credit bureau's page to lift the freeze: {unfreeze_url}. Once it is \
                         lifted, the button below checks again at once."
                    )
                }))
                .collect::<Vec<_>>(),
                Some(&match retry_url {
                    // The hosted page links to the bureau and retries the check at once.
                    Some(url) => Action {
                        label: "Lift the freeze and try again".to_owned(),
                        url: url.clone(),
                    },
                    None => Action {
                        label: "Unfreeze your credit".to_owned(),
                        url: unfreeze_url.clone(),
                    },
                }),
            ),
            Template::CreditApproved { first_name } => layout(
                brand,
                "Your credit check is approved",
                first_name,
                &[
                    format!(
                        "Good news: the soft credit check for your {} electricity enrollment is \
                         approved, and no deposit is needed. The check did not affect your \
                         credit score.",
                        brand.display_name
                    ),
                    "Next, we ask your utility to switch your service to us. We will e-mail you \
                     the start date as soon as the utility confirms it; there is nothing you \
                     need to do."
                        .to_owned(),
                ],
                None,
            ),
            Template::CreditReviewed {
                first_name,
                decision,
                link,
            } => {
                let (subject, paragraphs, label) = match decision {
                    CreditReviewMail::Approved => (
                        "Your enrollment can go ahead",
                        vec![
                            format!(
                                "We reviewed the credit check of your {} electricity enrollment \
                                 and approved it; no deposit is needed.",
                                brand.display_name
                            ),
                            "Next, we ask your utility to switch your service to us, and e-mail \
                             you the start date once it confirms. You can follow your enrollment \
                             with the link below."
                                .to_owned(),
                        ],
                        "See your enrollment",
                    ),
                    CreditReviewMail::DepositRequired { amount_cents } => (
                        "A deposit is needed to start your service",
                        vec![
                            format!(
                                "We reviewed the credit check of your {} electricity enrollment. \
                                 To start service we need a security deposit of {}.",
                                brand.display_name,
                                app::format::dollars(*amount_cents)
                            ),
                            format!("The deposit earns interest and comes back to you after twelve bills \
                             in a row paid on time, or is applied to your final bill. You may \
                             owe no deposit at all if you are 65 or older with no past-due \
                             balance, have a family-violence certificate, or have a letter of \
                             good credit from your previous electricity provider covering the \
                             last 12 months: {} to send it.",
                                reach(brand)
                            ),
                            "Your enrollment continues once the deposit is paid. The link below \
                             shows the amount and pays it with the card you saved; you may also \
                             pay half now and the rest with your next two bills."
                                .to_owned(),
                        ],
                        "Pay the deposit",
                    ),
                    CreditReviewMail::DepositWaived { waiver } => (
                        "No deposit is needed: your enrollment goes ahead",
                        vec![
                            format!(
                                "We recorded that no deposit may be asked of you for your {} \
                                 electricity enrollment: {waiver}.",
                                brand.display_name
                            ),
                            "Next, we ask your utility to switch your service to us, and e-mail \
                             you the start date once it confirms. You can follow your enrollment \
                             with the link below."
                                .to_owned(),
                        ],
                        "See your enrollment",
                    ),
                    CreditReviewMail::Declined { reason } => (
                        "About your enrollment",
                        vec![
                            format!(
                                "We reviewed the credit check of your {} electricity enrollment \
                                 and cannot start service this time.",
                                brand.display_name
                            ),
                            format!("The reason: {reason}"),
                            format!(
                                "You can see where your enrollment stands with the link below; \
                                 {} if something is not right.",
                                reach(brand)
                            ),
                        ],
                        "See your enrollment",
                    ),
                };
                layout(
                    brand,
                    subject,
                    first_name,
                    &paragraphs,
                    Some(&Action {
                        label: label.to_owned(),
                        url: link.clone(),
                    }),
                )
            }
            Template::CreditNotApproved {
                first_name,
                not_found,
            } => {
                let (subject, first) = if *not_found {
                    (
                        "We need more information to verify your credit",
                        "The credit bureau could not find a credit file matching the details \
                         you gave, so we could not complete the soft credit check for your \
                         enrollment.",
                    )
                } else {
                    (
                        "About the credit check for your enrollment",
                        "We could not approve your enrollment on the soft credit check alone.",
                    )
                };
                layout(
                    brand,
                    subject,
                    first_name,
                    &[
                        first.to_owned(),
                        format!(
                            "What happens next: your enrollment goes to review, where {} decides \
                             whether it can go ahead as it is, with a deposit, or not. We e-mail \
                             you the decision with a link to act on it; you do not need to do \
                             anything until then.",
                            brand.display_name
                        ),
                    ],
                    None,
                )
            }
        }
    }
}

/// Titles as a sentence lists them: "A, B and C".
fn list_titles(titles: &[String]) -> String {
    match titles {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How the customer reaches the partner, as a sentence's verb phrase: the e-mails come from an
/// address nobody reads, so they never ask for a reply.
fn reach(brand: &Brand) -> String {
    match (&brand.support_email, &brand.support_phone) {
        (Some(email), _) => format!("write to {email}"),
        (None, Some(phone)) => format!("call {phone}"),
        (None, None) => format!("contact {}", brand.display_name),
    }
}

/// The button to a hosted page, when the e-mail carries a link to one.
fn hosted_action(label: &str, url: Option<&String>) -> Option<Action> {
    url.map(|url| Action {
        label: label.to_owned(),
        url: url.clone(),
    })
}

fn layout(
    brand: &Brand,
    subject: &str,
    first_name: &str,
    paragraphs: &[String],
    action: Option<&Action>,
) -> Rendered {
    let mut text = format!("Hello {first_name},\n\n");
    for p in paragraphs {
        text.push_str(p);
        text.push_str("\n\n");
    }
    if let Some(a) = action {
        text.push_str(&format!("{}: {}\n\n", a.label, a.url));
    }
    text.push_str(&format!("— {}\n", brand.display_name));
    if let Some(support) = &brand.support_email {
        text.push_str(&format!("Questions? Write to {support}.\n"));
    }
    for line in contact_lines(brand) {
        text.push_str(&line);
        text.push('\n');
    }

    let color = brand
        .primary_color
        .as_deref()
        .and_then(crate::domain::apps::brand_color)
        .unwrap_or("#1f5fbf");
    let on_color = crate::domain::apps::text_on(color);
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head>\
         <body style=\"font-family: sans-serif; color: #1a1a1a; max-width: 560px; margin: 0 auto;\">\
         {}<h1 style=\"color: {color}; font-size: 20px;\">{}</h1><p>Hello {},</p>",
        html_escape(subject),
        logo(brand),
        html_escape(&brand.display_name),
        html_escape(first_name),
    );
    for p in paragraphs {
        html.push_str(&format!("<p>{}</p>", html_escape(p)));
    }
    if let Some(a) = action {
        html.push_str(&format!(
            "<p><a href=\"{}\" style=\"background: {color}; color: {on_color}; padding: 10px 16px; \
             border-radius: 4px; text-decoration: none; display: inline-block;\">{}</a></p>",
            html_escape(&a.url),
            html_escape(&a.label)
        ));
    }
    if let Some(support) = &brand.support_email {
        html.push_str(&format!(
            "<p style=\"color: #555; font-size: 13px;\">Questions? Write to \
             <a href=\"mailto:{0}\">{0}</a>.</p>",
            html_escape(support)
        ));
    }
    let mut contacts = Vec::new();
    if let Some(phone) = &brand.support_phone {
        let dial: String = phone
            .chars()
            .filter(|c| c.is_ascii_digit() || *c == '+')
            .collect();
        contacts.push(format!(
            "Call <a href=\"tel:{}\">{}</a>",
            html_escape(&dial),
            html_escape(phone)
        ));
    }
    if let Some(url) = brand.support_url.as_deref().filter(|u| is_web_url(u)) {
        contacts.push(format!("<a href=\"{0}\">{0}</a>", html_escape(url)));
    }
    if let Some(hours) = &brand.support_hours {
        contacts.push(format!("Hours: {}", html_escape(hours)));
    }
    if !contacts.is_empty() {
        html.push_str(&format!(
            "<p style=\"color: #555; font-size: 13px;\">{}</p>",
            contacts.join(" · ")
        ));
    }
    html.push_str("</body></html>\n");
    Rendered {
        subject: subject.to_owned(),
        text,
        html,
    }
}

/// The partner's other contacts, one line each, for the plain-text footer.
fn contact_lines(brand: &Brand) -> Vec<String> {
    [
        brand.support_phone.as_ref().map(|p| format!("Phone: {p}")),
        brand.support_url.as_ref().map(|u| format!("Web: {u}")),
        brand.support_hours.as_ref().map(|h| format!("Hours: {h}")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn is_web_url(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The partner's logo above the message, when it has one on the web.
fn logo(brand: &Brand) -> String {
    match brand.logo_url.as_deref().filter(|u| is_web_url(u)) {
        Some(url) => format!(
            "<p><img src=\"{}\" alt=\"{}\" style=\"max-height: 48px; max-width: 200px;\"></p>",
            html_escape(url),
            html_escape(&brand.display_name)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand() -> Brand {
        Brand {
            display_name: "Sunny <Homes>".to_owned(),
            primary_color: Some("#ff8800".to_owned()),
            support_email: Some("help@sunny.example".to_owned()),
            ..Brand::default()
        }
    }

    fn full_brand() -> Brand {
        Brand {
            display_name: "Sunny Homes".to_owned(),
            primary_color: Some("#ff8800".to_owned()),
            support_email: Some("help@sunny.example".to_owned()),
            logo_url: Some("https://cdn.sunny.example/logo.png".to_owned()),
            support_phone: Some("(512) 555-0100".to_owned()),
            support_url: Some("https://sunny.example/help".to_owned()),
            support_hours: Some("Mon-Fri 8am-6pm CT".to_owned()),
        }
    }

    /// Every link of an HTML body.
    fn hrefs(html: &str) -> Vec<&str> {
        html.split("href=\"")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect()
    }

    /// The links a customer can follow at any time: the partner's contacts, never an expiring
    /// signed link; the plain text carries every web link too.
    fn assert_links_work(r: &Rendered) {
        let links = hrefs(&r.html);
        assert!(links.contains(&"mailto:help@sunny.example"), "{links:?}");
        assert!(links.contains(&"tel:5125550100"), "{links:?}");
        assert!(links.contains(&"https://sunny.example/help"), "{links:?}");
        for link in links {
            assert!(
                link.starts_with("mailto:")
                    || link.starts_with("tel:")
                    || link.starts_with("https://"),
                "{link}"
            );
            assert!(!link.contains("signature="), "no expiring link: {link}");
            if link.starts_with("https://") {
                assert!(r.text.contains(link), "{link} in the text");
            }
        }
        assert!(r
            .html
            .contains("<img src=\"https://cdn.sunny.example/logo.png\""));
        assert!(r.html.contains("#ff8800"));
        for contact in ["(512) 555-0100", "Mon-Fri 8am-6pm CT", "help@sunny.example"] {
            assert!(
                r.text.contains(contact) && r.html.contains(contact),
                "{contact}"
            );
        }
        for api_word in ["null", "None", "_", "{", "uuid"] {
            assert!(!r.text.contains(api_word), "{api_word} in {}", r.text);
        }
    }

    fn day(y: i32, m: u32, d: u32) -> chrono::NaiveDate {
        chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn bill_ready_states_amount_due_and_auto_pay_dates_and_where_to_see_it() {
        let bill = BillReady {
            first_name: "Ana".to_owned(),
            invoice_number: "INV-00000042".to_owned(),
            period_start: day(2027, 1, 5),
            period_end: day(2027, 2, 4),
            total_cents: 12_345,
            kwh: "1,055".to_owned(),
            due_date: day(2027, 2, 25),
            late_fee_cents: 0,
            auto_pay_card: Some("Visa ending in 4242".to_owned()),
            link: None,
        };
        let r = Template::BillReady(bill.clone()).render(&full_brand());
        assert!(!r.text.contains("late fee"), "{}", r.text);
        let with_fee = Template::BillReady(BillReady {
            late_fee_cents: 769,
            ..bill.clone()
        })
        .render(&full_brand());
        assert!(
            with_fee.text.contains("one-time late fee of $7.69"),
            "{}",
            with_fee.text
        );
        assert_eq!(r.subject, "Your Sunny Homes electricity bill is ready");
        for fact in ["$123.45", "1,055 kWh", "INV-00000042", "due by February 25, 2027",
            "Visa ending in 4242 will be charged automatically on February 25, 2027",
            "To see the full bill or download it as a PDF, open the Sunny Homes app or visit https://sunny.example/help"]
        {
            assert!(r.text.contains(fact), "{fact} in {}", r.text);
        }
        assert_links_work(&r);
        let manual = Template::BillReady(BillReady {
            auto_pay_card: None,
            ..bill
        })
        .render(&Brand {
            support_url: None,
            ..full_brand()
        });
        assert!(
            manual.text.contains(
                "no card on file for automatic payment: to pay, open the Sunny Homes app."
            ),
            "{}",
            manual.text
        );
        assert!(!manual.text.contains("charged automatically"));
    }

    #[test]
    fn payment_failed_says_what_happens_next_and_how_to_change_the_card() {
        let failed = PaymentFailed {
            first_name: "Ana".to_owned(),
            invoice_number: "INV-00000042".to_owned(),
            total_cents: 12_345,
            due_date: day(2027, 2, 25),
            retry_on: Some(day(2027, 2, 27)),
            link: None,
        };
        let r = Template::PaymentFailed(failed.clone()).render(&full_brand());
        assert_eq!(r.subject, "We could not charge your card");
        assert!(
            r.text
                .contains("we will try your card again on February 27, 2027"),
            "{}",
            r.text
        );
        assert!(r.text.contains("due by February 25, 2027"));
        assert!(r.text.contains("To use another card, open the Sunny Homes app or visit https://sunny.example/help and change your payment card there"), "{}", r.text);
        assert_links_work(&r);
        let last = Template::PaymentFailed(PaymentFailed {
            retry_on: None,
            ..failed
        })
        .render(&full_brand());
        assert!(
            last.text.contains(
                "we will not try this card again. Please pay the bill by February 25, 2027"
            ),
            "{}",
            last.text
        );
    }

    #[test]
    fn a_hosted_link_becomes_the_e_mail_s_button() {
        let url = "https://switchboard.example/hosted/link?token=swb_link_x";
        let r = Template::PaymentFailed(PaymentFailed {
            first_name: "Ana".to_owned(),
            invoice_number: "INV-00000042".to_owned(),
            total_cents: 12_345,
            due_date: day(2027, 2, 25),
            retry_on: None,
            link: Some(url.to_owned()),
        })
        .render(&full_brand());
        assert!(
            r.text.contains(&format!("Change your card: {url}")),
            "{}",
            r.text
        );
        assert!(hrefs(&r.html).contains(&url), "{}", r.html);
    }

    #[test]
    fn past_due_says_how_to_pay() {
        let r = Template::PastDue(PastDueNotice {
            first_name: "Ana".to_owned(),
            invoice_number: "INV-00000042".to_owned(),
            total_cents: 12_345,
            due_date: day(2027, 2, 25),
            late_fee_cents: None,
            link: None,
        })
        .render(&full_brand());
        assert!(!r.text.contains("late fee"), "{}", r.text);
        let with_fee = Template::PastDue(PastDueNotice {
            first_name: "Ana".to_owned(),
            invoice_number: "INV-00000042".to_owned(),
            total_cents: 12_345,
            due_date: day(2027, 2, 25),
            late_fee_cents: Some(617),
            link: None,
        })
        .render(&full_brand());
        assert!(
            with_fee.text.contains("one-time late fee of $6.17"),
            "{}",
            with_fee.text
        );
        assert_eq!(r.subject, "Your electricity bill is past due");
        assert!(r
            .text
            .contains("$123.45 (invoice INV-00000042) was due on February 25, 2027"));
        assert!(
            r.text.contains(
                "open the Sunny Homes app or visit https://sunny.example/help, where you can pay"
            ),
            "{}",
            r.text
        );
        assert_links_work(&r);
    }

    #[test]
    fn the_enrollments_progress_e_mails_give_the_dates_and_the_outage_number() {
        let notice = ServiceNotice {
            first_name: "Ana".to_owned(),
            service_address: Some("100 Elm St, Austin, TX 78701".to_owned()),
            start_date: Some(day(2027, 3, 1)),
            utility: Some(UtilityContact {
                name: "Oncor".to_owned(),
                outage_phone: Some("1-888-313-4747".to_owned()),
            }),
            attached: Vec::new(),
        };
        let with_documents = Template::EnrollmentReceived(ServiceNotice {
            attached: vec![
                "Electricity Facts Label".to_owned(),
                "Terms of Service".to_owned(),
            ],
            ..notice.clone()
        })
        .render(&full_brand());
        assert!(with_documents.text.contains(
            "Attached are the documents of your contract, to keep: Electricity Facts Label and \
             Terms of Service."
        ));
        let received = Template::EnrollmentReceived(notice.clone()).render(&full_brand());
        assert!(!received.text.contains("Attached"));
        assert_eq!(received.subject, "We received your enrollment");
        assert!(received.text.contains("for 100 Elm St, Austin, TX 78701"));
        assert!(received.text.contains("start on March 1, 2027"));
        assert!(received
            .text
            .contains("We will e-mail you when the utility confirms"));
        assert_links_work(&received);
        let scheduled = Template::ServiceScheduled(notice.clone()).render(&full_brand());
        assert_eq!(
            scheduled.subject,
            "Your electricity service starts on March 1, 2027"
        );
        assert!(
            scheduled.text.contains("call Oncor at 1-888-313-4747"),
            "{}",
            scheduled.text
        );
        assert_links_work(&scheduled);
        let active = Template::ServiceActive(notice.clone()).render(&full_brand());
        assert_eq!(active.subject, "Your electricity service is active");
        assert!(
            active
                .text
                .contains("at 100 Elm St, Austin, TX 78701 is active since March 1, 2027"),
            "{}",
            active.text
        );
        assert!(active.text.contains("call Oncor at 1-888-313-4747"));
        assert_links_work(&active);
        let bare = Template::ServiceActive(ServiceNotice {
            utility: None,
            ..notice
        })
        .render(&Brand::default());
        assert!(!bare.text.contains("outage"));
        assert!(!bare.html.contains("<img"));
    }

    #[test]
    fn renders_text_and_escaped_html() {
        let r = Template::Notice {
            subject: "Hi".to_owned(),
            first_name: "Ana <script>".to_owned(),
            paragraphs: vec!["Bills & more".to_owned()],
            action: Some(Action {
                label: "Open".to_owned(),
                url: "https://x.example/?a=1&b=\"2\"".to_owned(),
            }),
        }
        .render(&brand());
        assert!(r.text.starts_with("Hello Ana <script>,"));
        assert!(r.text.contains("Open: https://x.example/?a=1&b=\"2\""));
        assert!(r.html.contains("Hello Ana &lt;script&gt;,"));
        assert!(r.html.contains("Bills &amp; more"));
        assert!(r
            .html
            .contains("href=\"https://x.example/?a=1&amp;b=&quot;2&quot;\""));
        assert!(r.html.contains("Sunny &lt;Homes&gt;"));
        assert!(r.html.contains("#ff8800"));
    }

    #[test]
    fn credit_notices() {
        let r = Template::CreditFrozen {
            first_name: "Ana".to_owned(),
            unfreeze_url: "https://bureau.example/unfreeze".to_owned(),
            retry_url: None,
        }
        .render(&brand());
        assert!(r
            .text
            .contains("Unfreeze your credit: https://bureau.example/unfreeze"));
        // With a hosted page, the button goes there (it links to the bureau and retries).
        let hosted = Template::CreditFrozen {
            first_name: "Ana".to_owned(),
            unfreeze_url: "https://bureau.example/unfreeze".to_owned(),
            retry_url: Some("https://switchboard.example/hosted/link?token=t".to_owned()),
        }
        .render(&brand());
        assert!(hosted.text.contains(
            "Lift the freeze and try again: https://switchboard.example/hosted/link?token=t"
        ));
        let declined = Template::CreditNotApproved {
            first_name: "Ana".to_owned(),
            not_found: false,
        };
        assert_eq!(declined.name(), "credit_declined");
        assert!(declined
            .render(&brand())
            .text
            .contains("your enrollment goes to review"));
        // Nothing promises a team that does not exist or a reply nobody reads.
        let text = declined.render(&brand()).text;
        assert!(
            !text.contains("support team") && !text.contains("reply"),
            "{text}"
        );
        let not_found = Template::CreditNotApproved {
            first_name: "Ana".to_owned(),
            not_found: true,
        };
        assert_eq!(not_found.name(), "credit_not_found");
        assert!(not_found
            .render(&brand())
            .text
            .contains("could not find a credit file"));
        let approved = Template::CreditApproved {
            first_name: "Ana".to_owned(),
        };
        assert_eq!(approved.name(), "credit_approved");
        let r = approved.render(&full_brand());
        assert!(
            r.text.contains("approved, and no deposit is needed"),
            "{}",
            r.text
        );
        assert!(r.text.contains("e-mail you the start date"), "{}", r.text);
        assert_links_work(&r);
    }

    #[test]
    fn credit_review_notices() {
        let link = "https://switchboard.example/hosted/link?token=t".to_owned();
        let mail = |decision| Template::CreditReviewed {
            first_name: "Ana".to_owned(),
            decision,
            link: link.clone(),
        };
        let approved = mail(CreditReviewMail::Approved);
        assert_eq!(approved.name(), "credit_review_approved");
        assert!(approved
            .render(&brand())
            .text
            .contains(&format!("See your enrollment: {link}")));
        let deposit = mail(CreditReviewMail::DepositRequired {
            amount_cents: 15_050,
        });
        assert_eq!(deposit.name(), "credit_deposit_required");
        let r = deposit.render(&full_brand());
        assert!(r.text.contains("security deposit of $150.50"), "{}", r.text);
        assert!(r.text.contains("65 or older"), "{}", r.text);
        assert!(r.text.contains("Pay the deposit"), "{}", r.text);
        assert_links_work(&r);
        let waived = mail(CreditReviewMail::DepositWaived {
            waiver: "a family-violence certificate".to_owned(),
        });
        assert_eq!(waived.name(), "credit_deposit_waived");
        assert!(waived
            .render(&brand())
            .text
            .contains("a family-violence certificate"));
        let declined = mail(CreditReviewMail::Declined {
            reason: "No proof of identity <yet>".to_owned(),
        });
        assert_eq!(declined.name(), "credit_review_declined");
        let r = declined.render(&brand());
        assert!(r.text.contains("The reason: No proof of identity <yet>"));
        assert!(r.html.contains("No proof of identity &lt;yet&gt;"));
    }

    #[test]
    fn renewal_reminder_carries_the_link_and_the_date() {
        let r = Template::RenewalReminder {
            first_name: "Ana".to_owned(),
            contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
            days_left: 30,
            renewal_url: "https://renew.example/a".to_owned(),
            month_to_month: None,
            offer: Some(RenewalOffer {
                plan_name: "Lone Star 12".to_owned(),
                term_months: 12,
                average_1000: "14.1".to_owned(),
                priced_on: chrono::NaiveDate::from_ymd_opt(2027, 1, 1).unwrap(),
            }),
        }
        .render(&Brand {
            primary_color: Some("red; x".to_owned()),
            ..brand()
        });
        assert_eq!(r.subject, "Your electricity plan ends in 30 days");
        assert!(r.text.contains("March 31, 2027"));
        assert!(r.html.contains("https://renew.example/a"));
        assert!(r.text.contains(
            "One plan you can renew onto: Lone Star 12, a fixed rate for 12 months, an average \
             of 14.1\u{a2} per kWh"
        ));
        assert!(r.text.contains("as priced on January 1, 2027"));
        assert!(
            !r.html.contains("red; x"),
            "malformed colors are not injected"
        );
    }

    #[test]
    fn the_final_renewal_reminder_states_the_month_to_month_rate() {
        let r = Template::RenewalReminder {
            first_name: "Ana".to_owned(),
            contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
            days_left: 30,
            renewal_url: "https://renew.example/a".to_owned(),
            month_to_month: Some(MonthToMonthOffer {
                plan_name: "Month-to-Month Variable".to_owned(),
                starts_on: chrono::NaiveDate::from_ymd_opt(2027, 4, 1).unwrap(),
                energy_cents_per_kwh: "11.2".to_owned(),
                base_charge_cents_per_month: 995,
                average_1000: "16.7".to_owned(),
                efl_attached: true,
            }),
            offer: None,
        }
        .render(&brand());
        assert!(r
            .text
            .contains("From April 1, 2027 that plan is Month-to-Month Variable"));
        assert!(r
            .text
            .contains("11.2\u{a2} per kWh for energy and a base charge of $9.95"));
        assert!(r.text.contains("16.7\u{a2} per kWh at 1,000 kWh"));
        assert!(r.text.contains("Electricity Facts Label is attached"));
    }
}
