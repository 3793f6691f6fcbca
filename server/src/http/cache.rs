//! Per-instance caches of what nearly every request reads: who a token belongs to, and the
//! account an AccountToken reads. Entries live `ttl` on the one clock; changes made through
//! this instance invalidate their entries at once, so a client always reads its own writes,
//! and changes made elsewhere (another instance, the CLI) show within `ttl`.

use std::{hash::Hash, sync::Arc};

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{accounts::AccountView, auth::Principal};

/// How many entries each cache keeps at most (the least used go first).
const CAPACITY: u64 = 100_000;

pub struct TtlCache<K, V> {
    entries: moka::sync::Cache<K, (V, DateTime<Utc>)>,
    ttl: Duration,
}

impl<K, V> TtlCache<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub fn new(ttl: Duration) -> Self {
        TtlCache {
            entries: moka::sync::Cache::new(CAPACITY),
            ttl,
        }
    }

    pub fn get(&self, key: &K, now: DateTime<Utc>) -> Option<V> {
        let (value, cached_at) = self.entries.get(key)?;
        if now >= cached_at && now - cached_at < self.ttl {
            Some(value)
        } else {
            self.entries.invalidate(key);
            None
        }
    }

    pub fn insert(&self, key: K, value: V, now: DateTime<Utc>) {
        if self.ttl > Duration::zero() {
            self.entries.insert(key, (value, now));
        }
    }

    pub fn invalidate(&self, key: &K) {
        self.entries.invalidate(key);
    }

    pub fn clear(&self) {
        self.entries.invalidate_all();
    }
}

/// The caches of one server instance.
#[derive(Clone)]
pub struct Caches {
    /// Token digest to its principal.
    pub principals: Arc<TtlCache<[u8; 32], Principal>>,
    /// Rendered one-account reads.
    pub accounts: Arc<TtlCache<Uuid, Arc<AccountView>>>,
}

impl Caches {
    pub fn new(ttl: Duration) -> Self {
        Caches {
            principals: Arc::new(TtlCache::new(ttl)),
            accounts: Arc::new(TtlCache::new(ttl)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_their_ttl_on_the_given_clock() {
        let cache = TtlCache::new(Duration::seconds(1));
        let t0 = Utc::now();
        cache.insert("k", 1, t0);
        assert_eq!(cache.get(&"k", t0 + Duration::milliseconds(999)), Some(1));
        assert_eq!(cache.get(&"k", t0 + Duration::seconds(1)), None);
        cache.insert("k", 2, t0);
        cache.invalidate(&"k");
        assert_eq!(cache.get(&"k", t0), None);
    }

    #[test]
    fn a_zero_ttl_caches_nothing() {
        let cache = TtlCache::new(Duration::zero());
        let t0 = Utc::now();
        cache.insert("k", 1, t0);
        assert_eq!(cache.get(&"k", t0), None);
    }
}
