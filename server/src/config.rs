//! Configuration: defaults in code, then a TOML file (`switchboard.toml` or `--config`), then
//! `SWITCHBOARD_*` environment variables (nested keys with `__`), plus the conventional
//! `DATABASE_URL` and `REDIS_URL`. Secrets are wrapped so that they never print.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use figment::{
    providers::{Env, Format, Serialized, Toml},
    Figment,
};
use serde::{Deserialize, Serialize};

/// A value that must never reach a log line.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RateLimits {
    pub enabled: bool,
    pub app_per_second: u32,
    pub account_per_second: u32,
    /// Failed authentications one client address may make per minute (per instance) before
    /// its requests are refused with 429; 0 lifts the limit.
    pub failed_auth_per_minute: u32,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            enabled: true,
            app_per_second: 30,
            account_per_second: 10,
            failed_auth_per_minute: 30,
        }
    }
}

/// Where webhook deliveries may go.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WebhooksConfig {
    /// Lets sandbox apps' endpoints target loopback and private networks (local development,
    /// an integration test's receiver). Unset, they may when the service itself runs on a
    /// loopback address (development: `public_url`, or the listening address when that is
    /// unset, is `localhost` or a loopback address). Link-local addresses (cloud metadata
    /// services) stay refused; live apps always need public addresses.
    pub allow_private_targets: Option<bool>,
}

/// How long finished work is kept before a background pass deletes it (0: kept forever).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Retention {
    /// Jobs that ended (done or failed), by when they ended.
    pub jobs_days: u32,
    /// Webhook delivery attempts, by when they were made.
    pub webhook_deliveries_days: u32,
    /// E-mails sent (or kept, without SMTP) or failed, by when they were written.
    pub emails_days: u32,
    /// Rows deleted per transaction, so that a pass never holds the database for long.
    pub batch_size: u32,
    /// Time between passes.
    pub interval_seconds: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            jobs_days: 14,
            webhook_deliveries_days: 30,
            emails_days: 30,
            batch_size: 500,
            interval_seconds: 3600,
        }
    }
}

/// Browser sessions of the dashboard and of customers on the hosted pages and portal: how long
/// one lasts without a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Sessions {
    pub dashboard_idle_minutes: u32,
    pub customer_idle_minutes: u32,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions {
            dashboard_idle_minutes: 8 * 60,
            customer_idle_minutes: 30,
        }
    }
}

/// The background workers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Jobs {
    /// Jobs one worker process runs at once.
    pub concurrency: usize,
    /// Wait between looks at an empty queue.
    pub poll_interval_ms: u64,
    /// How long a claimed job stays reserved; after that, another worker takes it over (the
    /// worker that claimed it died). Longer than any job's own time limit.
    pub lease_seconds: u64,
    /// Time limit of one webhook delivery attempt.
    pub webhook_timeout_ms: u64,
    /// How often a worker instance records that it is alive.
    pub heartbeat_ms: u64,
    /// An instance silent this long is dead: other workers take its jobs over at once, without
    /// waiting for their leases to end.
    pub dead_after_ms: u64,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs {
            concurrency: 64,
            poll_interval_ms: 100,
            lease_seconds: 60,
            webhook_timeout_ms: 15_000,
            heartbeat_ms: 1_000,
            dead_after_ms: 5_000,
        }
    }
}

/// The credit bureau live apps' soft checks go to (`docs/credit-bureau.md`); without `url` and
/// `secret` live checks answer an error and wait for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CreditBureauConfig {
    /// Base URL of the bureau's API (`https://...`); the checks go to `<url>/v1/soft-checks`.
    pub url: Option<String>,
    /// The bearer secret the bureau gave us.
    pub secret: Option<Secret>,
    /// Time limit of one request, connection included.
    pub timeout_ms: u64,
    /// Requests one check makes at most when the bureau is unreachable, slow or busy, before
    /// the check records an error (and its job retries later).
    pub attempts: u32,
    /// Wait before the second request; doubles before each further one.
    pub retry_wait_ms: u64,
}

