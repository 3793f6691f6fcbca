//! Benchmark: webhook delivery throughput and enqueue-to-delivery latency to a loopback
//! receiver, with the workers of one server process (`serve --role all`). Not a test: run it
//! by hand and read the table.
//!
//!   cargo run --release -p server --example webhook_bench -- [sqlite|postgres] [events=20000] [rate=2000]
//!
//! Phase 1 (burst): `events` events are committed at once (100 per transaction) and the workers
//! drain them; throughput = events / time from first commit to last delivery.
//! Phase 2 (steady): events are committed at `rate` per second for 10 seconds; latency = time
//! from an event's commit to its arrival at the receiver (p50, p99, max).

#![allow(clippy::unwrap_used)] // a benchmark: a poisoned lock may end it

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{body::Bytes, extract::State, http::HeaderMap, routing::post, Router};
use server::{
    clock::Clock,
    config::{Config, Secret},
    store::{
        events::{insert_event, NewEvent},
        webhooks::{insert_endpoint, EndpointRow},
    },
};
use uuid::Uuid;

#[path = "common/mod.rs"]
mod common;

type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

async fn receive(
    State(arrivals): State<Arrivals>,
    headers: HeaderMap,
    _body: Bytes,
) -> &'static str {
    let id = headers
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    arrivals.lock().unwrap().insert(id, Instant::now());
    "ok"
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let engine = args.first().map_or("sqlite", String::as_str).to_owned();
    let burst: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rate: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);

    let dir = tempfile::tempdir()?;
    let database = common::fresh_database(&engine, dir.path()).await?;

    let mut config = Config {
        database_url: Secret::new(database.url.clone()),
        database_max_connections: 16,
        ..Config::default()
    };
    config.jobs.concurrency = 128;
    let state = server::build_state(config, Clock::system()).await?;
    let app = server::admin::create_app(
        &state.db,
        &state.clock,
        "Bench",
        app::api::Environment::Sandbox,
    )
    .await?;

    let arrivals: Arrivals = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let receiver_url = format!("http://{}/hook", listener.local_addr()?);
    let router = Router::new()
        .route("/hook", post(receive))
        .with_state(arrivals.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let mut tx = state.db.begin().await?;
    insert_endpoint(
        &mut tx,
        &EndpointRow {
            uuid: Uuid::new_v4(),
            app_uuid: app.uuid,
            url: receiver_url,
            event_types: "[]".to_owned(),
            description: None,
            secret: server::domain::webhooks::WebhookSecret::generate()
                .expose()
                .to_owned(),
            previous_secret: None,
            previous_secret_expires_at: None,
            disabled: false,
            disabled_reason: None,
            failing_since: None,
            created_at: state.clock.now(),
        },
    )
    .await?;
    tx.commit().await?;

    let committed: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let enqueue = |n: usize| {
        let state = state.clone();
        let committed = committed.clone();
        let app_uuid = app.uuid;
        async move {
            let mut tx = state.db.begin().await?;
            let mut ids = Vec::with_capacity(n);
            for _ in 0..n {
                ids.push(
                    insert_event(
                        &mut tx,
                        &NewEvent {
                            app_uuid,
                            account_uuid: None,
                            kind: "invoice.created",
                            data: serde_json::json!({"invoice_number": "INV-1", "total_cents": 12345}),
                            created_at: state.clock.now(),
                        },
                    )
                    .await?,
                );
            }
            tx.commit().await?;
            let at = Instant::now();
            let mut c = committed.lock().unwrap();
            for id in ids {
                c.insert(id.to_string(), at);
            }
            anyhow::Ok(())
        }
    };
    let wait_for = |n: usize, limit: Duration| {
        let arrivals = arrivals.clone();
        async move {
            let until = Instant::now() + limit;
            while arrivals.lock().unwrap().len() < n && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            arrivals.lock().unwrap().len()
        }
    };

    // Phase 1: burst. Enqueue everything first, then start the workers.
    for _ in 0..burst / 100 {
        enqueue(100).await?;
    }
    let started = Instant::now();
    let workers = server::start_workers(state.clone());
    let got = wait_for(burst, Duration::from_secs(300)).await;
    let last = arrivals
        .lock()
        .unwrap()
        .values()
        .max()
        .copied()
        .unwrap_or(started);
    let secs = (last - started).as_secs_f64();
    println!("engine: {engine}");
    println!(
        "burst:  {got}/{burst} delivered in {secs:.2} s = {:.0} deliveries/s",
        got as f64 / secs
    );

    // Phase 2: steady rate for 10 s, in ticks of 10 ms.
    arrivals.lock().unwrap().clear();
    committed.lock().unwrap().clear();
    let per_tick = (rate / 100).max(1);
    let phase = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    let mut sent = 0;
    while phase.elapsed() < Duration::from_secs(10) {
        tick.tick().await;
        enqueue(per_tick).await?;
        sent += per_tick;
    }
    let offered = sent as f64 / phase.elapsed().as_secs_f64();
    let got = wait_for(sent, Duration::from_secs(120)).await;
    let arrivals = arrivals.lock().unwrap().clone();
    let committed = committed.lock().unwrap().clone();
    let mut latencies: Vec<Duration> = committed
        .iter()
        .filter_map(|(id, at)| arrivals.get(id).map(|a| a.saturating_duration_since(*at)))
        .collect();
    latencies.sort();
    println!(
        "steady: {got}/{sent} delivered at {offered:.0} events/s offered; latency p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        common::percentile(&latencies, 0.50).as_secs_f64() * 1000.0,
        common::percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
    );
    workers.shutdown().await;
    state.db.close().await;
    database.drop().await?;
    Ok(())
}
