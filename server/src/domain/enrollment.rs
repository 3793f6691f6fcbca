//! What an account still needs before its enrollment can be finalized.

use app::api::Enrollment;
use chrono::{DateTime, Duration, NaiveDate, Utc};

use super::market::market_date;
use super::market::{start_window, BusinessCalendar, Enroller};
use super::status::{AccountStatus, StatusReason};

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

/// Whether accepting a plan for `accepted_esi_id` also confirms that meter's address. Accepting
/// is the customer's confirmation in the usual order (they confirmed it in the partner's UI),
/// so the enrollment must not wait for a separate confirm-address call; an address confirmed
/// earlier for the same meter is not confirmed twice.
pub fn acceptance_confirms_address(confirmed_esi_id: Option<&str>, accepted_esi_id: &str) -> bool {
    confirmed_esi_id != Some(accepted_esi_id)
}

/// How long before a fixed contract ends its renewal opens.
pub const RENEWAL_WINDOW_DAYS: i64 = 90;

/// Whether a contract ending on `end_date` (none for month-to-month) may be renewed `today`:
/// from 90 days before its end through its last day.
pub fn renewal_window_open(end_date: Option<NaiveDate>, today: NaiveDate) -> bool {
    end_date.is_some_and(|end| today <= end && today >= end - Duration::days(RENEWAL_WINDOW_DAYS))
}

/// Who enrolls an account: the partner as client agent once it recorded the customer's
/// authorization (`client_agent_accepted_at`), else the customer.
pub fn enroller(client_agent_accepted_at: Option<DateTime<Utc>>) -> Enroller {
    if client_agent_accepted_at.is_some() {
        Enroller::ClientAgent
    } else {
        Enroller::Customer
    }
}

/// Who accepted a contract, as contracts record it (`accepted_by`).
pub fn accepted_by(enroller: Enroller) -> &'static str {
    match enroller {
        Enroller::ClientAgent => "client_agent",
        Enroller::Customer => "customer",
    }
}

/// Whether a client agent enrollment may be finalized: the customer's authorization was
/// recorded and the client agent accepted every pending contract (`accepted_by`, which the
/// service decided when the plan was accepted, in the order it saw the calls; never the
/// client-supplied `client_agent_accepted_at`, which may be back-dated).
pub fn client_agent_accepted_every_plan<'a>(
    client_agent_recorded: bool,
    pending_accepted_by: impl IntoIterator<Item = &'a str>,
) -> bool {
    client_agent_recorded
        && pending_accepted_by
            .into_iter()
            .all(|by| by == accepted_by(Enroller::ClientAgent))
}

/// Whether the client agent authorization may be recorded now: it must precede plans/accept,
/// so not once the customer accepted a plan that is pending or in force.
pub fn client_agent_may_be_recorded<'a>(
    accepted_by_in_force: impl IntoIterator<Item = &'a str>,
) -> bool {
    accepted_by_in_force
        .into_iter()
        .all(|by| by != accepted_by(Enroller::Customer))
}

/// The earliest of these plan prices that has expired by `at`: an acceptance whose price
/// expired cannot be finalized (the customer requests plans again and accepts one).
pub fn expired_price(
    expires_at: impl IntoIterator<Item = DateTime<Utc>>,
    at: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    expires_at.into_iter().filter(|e| *e <= at).min()
}

/// What a new plan acceptance does with what the account already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorAcceptance {
    /// Nothing accepted yet: accept.
    Nothing,
    /// An acceptance that can never start service (its price expired before it was
    /// finalized, or its enrollment was cancelled for an expired price): it gives way to the
    /// new one, so no account is ever left unable to enroll.
    Replace,
    AlreadyFinalized,
    PlanAlreadyAccepted,
}

/// Decides `PriorAcceptance` from the enrollment (`Some(cancellation)` once finalized), whether
/// a plan is accepted (pending or active), and whether a pending plan's price has expired.
pub fn prior_acceptance(
    finalized: Option<Option<super::status::Cancellation>>,
    has_accepted_plan: bool,
    pending_price_expired: bool,
) -> PriorAcceptance {
    use super::status::Cancellation;
    match finalized {
        Some(Some(Cancellation::ExpiredPreActive)) => PriorAcceptance::Replace,
        Some(_) => PriorAcceptance::AlreadyFinalized,
        None if pending_price_expired => PriorAcceptance::Replace,
        None if has_accepted_plan => PriorAcceptance::PlanAlreadyAccepted,
        None => PriorAcceptance::Nothing,
    }
}

