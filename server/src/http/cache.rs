//! Per-instance caches of what nearly every request reads: who a token belongs to, and the
//! account an AccountToken reads. Entries live `ttl` on the one clock; changes made through
//! this instance invalidate their entries at once, so a client always reads its own writes,
//! and changes made elsewhere (another instance, the CLI) show within `ttl`.
//!
//! An entry that is missing is filled once: requests that miss the same key at the same time
//! (every connection of a busy client right after the entry's `ttl` ended) wait for the one
//! read under way instead of each reading the database again.

use std::{collections::HashMap, future::Future, hash::Hash, sync::Arc};

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::{accounts::AccountView, auth::Principal};

/// How many entries each cache keeps at most (the least used go first).
const CAPACITY: u64 = 100_000;

pub struct TtlCache<K, V> {
    entries: moka::sync::Cache<K, (V, DateTime<Utc>)>,
    ttl: Duration,
    /// The keys being filled, each with the gate its other readers wait at.
    fills: std::sync::Mutex<HashMap<K, Arc<tokio::sync::Mutex<()>>>>,
}

impl<K, V> TtlCache<K, V>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub fn new(ttl: Duration) -> Self {
        TtlCache {
            entries: moka::sync::Cache::new(CAPACITY),
            ttl,
            fills: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The entry of `key`, else what `fill` reads, kept when it succeeds. Concurrent misses of
    /// one key run `fill` once; the others take its entry (or, when it failed, read
    /// themselves). `now` is the clock, asked again after a wait.
    pub async fn get_or_fill<E, Fut>(
        &self,
        key: &K,
        now: impl Fn() -> DateTime<Utc>,
        fill: impl FnOnce() -> Fut,
    ) -> Result<V, E>
    where
        Fut: Future<Output = Result<V, E>>,
    {
        if let Some(value) = self.get(key, now()) {
            return Ok(value);
        }
        if self.ttl <= Duration::zero() {
            return fill().await;
        }
        let gate = self
            .fills
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(key.clone())
            .or_default()
            .clone();
        let _filling = gate.lock().await;
        if let Some(value) = self.get(key, now()) {
            return Ok(value);
        }
        let started = now();
        let filled = fill().await;
        if let Ok(value) = &filled {
            self.insert(key.clone(), value.clone(), started);
        }
        self.fills
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(key);
        filled
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

    #[tokio::test]
    async fn concurrent_misses_of_one_key_fill_it_once() {
        let cache = Arc::new(TtlCache::new(Duration::seconds(60)));
        let fills = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut readers = tokio::task::JoinSet::new();
        for _ in 0..16 {
            let (cache, fills) = (cache.clone(), fills.clone());
            readers.spawn(async move {
                cache
                    .get_or_fill(&"k", Utc::now, || async {
                        fills.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                        Ok::<_, ()>(7)
                    })
                    .await
            });
        }
        while let Some(read) = readers.join_next().await {
            assert_eq!(read.unwrap(), Ok(7));
        }
        assert_eq!(fills.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_fill_keeps_nothing() {
        let cache = TtlCache::new(Duration::seconds(60));
        let failed = cache
            .get_or_fill(&"k", Utc::now, || async { Err::<i32, _>("down") })
            .await;
        assert_eq!(failed, Err("down"));
        let read = cache
            .get_or_fill(&"k", Utc::now, || async { Ok::<_, &str>(2) })
            .await;
        assert_eq!(read, Ok(2));
    }

    #[test]
    fn a_zero_ttl_caches_nothing() {
        let cache = TtlCache::new(Duration::zero());
        let t0 = Utc::now();
        cache.insert("k", 1, t0);
        assert_eq!(cache.get(&"k", t0), None);
    }
}
