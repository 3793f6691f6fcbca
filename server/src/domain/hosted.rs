//! Hosted pages and the customer portal: what an e-mail's single-use link is for and which flow
//! it opens, how long links and codes live, how often they may be asked for, and the one-time
//! codes that confirm an e-mail address.

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    flows::FlowScope,
    status::{AccountStatus, StatusReason},
    FieldError,
};

/// How long an e-mail's link may wait to be opened.
pub const LINK_TTL: Duration = Duration::days(7);
/// How long an e-mailed code may wait to be typed.
pub const CODE_TTL: Duration = Duration::minutes(10);
/// Wrong guesses a code takes before it is void.
pub const CODE_MAX_ATTEMPTS: i32 = 5;
/// The window in which codes and fresh links are counted against their limits.
pub const LIMIT_WINDOW: Duration = Duration::hours(1);
/// Codes one e-mail address may be sent per window.
pub const CODES_PER_EMAIL: i64 = 5;
/// Codes asked for from one client address per window.
pub const CODES_PER_IP: i64 = 20;
/// Fresh links one account may be sent per window, in place of spent or expired ones.
pub const RESENDS_PER_ACCOUNT: i64 = 3;

super::text_enum! {
    /// What an e-mail asks the customer to do, and so what its link opens.
    pub enum LinkPurpose {
        /// A renewal reminder: the renewal flow.
        Renewal = "renewal",
        /// A declined payment: the change-of-card flow.
        UpdateCard = "update_card",
        /// A new or past-due bill: the billing flow (the invoice, pay now).
        Invoice = "invoice",
        /// A frozen credit file: how to lift the freeze, and a retry of the check.
        CreditFrozen = "credit_frozen",
        /// The operator's decision on a credit review: the enrollment flow, where it stands.
        CreditReview = "credit_review",
        /// A live charge the card's bank wants the customer to confirm: the page where they
        /// do it in the card processor's own component.
        AuthenticatePayment = "authenticate_payment",
        /// A deposit the credit review asked for: the page that shows it and pays it with
        /// the saved card.
        Deposit = "deposit",
    }
}

impl LinkPurpose {
    /// The embedded flow the link opens full-page; `None` for a page of its own.
    pub fn scope(self) -> Option<FlowScope> {
        match self {
            LinkPurpose::Renewal => Some(FlowScope::Renewal),
            LinkPurpose::UpdateCard => Some(FlowScope::UpdatePaymentMethod),
            LinkPurpose::Invoice => Some(FlowScope::Billing),
            LinkPurpose::CreditFrozen => None,
            LinkPurpose::CreditReview => Some(FlowScope::Enrollment),
            LinkPurpose::AuthenticatePayment => None,
            LinkPurpose::Deposit => None,
        }
    }

    /// What the e-mail's button says.
    pub fn call_to_action(self) -> &'static str {
        match self {
            LinkPurpose::Renewal => "Choose a renewal plan",
            LinkPurpose::UpdateCard => "Change your card",
            LinkPurpose::Invoice => "See your bill",
            LinkPurpose::CreditFrozen => "Lift the freeze and try again",
            LinkPurpose::CreditReview => "See your enrollment",
            LinkPurpose::AuthenticatePayment => "Confirm the payment",
            LinkPurpose::Deposit => "Pay the deposit",
        }
    }
}

super::text_enum! {
    /// What an e-mailed code confirms.
    pub enum CodePurpose {
        /// The address given on the hosted sign-up page.
        SignUp = "sign_up",
        /// Signing in to the portal.
        Portal = "portal",
    }
}

/// Where a single-use link stands when it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Open,
    Spent,
    Expired,
}

pub fn link_state(
    expires_at: DateTime<Utc>,
    used_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> LinkState {
    if used_at.is_some() {
        LinkState::Spent
    } else if expires_at <= now {
        LinkState::Expired
    } else {
        LinkState::Open
    }
}

/// Why a typed code was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRefusal {
    /// Not the code sent (another guess is allowed).
    Wrong,
    /// Too old, already used, or out of guesses: ask for a new one.
    Void,
}

/// Judges a typed code against the latest one sent, whose `attempts` wrong guesses are counted
/// before this one.
pub fn check_code(
    sent_hash: &str,
    code_uuid: Uuid,
    typed: &str,
    attempts: i32,
    expires_at: DateTime<Utc>,
    used_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), CodeRefusal> {
    if used_at.is_some() || expires_at <= now || attempts >= CODE_MAX_ATTEMPTS {
        return Err(CodeRefusal::Void);
    }
    let typed: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
    // The hashes are of equal length; comparing them says nothing useful about the code.
    if code_hash(code_uuid, &typed) == sent_hash {
        Ok(())
    } else {
        Err(CodeRefusal::Wrong)
    }
}