/// Whether the contract in force at a location (its status and end date) may be renewed
/// `today`: an active fixed-term contract inside its renewal window.
pub fn renewal_eligible(
    in_force: Option<(ContractStatus, Option<NaiveDate>)>,
    today: NaiveDate,
) -> bool {
    in_force.is_some_and(|(status, end)| {
        // A month-to-month contract has no end: its customer may leave it for a plan any day.
        status == ContractStatus::Active && (end.is_none() || renewal_window_open(end, today))
    })
}

/// The day a renewal of a contract ending on `end` starts: the day after it ends; a new plan
/// replacing a month-to-month contract (no end) starts the day after `today`.
pub fn renewal_start(end: Option<NaiveDate>, today: NaiveDate) -> NaiveDate {
    end.unwrap_or(today) + Duration::days(1)
}

/// Whether a location's contracts hold an accepted renewal: a pending contract that starts
/// after the contract in force (which started on `in_force_start`).
pub fn renewal_queued<C>(
    contracts: &[C],
    status: impl Fn(&C) -> ContractStatus,
    start: impl Fn(&C) -> NaiveDate,
    in_force_start: NaiveDate,
) -> bool {
    contracts
        .iter()
        .any(|c| status(c) == ContractStatus::Pending && start(c) > in_force_start)
}

/// Why a renewal plan cannot be accepted at a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewalRefusal {
    /// No active fixed-term contract inside its renewal window.
    NotEligible,
    /// A renewal is already queued after the contract in force.
    AlreadyAccepted,
    TermsNotAccepted,
    /// A renewal starts only on the day after the contract in force ends.
    StartDateOutOfRange(StartDateOutOfRange),
}

/// The start date of a renewal accepted `today` for the contract in force (its status and
/// end date), or why it cannot be accepted. The window comes first: outside it nothing else
/// about the request matters.
pub fn check_renewal(
    in_force: Option<(ContractStatus, Option<NaiveDate>)>,
    already_queued: bool,
    today: NaiveDate,
    start: NaiveDate,
    terms_accepted: bool,
) -> Result<NaiveDate, RenewalRefusal> {
    let end = match in_force {
        Some((_, end)) if renewal_eligible(in_force, today) => end,
        _ => return Err(RenewalRefusal::NotEligible),
    };
    if already_queued {
        return Err(RenewalRefusal::AlreadyAccepted);
    }
    if !terms_accepted {
        return Err(RenewalRefusal::TermsNotAccepted);
    }
    let day = renewal_start(end, today);
    if start != day {
        return Err(RenewalRefusal::StartDateOutOfRange(StartDateOutOfRange {
            earliest: day,
            latest: day,
        }));
    }
    Ok(day)
}

