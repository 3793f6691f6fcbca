//! The end of a fixed contract: the expiration notices before it, the month-to-month rollover
//! after it when nobody renewed, the early termination fee, and the Terms of Service clauses
//! that promise exactly these (the TOS is written from the same constants the rules use).

use chrono::{DateTime, Duration, Months, NaiveDate, Utc};

use super::enrollment::{start_of_market_day, ContractStatus, RENEWAL_WINDOW_DAYS};

/// How many days before a fixed term of four months or more ends its expiration notices go out.
pub const NOTICE_DAYS_BEFORE: [i64; 3] = [90, 60, 30];

/// The last notice of a term under four months comes at least this many days before its end.
pub const SHORT_TERM_LAST_NOTICE_DAYS: i64 = 15;

/// The hour (market time) a notice goes out on its day.
pub const NOTICE_HOUR: i64 = 9;

/// The last days of a fixed term in which the law forbids an early termination fee.
pub const ETF_FREE_LAST_DAYS: i64 = 14;

/// Whether the product charges an early termination fee at all. It does not: a customer who
/// leaves early (or moves out) owes the energy used and nothing more, whatever the plan's EFL
/// states as its fee. The Terms of Service are written from this.
pub const CHARGES_EARLY_TERMINATION_FEE: bool = false;

/// The days before `end` that a contract running from `start` gets its notices, earliest first:
/// 90, 60 and 30 days for a term of four months or more; for shorter terms three notices in
/// the term's last third, the last 15 days before the end (fewer when the term is so short
/// that they would fall on the same day).
pub fn notice_days_before(start: NaiveDate, end: NaiveDate) -> Vec<i64> {
    let short = start
        .checked_add_months(Months::new(4))
        .is_some_and(|four_months| end < four_months - Duration::days(1));
    let last = if short {
        SHORT_TERM_LAST_NOTICE_DAYS
    } else {
        NOTICE_DAYS_BEFORE[2]
    };
    let third = ((end - start).num_days() + 1) / 3;
    let first = NOTICE_DAYS_BEFORE[0].min(third.max(last));
    if first == NOTICE_DAYS_BEFORE[0] && last == NOTICE_DAYS_BEFORE[2] {
        return NOTICE_DAYS_BEFORE.to_vec();
    }
    let mut days = vec![first, (first + last) / 2, last];
    days.dedup();
    days
}

/// One expiration notice of a contract, as scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduledNotice {
    /// Which notice this is (its nominal days before the end); a contract gets each once.
    pub days_before: i64,
    /// The day it goes out.
    pub send_on: NaiveDate,
    /// The last notice: it states the month-to-month plan the contract rolls onto.
    pub is_final: bool,
}

/// The notices of a contract running from `start` to `end` that come into force on `today`.
/// Notices whose day has passed (a contract put in force late) go out together as one, today,
/// so that the customer still hears of the end; none once the contract has ended.
pub fn notice_schedule(start: NaiveDate, end: NaiveDate, today: NaiveDate) -> Vec<ScheduledNotice> {
    if today > end {
        return Vec::new();
    }
    let days = notice_days_before(start, end);
    let last = days.last().copied().unwrap_or_default();
    let (missed, ahead): (Vec<i64>, Vec<i64>) = days
        .into_iter()
        .partition(|d| end - Duration::days(*d) < today);
    let caught_up = missed.into_iter().min().map(|d| ScheduledNotice {
        days_before: d,
        send_on: today,
        is_final: d == last,
    });
    caught_up
        .into_iter()
        .chain(ahead.into_iter().map(|d| ScheduledNotice {
            days_before: d,
            send_on: end - Duration::days(d),
            is_final: d == last,
        }))
        .collect()
}

/// The path of the hosted renewal page of a location, which notices link to when the
/// account has no `renewals_url`. Final: the hosted pages will answer there.
pub fn hosted_renewal_path(app_slug: &str, location_uuid: uuid::Uuid) -> String {
    format!("/go/{app_slug}/renew/{location_uuid}")
}

/// When a notice due on `day` goes out.
pub fn notice_send_at(day: NaiveDate) -> DateTime<Utc> {
    start_of_market_day(day) + Duration::hours(NOTICE_HOUR)
}

/// The first day after a contract ending on `end`: a renewal or the month-to-month plan
/// starts then.
pub fn day_after_end(end: NaiveDate) -> NaiveDate {
    end + Duration::days(1)
}

/// When a contract ending on `end` rolls onto month-to-month if nobody renewed it.
pub fn rollover_at(end: NaiveDate) -> DateTime<Utc> {
    start_of_market_day(day_after_end(end))
}

