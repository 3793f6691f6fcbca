//! The one clock. Everything that depends on time asks it, so that tests (and, per account,
//! the sandbox) can move time forward instead of waiting.

use std::sync::{
    atomic::{AtomicI64, Ordering},
    Arc,
};

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::America::Chicago;

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
}

/// The market's calendar date of an instant.
pub fn market_date(t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&Chicago).date_naive()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn market_dates_are_central_time() {
        let t = DateTime::parse_from_rfc3339("2026-07-01T04:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(market_date(t).to_string(), "2026-06-30");
        let t = DateTime::parse_from_rfc3339("2026-01-01T06:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(market_date(t).to_string(), "2026-01-01");
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
