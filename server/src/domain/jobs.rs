//! Rules of the job queue that do not depend on the job: how long a claim lasts and how a job
//! whose handler failed unexpectedly is retried.

use chrono::{DateTime, Duration, Utc};

use super::{market::add_market_days, FieldError};

/// Delay before retrying a job whose handler failed (database down, a bug): 2^attempts
/// seconds, at most one hour. Job kinds with their own schedule (webhooks) decide themselves.
pub fn backoff(attempts: u32) -> Duration {
    Duration::seconds(1i64 << attempts.min(12)).min(Duration::hours(1))
}

/// Where `advance-clock` moves an account's clock from `now`: to `to`, or `days` market days
/// ahead at the same time of day (so that the account's date moves by exactly `days`, whatever
/// the hour and across the clock changes) — exactly one of them, forward only, at most ten
/// years at a time.
pub fn advance_target(
    now: DateTime<Utc>,
    to: Option<DateTime<Utc>>,
    days: Option<i64>,
) -> Result<DateTime<Utc>, FieldError> {
    let limit = Duration::days(3650);
    match (to, days) {
        (Some(_), Some(_)) => Err(FieldError::invalid(
            "days",
            "give either to or days, not both",
        )),
        (None, None) => Err(FieldError::missing("days")),
        (None, Some(d)) if (1..=3650).contains(&d) => Ok(add_market_days(now, d)),
        (None, Some(_)) => Err(FieldError::invalid(
            "days",
            "days must be between 1 and 3650",
        )),
        (Some(t), None) if t <= now => Err(FieldError::invalid(
            "to",
            "to must be after the account's present time; clocks only move forward",
        )),
        (Some(t), None) if t - now > limit => Err(FieldError::invalid(
            "to",
            "to must be at most 3650 days ahead",
        )),
        (Some(t), None) => Ok(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_targets() {
        let now = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            advance_target(now, None, Some(2)).unwrap(),
            now + Duration::days(2)
        );
        let to = now + Duration::hours(5);
        assert_eq!(advance_target(now, Some(to), None).unwrap(), to);
        assert_eq!(advance_target(now, None, None).unwrap_err().param, "days");
        assert!(advance_target(now, Some(to), Some(1)).is_err());
        assert!(advance_target(now, None, Some(0)).is_err());
        assert!(advance_target(now, None, Some(3651)).is_err());
        assert_eq!(
            advance_target(now, Some(now), None).unwrap_err().param,
            "to"
        );
        assert!(advance_target(now, Some(now + Duration::days(3651)), None).is_err());
    }

    #[test]
    fn advancing_by_days_moves_the_market_date_by_exactly_those_days() {
        use crate::domain::market::market_date;
        // 23:30 in Texas the night before the spring change: 24-hour steps would land at
        // 00:30 on the day after.
        let late = DateTime::parse_from_rfc3339("2027-03-14T05:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let day = market_date(late);
        for days in [1, 2, 91, 365] {
            let t = advance_target(late, None, Some(days)).unwrap();
            assert_eq!(market_date(t), day + Duration::days(days), "{days}");
        }
        // 00:30 the night of the autumn change.
        let early = DateTime::parse_from_rfc3339("2026-11-01T05:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let t = advance_target(early, None, Some(1)).unwrap();
        assert_eq!(t - early, Duration::hours(25));
        assert_eq!(market_date(t), market_date(early) + Duration::days(1));
    }

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        assert_eq!(backoff(0), Duration::seconds(1));
        assert_eq!(backoff(3), Duration::seconds(8));
        assert_eq!(backoff(11), Duration::seconds(2048));
        assert_eq!(backoff(12), Duration::hours(1));
        assert_eq!(backoff(40), Duration::hours(1));
    }
}