/// What decides whether a notice or the rollover still applies to a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContractEnd {
    pub status: ContractStatus,
    /// A renewal (or any later contract) is queued or in force after this one.
    pub renewed: bool,
    /// The location's service is cancelled.
    pub location_cancelled: bool,
    /// A move-out is scheduled (a final service date is set).
    pub leaving: bool,
}

/// Whether an expiration notice still goes out: the contract is in force, nothing renews it,
/// and the customer is not leaving.
pub fn notice_due(c: ContractEnd) -> bool {
    c.status == ContractStatus::Active && !c.renewed && !c.location_cancelled && !c.leaving
}

/// Whether a contract rolls onto month-to-month the day after it ends: it is still in force,
/// nothing renews it and the location still has service (a move-out scheduled for later
/// keeps service, and so its billing, going until then).
pub fn rollover_due(c: ContractEnd) -> bool {
    c.status == ContractStatus::Active && !c.renewed && !c.location_cancelled
}

/// The early termination fee owed when service under a contract ending on `end` ends on
/// `final_day`: never any (`CHARGES_EARLY_TERMINATION_FEE`), and in any case none in the last
/// `ETF_FREE_LAST_DAYS` days of a fixed term.
pub fn early_termination_fee_cents(
    plan_fee_cents: i64,
    end: Option<NaiveDate>,
    final_day: NaiveDate,
) -> i64 {
    let in_last_days = end.is_none_or(|end| final_day > end - Duration::days(ETF_FREE_LAST_DAYS));
    if CHARGES_EARLY_TERMINATION_FEE && !in_last_days {
        plan_fee_cents
    } else {
        0
    }
}

/// The early termination fee a priced plan states, wherever it is shown (the API's plan, the
/// sales screens, the EFL): the group's fee for a fixed plan when the product charges one,
/// none otherwise. Stating a fee the product never charges would contradict the Terms of
/// Service, so this is the one place that decides what a plan says.
pub fn stated_early_termination_fee_cents(fixed: bool, group_fee_cents: i64) -> i64 {
    if CHARGES_EARLY_TERMINATION_FEE && fixed {
        group_fee_cents
    } else {
        0
    }
}

/// One clause of the Terms of Service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    pub heading: &'static str,
    pub text: String,
}

