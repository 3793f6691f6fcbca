//! Benchmark: billing runs, on SQLite, PostgreSQL or both in one command. Not a test: run it by
//! hand and read the table.
//!
//! `cycle`: the cycle-day run. `accounts` sandbox accounts are seeded active (through the same
//! use cases the API calls, without HTTP) with service started about three cycles ago and no
//! cycle billed; then the server's workers bill what is due: every cycle's read, invoice,
//! e-mail, auto-pay charge, past-due check and webhook. Reports invoices per second. With
//! `rounds` above 1 the same is done again on the growing database (each round seeds
//! `accounts` more), which shows the time per invoice as the database grows.
//!
//! `year`: sandbox accounts seeded through the API all move their clocks a year ahead at once
//! (`POST /v1/account/sandbox/advance-clock`), `concurrency` at a time. Reports invoices per
//! second and the time one account's year takes.
//!
//!   cargo run --release -p server --example billing_bench -- cycle [sqlite|postgres|both] [accounts=2000] [rounds=1]
//!   cargo run --release -p server --example billing_bench -- year [sqlite|postgres|both] [accounts=200] [concurrency=8]
//!
//! With `BENCH_PROFILE=1` it also counts the SQL statements each run sent, and the time spent in
//! each, from the database driver's own statement log (which slows the run a little).

#![allow(clippy::unwrap_used)] // a benchmark: a failed request ends it

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{json, Value};
use server::{
    clock::Clock,
    config::{Config, Secret},
    domain::market::EsiId,
    services, store,
};
use tokio::sync::Semaphore;

#[path = "common/mod.rs"]
mod common;

struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    async fn post(&self, path: &str, token: &str, body: &Value) -> Value {
        let resp = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }
}

/// Runs `count` tasks of `work(i)`, `concurrency` at a time; answers each task's duration.
async fn run_all<F, Fut>(count: usize, concurrency: usize, work: F) -> Vec<std::time::Duration>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..count {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let job = work(i);
        tasks.spawn(async move {
            let started = Instant::now();
            job.await;
            drop(permit);
            started.elapsed()
        });
    }
    let mut took = Vec::with_capacity(count);
    while let Some(t) = tasks.join_next().await {
        took.push(t.unwrap());
    }
    took.sort();
    took
}

/// Per SQL statement (its first words): how many were sent and the time they took.
#[derive(Default)]
struct Profile {
    statements: Mutex<HashMap<String, (u64, f64)>>,
}

impl Profile {
    fn take(&self) -> HashMap<String, (u64, f64)> {
        std::mem::take(&mut *self.statements.lock().unwrap())
    }
}

/// Collects the driver's statement events (`summary`, `elapsed_secs`).
struct ProfileLayer(Arc<Profile>);

#[derive(Default)]
struct StatementVisit {
    summary: Option<String>,
    secs: f64,
}

impl tracing::field::Visit for StatementVisit {
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        if field.name() == "elapsed_secs" {
            self.secs = value;
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "summary" {
            self.summary = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "summary" && self.summary.is_none() {
            self.summary = Some(format!("{value:?}").trim_matches('"').to_owned());
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ProfileLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let mut visit = StatementVisit::default();
        event.record(&mut visit);
        let key = visit.summary.unwrap_or_else(|| "?".to_owned());
        let mut all = self.0.statements.lock().unwrap();
        let entry = all.entry(key).or_default();
        entry.0 += 1;
        entry.1 += visit.secs;
    }
}

fn profiling() -> Option<Arc<Profile>> {
    use tracing_subscriber::{layer::SubscriberExt, util::SubscriberInitExt, Layer};
    if std::env::var("BENCH_PROFILE").ok().as_deref() != Some("1") {
        return None;
    }
    let profile = Arc::new(Profile::default());
    tracing_subscriber::registry()
        .with(
            ProfileLayer(profile.clone()).with_filter(
                tracing_subscriber::filter::Targets::new()
                    .with_target("sqlx::query", tracing::Level::DEBUG),
            ),
        )
        .init();
    Some(profile)
}

fn print_profile(profile: Option<&Arc<Profile>>, invoices: i64) {
    let Some(profile) = profile else { return };
    let mut rows: Vec<(String, (u64, f64))> = profile.take().into_iter().collect();
    rows.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1));
    let count: u64 = rows.iter().map(|r| r.1 .0).sum();
    let secs: f64 = rows.iter().map(|r| r.1 .1).sum();
    let per = |n: f64| n / invoices.max(1) as f64;
    println!(
        "        statements: {count} ({:.1} per invoice), {secs:.1} s in the database ({:.2} ms per invoice)",
        per(count as f64),
        per(secs * 1000.0)
    );
    for (summary, (n, s)) in rows.iter().take(25) {
        println!(
            "          {:>7.2} per invoice {:>8.3} ms/invoice  {summary}",
            per(*n as f64),
            per(s * 1000.0)
        );
    }
}