impl Default for CreditBureauConfig {
    fn default() -> Self {
        CreditBureauConfig {
            url: None,
            secret: None,
            timeout_ms: 10_000,
            attempts: 3,
            retry_wait_ms: 500,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    pub addr: SocketAddr,
    /// `sqlite:data/switchboard.db` (default) or `postgres://...`.
    pub database_url: Secret,
    pub database_max_connections: u32,
    /// Shares rate limits between instances.
    pub redis_url: Option<Secret>,
    /// Namespace of this deployment's Redis keys.
    pub redis_prefix: String,
    pub log_format: LogFormat,
    pub rate_limits: RateLimits,
    /// Serves `/bench/bare` for benchmarks.
    pub bench_routes: bool,
    /// How long an instance may serve token checks and account reads from memory before
    /// reading them again (changes made through the instance itself show at once).
    pub cache_ttl_ms: u32,
    /// Key sealing SSNs at rest: base64 of 32 bytes. Required on PostgreSQL; a SQLite install
    /// keeps one in `pii.key` beside its database when none is set.
    pub pii_key: Option<Secret>,
    /// The address partners and customers reach this service at, for the links it hands out
    /// (flow links, e-mails); defaults to `http://<addr>`.
    pub public_url: Option<String>,
    pub jobs: Jobs,
    /// `smtp://host:port` (or with user and password); without it e-mails are kept in the
    /// database only.
    pub smtp_url: Option<Secret>,
    /// Sender of every e-mail.
    pub mail_from: String,
    /// Base URL of the card processor's REST API that live apps charge through (with their
    /// own keys, set by `apps set-payment-keys`); without it live apps cannot take cards.
    pub payment_processor_api_base: Option<String>,
    /// The credit bureau of live apps.
    pub credit_bureau: CreditBureauConfig,
    /// URL of the card processor's browser script, which the live apps' card steps load (from
    /// the processor's own origin) to show its card component; without it (or without the API
    /// base) a live app's card step says cards cannot be added.
    pub payment_processor_js_url: Option<String>,
    pub market: MarketConfig,
    /// The built site (`pkg/` with the WASM, JS and CSS, and the static files). Without it the
    /// server looks beside its binary (`site/`), then one folder up (`target/site` for
    /// `target/release/switchboard`), then at `target/site` under the working directory.
    pub site_root: Option<PathBuf>,
    pub webhooks: WebhooksConfig,
    pub retention: Retention,
    pub sessions: Sessions,
    /// The licensed provider the documents and bills name.
    pub provider: crate::domain::documents::Provider,
    /// For tests and demonstrations only: the service clock starts at this instant (RFC 3339,
    /// e.g. `2026-12-02T23:30:00-06:00`) when the process starts and runs on from there, so
    /// that a run sees the same dates whatever the hour. Unset, the clock is the system's.
    pub clock_start: Option<chrono::DateTime<chrono::Utc>>,
    /// The yearly rate of simple interest that customers' deposits earn, in percent (`2.5`;
    /// the Commission sets it each year): one rate for every app of the deployment. Interest
    /// accrues at the rate in force on each bill, so a change counts from then on.
    #[serde(deserialize_with = "percent")]
    pub deposit_interest_percent: rust_decimal::Decimal,
}

/// A percent given as a number (`2.5`, from TOML or an environment variable) or as text.
fn percent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<rust_decimal::Decimal, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Text(String),
        Int(i64),
        Float(f64),
    }
    let text = match Given::deserialize(d)? {
        Given::Text(t) => t,
        Given::Int(i) => i.to_string(),
        Given::Float(f) => f.to_string(),
    };
    text.trim()
        .parse::<rust_decimal::Decimal>()
        .ok()
        .filter(|p| *p >= rust_decimal::Decimal::ZERO && *p <= rust_decimal::Decimal::ONE_HUNDRED)
        .ok_or_else(|| serde::de::Error::custom("a percent from 0 to 100, such as 2.5"))
}

/// The service-address directory of a fresh install.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct MarketConfig {
    /// Addresses generated on first start when the directory is empty (0: none).
    pub default_directory_size: u64,
    /// Seed of that directory (the same seed gives the same addresses).
    pub default_directory_seed: u64,
}

impl Default for MarketConfig {
    fn default() -> Self {
        MarketConfig {
            default_directory_size: 50_000,
            default_directory_seed: 1,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            database_url: Secret::new("sqlite:data/switchboard.db"),
            database_max_connections: 16,
            redis_url: None,
            redis_prefix: "switchboard".to_owned(),
            log_format: LogFormat::Human,
            rate_limits: RateLimits::default(),
            bench_routes: false,
            cache_ttl_ms: 1000,
            pii_key: None,
            public_url: None,
            jobs: Jobs::default(),
            smtp_url: None,
            mail_from: "Switchboard <no-reply@switchboard.localhost>".to_owned(),
            market: MarketConfig::default(),
            payment_processor_api_base: None,
            credit_bureau: CreditBureauConfig::default(),
            payment_processor_js_url: None,
            site_root: None,
            webhooks: WebhooksConfig::default(),
            retention: Retention::default(),
            sessions: Sessions::default(),
            provider: crate::domain::documents::Provider::default(),
            clock_start: None,
            deposit_interest_percent: rust_decimal::Decimal::ZERO,
        }
    }
}

