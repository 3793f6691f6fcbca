//! Benchmark: a billing run. Sandbox accounts with active service (each on its own meter, seeded
//! through the API) all move their clocks a year ahead at once: every cycle's read, invoice,
//! e-mail, auto-pay charge and past-due check runs on the way, in one server process with its
//! workers. Reports invoices issued per second and the time one account's year takes. Not a
//! test: run it by hand and read the table.
//!
//!   cargo run --release -p server --example billing_bench -- [sqlite|postgres] [accounts=200] [concurrency=8]

#![allow(clippy::unwrap_used)] // a benchmark: a failed request ends it

use std::{sync::Arc, time::Instant};

use serde_json::{json, Value};
use server::{
    clock::Clock,
    config::{Config, Secret},
    store,
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

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let engine = args.first().map_or("sqlite", String::as_str).to_owned();
    let accounts: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let concurrency: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(8);

    let dir = tempfile::tempdir()?;
    let database = common::fresh_database(&engine, dir.path()).await?;
    let mut config = Config {
        database_url: Secret::new(database.url.clone()),
        database_max_connections: 16,
        pii_key: Some(Secret::new(server::crypto::PiiKey::generate_base64())),
        ..Config::default()
    };
    config.rate_limits.account_per_second = 1_000_000;
    config.rate_limits.app_per_second = 1_000_000;
    config.market.default_directory_size = (accounts as u64).max(1_000);
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
        "        one account's year: p50 {:.2} s, p99 {:.2} s, max {:.2} s",
        pick(0.5),
        pick(0.99),
        pick(1.0)
    );
    workers.shutdown().await;
    state.db.close().await;
    database.drop().await?;
    Ok(())
}