/// A fresh six-digit code.
pub fn new_code() -> String {
    format!("{:06}", rand::thread_rng().gen_range(0..1_000_000))
}

/// What is stored of a code: its SHA-256, salted with its row's id so that equal codes differ.
pub fn code_hash(code_uuid: Uuid, code: &str) -> String {
    let mut h = Sha256::new();
    h.update(code_uuid.as_bytes());
    h.update(code.as_bytes());
    super::tokens::hex_of(&h.finalize().into())
}

/// Whether another code may be sent, given how many went to the address and came from the
/// client address in the last `LIMIT_WINDOW`.
pub fn may_send_code(sent_to_email: i64, sent_from_ip: i64) -> bool {
    sent_to_email < CODES_PER_EMAIL && sent_from_ip < CODES_PER_IP
}

/// Whether a fresh link may replace a spent or expired one, given how many were re-sent to the
/// account in the last `LIMIT_WINDOW`.
pub fn may_resend_link(resent: i64) -> bool {
    resent < RESENDS_PER_ACCOUNT
}

/// The path an e-mail's link opens (the token rides in the query, which the access log leaves
/// out).
pub fn link_path(token: &str) -> String {
    format!("/hosted/link?token={token}")
}

/// Where a flow opened full-page returns when the customer closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnTo {
    /// The portal's home (a flow opened from the portal or after sign-up).
    Portal,
    /// A short "all done" page (a flow opened from an e-mail's link).
    Done,
}

impl ReturnTo {
    pub fn as_str(self) -> &'static str {
        match self {
            ReturnTo::Portal => "portal",
            ReturnTo::Done => "done",
        }
    }
}

/// The address of a flow opened full-page with its session (in the fragment, never sent to a
/// server).
pub fn hosted_flow_location(
    scope: FlowScope,
    app_uuid: Uuid,
    session_token: &str,
    back: ReturnTo,
) -> String {
    format!(
        "/flow/{}?app={app_uuid}&hosted={}#session={session_token}",
        scope.as_str(),
        back.as_str()
    )
}

/// What the portal's home says about the account, in words a customer reads.
pub fn status_in_words(status: AccountStatus, reason: StatusReason) -> &'static str {
    use StatusReason as R;
    match (status, reason) {
        (AccountStatus::Active, _) => "Your electricity service is active.",
        (AccountStatus::Cancelled, _) => "Your electricity service has ended.",
        (_, R::CreditCheckFrozen) => {
            "Your credit file is frozen: lift the freeze at the credit bureau and we check again."
        }
        (_, R::CreditDeclined | R::CreditNotFound) => {
            "We could not approve your enrollment on the credit check alone: it is being \
             reviewed, and we e-mail you the decision."
        }
        (_, R::ServiceDisconnected) => {
            "Your service is disconnected for an unpaid bill: pay it, or ask for a payment plan, \
             and we have it reconnected."
        }
        (_, R::MissingPaymentMethod) => "Your enrollment needs a payment card.",
        (AccountStatus::NotEnrolled, _) => {
            "You have not finished enrolling: pick up where you left off."
        }
        (AccountStatus::NeedsAttention, _) => {
            "Your enrollment needs your attention: open it to see what is missing."
        }
        (AccountStatus::Reviewing, _) => {
            "We are reviewing your enrollment; there is nothing for you to do."
        }
        (AccountStatus::Ready, _) => {
            "Your enrollment is complete: your utility is switching your service to us."
        }
    }
}

/// The longest landing text an app may set: a few sentences above the sign-up form.
pub const LANDING_TEXT_MAX: usize = 600;

