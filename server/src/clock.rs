//! The one clock. Everything that depends on time asks it, so that tests (and, per account,
//! the sandbox) can move time forward instead of waiting.

use std::sync::{
    atomic::{AtomicI64, Ordering},
    Arc,
};

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::domain::market::market_date;

/// System time plus an offset that only ever grows.
#[derive(Clone, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicI64>,
}

impl Clock {
    pub fn system() -> Self {
        Clock::default()
    }

    /// A clock that reads `start` now and runs on from there at the system's pace: tests (and
    /// demonstrations) pick the instant they run at, so that what they see does not depend on
    /// the hour or the day they happen to be run.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        // Rounded up to the next millisecond, so that the clock never reads before `start`.
        let offset = start - Utc::now();
        Clock {
            offset_ms: Arc::new(AtomicI64::new(offset.num_milliseconds() + 1)),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))
    }

    /// Today's date in the market (America/Chicago).
    pub fn today(&self) -> NaiveDate {
        market_date(self.now())
    }

    /// Moves this clock (and every copy of it) forward.
    pub fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.num_milliseconds().max(0), Ordering::Relaxed);
    }

    /// The clock of one sandbox account: this clock plus `ahead`.
    pub fn with_offset(&self, ahead: Duration) -> AccountClock {
        AccountClock {
            base: self.clone(),
            ahead,
        }
    }

    /// The clock of an account: this clock plus how far the account's sandbox clock was moved
    /// (`POST /v1/account/sandbox/advance-clock`); live accounts are never moved.
    pub async fn for_account(
        &self,
        db: impl Into<crate::store::Conn<'_>>,
        account_uuid: uuid::Uuid,
    ) -> crate::store::Result<AccountClock> {
        let ms = crate::store::jobs::account_offset_ms(db, account_uuid).await?;
        Ok(self.with_offset(Duration::milliseconds(ms)))
    }
}

/// An account's clock: the service clock plus the account's own offset.
#[derive(Clone)]
pub struct AccountClock {
    base: Clock,
    ahead: Duration,
}

impl AccountClock {
    pub fn now(&self) -> DateTime<Utc> {
        self.base.now() + self.ahead
    }

    pub fn today(&self) -> NaiveDate {
        market_date(self.now())
    }

    /// The service clock this account's clock runs ahead of.
    pub fn service(&self) -> &Clock {
        &self.base
    }

    /// How far this account's clock is ahead of the service clock.
    pub fn ahead(&self) -> Duration {
        self.ahead
    }

    /// An instant on this account's clock as an instant on the service clock (the queue's).
    pub fn to_service_time(&self, t: DateTime<Utc>) -> DateTime<Utc> {
        t - self.ahead
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_clocks_run_ahead_of_the_service_clock() {
        let c = Clock::system();
        let account = c.with_offset(Duration::days(3));
        let service = c.now();
        let gap = account.now() - service;
        assert!(gap >= Duration::days(3) && gap < Duration::days(3) + Duration::seconds(5));
        let t = account.now();
        assert_eq!(t - account.to_service_time(t), Duration::days(3));
    }

    #[test]
    fn a_clock_can_start_at_a_chosen_instant() {
        let start = DateTime::parse_from_rfc3339("2027-03-14T05:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let c = Clock::starting_at(start);
        let gap = c.now() - start;
        assert!(
            gap >= Duration::zero() && gap < Duration::seconds(5),
            "{gap}"
        );
        assert_eq!(c.today().to_string(), "2027-03-13");
        c.advance(Duration::days(1));
        assert!(c.now() - start >= Duration::days(1));
    }

    #[test]
    fn advancing_moves_every_copy() {
        let c = Clock::system();
        let copy = c.clone();
        let before = copy.now();
        c.advance(Duration::hours(2));
        assert!(copy.now() - before >= Duration::hours(2));
    }
}
