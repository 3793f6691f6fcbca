//! `TestApp`: a running server on its own database, with typed helpers.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex, OnceLock,
    },
};

use reqwest::{header::HeaderMap, Method, StatusCode};
use serde_json::Value;
use server::{
    admin,
    clock::Clock,
    config::{Config, Secret},
    http::AppState,
    store::market::ServiceAddressRow,
};
use uuid::Uuid;

/// Whether everything logged is kept (from the first `captured_logs` on).
static KEEPING: AtomicBool = AtomicBool::new(false);

/// What is kept of the logs, once `captured_logs` was called.
fn kept_logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static KEPT: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    KEPT.get_or_init(|| Arc::new(Mutex::new(Vec::new())))
}

/// The one subscriber of this test binary. A server error is printed with the test whose
/// server logged it (the test harness shows it when that test fails), so that a 500's cause is
/// in the failure instead of behind its request id; and every event is kept once a test asked
/// for `captured_logs`.
fn init_logs() {
    use tracing_subscriber::{filter, layer::SubscriberExt, Layer};
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        let errors = tracing_subscriber::fmt::layer()
            .with_test_writer()
            .with_ansi(false)
            .with_filter(filter::filter_fn(|meta| {
                *meta.level() <= tracing::Level::WARN && meta.target().starts_with("server")
            }));
        let kept = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(|| LogSink(kept_logs().clone()))
            .with_filter(filter::filter_fn(|meta| {
                if !KEEPING.load(Ordering::Relaxed) {
                    return false;
                }
                let quiet = ["hyper", "h2", "rustls", "tower"];
                let level = *meta.level();
                if meta.target().starts_with("sqlx") {
                    level <= tracing::Level::WARN
                } else if quiet.iter().any(|q| meta.target().starts_with(q)) {
                    level <= tracing::Level::INFO
                } else {
                    level <= tracing::Level::DEBUG
                }
            }));
        let subscriber = tracing_subscriber::registry().with(errors).with(kept);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// Everything the process logs from the first call on, so that tests can look for secrets
/// in it.
pub fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    init_logs();
    KEEPING.store(true, Ordering::Relaxed);
    kept_logs().clone()
}

struct LogSink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// Runs each test body once per engine: `mod name { fn sqlite(); fn postgres(); }`, with the
/// service clock started at `instant::default()` (noon in the market).
///
/// `both_engines! { at [late_evening, ...]; with tweak; async fn ... }` runs each body once per
/// engine at each of the named instants of `instant` instead (`mod name { mod late_evening {
/// fn sqlite(); fn postgres(); } ... }`): for what depends on the market's date and hour.
#[macro_export]
macro_rules! both_engines {
    (at $instants:tt; with $tweak:expr; $(async fn $name:ident($app:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                $crate::at_instants!($instants; $tweak; $app; $body);
            }
        )*
    };
    (at $instants:tt; $(async fn $name:ident($app:ident) $body:block)*) => {
        both_engines!(at $instants; with |_| {}; $(async fn $name($app) $body)*);
    };
    (with $tweak:expr; $(async fn $name:ident($app:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let $app = $crate::helpers::TestApp::spawn_with($crate::helpers::Engine::Sqlite, $tweak).await;
                    $body
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let $app = $crate::helpers::TestApp::spawn_with($crate::helpers::Engine::Postgres, $tweak).await;
                    $body
                }
            }
        )*
    };
    ($(async fn $name:ident($app:ident) $body:block)*) => {
        both_engines!(with |_| {}; $(async fn $name($app) $body)*);
    };
}

/// One test body on both engines at each instant of a list (see `both_engines!`).
#[macro_export]
macro_rules! at_instants {
    ([$($instant:ident),* $(,)?]; $tweak:expr; $app:ident; $body:block) => {
        $(
            mod $instant {
                #[allow(unused_imports)]
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let $app = $crate::helpers::TestApp::spawn_at(
                        $crate::helpers::Engine::Sqlite,
                        $crate::helpers::instant::$instant(),
                        $tweak,
                    )
                    .await;
                    $body
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let $app = $crate::helpers::TestApp::spawn_at(
                        $crate::helpers::Engine::Postgres,
                        $crate::helpers::instant::$instant(),
                        $tweak,
                    )
                    .await;
                    $body
                }
            }
        )*
    };
}

