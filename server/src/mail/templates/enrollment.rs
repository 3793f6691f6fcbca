//! Enrollment: the enrollment received, the start date the utility confirmed, service active,
//! and the letter of authorization of a client agent enrollment.

use app::format::long_date;

use super::layout::{layout, list_titles, open_the_app, reach};
use super::{Brand, Rendered};

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

pub(super) fn enrollment_received(brand: &Brand, n: &ServiceNotice) -> Rendered {
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

pub(super) fn service_scheduled(brand: &Brand, n: &ServiceNotice) -> Rendered {
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

pub(super) fn service_active(brand: &Brand, n: &ServiceNotice) -> Rendered {
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

pub(super) fn letter_of_authorization(brand: &Brand, l: &LetterOfAuthorization) -> Rendered {
    layout(
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
    )
}