/// As `check_renewal`, with the start date optional: none asks for the one day allowed (the day
/// after the contract in force ends; tomorrow for a month-to-month one).
pub fn check_renewal_from(
    in_force: Option<(ContractStatus, Option<NaiveDate>)>,
    already_queued: bool,
    today: NaiveDate,
    start: Option<NaiveDate>,
    terms_accepted: bool,
) -> Result<NaiveDate, RenewalRefusal> {
    let allowed = in_force.map_or(today, |(_, end)| renewal_start(end, today));
    check_renewal(
        in_force,
        already_queued,
        today,
        start.unwrap_or(allowed),
        terms_accepted,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renewal_without_a_start_date_starts_on_the_one_day_allowed() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let today = d("2026-11-23");
        let active = Some((ContractStatus::Active, Some(d("2027-01-31"))));
        assert_eq!(
            check_renewal_from(active, false, today, None, true),
            Ok(d("2027-02-01"))
        );
        assert!(check_renewal_from(active, false, today, Some(d("2027-02-02")), true).is_err());
        let month_to_month = Some((ContractStatus::Active, None));
        assert_eq!(
            check_renewal_from(month_to_month, false, today, None, true),
            Ok(d("2026-11-24"))
        );
        let early = Some((ContractStatus::Active, Some(d("2027-12-31"))));
        assert_eq!(
            check_renewal_from(early, false, today, None, true),
            Err(RenewalRefusal::NotEligible)
        );
    }

    #[test]
    fn a_renewal_starts_the_day_after_the_contract_ends_once_accepted() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let end = Some(d("2027-01-31"));
        let today = d("2026-11-23");
        let active = Some((ContractStatus::Active, end));
        assert_eq!(
            check_renewal(active, false, today, d("2027-02-01"), true),
            Ok(d("2027-02-01"))
        );
        let range = StartDateOutOfRange {
            earliest: d("2027-02-01"),
            latest: d("2027-02-01"),
        };
        for wrong in ["2027-01-31", "2027-02-02"] {
            assert_eq!(
                check_renewal(active, false, today, d(wrong), true),
                Err(RenewalRefusal::StartDateOutOfRange(range))
            );
        }
        assert_eq!(
            check_renewal(active, false, today, d("2027-02-01"), false),
            Err(RenewalRefusal::TermsNotAccepted)
        );
        assert_eq!(
            check_renewal(active, true, today, d("2027-02-01"), true),
            Err(RenewalRefusal::AlreadyAccepted)
        );
        // Outside the window, or with nothing active to renew, nothing else is looked at.
        assert_eq!(
            check_renewal(active, true, d("2026-11-01"), d("2027-02-01"), false),
            Err(RenewalRefusal::NotEligible)
        );
        assert_eq!(
            check_renewal(
                Some((ContractStatus::Pending, end)),
                false,
                today,
                d("2027-02-01"),
                true
            ),
            Err(RenewalRefusal::NotEligible)
        );
        // Month-to-month: any day, for a plan from tomorrow.
        let month_to_month = Some((ContractStatus::Active, None));
        assert_eq!(
            check_renewal(month_to_month, false, today, d("2026-11-24"), true),
            Ok(d("2026-11-24"))
        );
        assert_eq!(
            check_renewal(month_to_month, false, today, today, true),
            Err(RenewalRefusal::StartDateOutOfRange(StartDateOutOfRange {
                earliest: d("2026-11-24"),
                latest: d("2026-11-24"),
            }))
        );
        assert_eq!(
            check_renewal(
                Some((ContractStatus::Ended, None)),
                false,
                today,
                d("2026-11-24"),
                true
            ),
            Err(RenewalRefusal::NotEligible)
        );
    }

    #[test]
    fn only_a_pending_contract_after_the_one_in_force_is_a_queued_renewal() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let in_force = d("2026-02-01");
        let of =
            |cs: &[(ContractStatus, NaiveDate)]| renewal_queued(cs, |c| c.0, |c| c.1, in_force);
        assert!(!of(&[(ContractStatus::Active, in_force)]));
        assert!(of(&[
            (ContractStatus::Active, in_force),
            (ContractStatus::Pending, d("2027-02-01"))
        ]));
        assert!(!of(&[
            (ContractStatus::Active, in_force),
            (ContractStatus::Cancelled, d("2027-02-01"))
        ]));
        assert!(!of(&[(ContractStatus::Pending, in_force)]));
    }

    #[test]
    fn renewal_opens_ninety_days_before_a_fixed_contract_ends() {
        let end = NaiveDate::from_ymd_opt(2026, 12, 31).unwrap();
        let day = |m, d| NaiveDate::from_ymd_opt(2026, m, d).unwrap();
        assert!(!renewal_window_open(Some(end), day(10, 1)));
        assert!(renewal_window_open(Some(end), day(10, 2)));
        assert!(renewal_window_open(Some(end), end));
        assert!(!renewal_window_open(
            Some(end),
            NaiveDate::from_ymd_opt(2027, 1, 1).unwrap()
        ));
        assert!(
            !renewal_window_open(None, day(10, 2)),
            "month-to-month has nothing to renew"
        );
    }

    #[test]
    fn accepting_a_plan_confirms_its_meter_unless_already_confirmed() {
        assert!(acceptance_confirms_address(None, "10443720000200001"));
        assert!(acceptance_confirms_address(
            Some("10443720000200002"),
            "10443720000200001"
        ));
        assert!(!acceptance_confirms_address(
            Some("10443720000200001"),
            "10443720000200001"
        ));
    }

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

/// How service starts at a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnrollmentType {
    /// The customer already has service there and switches providers.
    Switch,
    /// A new occupant.
    MoveIn,
}

impl EnrollmentType {
    pub fn as_str(self) -> &'static str {
        match self {
            EnrollmentType::Switch => "switch",
            EnrollmentType::MoveIn => "move_in",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "switch" => Some(EnrollmentType::Switch),
            "move_in" => Some(EnrollmentType::MoveIn),
            _ => None,
        }
    }
}

/// A requested service start date (`service_start_date`, `YYYY-MM-DD`), as plan requests and
/// plan acceptance both take it.
pub fn parse_start_date(raw: &str) -> Result<NaiveDate, super::FieldError> {
    NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| {
        super::FieldError::invalid(
            "service_start_date",
            "service_start_date must be a date (YYYY-MM-DD)",
        )
    })
}

