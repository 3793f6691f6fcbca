//! Disconnection for non-payment and payment plans: the written disconnection notice, service
//! disconnected and reconnected, a payment plan accepted or ended, a corrected bill, and the
//! final bill's notice.

use app::format::long_date;

use super::layout::{hosted_action, layout, open_the_app};
use super::{Brand, Rendered};

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
    pub(super) fn name(&self) -> &'static str {
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

    pub(super) fn render(&self, brand: &Brand) -> Rendered {
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
