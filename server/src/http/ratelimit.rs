//! Rate limits: a sliding one-second window per app (`/v1/app/*`) and per account
//! (`/v1/account/*`). In-process by default; shared by every instance through Redis when
//! `REDIS_URL` is set, so that two instances together admit the limit once, not twice.
//!
//! Redis is never allowed to hold a request up: every call has a time limit of tens of
//! milliseconds, and while Redis is unreachable (at start or later) the limits are counted per
//! instance, logged once when it goes and once when it comes back, and shown by `/readyz`.
//!
//! Failed authentications are limited too, per client address over a sliding minute
//! (`FailedAuths`, counted per instance): a token-guessing loop gets 429 instead of 401.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex, RwLock,
    },
    time::{Duration, Instant},
};

use axum::http::{HeaderMap, HeaderName, HeaderValue};

const WINDOW: Duration = Duration::from_secs(1);
/// The longest a request waits for Redis before it is counted locally instead.
const CALL_TIMEOUT: Duration = Duration::from_millis(80);
/// The longest a connection attempt (at start, or while Redis is away) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// How often an unreachable Redis is tried again.
const PROBE_INTERVAL: Duration = Duration::from_millis(500);
/// 1 while the windows are shared through Redis, 0 while they are counted per instance.
const SHARED_GAUGE: &str = "rate_limiter_shared";

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
    /// Failed authentications per client address.
    pub failed_auths: Arc<FailedAuths>,
    /// Failed dashboard sign-ins per e-mail and per client address (`email:...`, `ip:...`),
    /// over a sliding quarter of an hour.
    pub sign_in_failures: Arc<FailedAuths<String>>,
    /// Dashboard password reset requests per e-mail and per client address, over an hour
    /// (every request counts, whether or not the e-mail is a user's).
    pub password_reset_requests: Arc<FailedAuths<String>>,
}

enum Backend {
    Disabled,
    Local(LocalWindows),
    Redis(Arc<RedisWindows>),
}

/// Where the windows are counted right now, as `/readyz` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In Redis, shared by every instance.
    Shared,
    /// In this process: configured so, or Redis is configured but unreachable.
    Local,
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Local => "local",
            Mode::Off => "off",
        }
    }
}

impl RateLimiter {
    /// Admits everything (benchmarks lift the limits this way).
    pub fn disabled() -> Self {
        RateLimiter {
            backend: Arc::new(Backend::Disabled),
            failed_auths: Arc::default(),
            sign_in_failures: Arc::new(FailedAuths::with_window(SIGN_IN_WINDOW)),
            password_reset_requests: Arc::new(FailedAuths::with_window(PASSWORD_RESET_WINDOW)),
        }
    }

    pub fn local() -> Self {
        RateLimiter {
            backend: Arc::new(Backend::Local(LocalWindows::default())),
            failed_auths: Arc::default(),
            sign_in_failures: Arc::new(FailedAuths::with_window(SIGN_IN_WINDOW)),
            password_reset_requests: Arc::new(FailedAuths::with_window(PASSWORD_RESET_WINDOW)),
        }
    }

