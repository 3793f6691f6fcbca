//! E-mail templates: each renders a subject, a plain-text body and an HTML body in the app's
//! branding. The HTML escapes every value it is given.

use app::format::{html_escape, long_date};

/// The sending app's branding.
#[derive(Debug, Clone)]
pub struct Brand {
    pub display_name: String,
    /// `#rrggbb`; a neutral blue when absent or malformed.
    pub primary_color: Option<String>,
    pub support_email: Option<String>,
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
    },
    /// The credit check found the customer's file frozen: a link to the bureau's unfreeze
    /// portal; the check is retried automatically.
    CreditFrozen {
        first_name: String,
        unfreeze_url: String,
    },
    /// The credit check declined the customer or found no file: support will get in touch about
    /// alternatives.
    CreditNotApproved {
        first_name: String,
        /// No credit file was found (rather than declined).
        not_found: bool,
    },
    /// The record that the partner accepted a plan on the customer's behalf (client agent
    /// enrollment), with how to cancel.
    LetterOfAuthorization(LetterOfAuthorization),
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
            Template::CreditNotApproved {
                not_found: false, ..
            } => "credit_declined",
            Template::CreditNotApproved {
                not_found: true, ..
            } => "credit_not_found",
            Template::LetterOfAuthorization(_) => "letter_of_authorization",
        }
    }

    pub fn render(&self, brand: &Brand) -> Rendered {
        match self {
            Template::LetterOfAuthorization(l) => layout(
                brand,
                "Your Letter of Authorization",
                &l.first_name,
                &[
                    format!(
                        "On {}, {} accepted an electricity plan on your behalf, under the \
                         limited power of attorney you granted on {}.",
                        long_date(l.accepted_at.date_naive()),
                        brand.display_name,
                        long_date(l.authorized_at.date_naive())
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
                    "If you did not agree to this, or changed your mind, reply to this e-mail \
                     or contact support before the start date to cancel at no cost."
                        .to_owned(),
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
            } => {
                let end = long_date(*contract_end);
                layout(
                    brand,
                    &format!("Your electricity plan ends in {days_left} days"),
                    first_name,
                    &[
                        format!(
                            "Your {} electricity plan ends on {end}.",
                            brand.display_name
                        ),
                        "Choose a renewal plan before then to keep a fixed rate. If you do \
                         nothing, your service continues on a month-to-month plan with a \
                         variable rate."
                            .to_owned(),
                    ],
                    Some(&Action {
                        label: "Choose a renewal plan".to_owned(),
                        url: renewal_url.clone(),
                    }),
                )
            }
            Template::CreditFrozen {
                first_name,
                unfreeze_url,
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
                ],
                Some(&Action {
                    label: "Unfreeze your credit".to_owned(),
                    url: unfreeze_url.clone(),
                }),
            ),
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
                            "Our support team will contact you by e-mail about alternatives, \
                             such as additional proof of identity or credit, so that you can \
                             still start service with {}.",
                            brand.display_name
                        ),
                    ],
                    None,
                )
            }
        }
    }
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

    let color = brand
        .primary_color
        .as_deref()
        .and_then(crate::domain::apps::brand_color)
        .unwrap_or("#1f5fbf");
    let on_color = crate::domain::apps::text_on(color);
    let mut html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title></head>\
         <body style=\"font-family: sans-serif; color: #1a1a1a; max-width: 560px; margin: 0 auto;\">\
         <h1 style=\"color: {color}; font-size: 20px;\">{}</h1><p>Hello {},</p>",
        html_escape(subject),
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
    html.push_str("</body></html>\n");
    Rendered {
        subject: subject.to_owned(),
        text,
        html,
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
        }
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
        }
        .render(&brand());
        assert!(r
            .text
            .contains("Unfreeze your credit: https://bureau.example/unfreeze"));
        let declined = Template::CreditNotApproved {
            first_name: "Ana".to_owned(),
            not_found: false,
        };
        assert_eq!(declined.name(), "credit_declined");
        assert!(declined
            .render(&brand())
            .text
            .contains("support team will contact you"));
        let not_found = Template::CreditNotApproved {
            first_name: "Ana".to_owned(),
            not_found: true,
        };
        assert_eq!(not_found.name(), "credit_not_found");
        assert!(not_found
            .render(&brand())
            .text
            .contains("could not find a credit file"));
    }

    #[test]
    fn renewal_reminder_carries_the_link_and_the_date() {
        let r = Template::RenewalReminder {
            first_name: "Ana".to_owned(),
            contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
            days_left: 30,
            renewal_url: "https://renew.example/a".to_owned(),
        }
        .render(&Brand {
            primary_color: Some("red; x".to_owned()),
            ..brand()
        });
        assert_eq!(r.subject, "Your electricity plan ends in 30 days");
        assert!(r.text.contains("March 31, 2027"));
        assert!(r.html.contains("https://renew.example/a"));
        assert!(
            !r.html.contains("red; x"),
            "malformed colors are not injected"
        );
    }
}
