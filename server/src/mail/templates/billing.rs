//! Bills and payments: a bill ready, an automatic payment declined or waiting for the
//! customer's bank, a bill past due, receipts, a deposit paid back, and the card on file changed.

use app::format::long_date;

use super::layout::{hosted_action, layout, open_the_app, reach};
use super::{Action, Brand, Rendered};

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

pub(super) fn payment_receipt(brand: &Brand, p: &PaymentReceipt) -> Rendered {
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

pub(super) fn deposit_paid_out(brand: &Brand, d: &DepositPaidOut) -> Rendered {
    layout(
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
            "Refunds usually show on your statement within 5 to 10 business days.".to_owned(),
        ],
        None,
    )
}

pub(super) fn card_changed(brand: &Brand, c: &CardChanged) -> Rendered {
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

pub(super) fn bill_ready(brand: &Brand, b: &BillReady) -> Rendered {
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

pub(super) fn payment_failed(brand: &Brand, p: &PaymentFailed) -> Rendered {
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

pub(super) fn authenticate_payment(brand: &Brand, p: &AuthenticatePayment) -> Rendered {
    layout(
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
    )
}

pub(super) fn past_due(brand: &Brand, p: &PastDueNotice) -> Rendered {
    layout(
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
    )
}
