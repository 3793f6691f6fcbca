//! Rate limits: a sliding one-second window per app (`/v1/app/*`) and per account
//! (`/v1/account/*`). In-process by default; shared by every instance through Redis when
//! `REDIS_URL` is set, so that two instances together admit the limit once, not twice.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use axum::http::{HeaderMap, HeaderName, HeaderValue};

const WINDOW: Duration = Duration::from_secs(1);

/// The verdict on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Until a slot frees up (when refused) or the window slides past the oldest request.
    pub reset_after: Duration,
}

impl Decision {
    /// `RateLimit-Policy`, `RateLimit` and, when refused, `Retry-After`.
    pub fn headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        let reset_secs = self.reset_after.as_millis().div_ceil(1000).max(1);
        let mut put = |name: &'static str, value: String| {
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.insert(HeaderName::from_static(name), v);
            }
        };
        put("ratelimit-policy", format!("{};w=1", self.limit));
        put(
            "ratelimit",
            format!(
                "limit={}, remaining={}, reset={reset_secs}",
                self.limit, self.remaining
            ),
        );
        if !self.allowed {
            put("retry-after", reset_secs.to_string());
        }
        h
    }
}

#[derive(Clone)]
pub struct RateLimiter {
    backend: Arc<Backend>,
}

enum Backend {
    Disabled,
    Local(LocalWindows),
    Redis(RedisWindows),
}

impl RateLimiter {
    /// Admits everything (benchmarks lift the limits this way).
    pub fn disabled() -> Self {
        RateLimiter {
            backend: Arc::new(Backend::Disabled),
        }
    }

    pub fn local() -> Self {
        RateLimiter {
            backend: Arc::new(Backend::Local(LocalWindows::default())),
        }
    }

    /// Shares windows through Redis; `prefix` namespaces the keys (one per deployment).
    pub async fn redis(url: &str, prefix: &str) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let manager = redis::aio::ConnectionManager::new(client).await?;
        Ok(RateLimiter {
            backend: Arc::new(Backend::Redis(RedisWindows {
                manager,
                script: redis::Script::new(SLIDING_WINDOW_LUA),
                prefix: prefix.to_owned(),
                fallback: LocalWindows::default(),
            })),
        })
    }

    /// Counts one request against `key` if it fits in `limit` per second.
    pub async fn check(&self, key: &str, limit: u32) -> Decision {
        match &*self.backend {
            Backend::Disabled => Decision {
                allowed: true,
                limit,
                remaining: limit,
                reset_after: WINDOW,
            },
            Backend::Local(w) => w.check(key, limit, Instant::now()),
            Backend::Redis(r) => r.check(key, limit).await,
        }
    }
}

/// Exact sliding windows: the instants of the admitted requests of the last second, per key.
#[derive(Default)]
struct LocalWindows {
    windows: Mutex<HashMap<String, VecDeque<Instant>>>,
    calls: AtomicU64,
}

impl LocalWindows {
    fn check(&self, key: &str, limit: u32, now: Instant) -> Decision {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        // Forget idle keys now and then so the map stays as small as the active set.
        if self.calls.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
            windows.retain(|_, w| w.back().is_some_and(|t| now.duration_since(*t) < WINDOW));
        }
        let window = windows.entry(key.to_owned()).or_default();
        while window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= WINDOW)
        {
            window.pop_front();
        }
        let used = u32::try_from(window.len()).unwrap_or(u32::MAX);
        let reset_after = |oldest: Option<&Instant>| {
            oldest.map_or(WINDOW, |t| WINDOW.saturating_sub(now.duration_since(*t)))
        };
        if used < limit {
            window.push_back(now);
            Decision {
                allowed: true,
                limit,
                remaining: limit - used - 1,
                reset_after: reset_after(window.front()),
            }
        } else {
            Decision {
                allowed: false,
                limit,
                remaining: 0,
                reset_after: reset_after(window.front()),
            }
        }
    }
}

/// The same window in a Redis sorted set, trimmed and counted atomically on the server's clock.
/// Returns `{allowed, remaining, reset_after_micros}`.
const SLIDING_WINDOW_LUA: &str = r#"
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
if used < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  return {1, limit - used - 1, reset}
end
return {0, 0, reset}
"#;

struct RedisWindows {
    manager: redis::aio::ConnectionManager,
    script: redis::Script,
    prefix: String,
    /// Used while Redis is unreachable, so that an outage degrades to per-instance limits
    /// instead of refusing or admitting everything.
    fallback: LocalWindows,
}

impl RedisWindows {
    async fn check(&self, key: &str, limit: u32) -> Decision {
        let mut conn = self.manager.clone();
        let window_us = u64::try_from(WINDOW.as_micros()).unwrap_or(u64::MAX);
        let member = uuid::Uuid::new_v4().simple().to_string();
        let result: redis::RedisResult<(i64, i64, i64)> = self
            .script
            .key(format!("{}:rl:{key}", self.prefix))
            .arg(limit)
            .arg(window_us)
            .arg(member)
            .invoke_async(&mut conn)
            .await;
        match result {
            Ok((allowed, remaining, reset_us)) => Decision {
                allowed: allowed == 1,
                limit,
                remaining: u32::try_from(remaining).unwrap_or(0),
                reset_after: Duration::from_micros(u64::try_from(reset_us).unwrap_or(0)),
            },
            Err(err) => {
                tracing::warn!(error = %err, "rate limiter: Redis unavailable, limiting locally");
                self.fallback.check(key, limit, Instant::now())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_the_limit_per_sliding_second() {
        let w = LocalWindows::default();
        let start = Instant::now();
        let admitted = (0..40)
            .filter(|i| {
                w.check("app:a", 30, start + Duration::from_millis(i * 10))
                    .allowed
            })
            .count();
        assert_eq!(admitted, 30);
        // Half a second later the window still holds all 30.
        assert!(
            !w.check("app:a", 30, start + Duration::from_millis(900))
                .allowed
        );
        // Once the first request slides out, one more fits.
        assert!(
            w.check("app:a", 30, start + Duration::from_millis(1001))
                .allowed
        );
        // Other keys have their own window.
        assert!(w.check("app:b", 30, start).allowed);
    }

    #[test]
    fn refusals_say_when_to_retry() {
        let w = LocalWindows::default();
        let start = Instant::now();
        for _ in 0..10 {
            w.check("acct", 10, start);
        }
        let d = w.check("acct", 10, start + Duration::from_millis(300));
        assert!(!d.allowed);
        assert_eq!(d.reset_after, Duration::from_millis(700));
        let h = d.headers();
        assert_eq!(h["retry-after"], "1");
        assert_eq!(h["ratelimit-policy"], "10;w=1");
        assert_eq!(h["ratelimit"], "limit=10, remaining=0, reset=1");
    }
}