/// The text an app's hosted landing page shows above the sign-up form, as typed: trimmed, line
/// breaks kept (as `\n`, at most two in a row), nothing else invisible; blank is none.
pub fn parse_landing_text(raw: &str) -> Result<Option<String>, FieldError> {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if text.chars().count() > LANDING_TEXT_MAX {
        return Err(FieldError::invalid(
            "landing_text",
            format!("landing_text must be at most {LANDING_TEXT_MAX} characters"),
        ));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(FieldError::invalid(
            "landing_text",
            "landing_text must be plain text (line breaks allowed)",
        ));
    }
    let mut out = String::with_capacity(text.len());
    let mut breaks = 0;
    for c in text.chars() {
        if c == '\n' {
            breaks += 1;
            if breaks > 2 {
                continue;
            }
        } else {
            breaks = 0;
        }
        out.push(c);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_reads_as_a_sentence() {
        assert_eq!(
            status_in_words(AccountStatus::Active, StatusReason::Active),
            "Your electricity service is active."
        );
        assert!(status_in_words(
            AccountStatus::NeedsAttention,
            StatusReason::CreditCheckFrozen
        )
        .contains("frozen"));
        assert!(
            status_in_words(AccountStatus::NotEnrolled, StatusReason::PlanNotAccepted)
                .contains("finished enrolling")
        );
    }

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap_or_default()
            + Duration::minutes(minutes)
    }

    #[test]
    fn each_e_mail_opens_its_own_flow() {
        assert_eq!(LinkPurpose::Renewal.scope(), Some(FlowScope::Renewal));
        assert_eq!(
            LinkPurpose::UpdateCard.scope(),
            Some(FlowScope::UpdatePaymentMethod)
        );
        assert_eq!(LinkPurpose::Invoice.scope(), Some(FlowScope::Billing));
        assert_eq!(LinkPurpose::CreditFrozen.scope(), None);
        assert_eq!(LinkPurpose::AuthenticatePayment.scope(), None);
        for p in [
            LinkPurpose::Renewal,
            LinkPurpose::UpdateCard,
            LinkPurpose::Invoice,
            LinkPurpose::CreditFrozen,
            LinkPurpose::AuthenticatePayment,
        ] {
            assert_eq!(LinkPurpose::parse(p.as_str()), Some(p));
        }
    }

    #[test]
    fn a_link_works_once_and_until_it_expires() {
        let expires = at(0) + LINK_TTL;
        assert_eq!(link_state(expires, None, at(1)), LinkState::Open);
        assert_eq!(link_state(expires, Some(at(2)), at(3)), LinkState::Spent);
        assert_eq!(link_state(expires, None, expires), LinkState::Expired);
        assert_eq!(
            link_state(expires, None, expires - Duration::seconds(1)),
            LinkState::Open
        );
    }

    #[test]
    fn a_code_is_accepted_once_in_time_and_within_its_guesses() {
        let id = Uuid::new_v4();
        let code = "042917";
        let hash = code_hash(id, code);
        let expires = at(0) + CODE_TTL;
        assert_eq!(check_code(&hash, id, code, 0, expires, None, at(1)), Ok(()));
        assert_eq!(
            check_code(&hash, id, " 042 917 ", 0, expires, None, at(1)),
            Ok(())
        );
        assert_eq!(
            check_code(&hash, id, "042918", 0, expires, None, at(1)),
            Err(CodeRefusal::Wrong)
        );
        // Out of guesses: even the right code is refused.
        assert_eq!(
            check_code(&hash, id, code, CODE_MAX_ATTEMPTS, expires, None, at(1)),
            Err(CodeRefusal::Void)
        );
        assert_eq!(
            check_code(&hash, id, code, 0, expires, Some(at(1)), at(2)),
            Err(CodeRefusal::Void)
        );
        assert_eq!(
            check_code(&hash, id, code, 0, expires, None, expires),
            Err(CodeRefusal::Void)
        );
        // The salt: the same code under another row does not match.
        assert_ne!(code_hash(Uuid::new_v4(), code), hash);
    }

    #[test]
    fn codes_are_six_digits() {
        for _ in 0..100 {
            let c = new_code();
            assert_eq!(c.len(), 6);
            assert!(c.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn limits_count_per_address_and_per_client() {
        assert!(may_send_code(0, 0));
        assert!(may_send_code(CODES_PER_EMAIL - 1, CODES_PER_IP - 1));
        assert!(!may_send_code(CODES_PER_EMAIL, 0));
        assert!(!may_send_code(0, CODES_PER_IP));
        assert!(may_resend_link(RESENDS_PER_ACCOUNT - 1));
        assert!(!may_resend_link(RESENDS_PER_ACCOUNT));
    }

    #[test]
    fn a_hosted_flow_keeps_its_session_out_of_the_request() {
        let app = Uuid::nil();
        let location = hosted_flow_location(FlowScope::Billing, app, "swb_flow_x", ReturnTo::Done);
        let (request, fragment) = location.split_once('#').unwrap_or_default();
        assert_eq!(request, format!("/flow/billing?app={app}&hosted=done"));
        assert_eq!(fragment, "session=swb_flow_x");
        assert_eq!(link_path("abc"), "/hosted/link?token=abc");
    }

    #[test]
    fn landing_text_is_bounded_plain_text() {
        assert_eq!(parse_landing_text("  ").unwrap(), None);
        assert_eq!(
            parse_landing_text(" Solar homes\r\n\r\n\r\n\r\nsave more ").unwrap(),
            Some("Solar homes\n\nsave more".to_owned())
        );
        assert!(parse_landing_text(&"a".repeat(LANDING_TEXT_MAX)).is_ok());
        assert_eq!(
            parse_landing_text(&"a".repeat(LANDING_TEXT_MAX + 1))
                .unwrap_err()
                .param,
            "landing_text"
        );
        assert!(parse_landing_text("bell \u{7}").is_err());
        // Markup is text: the page escapes it.
        assert_eq!(
            parse_landing_text("<b>hi</b>").unwrap(),
            Some("<b>hi</b>".to_owned())
        );
    }
}