/// The machine's load average (1, 5 and 15 minutes), printed with each figure: the benchmark
/// shares the machine's cores with whatever else runs.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn engines(arg: Option<&str>) -> Vec<String> {
    match arg {
        None | Some("both") => vec!["sqlite".to_owned(), "postgres".to_owned()],
        Some(e) => vec![e.to_owned()],
    }
}

fn config_for(database_url: &str, accounts: usize) -> Config {
    let mut config = Config {
        database_url: Secret::new(database_url.to_owned()),
        database_max_connections: 16,
        pii_key: Some(Secret::new(server::crypto::PiiKey::generate_base64())),
        ..Config::default()
    };
    config.rate_limits.account_per_second = 1_000_000;
    config.rate_limits.app_per_second = 1_000_000;
    config.market.default_directory_size = (accounts as u64).max(1_000);
    config
}

fn done<T, R: std::fmt::Debug>(r: Result<T, services::Error<R>>) -> T {
    match r {
        Ok(t) => t,
        Err(services::Error::Refused(why)) => panic!("refused: {why:?}"),
        Err(services::Error::Failed(e)) => panic!("failed: {e:#}"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, rest) = match args.first().map(String::as_str) {
        Some(m @ ("cycle" | "year")) => (m.to_owned(), &args[1..]),
        _ => ("year".to_owned(), &args[..]),
    };
    let profile = profiling();
    for engine in engines(rest.first().map(String::as_str)) {
        let n =
            |i: usize, default: usize| rest.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
        if mode == "cycle" {
            cycle_run(&engine, n(1, 2000), n(2, 1), profile.as_ref()).await?;
        } else {
            year_run(&engine, n(1, 200), n(2, 8), profile.as_ref()).await?;
        }
    }
    Ok(())
}

/// Seeds `count` accounts active since about three cycles ago, with nothing billed yet, on the
/// directory's meters from `first` on, 8 at a time.
async fn seed_active(
    state: &server::state::Core,
    app: &store::apps::AppRow,
    meters: &[store::market::ServiceAddressRow],
    first: usize,
) {
    let permits = Arc::new(Semaphore::new(8));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, meter) in meters.iter().enumerate() {
        let permit = permits.clone().acquire_owned().await.unwrap();
        let (state, app, esi) = (
            state.clone(),
            app.clone(),
            EsiId::parse(&meter.esi_id).unwrap(),
        );
        let n = first + i;
        tasks.spawn(async move {
            let input = serde_json::from_value(json!({
                "email": format!("bench{n}@example.com"), "first_name": "Ana",
                "last_name": "Bench", "phone": "5125550123", "date_of_birth": "1980-04-02"}))
            .unwrap();
            let account = done(
                services::accounts::create_account(
                    &state,
                    app.uuid,
                    app::api::Environment::Sandbox,
                    input,
                )
                .await,
            );
            done(services::enrollment::confirm_address(&state, app.uuid, account.uuid, &esi).await);
            done(services::sandbox::seed_demo_data(&state, &app, account.uuid).await);
            drop(permit);
        });
    }
    while let Some(t) = tasks.join_next().await {
        t.unwrap();
    }
}

/// The cycle-day run: see the module's doc.
async fn cycle_run(
    engine: &str,
    accounts: usize,
    rounds: usize,
    profile: Option<&Arc<Profile>>,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let database = common::fresh_database(engine, dir.path()).await?;
    let config = config_for(&database.url, accounts * rounds);
    let state = server::build_state(config, Clock::system()).await?;
    let created = server::admin::create_app(
        &state.db,
        &state.clock,
        "Bench",
        app::api::Environment::Sandbox,
    )
    .await?;
    let app = store::apps::app_by_uuid(&state.db, created.uuid)
        .await?
        .unwrap();
    let meters =
        store::market::service_addresses_after(&state.db, "", (accounts * rounds) as i64).await?;
    assert_eq!(
        meters.len(),
        accounts * rounds,
        "the directory is smaller than asked"
    );
    println!(
        "engine: {engine}, cycle-day run, {accounts} active accounts a round, {rounds} round(s)"
    );
    for round in 0..rounds {
        let started = Instant::now();
        let mine = &meters[round * accounts..(round + 1) * accounts];
        seed_active(state.core(), &app, mine, round * accounts).await;
        let before = store::billing::count_invoices(&state.db).await?;
        let seeded = started.elapsed().as_secs_f64();
        if let Some(p) = profile {
            p.take();
        }
        // The workers bill everything due; the run ends when no invoice was added for a second.
        let started = Instant::now();
        let workers = server::start_workers(state.clone());
        let (mut last, mut last_change) = (before, Instant::now());
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            // A pool busy with the workers' jobs may keep this count waiting: ask again.
            let Ok(now) = store::billing::count_invoices(&state.db).await else {
                continue;
            };
            if now != last {
                (last, last_change) = (now, Instant::now());
            } else if last_change.elapsed() > Duration::from_secs(1)
                && store::jobs::count_by_state(&state.db, "running")
                    .await
                    .is_ok_and(|n| n == 0)
            {
                break;
            }
        }
        workers.shutdown().await;
        let secs = (last_change - started).as_secs_f64();
        let issued = last - before;
        println!(
            "round {}: {before} invoices before ({seeded:.1} s to seed); {issued} invoices (with their reads, e-mails, auto-pay, webhooks) in {secs:.1} s = {:.0} invoices/s, {:.2} ms per invoice; load average {}",
            round + 1,
            issued as f64 / secs,
            secs * 1000.0 / issued.max(1) as f64,
            load_average(),
        );
        print_profile(profile, issued);
    }
    state.db.close().await;
    database.drop().await?;
    Ok(())
}