/// The instants the service clock of a test starts at. Each is the next such moment in the
/// market (America/Chicago) after the day the suite runs, so that a run never depends on the
/// hour it was started and the clock never stands behind the real one.
pub mod instant {
    use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
    use chrono_tz::America::Chicago;

    fn at(day: NaiveDate, hour: u32, minute: u32) -> DateTime<Utc> {
        Chicago
            .from_local_datetime(&day.and_hms_opt(hour, minute, 0).unwrap())
            .earliest()
            .unwrap()
            .with_timezone(&Utc)
    }

    /// Tomorrow in the market.
    fn tomorrow() -> NaiveDate {
        Utc::now().with_timezone(&Chicago).date_naive() + Duration::days(1)
    }

    /// The first day on or after tomorrow that is the `nth` `weekday` of `month`.
    fn next_nth_weekday(month: u32, weekday: Weekday, nth: u8) -> NaiveDate {
        let from = tomorrow();
        (from.year()..)
            .filter_map(|y| NaiveDate::from_weekday_of_month_opt(y, month, weekday, nth))
            .find(|d| *d >= from)
            .unwrap()
    }

    /// Noon, tomorrow: the clock of every test that does not choose one.
    pub fn default() -> DateTime<Utc> {
        at(tomorrow(), 12, 0)
    }

    /// 05:30 tomorrow.
    pub fn early_morning() -> DateTime<Utc> {
        at(tomorrow(), 5, 30)
    }

    /// 00:30 on the day the clocks fall back (the first Sunday of November), an hour and a
    /// half before the change: the next day is 25 hours long.
    pub fn fall_back_night() -> DateTime<Utc> {
        at(next_nth_weekday(11, Weekday::Sun, 1), 0, 30)
    }

    /// The next Tuesday from tomorrow that no fixed-date federal holiday takes (the others fall
    /// on Mondays and Thursdays): a business day in the market.
    fn next_business_tuesday() -> NaiveDate {
        let fixed = [(1, 1), (6, 19), (7, 4), (11, 11), (12, 25)];
        let mut d = tomorrow();
        while d.weekday() != Weekday::Tue || fixed.contains(&(d.month(), d.day())) {
            d += Duration::days(1);
        }
        d
    }

    /// 16:30 on a business day: half an hour before the utilities' same-day cut-off.
    pub fn business_afternoon() -> DateTime<Utc> {
        at(next_business_tuesday(), 16, 30)
    }

    /// 17:30 on a business day: after the utilities' same-day cut-off.
    pub fn business_evening() -> DateTime<Utc> {
        at(next_business_tuesday(), 17, 30)
    }

    /// 23:30 the evening before the clocks spring forward (the second Sunday of March): the
    /// next day is 23 hours long.
    pub fn spring_forward_eve() -> DateTime<Utc> {
        at(
            next_nth_weekday(3, Weekday::Sun, 2) - Duration::days(1),
            23,
            30,
        )
    }
}

/// A database that exists for one test (and is dropped after it, even when the test fails).
pub struct TestDatabase {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_name: Option<String>,
}

