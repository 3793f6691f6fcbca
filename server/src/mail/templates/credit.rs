//! The credit check: a frozen file, approved, not approved (it goes to review), and the
//! operator's decision on the review.

use super::layout::{layout, reach};
use super::{Action, Brand, Rendered};

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

pub(super) fn frozen(
    brand: &Brand,
    first_name: &str,
    unfreeze_url: &str,
    retry_url: &Option<String>,
) -> Rendered {
    layout(
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
                url: unfreeze_url.to_owned(),
            },
        }),
    )
}

pub(super) fn approved(brand: &Brand, first_name: &str) -> Rendered {
    layout(
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
    )
}

pub(super) fn reviewed(
    brand: &Brand,
    first_name: &str,
    decision: &CreditReviewMail,
    link: &str,
) -> Rendered {
    let (subject, paragraphs, label) = match decision {
        // No deposit: the enrollment goes ahead, and the e-mail says why and what comes next.
        CreditReviewMail::Approved | CreditReviewMail::DepositWaived { .. } => {
            let (subject, why) = match decision {
                CreditReviewMail::DepositWaived { waiver } => (
                    "No deposit is needed: your enrollment goes ahead",
                    format!(
                        "We recorded that no deposit may be asked of you for your {} \
                         electricity enrollment: {waiver}.",
                        brand.display_name
                    ),
                ),
                _ => (
                    "Your enrollment can go ahead",
                    format!(
                        "We reviewed the credit check of your {} electricity enrollment \
                         and approved it; no deposit is needed.",
                        brand.display_name
                    ),
                ),
            };
            let next = "Next, we ask your utility to switch your service to us, and e-mail \
                        you the start date once it confirms. You can follow your enrollment \
                        with the link below.";
            (subject, vec![why, next.to_owned()], "See your enrollment")
        }
        CreditReviewMail::DepositRequired { amount_cents } => (
            "A deposit is needed to start your service",
            vec![
                format!(
                    "We reviewed the credit check of your {} electricity enrollment. \
                                 To start service we need a security deposit of {}.",
                    brand.display_name,
                    app::format::dollars(*amount_cents)
                ),
                format!(
                    "The deposit earns interest and comes back to you after twelve bills \
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
            url: link.to_owned(),
        }),
    )
}

pub(super) fn not_approved(brand: &Brand, first_name: &str, not_found: &bool) -> Rendered {
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