#[cfg(test)]
mod start_date_tests {
    use super::*;

    #[test]
    fn a_start_date_is_an_iso_day() {
        let day = NaiveDate::from_ymd_opt(2027, 1, 31).unwrap();
        assert_eq!(parse_start_date(" 2027-01-31 "), Ok(day));
        for bad in ["2027-02-30", "01/31/2027", "2027-1-31x", ""] {
            let e = parse_start_date(bad).unwrap_err();
            assert_eq!(e.param, "service_start_date", "{bad}");
        }
    }
}

/// A start date outside what the plan and the market allow, with the range that is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartDateOutOfRange {
    pub earliest: NaiveDate,
    pub latest: NaiveDate,
}

/// Checks a requested start date against the plan's window and the market's rules for today
/// (a switch needs the rescission wait; a client agent enrollment starts 7 to 30 days out; a
/// move-in starts today only while `same_day`, see `market::same_day_move_in`); without an
/// explicit type, a date early enough for a move-in only is a move-in.
pub fn check_start_date(
    start: NaiveDate,
    plan_window: (NaiveDate, NaiveDate),
    today: NaiveDate,
    enroller: Enroller,
    requested: Option<EnrollmentType>,
    cal: &BusinessCalendar,
    same_day: bool,
) -> Result<EnrollmentType, StartDateOutOfRange> {
    let market = start_window(today, enroller, cal, same_day);
    let latest = plan_window.1.min(market.latest);
    let earliest_any = plan_window.0.max(market.earliest);
    let earliest_switch = plan_window.0.max(market.earliest_switch);
    let kind = requested.unwrap_or(if start >= earliest_switch {
        EnrollmentType::Switch
    } else {
        EnrollmentType::MoveIn
    });
    let earliest = match kind {
        EnrollmentType::Switch => earliest_switch,
        EnrollmentType::MoveIn => earliest_any,
    };
    if start < earliest || start > latest {
        return Err(StartDateOutOfRange { earliest, latest });
    }
    Ok(kind)
}

/// Whether an accepted start date can still be kept `today`: a later day, or today while the
/// utility still starts move-ins the same day.
pub fn start_still_kept(start: NaiveDate, today: NaiveDate, same_day: bool) -> bool {
    start > today || (start == today && same_day)
}

/// The last day of a fixed contract (none for month-to-month): the day before the term's
/// months have passed.
pub fn contract_end(start: NaiveDate, term_months: u32, plan_type: &str) -> Option<NaiveDate> {
    (plan_type == "fixed")
        .then(|| start.checked_add_months(chrono::Months::new(term_months)))
        .flatten()
        .and_then(|d| d.pred_opt())
}

/// What the utility answers to an enrollment, by the sandbox's magic ESI ID endings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilityAnswer {
    Accepted,
    SwitchHold,
    Deactivated,
    Rejected,
}

pub fn sandbox_utility_answer(esi_id: &str) -> UtilityAnswer {
    if esi_id.ends_with("1111") {
        UtilityAnswer::SwitchHold
    } else if esi_id.ends_with("2222") {
        UtilityAnswer::Deactivated
    } else if esi_id.ends_with("3333") {
        UtilityAnswer::Rejected
    } else {
        UtilityAnswer::Accepted
    }
}

super::text_enum! {
    /// Where a live enrollment's submission to the utility stands.
    pub enum SubmissionStatus {
        Pending = "pending",
        Accepted = "accepted",
        SwitchHold = "switch_hold",
        Deactivated = "deactivated",
        Rejected = "rejected",
        /// The utility switched the meter: service started.
        Active = "active",
    }
}

super::text_enum! {
    /// A contract's place in its life: accepted and waiting for its start, in force, over, or
    /// cancelled before it started.
    pub enum ContractStatus {
        Pending = "pending",
        Active = "active",
        Ended = "ended",
        Cancelled = "cancelled",
    }
}

super::text_enum! {
    /// A location's service: being arranged, active, or cancelled.
    pub enum LocationStatus {
        Pending = "pending",
        Active = "active",
        Cancelled = "cancelled",
    }
}

/// What the utility answered to a live submission, as an operator records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UtilityRecord {
    /// Accepted; service is to start on `start_date`.
    Accepted {
        start_date: NaiveDate,
    },
    SwitchHold,
    Deactivated,
    Rejected {
        reason: String,
    },
    /// The meter was switched: service is active.
    Active,
}