async fn year_run(
    engine: &str,
    accounts: usize,
    concurrency: usize,
    profile: Option<&Arc<Profile>>,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let database = common::fresh_database(engine, dir.path()).await?;
    let mut config = config_for(&database.url, accounts);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    config.addr = listener.local_addr()?;
    config.public_url = None;
    let state = server::build_state(config, Clock::system()).await?;
    let app = server::admin::create_app(
        &state.db,
        &state.clock,
        "Bench",
        app::api::Environment::Sandbox,
    )
    .await?;
    let served = state.clone();
    tokio::spawn(async move { server::serve(served, listener, std::future::pending()).await });
    let workers = server::start_workers(state.clone());
    let api = Arc::new(Api {
        client: reqwest::Client::builder().no_proxy().build()?,
        base: format!("http://{}", state.config.addr),
    });
    let meters = store::market::service_addresses_after(&state.db, "", accounts as i64).await?;
    assert_eq!(
        meters.len(),
        accounts,
        "the directory is smaller than asked"
    );

    // Setup: an account per meter, active since 95 days ago with the cycles since billed.
    let app_token = Arc::new(app.token);
    let tokens = Arc::new(tokio::sync::Mutex::new(vec![String::new(); accounts]));
    let meters = Arc::new(meters);
    let started = Instant::now();
    run_all(accounts, concurrency, |i| {
        let (api, app_token, tokens, meters) = (
            api.clone(),
            app_token.clone(),
            tokens.clone(),
            meters.clone(),
        );
        async move {
            let account = api
                .post(
                    "/v1/app/accounts",
                    &app_token,
                    &json!({"email": format!("bench{i}@example.com"), "first_name": "Ana",
                            "last_name": "Bench", "phone": "5125550123",
                            "date_of_birth": "1980-04-02"}),
                )
                .await;
            let uuid = account["uuid"].as_str().unwrap();
            let token = api
                .post(
                    &format!("/v1/app/accounts/{uuid}/token"),
                    &app_token,
                    &Value::Null,
                )
                .await["token"]
                .as_str()
                .unwrap()
                .to_owned();
            api.post(
                "/v1/account/enroll/confirm-address",
                &token,
                &json!({"esi_id": meters[i].esi_id}),
            )
            .await;
            api.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null)
                .await;
            tokens.lock().await[i] = token;
        }
    })
    .await;
    let seeded = store::billing::count_invoices(&state.db).await?;
    if let Some(p) = profile {
        p.take();
    }
    println!("engine: {engine}, accounts: {accounts}, concurrency: {concurrency}");
    println!(
        "setup:  {accounts} accounts seeded in {:.1} s ({seeded} invoices)",
        started.elapsed().as_secs_f64()
    );

    // The run: a year for every account.
    let tokens = Arc::new(tokens.lock().await.clone());
    let started = Instant::now();
    let took = run_all(accounts, concurrency, |i| {
        let (api, tokens) = (api.clone(), tokens.clone());
        async move {
            api.post(
                "/v1/account/sandbox/advance-clock",
                &tokens[i],
                &json!({"days": 365}),
            )
            .await;
        }
    })
    .await;
    let secs = started.elapsed().as_secs_f64();
    let issued = store::billing::count_invoices(&state.db).await? - seeded;
    let pick = |p: f64| common::percentile(&took, p).as_secs_f64();
    println!(
        "run:    {issued} invoices (with their reads, e-mails and auto-pay) in {secs:.1} s = {:.0} invoices/s",
        issued as f64 / secs
    );
    println!(
        "        one account's year: p50 {:.2} s, p99 {:.2} s, max {:.2} s; load average {}",
        pick(0.5),
        pick(0.99),
        pick(1.0),
        load_average(),
    );
    print_profile(profile, issued);
    workers.shutdown().await;
    state.db.close().await;
    database.drop().await?;
    Ok(())
}
