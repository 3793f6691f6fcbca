//! The Switchboard server as a library, so that tests and benchmarks start the real thing:
//! `build_state` connects and migrates, `http::router` builds the application, `serve` runs it
//! until shutdown, `start_workers` runs the background jobs.

pub mod adapters;
pub mod admin;
pub mod cli;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod documents;
pub mod domain;
pub mod http;
pub mod jobs;
pub mod mail;
pub mod outbox;
pub mod services;
pub mod state;
pub mod store;
pub mod webhooks;

use std::sync::{Arc, OnceLock};

use leptos::config::LeptosOptions;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

use clock::Clock;
use config::Config;
use http::{ratelimit::RateLimiter, AppState};
use store::Db;

/// Connects to the database (migrating it) and to Redis, and assembles what handlers share.
pub async fn build_state(config: Config, clock: Clock) -> anyhow::Result<AppState> {
    let db = Db::connect(
        config.database_url.expose(),
        config.database_max_connections,
    )
    .await?;
    db.migrate().await?;
    let limiter = match &config.redis_url {
        Some(url) => RateLimiter::redis(url.expose(), &config.redis_prefix).await?,
        None => RateLimiter::local(),
    };
    if config.jobs.lease_seconds * 1000 <= config.jobs.webhook_timeout_ms {
        tracing::warn!(
            "jobs.lease_seconds is not longer than jobs.webhook_timeout_ms: a slow receiver may \
             get the same delivery from two workers"
        );
    }
    let webhooks = webhooks::Sender::new(&config)?;
    let mailer = mail::Mailer::new(&config)?;
    let pii = Arc::new(pii_key(&config)?);
    let adapters = adapters::Adapters::default();
    adapters::setup::prepare_directory(&db, &config.market, &adapters).await?;
    let caches = Arc::new(http::cache::Caches::new(chrono::Duration::milliseconds(
        i64::from(config.cache_ttl_ms),
    )));
    let invalidated = caches.clone();
    let core = state::Core::new(state::CoreParts {
        db,
        webhooks,
        mailer,
        pii,
        adapters,
        config: Arc::new(config.clone()),
        clock,
        on_account_change: Arc::new(move |account| invalidated.accounts.invalidate(&account)),
        calendar: tokio::sync::OnceCell::new(),
    });
    // Read now rather than on first use, which may come inside a transaction.
    core.business_calendar().await?;
    // Webhook secrets written before they were sealed at rest are sealed now.
    let sealed = services::webhooks::seal_clear_secrets(&core).await?;
    if sealed > 0 {
        tracing::info!(
            endpoints = sealed,
            "sealed webhook signing secrets stored in clear"
        );
    }
    Ok(AppState::new(
        core,
        http::HttpParts {
            limiter,
            caches,
            leptos: leptos_options(&config),
            metrics: metrics_handle(),
        },
    ))
}

/// The key sealing personal data: configured, or kept beside a SQLite database.
pub(crate) fn pii_key(config: &Config) -> anyhow::Result<crypto::PiiKey> {
    if let Some(key) = &config.pii_key {
        return crypto::PiiKey::from_base64(key.expose());
    }
    let url = config.database_url.expose();
    let path = url
        .strip_prefix("sqlite:")
        .map(|p| p.trim_start_matches("//"))
        .map(|p| p.split('?').next().unwrap_or(p))
        .map(std::path::Path::new)
        .and_then(std::path::Path::parent)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "set SWITCHBOARD_PII_KEY (base64 of 32 bytes) to store personal data on this database"
            )
        })?;
    crypto::PiiKey::from_file(&path.join("pii.key"))
}

/// Where the pages' assets are. Under cargo-leptos its own variables describe the build; a
/// deployed binary needs none of them: the output name is fixed and the site is found by
/// `Config::site_root`.
fn leptos_options(config: &Config) -> LeptosOptions {
    let from_cargo_leptos = std::env::var_os("LEPTOS_OUTPUT_NAME").is_some();
    let options = from_cargo_leptos
        .then(|| leptos::config::get_configuration(None).ok())
        .flatten()
        .map(|c| c.leptos_options);
    let site_root = config.site_root();
    if !site_root.join("pkg").is_dir() {
        tracing::warn!(
            site_root = %site_root.display(),
            "no built site here: pages will load without their scripts and styles; build it \
             with `cargo leptos build --release` or set SWITCHBOARD_SITE_ROOT"
        );
    }
    let site_root = site_root.to_string_lossy().into_owned();
    match options {
        Some(options) if config.site_root.is_none() => options,
        Some(mut options) => {
            options.site_root = site_root.into();
            options
        }
        None => LeptosOptions::builder()
            .output_name("switchboard")
            .site_root(site_root)
            .site_pkg_dir("pkg")
            .build(),
    }
}

/// The process-wide Prometheus recorder (installed once, shared by every server in a process).
fn metrics_handle() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            PrometheusBuilder::new()
                .set_buckets(&[
                    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                ])
                .and_then(|b| b.install_recorder())
                .map_err(|e| tracing::warn!(error = %e, "metrics recorder not installed"))
                .ok()
        })
        .clone()
}

/// Serves `state` on `listener` until `shutdown` resolves, then drains in-flight requests.
pub async fn serve(
    state: AppState,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let app = http::router(state.clone());
    serve_router(state, app, listener, shutdown).await
}

/// Serves `app` (the whole application, or `http::ops_router` for a worker-only process).
pub async fn serve_router(
    state: AppState,
    app: axum::Router,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let db = state.db.clone();
    // The peer's address reaches handlers (failed authentications are limited per address).
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await?;
    db.close().await;
    Ok(())
}

/// Starts this process's background workers (roles `all` and `worker`).
pub fn start_workers(state: AppState) -> jobs::queue::Workers {
    jobs::queue::Workers::spawn(state.core().clone())
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