impl UtilityRecord {
    /// A rejection with the utility's reason (1 to 500 characters).
    pub fn rejected(reason: &str) -> Result<UtilityRecord, String> {
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > 500 {
            return Err("the reason must have 1 to 500 characters".to_owned());
        }
        Ok(UtilityRecord::Rejected {
            reason: reason.to_owned(),
        })
    }

    /// The answer to the enrollment this records, `None` for the start of service.
    pub fn answer(&self) -> Option<UtilityAnswer> {
        match self {
            UtilityRecord::Accepted { .. } => Some(UtilityAnswer::Accepted),
            UtilityRecord::SwitchHold => Some(UtilityAnswer::SwitchHold),
            UtilityRecord::Deactivated => Some(UtilityAnswer::Deactivated),
            UtilityRecord::Rejected { .. } => Some(UtilityAnswer::Rejected),
            UtilityRecord::Active => None,
        }
    }

    /// Whether a submission in `status` still waits for the operator to record something: the
    /// utility's answer (pending, or held), or the start of service (accepted).
    pub fn awaits_operator(status: SubmissionStatus) -> bool {
        matches!(
            status,
            SubmissionStatus::Pending | SubmissionStatus::SwitchHold | SubmissionStatus::Accepted
        )
    }

    /// Where a submission in `current` moves with this record. The utility answers a pending
    /// submission, or one it held once the hold is lifted; service starts only once accepted.
    pub fn next_status(&self, current: SubmissionStatus) -> Result<SubmissionStatus, String> {
        use SubmissionStatus as S;
        let next = match self {
            UtilityRecord::Accepted { .. } => S::Accepted,
            UtilityRecord::SwitchHold => S::SwitchHold,
            UtilityRecord::Deactivated => S::Deactivated,
            UtilityRecord::Rejected { .. } => S::Rejected,
            UtilityRecord::Active => S::Active,
        };
        let allowed = match next {
            S::Active => current == S::Accepted,
            S::SwitchHold => current == S::Pending,
            _ => matches!(current, S::Pending | S::SwitchHold),
        };
        if allowed {
            Ok(next)
        } else {
            Err(format!(
                "the submission is {}; it cannot become {}",
                current.as_str(),
                next.as_str()
            ))
        }
    }
}

/// How many business hours the utility takes to answer: 2 to 72, stable per ESI ID (the
/// simulated market's variety between utilities and times of day).
pub fn utility_answer_hours(esi_id: &str) -> u32 {
    let spread: u32 = esi_id.bytes().map(u32::from).sum();
    2 + spread % 71
}

/// `hours` business hours after `from`: only hours of business days (America/Chicago) count.
pub fn add_business_hours(
    from: DateTime<Utc>,
    hours: u32,
    cal: &BusinessCalendar,
) -> DateTime<Utc> {
    let mut t = from;
    let mut left = hours;
    while left > 0 {
        t += Duration::hours(1);
        if cal.is_business_day(market_date(t)) {
            left -= 1;
        }
    }
    t
}

/// The instant a service start date begins (midnight in the market's time zone).
pub use super::market::start_of_market_day;

/// An event of the utility or the market that the sandbox can simulate on a finalized
/// enrollment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnrollmentSimulation {
    SwitchHold,
    SwitchHoldLifted,
    VerificationHold,
    MeterDeactivated,
    UtilityBlocked,
    UtilityAccepted,
    ServiceActive,
    ServiceCanceled,
    CustomerSwitchedAway,
    UsageHistoryAvailable,
}