impl Config {
    /// The base of the links this service hands out, without a trailing slash.
    /// Whether sandbox apps' webhook endpoints may target loopback and private networks: as
    /// set, else only in development (the service runs on a loopback address).
    pub fn webhooks_allow_private_targets(&self) -> bool {
        self.webhooks
            .allow_private_targets
            .unwrap_or_else(|| self.runs_on_loopback())
    }

    /// Whether the service's own address is on this machine only.
    fn runs_on_loopback(&self) -> bool {
        let public = self.public_url();
        match url::Url::parse(&public)
            .ok()
            .and_then(|u| u.host().map(|h| h.to_owned()))
        {
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            }
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }

    pub fn public_url(&self) -> String {
        self.public_url
            .as_deref()
            .map(|u| u.trim_end_matches('/').to_owned())
            .unwrap_or_else(|| format!("http://{}", self.addr))
    }

    /// Where the built site is: the setting, or the first of the usual places that holds a
    /// built site (a `pkg/` folder), or `target/site` when none does.
    pub fn site_root(&self) -> PathBuf {
        if let Some(root) = &self.site_root {
            return root.clone();
        }
        let exe = std::env::current_exe().ok();
        find_site_root(exe.as_deref(), |dir| dir.join("pkg").is_dir())
    }

    /// Loads the configuration; `file` defaults to `switchboard.toml` when it exists.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Config> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        // cargo-leptos tells the server where to listen.
        if let Ok(addr) = std::env::var("LEPTOS_SITE_ADDR") {
            figment = figment.merge(Serialized::default("addr", addr));
        }
        figment = match file {
            Some(path) => figment.merge(Toml::file_exact(path)),
            None => figment.merge(Toml::file("switchboard.toml")),
        };
        let config: Config = figment
            // The name deployments of other Leptos sites already use.
            .merge(
                Env::raw()
                    .only(&["LEPTOS_SITE_ROOT"])
                    .map(|_| "site_root".into()),
            )
            .merge(Env::prefixed("SWITCHBOARD_").split("__"))
            .merge(Env::raw().only(&["DATABASE_URL", "REDIS_URL", "SMTP_URL"]))
            .extract()?;
        config.card_processor_checked()?;
        Ok(config)
    }

    /// Where the live apps' card component comes from and talks to: both processor settings,
    /// or none when either is missing.
    pub fn card_processor(&self) -> Option<CardProcessorOrigins> {
        self.card_processor_checked().ok().flatten()
    }

    /// A processor URL that is set must be an absolute `http(s)` URL: refused at start-up,
    /// never silently dropped from the flows.
    fn card_processor_checked(&self) -> anyhow::Result<Option<CardProcessorOrigins>> {
        let origin = |setting: &str, value: &str| -> anyhow::Result<(String, String)> {
            let url = url::Url::parse(value.trim())
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                .ok_or_else(|| anyhow::anyhow!("{setting} must be an http(s) URL"))?;
            Ok((url.to_string(), url.origin().ascii_serialization()))
        };
        let api = self
            .payment_processor_api_base
            .as_deref()
            .map(|v| origin("payment_processor_api_base", v))
            .transpose()?;
        let script = self
            .payment_processor_js_url
            .as_deref()
            .map(|v| origin("payment_processor_js_url", v))
            .transpose()?;
        Ok(match (api, script) {
            (Some((_, api_origin)), Some((script_url, script_origin))) => {
                Some(CardProcessorOrigins {
                    script_url,
                    script_origin,
                    api_origin,
                })
            }
            _ => None,
        })
    }
}

/// The card processor as the live apps' flow pages see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardProcessorOrigins {
    /// The browser script, loaded by the card step.
    pub script_url: String,
    /// Its origin: the page may run its script and frame its card component.
    pub script_origin: String,
    /// The REST API's origin, which the script calls from the page.
    pub api_origin: String,
}