fn list_days(days: &[i64]) -> String {
    match days {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!(
            "{} and {last}",
            init.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The Terms of Service: what every contract promises about its term, its end and leaving
/// early. Written from the constants the rules above use, so the text cannot promise what
/// the service does not do.
pub fn tos_clauses() -> Vec<Clause> {
    let early_termination = if CHARGES_EARLY_TERMINATION_FEE {
        format!(
            "Ending a fixed term early costs the early termination fee on your Electricity Facts \
             Label, except in the last {ETF_FREE_LAST_DAYS} days of the term."
        )
    } else {
        format!(
            "No early termination fee is charged when you end service before your fixed term \
             is over, and never in the last {ETF_FREE_LAST_DAYS} days of a term. A move-out ends \
             your contract on your final service date; you pay for the electricity used until \
             then and nothing more."
        )
    };
    vec![
        Clause {
            heading: "Your plan",
            text: "Your price, term and charges are those of your plan's Electricity Facts Label. \
                   The energy and base charges of a fixed-rate plan do not change during its \
                   term; the utility's delivery charges are passed through as the utility sets \
                   them."
                .to_owned(),
        },
        Clause {
            heading: "Expiration notices",
            text: format!(
                "Before a fixed term ends we e-mail you expiration notices {} days before its \
                 last day (for a shorter term, three notices in its last third, the last at \
                 least {SHORT_TERM_LAST_NOTICE_DAYS} days before the end). Each notice links to \
                 your renewal choices. No further notice is sent once you accept a renewal.",
                list_days(&NOTICE_DAYS_BEFORE)
            ),
        },
        Clause {
            heading: "Renewal",
            text: format!(
                "From {RENEWAL_WINDOW_DAYS} days before a fixed term ends you may accept a \
                 renewal plan; it starts the day after the term ends."
            ),
        },
        Clause {
            heading: "Month-to-month",
            text: "If you have not accepted a renewal by the last day of a fixed term, your \
                   service continues from the next day on our month-to-month variable plan, \
                   under these same terms, at the price your last expiration notice states \
                   with its Electricity Facts Label."
                .to_owned(),
        },
        Clause {
            heading: "Ending service early",
            text: early_termination,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_year_long_term_gets_its_notices_at_90_60_and_30_days() {
        let (start, end) = (day("2026-02-01"), day("2027-01-31"));
        assert_eq!(notice_days_before(start, end), [90, 60, 30]);
        let s = notice_schedule(start, end, day("2026-02-01"));
        let sends: Vec<_> = s.iter().map(|n| (n.send_on, n.is_final)).collect();
        assert_eq!(
            sends,
            [
                (day("2026-11-02"), false),
                (day("2026-12-02"), false),
                (day("2027-01-01"), true)
            ]
        );
    }

    #[test]
    fn shorter_terms_get_their_notices_in_the_last_third() {
        // Six months: the last third is about 60 days.
        assert_eq!(
            notice_days_before(day("2026-01-01"), day("2026-06-30")),
            [60, 45, 30]
        );
        // Under four months the last may come 15 days before the end.
        assert_eq!(
            notice_days_before(day("2026-01-01"), day("2026-03-31")),
            [30, 22, 15]
        );
        // A month is too short for three distinct days.
        assert_eq!(
            notice_days_before(day("2026-01-01"), day("2026-01-31")),
            [15]
        );
        for (s, e) in [("2026-01-01", "2026-06-30"), ("2026-01-01", "2026-03-31")] {
            let (s, e) = (day(s), day(e));
            let third = ((e - s).num_days() + 1) / 3;
            assert!(notice_days_before(s, e).iter().all(|d| *d <= third));
        }
    }

    #[test]
    fn notices_missed_by_a_late_start_go_out_once_at_once() {
        let (start, end) = (day("2026-02-01"), day("2027-01-31"));
        let s = notice_schedule(start, end, day("2026-12-10"));
        assert_eq!(
            s,
            [
                ScheduledNotice {
                    days_before: 60,
                    send_on: day("2026-12-10"),
                    is_final: false
                },
                ScheduledNotice {
                    days_before: 30,
                    send_on: day("2027-01-01"),
                    is_final: true
                },
            ]
        );
        let s = notice_schedule(start, end, day("2027-01-20"));
        assert_eq!(s.len(), 1);
        assert!(s[0].is_final);
        assert!(notice_schedule(start, end, day("2027-02-01")).is_empty());
    }

    #[test]
    fn notices_stop_once_renewed_and_the_rollover_only_without_a_renewal() {
        let base = ContractEnd {
            status: ContractStatus::Active,
            renewed: false,
            location_cancelled: false,
            leaving: false,
        };
        assert!(notice_due(base) && rollover_due(base));
        let renewed = ContractEnd {
            renewed: true,
            ..base
        };
        assert!(!notice_due(renewed) && !rollover_due(renewed));
        let leaving = ContractEnd {
            leaving: true,
            ..base
        };
        assert!(!notice_due(leaving));
        assert!(rollover_due(leaving), "service goes on until the move-out");
        for status in [
            ContractStatus::Ended,
            ContractStatus::Cancelled,
            ContractStatus::Pending,
        ] {
            assert!(!rollover_due(ContractEnd { status, ..base }));
            assert!(!notice_due(ContractEnd { status, ..base }));
        }
        assert!(!rollover_due(ContractEnd {
            location_cancelled: true,
            ..base
        }));
        assert_eq!(
            rollover_at(day("2027-01-31")).to_rfc3339(),
            "2027-02-01T06:00:00+00:00"
        );
        assert_eq!(
            notice_send_at(day("2027-01-01")).to_rfc3339(),
            "2027-01-01T15:00:00+00:00"
        );
    }

    #[test]
    fn a_plan_states_the_fee_the_terms_of_service_promise() {
        // The TOS says no fee is charged, so no plan may state one.
        const { assert!(!CHARGES_EARLY_TERMINATION_FEE) };
        assert_eq!(stated_early_termination_fee_cents(true, 15_000), 0);
        assert_eq!(stated_early_termination_fee_cents(false, 15_000), 0);
        let ending = tos_clauses()
            .into_iter()
            .find(|c| c.heading == "Ending service early")
            .unwrap();
        assert!(ending.text.starts_with("No early termination fee"));
    }

    #[test]
    fn no_early_termination_fee_is_ever_charged() {
        let end = Some(day("2027-01-31"));
        for final_day in ["2026-06-01", "2027-01-17", "2027-01-18", "2027-01-31"] {
            assert_eq!(early_termination_fee_cents(15_000, end, day(final_day)), 0);
        }
        assert_eq!(
            early_termination_fee_cents(15_000, None, day("2027-01-31")),
            0
        );
    }

    #[test]
    fn the_terms_state_the_notice_days_the_rollover_and_the_fee() {
        let text: String = tos_clauses().iter().map(|c| c.text.clone()).collect();
        assert!(
            text.contains("90, 60 and 30 days before its last day"),
            "{text}"
        );
        assert!(text.contains("least 15 days before the end"));
        assert!(text.contains("month-to-month variable plan"));
        assert!(text.contains("No early termination fee is charged"));
        assert!(text.contains("last 14 days"));
        assert!(text.contains("From 90 days before a fixed term ends"));
    }
}