    /// Shares windows through Redis; `prefix` namespaces the keys (one per deployment).
    ///
    /// Never waits long for Redis: when it does not answer within `CONNECT_TIMEOUT` the limiter
    /// starts on local windows, says so in the log, and switches to Redis once it answers.
    pub async fn redis(url: &str, prefix: &str) -> anyhow::Result<Self> {
        let client = redis::Client::open(url)?;
        let windows = Arc::new(RedisWindows {
            client,
            manager: RwLock::new(None),
            script: redis::Script::new(SLIDING_WINDOW_LUA),
            prefix: prefix.to_owned(),
            fallback: LocalWindows::default(),
            away: AtomicBool::new(false),
        });
        match windows.connect().await {
            Ok(()) => {
                metrics::gauge!(SHARED_GAUGE).set(1.0);
                tracing::info!("rate limiter: limits are shared through Redis");
            }
            Err(err) => {
                tracing::warn!(
                    error = %err,
                    "rate limiter: Redis does not answer at start; limiting per instance until \
                     it does"
                );
                windows.went_away();
            }
        }
        Ok(RateLimiter {
            backend: Arc::new(Backend::Redis(windows)),
            failed_auths: Arc::default(),
            sign_in_failures: Arc::new(FailedAuths::with_window(SIGN_IN_WINDOW)),
            password_reset_requests: Arc::new(FailedAuths::with_window(PASSWORD_RESET_WINDOW)),
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

    /// Where windows are counted now. With Redis, asks it for a PONG (within the time limit of
    /// one call) so that an outage shows even before a request meets it.
    pub async fn mode(&self) -> Mode {
        match &*self.backend {
            Backend::Disabled => Mode::Off,
            Backend::Local(_) => Mode::Local,
            Backend::Redis(r) => {
                if !r.away.load(Ordering::Acquire) {
                    if let Err(err) = r.ping(CALL_TIMEOUT).await {
                        r.lost(&err);
                    }
                }
                if r.away.load(Ordering::Acquire) {
                    Mode::Local
                } else {
                    Mode::Shared
                }
            }
        }
    }
}

/// The window of failed authentications.
const FAILED_AUTH_WINDOW: Duration = Duration::from_secs(60);
/// The window of failed dashboard sign-ins.
pub const SIGN_IN_WINDOW: Duration = Duration::from_secs(15 * 60);
/// The window of dashboard password reset requests.
pub const PASSWORD_RESET_WINDOW: Duration = Duration::from_secs(60 * 60);

/// Failed authentications of the last window (a minute unless said otherwise), per key (a
/// client address unless said otherwise). A key that used up its failures is refused before
/// its credentials are even looked at, until the oldest failure slides out of the window, so
/// that guessing gains nothing from speed.
pub struct FailedAuths<K = std::net::IpAddr> {
    windows: Mutex<HashMap<K, VecDeque<Instant>>>,
    calls: AtomicU64,
    window: Duration,
}

impl<K> Default for FailedAuths<K> {
    fn default() -> Self {
        Self::with_window(FAILED_AUTH_WINDOW)
    }
}

impl<K> FailedAuths<K> {
    pub fn with_window(window: Duration) -> Self {
        FailedAuths {
            windows: Mutex::new(HashMap::new()),
            calls: AtomicU64::new(0),
            window,
        }
    }
}

impl<K: std::hash::Hash + Eq> FailedAuths<K> {
    /// How long `key` must wait when it failed `limit` times in the window.
    pub fn refused(&self, key: K, limit: u32, now: Instant) -> Option<Duration> {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let window = windows.get_mut(&key)?;
        while window
            .front()
            .is_some_and(|t| now.duration_since(*t) >= self.window)
        {
            window.pop_front();
        }
        let used = u32::try_from(window.len()).unwrap_or(u32::MAX);
        (used >= limit).then(|| {
            window.front().map_or(self.window, |t| {
                self.window.saturating_sub(now.duration_since(*t))
            })
        })
    }

    /// Counts one failed authentication of `key`.
    pub fn failed(&self, key: K, now: Instant) {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        // Forget quiet addresses now and then so the map stays as small as the active set.
        if self.calls.fetch_add(1, Ordering::Relaxed) % 1024 == 1023 {
            windows.retain(|_, w| {
                w.back()
                    .is_some_and(|t| now.duration_since(*t) < self.window)
            });
        }
        windows.entry(key).or_default().push_back(now);
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
    client: redis::Client,
    /// Set once a connection was made; the manager reconnects by itself after that.
    manager: RwLock<Option<redis::aio::ConnectionManager>>,
    script: redis::Script,
    prefix: String,
    /// Used while Redis is unreachable, so that an outage degrades to per-instance limits
    /// instead of refusing, admitting everything, or making requests wait.
    fallback: LocalWindows,
    /// Redis failed a call and has not answered a probe since: requests use `fallback`
    /// without trying Redis, and one task probes it until it answers.
    away: AtomicBool,
}

impl RedisWindows {
    async fn check(self: &Arc<Self>, key: &str, limit: u32) -> Decision {
        if self.away.load(Ordering::Acquire) {
            return self.fallback.check(key, limit, Instant::now());
        }
        let Some(mut conn) = self.conn() else {
            return self.fallback.check(key, limit, Instant::now());
        };
        let window_us = u64::try_from(WINDOW.as_micros()).unwrap_or(u64::MAX);
        let member = uuid::Uuid::new_v4().simple().to_string();
        let mut invocation = self.script.key(format!("{}:rl:{key}", self.prefix));
        invocation.arg(limit).arg(window_us).arg(member);
        let result: redis::RedisResult<(i64, i64, i64)> =
            match tokio::time::timeout(CALL_TIMEOUT, invocation.invoke_async(&mut conn)).await {
                Ok(result) => result,
                Err(_) => Err(redis::RedisError::from((
                    redis::ErrorKind::IoError,
                    "no answer in time",
                ))),
            };
        match result {
            Ok((allowed, remaining, reset_us)) => Decision {
                allowed: allowed == 1,
                limit,
                remaining: u32::try_from(remaining).unwrap_or(0),
                reset_after: Duration::from_micros(u64::try_from(reset_us).unwrap_or(0)),
            },
            Err(err) => {
                self.lost(&err);
                self.fallback.check(key, limit, Instant::now())
            }
        }
    }

    fn conn(&self) -> Option<redis::aio::ConnectionManager> {
        self.manager
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Connects (once; the manager reconnects by itself afterwards) and asks Redis for a PONG,
    /// all within bounds.
    async fn connect(&self) -> anyhow::Result<()> {
        if self.conn().is_none() {
            let config = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(CONNECT_TIMEOUT)
                .set_response_timeout(CALL_TIMEOUT)
                .set_number_of_retries(1)
                .set_max_delay(100);
            let conn = tokio::time::timeout(
                CONNECT_TIMEOUT * 2,
                redis::aio::ConnectionManager::new_with_config(self.client.clone(), config),
            )
            .await
            .map_err(|_| anyhow::anyhow!("no connection in time"))??;
            *self.manager.write().unwrap_or_else(|p| p.into_inner()) = Some(conn);
        }
        self.ping(CONNECT_TIMEOUT).await
    }

    async fn ping(&self, within: Duration) -> anyhow::Result<()> {
        let mut conn = self
            .conn()
            .ok_or_else(|| anyhow::anyhow!("not connected"))?;
        let pong: String = tokio::time::timeout(within, redis::cmd("PING").query_async(&mut conn))
            .await
            .map_err(|_| anyhow::anyhow!("no answer in time"))??;
        anyhow::ensure!(pong == "PONG", "unexpected answer to PING: {pong}");
        Ok(())
    }

    /// A call failed: logs it when Redis was answering until now.
    fn lost(self: &Arc<Self>, err: &dyn std::fmt::Display) {
        if self.went_away() {
            tracing::warn!(
                error = %err,
                "rate limiter: Redis unavailable; limiting per instance until it answers"
            );
        }
    }

    /// Marks Redis away and starts the probe that brings it back; true when it was not already
    /// away (the caller logs the change once).
    fn went_away(self: &Arc<Self>) -> bool {
        if self.away.swap(true, Ordering::AcqRel) {
            return false;
        }
        metrics::counter!("rate_limiter_redis_unavailable_total").increment(1);
        metrics::gauge!(SHARED_GAUGE).set(0.0);
        let windows = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(PROBE_INTERVAL).await;
                // The limiter was dropped (its server stopped): nothing to bring back.
                let Some(windows) = windows.upgrade() else {
                    return;
                };
                if windows.connect().await.is_ok() {
                    windows.away.store(false, Ordering::Release);
                    metrics::gauge!(SHARED_GAUGE).set(1.0);
                    tracing::info!("rate limiter: Redis answers again; limits are shared again");
                    return;
                }
            }
        });
        true
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
    fn failed_authentications_are_limited_per_address_and_minute() {
        let f: FailedAuths = FailedAuths::default();
        let (a, b) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let start = Instant::now();
        for i in 0..5 {
            assert_eq!(f.refused(a, 5, start), None);
            f.failed(a, start + Duration::from_secs(i));
        }
        let at = start + Duration::from_secs(10);
        assert_eq!(f.refused(a, 5, at), Some(Duration::from_secs(50)));
        assert_eq!(
            f.refused(b, 5, at),
            None,
            "other addresses are not affected"
        );
        // A minute after the first failure, one more try is allowed.
        assert_eq!(f.refused(a, 5, start + Duration::from_secs(60)), None);
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