/// The places a site is looked for when none is configured, in order: `site/` beside the
/// binary (a deployment copies both into one folder), the binary's parent folder's `site/`
/// (`target/release/switchboard` finds `target/site`), and `target/site` under the working
/// directory (running from the repository).
fn find_site_root(exe: Option<&Path>, is_site: impl Fn(&Path) -> bool) -> PathBuf {
    let beside = exe.and_then(Path::parent);
    let candidates = [
        beside.map(|dir| dir.join("site")),
        beside.and_then(Path::parent).map(|dir| dir.join("site")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|dir| is_site(dir))
        .unwrap_or_else(|| PathBuf::from("target/site"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_webhook_targets_are_allowed_by_default_only_in_development() {
        let mut c = Config {
            addr: "127.0.0.1:3000".parse().unwrap(),
            public_url: None,
            ..Config::default()
        };
        assert!(c.webhooks_allow_private_targets(), "on localhost");
        c.public_url = Some("http://localhost:3000/".to_owned());
        assert!(c.webhooks_allow_private_targets());
        c.public_url = Some("https://switchboard.example".to_owned());
        assert!(!c.webhooks_allow_private_targets(), "deployed");
        c.webhooks.allow_private_targets = Some(true);
        assert!(c.webhooks_allow_private_targets(), "as set");
        c.public_url = None;
        c.webhooks.allow_private_targets = Some(false);
        assert!(!c.webhooks_allow_private_targets(), "as set");
        c.webhooks.allow_private_targets = None;
        c.addr = "0.0.0.0:3000".parse().unwrap();
        assert!(
            !c.webhooks_allow_private_targets(),
            "listening on every address"
        );
    }

    #[test]
    fn a_site_beside_the_binary_comes_first() {
        let exe = Path::new("/srv/switchboard/switchboard");
        let any = |_: &Path| true;
        assert_eq!(
            find_site_root(Some(exe), any),
            PathBuf::from("/srv/switchboard/site")
        );
        let only_target = |d: &Path| d == Path::new("/repo/target/site");
        assert_eq!(
            find_site_root(
                Some(Path::new("/repo/target/release/switchboard")),
                only_target
            ),
            PathBuf::from("/repo/target/site")
        );
        let none = |_: &Path| false;
        assert_eq!(
            find_site_root(Some(exe), none),
            PathBuf::from("target/site")
        );
        assert_eq!(find_site_root(None, any), PathBuf::from("target/site"));
    }

    #[test]
    fn the_clock_start_reads_as_an_instant_with_its_offset() {
        let c: Config = Figment::from(Serialized::defaults(Config::default()))
            .merge(Serialized::default(
                "clock_start",
                "2026-12-02T23:30:00-06:00",
            ))
            .extract()
            .unwrap();
        assert_eq!(
            c.clock_start.map(|t| t.to_rfc3339()),
            Some("2026-12-03T05:30:00+00:00".to_owned())
        );
    }

    #[test]
    fn the_card_processor_needs_both_urls_and_knows_their_origins() {
        let c = Config {
            payment_processor_api_base: Some("https://api.processor.test/".into()),
            payment_processor_js_url: Some("https://js.processor.test/v3/".into()),
            ..Config::default()
        };
        assert_eq!(
            c.card_processor(),
            Some(CardProcessorOrigins {
                script_url: "https://js.processor.test/v3/".into(),
                script_origin: "https://js.processor.test".into(),
                api_origin: "https://api.processor.test".into(),
            })
        );
        let local = Config {
            payment_processor_api_base: Some("http://127.0.0.1:8420".into()),
            payment_processor_js_url: Some("http://127.0.0.1:8420/js.stripe.com/v3/".into()),
            ..Config::default()
        };
        let origins = local.card_processor().unwrap();
        assert_eq!(origins.script_origin, "http://127.0.0.1:8420");
        assert_eq!(origins.api_origin, "http://127.0.0.1:8420");

        let api_only = Config {
            payment_processor_js_url: None,
            ..c.clone()
        };
        assert_eq!(api_only.card_processor(), None);
        for bad in [
            "js.processor.test/v3",
            "javascript:alert(1)",
            "ftp://x/y",
            "",
        ] {
            let c = Config {
                payment_processor_js_url: Some(bad.into()),
                ..c.clone()
            };
            assert!(c.card_processor_checked().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_site_root_setting_wins() {
        let c = Config {
            site_root: Some(PathBuf::from("/opt/site")),
            ..Config::default()
        };
        assert_eq!(c.site_root(), PathBuf::from("/opt/site"));
    }

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("postgres://user:hunter2@db/x");
        assert_eq!(format!("{s:?}"), "[redacted]");
        let c = Config {
            redis_url: Some(Secret::new("redis://:pw@host")),
            ..Config::default()
        };
        let printed = format!("{c:?}");
        assert!(!printed.contains("hunter2") && !printed.contains(":pw@"));
        let c = Config {
            credit_bureau: CreditBureauConfig {
                secret: Some(Secret::new("bureau-s3cret")),
                ..CreditBureauConfig::default()
            },
            ..Config::default()
        };
        assert!(!format!("{c:?}").contains("bureau-s3cret"));
    }
}