impl EnrollmentSimulation {
    pub fn parse(event: &str) -> Option<Self> {
        use EnrollmentSimulation as E;
        Some(match event {
            "switch_hold" => E::SwitchHold,
            "switch_hold_lifted" => E::SwitchHoldLifted,
            "verification_hold" => E::VerificationHold,
            "meter_deactivated" => E::MeterDeactivated,
            "utility_blocked" => E::UtilityBlocked,
            "utility_accepted" => E::UtilityAccepted,
            "service_active" => E::ServiceActive,
            "service_canceled" => E::ServiceCanceled,
            "customer_switched_away" => E::CustomerSwitchedAway,
            "usage_history_available" => E::UsageHistoryAvailable,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod enrollment_rules {
    use super::*;

    #[test]
    fn the_worklist_keeps_what_waits_for_the_operator() {
        use SubmissionStatus as S;
        for (status, open) in [
            (S::Pending, true),
            (S::SwitchHold, true),
            (S::Accepted, true),
            (S::Deactivated, false),
            (S::Rejected, false),
            (S::Active, false),
        ] {
            assert_eq!(
                super::UtilityRecord::awaits_operator(status),
                open,
                "{status:?}"
            );
        }
    }

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn cal() -> BusinessCalendar {
        BusinessCalendar::new([day("2026-11-26")]) // Thanksgiving
    }

    #[test]
    fn start_dates_follow_the_plan_and_the_market() {
        let today = day("2026-11-23"); // a Monday
        let plan = (day("2026-11-24"), day("2027-02-21"));
        // A move-in can start tomorrow; a switch waits 3 business days (Thanksgiving skipped).
        assert_eq!(
            check_start_date(
                day("2026-11-24"),
                plan,
                today,
                Enroller::Customer,
                None,
                &cal(),
                false
            ),
            Ok(EnrollmentType::MoveIn)
        );
        assert_eq!(
            check_start_date(
                day("2026-11-30"),
                plan,
                today,
                Enroller::Customer,
                None,
                &cal(),
                false
            ),
            Ok(EnrollmentType::Switch)
        );
        assert_eq!(
            check_start_date(
                day("2026-11-25"),
                plan,
                today,
                Enroller::Customer,
                Some(EnrollmentType::Switch),
                &cal(),
                false
            ),
            Err(StartDateOutOfRange {
                earliest: day("2026-11-27"),
                latest: day("2027-02-21")
            })
        );
        assert!(check_start_date(
            day("2026-11-23"),
            plan,
            today,
            Enroller::Customer,
            None,
            &cal(),
            false
        )
        .is_err());
        assert!(check_start_date(
            day("2027-02-22"),
            plan,
            today,
            Enroller::Customer,
            None,
            &cal(),
            false
        )
        .is_err());
    }

    #[test]
    fn a_same_day_start_is_a_move_in_while_the_utility_takes_them() {
        let today = day("2026-11-23");
        let plan = (today, day("2027-02-21"));
        let check = |same_day, kind| {
            check_start_date(
                today,
                plan,
                today,
                Enroller::Customer,
                kind,
                &cal(),
                same_day,
            )
        };
        assert_eq!(check(true, None), Ok(EnrollmentType::MoveIn));
        assert!(check(true, Some(EnrollmentType::Switch)).is_err());
        assert_eq!(
            check(false, None),
            Err(StartDateOutOfRange {
                earliest: day("2026-11-24"),
                latest: day("2027-02-21")
            })
        );
    }

    #[test]
    fn an_accepted_start_is_kept_until_its_day_or_the_same_day_cut_off() {
        let today = day("2026-11-23");
        assert!(start_still_kept(day("2026-11-24"), today, false));
        assert!(start_still_kept(today, today, true));
        assert!(!start_still_kept(today, today, false));
        assert!(!start_still_kept(day("2026-11-22"), today, true));
    }

    #[test]
    fn client_agent_starts_are_seven_to_thirty_days_out() {
        let today = day("2026-11-23");
        let plan = (day("2026-11-24"), day("2027-02-21"));
        let check = |d: &str| {
            check_start_date(
                day(d),
                plan,
                today,
                Enroller::ClientAgent,
                None,
                &cal(),
                true,
            )
        };
        assert!(check("2026-11-29").is_err());
        assert_eq!(check("2026-11-30"), Ok(EnrollmentType::Switch));
        assert!(check("2026-12-23").is_ok());
        assert_eq!(
            check("2026-12-24").unwrap_err(),
            StartDateOutOfRange {
                earliest: day("2026-11-30"),
                latest: day("2026-12-23")
            }
        );
    }

    #[test]
    fn fixed_contracts_end_the_day_before_their_term_is_up() {
        assert_eq!(
            contract_end(day("2026-12-01"), 12, "fixed"),
            Some(day("2027-11-30"))
        );
        assert_eq!(
            contract_end(day("2027-01-31"), 1, "fixed"),
            Some(day("2027-02-27"))
        );
        assert_eq!(contract_end(day("2026-12-01"), 1, "month_to_month"), None);
    }

    #[test]
    fn the_sandbox_utility_answers_by_esi_id_ending() {
        assert_eq!(
            sandbox_utility_answer("10443720001231111"),
            UtilityAnswer::SwitchHold
        );
        assert_eq!(
            sandbox_utility_answer("10443720001232222"),
            UtilityAnswer::Deactivated
        );
        assert_eq!(
            sandbox_utility_answer("10443720001233333"),
            UtilityAnswer::Rejected
        );
        assert_eq!(
            sandbox_utility_answer("10443720001234567"),
            UtilityAnswer::Accepted
        );
        for esi in ["10443720001234567", "1008901000000000000001", "0"] {
            assert!((2..=72).contains(&utility_answer_hours(esi)));
        }
    }

    #[test]
    fn business_hours_skip_weekends_and_holidays() {
        // Wednesday 25 November 2026, 10:00 Central: 20 business hours run into Friday
        // (Thanksgiving does not count).
        let from = DateTime::parse_from_rfc3339("2026-11-25T16:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let at = add_business_hours(from, 20, &cal());
        assert_eq!(market_date(at), day("2026-11-27"));
        assert_eq!(add_business_hours(from, 0, &cal()), from);
        assert_eq!(
            start_of_market_day(day("2026-07-01")).to_rfc3339(),
            "2026-07-01T05:00:00+00:00"
        );
        assert_eq!(
            start_of_market_day(day("2026-12-01")).to_rfc3339(),
            "2026-12-01T06:00:00+00:00"
        );
    }
}

/// How far out a cancellation's final service date may be.
pub const MAX_FINAL_SERVICE_DAYS: i64 = 90;

/// Why a customer cancels service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelReason {
    Moving,
    Switching,
    Other,
}

impl CancelReason {
    pub fn parse(s: &str) -> Option<CancelReason> {
        match s {
            "moving" => Some(CancelReason::Moving),
            "switching" => Some(CancelReason::Switching),
            "other" => Some(CancelReason::Other),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CancelReason::Moving => "moving",
            CancelReason::Switching => "switching",
            CancelReason::Other => "other",
        }
    }
}

/// A cancellation request checked: its final service date (a `YYYY-MM-DD` from `today` to
/// [`MAX_FINAL_SERVICE_DAYS`] days out) and its reason.
pub fn check_cancellation(
    final_service_date: &str,
    reason: &str,
    today: NaiveDate,
) -> Result<(NaiveDate, CancelReason), super::FieldError> {
    use super::FieldError;
    let date = NaiveDate::parse_from_str(final_service_date, "%Y-%m-%d")
        .map_err(|_| FieldError::invalid("final_service_date", "must be a YYYY-MM-DD date"))?;
    if date < today {
        return Err(FieldError::invalid(
            "final_service_date",
            "must not be in the past",
        ));
    }
    if date > today + Duration::days(MAX_FINAL_SERVICE_DAYS) {
        return Err(FieldError::invalid(
            "final_service_date",
            format!("must be at most {MAX_FINAL_SERVICE_DAYS} days out"),
        ));
    }
    let reason = CancelReason::parse(reason)
        .ok_or_else(|| FieldError::invalid("reason", "must be one of moving, switching, other"))?;
    Ok((date, reason))
}

#[cfg(test)]
mod cancellation_tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_final_service_date_runs_from_today_to_90_days_out() {
        let today = day("2026-03-10");
        assert_eq!(
            check_cancellation("2026-03-10", "moving", today),
            Ok((today, CancelReason::Moving))
        );
        assert_eq!(
            check_cancellation("2026-06-08", "switching", today),
            Ok((day("2026-06-08"), CancelReason::Switching))
        );
        for bad in ["2026-03-09", "2026-06-09", "2026-02-30", "tomorrow", ""] {
            let e = check_cancellation(bad, "other", today).unwrap_err();
            assert_eq!(e.param, "final_service_date", "{bad}");
        }
    }

    #[test]
    fn a_reason_is_one_of_three() {
        let today = day("2026-03-10");
        for r in ["moving", "switching", "other"] {
            assert_eq!(CancelReason::parse(r).unwrap().as_str(), r);
        }
        for bad in ["Moving", "", "price"] {
            let e = check_cancellation("2026-03-11", bad, today).unwrap_err();
            assert_eq!(e.param, "reason", "{bad}");
        }
    }

    #[test]
    fn recorded_answers_follow_the_submission() {
        use SubmissionStatus as S;
        let start = NaiveDate::from_ymd_opt(2026, 6, 1).unwrap();
        let accepted = UtilityRecord::Accepted { start_date: start };
        assert_eq!(accepted.next_status(S::Pending), Ok(S::Accepted));
        assert_eq!(
            accepted.next_status(S::SwitchHold),
            Ok(S::Accepted),
            "after a hold is lifted"
        );
        assert!(accepted.next_status(S::Accepted).is_err(), "answered once");
        assert!(accepted.next_status(S::Rejected).is_err());
        assert_eq!(
            UtilityRecord::SwitchHold.next_status(S::Pending),
            Ok(S::SwitchHold)
        );
        assert!(UtilityRecord::SwitchHold
            .next_status(S::SwitchHold)
            .is_err());
        assert_eq!(
            UtilityRecord::Deactivated.next_status(S::Pending),
            Ok(S::Deactivated)
        );
        let rejected = UtilityRecord::rejected(" meter not found ").unwrap();
        assert_eq!(
            rejected,
            UtilityRecord::Rejected {
                reason: "meter not found".to_owned()
            }
        );
        assert_eq!(rejected.next_status(S::SwitchHold), Ok(S::Rejected));
        assert!(UtilityRecord::rejected("  ").is_err());
        assert!(UtilityRecord::rejected(&"x".repeat(501)).is_err());
        assert_eq!(
            UtilityRecord::Active.next_status(S::Accepted),
            Ok(S::Active)
        );
        for s in [
            S::Pending,
            S::SwitchHold,
            S::Rejected,
            S::Active,
            S::Deactivated,
        ] {
            assert!(UtilityRecord::Active.next_status(s).is_err(), "{s:?}");
        }
        assert_eq!(UtilityRecord::Active.answer(), None);
        assert_eq!(accepted.answer(), Some(UtilityAnswer::Accepted));
        for &s in S::ALL {
            assert_eq!(S::parse(s.as_str()), Some(s));
        }
    }
}

#[cfg(test)]
mod who_enrolls_tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_partner_enrolls_once_it_recorded_the_authorization() {
        assert_eq!(enroller(None), Enroller::Customer);
        assert_eq!(
            enroller(Some(at("2026-11-20T12:00:00Z"))),
            Enroller::ClientAgent
        );
        assert_eq!(accepted_by(Enroller::Customer), "customer");
        assert_eq!(accepted_by(Enroller::ClientAgent), "client_agent");
    }

    #[test]
    fn the_client_agent_must_accept_every_pending_plan_whatever_the_times_say() {
        assert!(client_agent_accepted_every_plan(true, []));
        assert!(client_agent_accepted_every_plan(true, ["client_agent"]));
        assert!(!client_agent_accepted_every_plan(
            true,
            ["client_agent", "customer"]
        ));
        assert!(!client_agent_accepted_every_plan(false, ["client_agent"]));
        assert!(client_agent_may_be_recorded([]));
        assert!(client_agent_may_be_recorded(["client_agent"]));
        assert!(!client_agent_may_be_recorded(["customer"]));
    }

    #[test]
    fn an_expired_acceptance_gives_way_to_a_new_one() {
        use crate::domain::status::Cancellation;
        let now = at("2026-11-20T12:00:00Z");
        assert_eq!(expired_price([at("2026-11-21T12:00:00Z")], now), None);
        assert_eq!(
            expired_price(
                [at("2026-11-21T12:00:00Z"), now, at("2026-11-19T12:00:00Z")],
                now
            ),
            Some(at("2026-11-19T12:00:00Z"))
        );
        assert_eq!(
            prior_acceptance(None, false, false),
            PriorAcceptance::Nothing
        );
        assert_eq!(
            prior_acceptance(None, true, false),
            PriorAcceptance::PlanAlreadyAccepted
        );
        assert_eq!(prior_acceptance(None, true, true), PriorAcceptance::Replace);
        assert_eq!(
            prior_acceptance(Some(Some(Cancellation::ExpiredPreActive)), false, false),
            PriorAcceptance::Replace
        );
        for other in [
            None,
            Some(Cancellation::PreStart),
            Some(Cancellation::PostStart),
        ] {
            assert_eq!(
                prior_acceptance(Some(other), true, true),
                PriorAcceptance::AlreadyFinalized
            );
        }
    }

    #[test]
    fn only_an_active_contract_in_its_window_or_month_to_month_renews() {
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let today = d("2026-11-23");
        let end = Some(d("2027-01-31"));
        assert!(renewal_eligible(Some((ContractStatus::Active, end)), today));
        assert!(!renewal_eligible(
            Some((ContractStatus::Pending, end)),
            today
        ));
        assert!(!renewal_eligible(
            Some((ContractStatus::Active, Some(d("2027-06-30")))),
            today
        ));
        // Month-to-month (no end): any day.
        assert!(renewal_eligible(
            Some((ContractStatus::Active, None)),
            today
        ));
        assert!(!renewal_eligible(
            Some((ContractStatus::Ended, None)),
            today
        ));
        assert!(!renewal_eligible(None, today));
    }
}
