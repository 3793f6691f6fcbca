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
        db: &crate::store::Db,
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
    fn advancing_moves_every_copy() {
        let c = Clock::system();
        let copy = c.clone();
        let before = copy.now();
        c.advance(Duration::hours(2));
        assert!(copy.now() - before >= Duration::hours(2));
    }
}