fn postgres_admin_url() -> String {
    std::env::var("TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

impl TestDatabase {
    pub async fn create(engine: Engine) -> TestDatabase {
        match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().unwrap();
                let url = format!("sqlite:{}", dir.path().join("test.db").display());
                TestDatabase {
                    url,
                    _dir: Some(dir),
                    pg_name: None,
                }
            }
            Engine::Postgres => {
                use sqlx::Connection;
                let name = format!("swb_test_{}", Uuid::new_v4().simple());
                let admin_url = postgres_admin_url();
                let mut conn = sqlx::PgConnection::connect(&admin_url)
                    .await
                    .expect("PostgreSQL must run at TEST_POSTGRES_URL (default 127.0.0.1:5432)");
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&mut conn)
                    .await
                    .unwrap();
                conn.close().await.ok();
                let base = admin_url
                    .rsplit_once('/')
                    .map_or(admin_url.as_str(), |(b, _)| b);
                TestDatabase {
                    url: format!("{base}/{name}"),
                    _dir: None,
                    pg_name: Some(name),
                }
            }
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Some(name) = self.pg_name.take() else {
            return;
        };
        // Async work cannot run in Drop; a short-lived runtime on its own thread can.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                use sqlx::Connection;
                if let Ok(mut conn) = sqlx::PgConnection::connect(&postgres_admin_url()).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl TestResponse {
    /// The error code of an error envelope.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

pub struct TestApp {
    pub engine: Engine,
    pub addr: SocketAddr,
    pub state: AppState,
    pub clock: Clock,
    pub config: Config,
    pub app_uuid: Uuid,
    pub app_token: String,
    pub client: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    /// The background workers of this server (as `serve --role all` runs them).
    pub workers: Option<server::jobs::queue::Workers>,
    // Dropped last: the database outlives the server.
    database: std::sync::Arc<TestDatabase>,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(w) = self.workers.take() {
            w.kill();
        }
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl TestApp {
    pub async fn spawn(engine: Engine) -> TestApp {
        Self::spawn_with(engine, |_| {}).await
    }

    pub async fn spawn_with(engine: Engine, tweak: impl FnOnce(&mut Config)) -> TestApp {
        Self::spawn_at(engine, instant::default(), tweak).await
    }

    /// A server whose clock starts at `start`.
    pub async fn spawn_at(
        engine: Engine,
        start: chrono::DateTime<chrono::Utc>,
        tweak: impl FnOnce(&mut Config),
    ) -> TestApp {
        let database = std::sync::Arc::new(TestDatabase::create(engine).await);
        let mut config = Config {
            database_url: Secret::new(database.url.clone()),
            database_max_connections: 5,
            pii_key: Some(Secret::new(server::crypto::PiiKey::generate_base64())),
            ..Config::default()
        };
        // Workers look at the queue often, so that tests wait little for them.
        config.jobs.poll_interval_ms = 20;
        // Tests that need addresses add them (`add_addresses`); generating the default
        // directory for every test would slow the suite down.
        config.market.default_directory_size = 0;
        // Test receivers listen on loopback.
        config.webhooks.allow_private_targets = Some(true);
        config.clock_start = Some(start);
        tweak(&mut config);
        let clock = config
            .clock_start
            .map_or_else(Clock::system, Clock::starting_at);
        let mut app = Self::start(engine, config, database, clock).await;
        let created = admin::create_app(
            &app.state.db,
            &app.clock,
            "Sunny Homes",
            app::api::Environment::Sandbox,
        )
        .await
        .unwrap();
        app.app_uuid = created.uuid;
        app.app_token = created.token;
        app
    }

    /// Another server on the same database (and the same app), with its own configuration.
    pub async fn sibling(&self, tweak: impl FnOnce(&mut Config)) -> TestApp {
        let mut config = self.config.clone();
        tweak(&mut config);
        let mut app = Self::start(
            self.engine,
            config,
            self.database.clone(),
            self.clock.clone(),
        )
        .await;
        app.app_uuid = self.app_uuid;
        app.app_token.clone_from(&self.app_token);
        app
    }

    async fn start(
        engine: Engine,
        mut config: Config,
        database: std::sync::Arc<TestDatabase>,
        clock: Clock,
    ) -> TestApp {
        init_logs();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Links the server hands out point at this instance.
        config.addr = addr;
        config.public_url = None;
        let state = server::build_state(config.clone(), clock.clone())
            .await
            .unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let workers = Some(server::start_workers(state.clone()));
        let served = state.clone();
        tokio::spawn(async move {
            server::serve(served, listener, async {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        TestApp {
            engine,
            addr,
            state,
            clock,
            config,
            app_uuid: Uuid::nil(),
            app_token: String::new(),
            client: reqwest::Client::builder().no_proxy().build().unwrap(),
            shutdown: Some(tx),
            workers,
            database,
        }
    }

    /// Waits until `check` answers true: up to 60 s, since a busy machine can take that long to
    /// start a process; a check that passes returns at once.
    pub async fn eventually<F, Fut>(&self, what: &str, mut check: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !check().await {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting: {what}"
            );
            // 20 looks a second at most: under the app's rate limit when `check` calls the API.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    pub async fn delete(&self, path: &str, token: &str) -> TestResponse {
        self.send(Method::DELETE, path, Some(token), None, &[])
            .await
    }

    /// A live app on the same server, with its own token.
    pub async fn live_app(&self) -> (Uuid, String) {
        let created = admin::create_app(
            &self.state.db,
            &self.clock,
            "Live App",
            app::api::Environment::Live,
        )
        .await
        .unwrap();
        (created.uuid, created.token)
    }

    /// A live app on the same server that has passed its readiness checklist (brand, support
    /// contacts, payment keys, an allowed origin; its default groups give the month-to-month
    /// default), so that enrollment flows open and credit checks are taken.
    pub async fn ready_live_app(&self) -> (Uuid, String) {
        let (uuid, token) = self.live_app().await;
        admin::set_payment_keys(
            &self.state.db,
            &self.state.pii,
            uuid,
            "pk_live_readyPUBLIC0123",
            "sk_live_readySECRET0123",
        )
        .await
        .unwrap();
        self.make_live_ready(uuid).await;
        (uuid, token)
    }

    /// Everything of a live app's readiness checklist but its payment keys (and the processor's
    /// webhook signing secret unless the test set its own).
    pub async fn make_live_ready(&self, uuid: Uuid) {
        let db = &self.state.db;
        if !server::services::apps::has_payment_webhook_secret(db, uuid)
            .await
            .unwrap()
        {
            admin::set_payment_webhook_secret(
                db,
                &self.state.pii,
                uuid,
                "whsec_readySigningSecret0123",
            )
            .await
            .unwrap();
        }
        admin::set_branding(
            db,
            uuid,
            &server::services::apps::BrandingChange {
                display_name: None,
                primary_color: Some("#1b4d3e"),
                logo_url: Some("https://partner.example/logo.png"),
            },
        )
        .await
        .unwrap();
        admin::set_support(
            db,
            uuid,
            &server::services::apps::SupportInput {
                name: "",
                phone: "512 555 0100",
                email: "help@partner.example",
                hours: "",
                url: "",
            },
        )
        .await
        .unwrap();
        let origin = server::domain::apps::Origin::parse("https://partner.example").unwrap();
        admin::set_allowed_origins(db, uuid, vec![origin])
            .await
            .unwrap();
        let readiness = admin::readiness(db, uuid).await.unwrap();
        assert!(readiness.is_open(), "{readiness:?}");
    }

    pub fn engine(&self) -> Engine {
        self.engine
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> TestResponse {
        let mut req = self.client.request(method, self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body.filter(|b| !b.is_null()) {
            req = req.json(b);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        Self::read(req.send().await.unwrap()).await
    }

    pub async fn read(resp: reqwest::Response) -> TestResponse {
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        TestResponse {
            status,
            headers,
            body,
            text,
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> TestResponse {
        self.send(Method::GET, path, Some(token), None, &[]).await
    }

    pub async fn post(&self, path: &str, token: &str, body: &Value) -> TestResponse {
        self.send(Method::POST, path, Some(token), Some(body), &[])
            .await
    }

    pub async fn patch(&self, path: &str, token: &str, body: &Value) -> TestResponse {
        self.send(Method::PATCH, path, Some(token), Some(body), &[])
            .await
    }

    /// Creates an account with the app's token; panics unless it is created.
    pub async fn create_account(&self, body: Value) -> Value {
        let r = self.post("/v1/app/accounts", &self.app_token, &body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        r.body
    }

    pub async fn create_simple_account(&self, email: &str) -> Value {
        self.create_account(serde_json::json!({
            "email": email, "first_name": "Ana", "last_name": "Díaz"
        }))
        .await
    }

    /// An AccountToken for `account_uuid`.
    pub async fn account_token(&self, account_uuid: &str) -> String {
        let r = self
            .post(
                &format!("/v1/app/accounts/{account_uuid}/token"),
                &self.app_token,
                &Value::Null,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        r.body["token"].as_str().unwrap().to_owned()
    }

    /// Adds entries to the address directory and rebuilds the search index.
    pub async fn add_addresses(&self, rows: &[ServiceAddressRow]) {
        let mut tx = self.state.db.begin().await.unwrap();
        server::store::market::upsert_service_addresses(&mut tx, rows, true)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        server::adapters::setup::rebuild_index(&self.state.db, &self.state.adapters)
            .await
            .unwrap();
    }

    /// Everything this app's database holds, as bytes to search. SQLite: the database file and
    /// its write-ahead log, where recent commits wait for a checkpoint (free pages included, as a
    /// deleted row's bytes stay on disk). PostgreSQL: every row of every table as text, byte
    /// columns in escape form so that bytes kept in clear read as themselves.
    pub async fn stored_bytes(&self) -> Vec<u8> {
        match self.engine {
            Engine::Sqlite => {
                let path = self.database.url.trim_start_matches("sqlite:").to_owned();
                let mut bytes = std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("the database file {path} cannot be read: {e}"));
                assert!(!bytes.is_empty(), "the database file {path} is empty");
                if let Ok(wal) = std::fs::read(format!("{path}-wal")) {
                    bytes.extend(wal);
                }
                bytes
            }
            Engine::Postgres => {
                use sqlx::Connection;
                let mut conn = sqlx::PgConnection::connect(&self.database.url)
                    .await
                    .unwrap();
                sqlx::query("SET bytea_output = 'escape'")
                    .execute(&mut conn)
                    .await
                    .unwrap();
                let tables: Vec<String> = sqlx::query_scalar(
                    "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) \
                     FROM information_schema.tables WHERE table_type = 'BASE TABLE' \
                     AND table_schema NOT IN ('pg_catalog', 'information_schema')",
                )
                .fetch_all(&mut conn)
                .await
                .unwrap();
                assert!(tables.len() > 10, "the database has no schema: {tables:?}");
                let mut bytes = Vec::new();
                for table in tables {
                    let rows: Vec<String> =
                        sqlx::query_scalar(&format!("SELECT t::text FROM {table} t"))
                            .fetch_all(&mut conn)
                            .await
                            .unwrap();
                    for row in rows {
                        bytes.extend_from_slice(row.as_bytes());
                        bytes.push(b'\n');
                    }
                }
                conn.close().await.ok();
                bytes
            }
        }
    }

    /// The first column, as text, of every row `sql` answers, read straight from this app's
    /// database: for what the API does not show (a job's attempts and last error).
    pub async fn query_texts(&self, sql: &str) -> Vec<Option<String>> {
        use sqlx::Connection;
        match self.engine {
            Engine::Sqlite => {
                let url = format!("{}?mode=ro", self.database.url);
                let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
                let rows = sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap();
                conn.close().await.ok();
                rows
            }
            Engine::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.database.url)
                    .await
                    .unwrap();
                let rows = sqlx::query_scalar(sql).fetch_all(&mut conn).await.unwrap();
                conn.close().await.ok();
                rows
            }
        }
    }

    /// Runs `sql` (no parameters) on this app's database: to set up what no endpoint sets.
    pub async fn execute_sql(&self, sql: &str) {
        use sqlx::Connection;
        match self.engine {
            Engine::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.database.url)
                    .await
                    .unwrap();
                sqlx::query(sql).execute(&mut conn).await.unwrap();
                conn.close().await.ok();
            }
            Engine::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.database.url)
                    .await
                    .unwrap();
                sqlx::query(sql).execute(&mut conn).await.unwrap();
                conn.close().await.ok();
            }
        }
    }

    /// Asserts that none of `needles` appears anywhere in this app's database. The search must
    /// first find `known`, something the test just stored, so that it cannot pass by looking
    /// at nothing.
    pub async fn assert_not_stored(&self, known: &str, needles: &[&str], what: &str) {
        let bytes = self.stored_bytes().await;
        let holds = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
        assert!(
            holds(known),
            "the search does not see {known:?}, which was just stored"
        );
        for needle in needles {
            assert!(!holds(needle), "the database holds {what} ({needle:?})");
        }
    }

    /// A second app on the same server, with its own token.
    pub async fn other_app(&self) -> (Uuid, String) {
        let created = admin::create_app(
            &self.state.db,
            &self.clock,
            "Other App",
            app::api::Environment::Sandbox,
        )
        .await
        .unwrap();
        (created.uuid, created.token)
    }
}

/// A local port nothing listens on right now (for a process or server the test starts).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
