//! The job queue: two workers on one database run each of 1,000 jobs exactly once; a worker
//! that dies mid-job has its job taken over after the lease.

use std::collections::HashMap;

use chrono::Duration;
use serde_json::json;
use server::store::events::{insert_event, NewEvent};

use crate::{
    helpers::free_port,
    helpers::TestApp,
    receiver::{Behavior, Receiver},
    webhooks::{create_endpoint, deliveries, emit, wait_deliveries},
};

both_engines! {
    async fn two_workers_run_each_job_exactly_once(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap().to_owned();
        // A second server process on the same database, with its own pools and workers.
        let second = app.sibling(|_| {}).await;
        for batch in 0..10 {
            let mut tx = app.state.db.begin().await.unwrap();
            for i in 0..100 {
                insert_event(&mut tx, &NewEvent {
                    app_uuid: app.app_uuid,
                    account_uuid: None,
                    kind: "invoice.created",
                    data: json!({"n": batch * 100 + i}),
                    created_at: app.clock.now(),
                }).await.unwrap();
            }
            tx.commit().await.unwrap();
        }
        app.eventually("1,000 deliveries", || async { receiver.count() >= 1000 }).await;
        app.eventually("1,000 jobs done", || async {
            server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap() == 1000
        }).await;
        // Give a duplicate, if any, the time to show up.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let mut seen: HashMap<String, usize> = HashMap::new();
        for hit in receiver.hits() {
            *seen.entry(hit.header("webhook-id").to_owned()).or_default() += 1;
        }
        assert_eq!(seen.len(), 1000);
        assert!(seen.values().all(|&n| n == 1), "a job ran twice");
        assert_eq!(deliveries(&app, &endpoint_uuid).await.len(), 100); // one page
        drop(second);
    }

    async fn a_dead_workers_job_is_taken_over_after_the_lease(app) {
        let mut app = app;
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Hang);
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap().to_owned();
        let event = emit(&app, None, "invoice.paid").await;
        app.eventually("the first worker is mid-job", || async { receiver.count() == 1 }).await;

        // The worker dies mid-delivery; another process's workers start.
        app.workers.take().unwrap().kill();
        let second = app.sibling(|_| {}).await;
        receiver.set(Behavior::Ok);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(receiver.count(), 1, "the job is leased to the dead worker");

        app.clock.advance(Duration::seconds(61));
        let log = wait_deliveries(&second, &endpoint_uuid, 1).await;
        assert_eq!(log[0]["status"], json!("succeeded"));
        assert_eq!(log[0]["attempt"], json!(2), "the dead worker's attempt counts");
        assert_eq!(receiver.count(), 2);
        assert_eq!(receiver.hits()[1].header("webhook-id"), event.to_string());
    }

    async fn workers_drain_and_stop(app) {
        let mut app = app;
        let receiver = Receiver::start().await;
        create_endpoint(&app, &receiver.url, &[]).await;
        receiver.set(Behavior::Slow(std::time::Duration::from_millis(300)));
        emit(&app, None, "invoice.paid").await;
        app.eventually("mid-job", || async { receiver.count() == 1 }).await;
        // A graceful stop lets the job in flight finish and record its end.
        app.workers.take().unwrap().shutdown().await;
        assert_eq!(server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap(), 1);
    }
}

/// A child process that is killed when the test ends, failed or not.
struct Worker(std::process::Child);

impl Worker {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `switchboard serve --role worker` on the database of `app` (with the PII key `key`,
/// which every instance shares), listening on `port`, its clock where `app`'s stands.
fn worker_process(app: &TestApp, key: &str, lease_seconds: u32, port: u16) -> Worker {
    server_process("worker", app, key, lease_seconds, port)
}

fn server_process(role: &str, app: &TestApp, key: &str, lease_seconds: u32, port: u16) -> Worker {
    let database_url = app.config.database_url.expose();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--role", role])
        .env("SWITCHBOARD_CLOCK_START", app.clock.now().to_rfc3339())
        .env("DATABASE_URL", database_url)
        .env("SWITCHBOARD_PII_KEY", key)
        .env("SWITCHBOARD_ADDR", format!("127.0.0.1:{port}"))
        .env("SWITCHBOARD_JOBS__POLL_INTERVAL_MS", "20")
        .env("SWITCHBOARD_JOBS__LEASE_SECONDS", lease_seconds.to_string())
        .env("SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS", "true")
        .env("RUST_LOG", "warn")
        .env_remove("REDIS_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    Worker(child)
}

/// An `--role api` process runs no jobs; two `--role worker` processes on one PostgreSQL run
/// 1,000 jobs exactly once; when the workers die mid-job (SIGKILL), a new worker process takes
/// the job over after the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_processes_share_one_postgres() {
    let mut app = TestApp::spawn(crate::helpers::Engine::Postgres).await;
    // This test server is API-only: the worker processes do the work.
    app.workers.take().unwrap().kill();
    let receiver = Receiver::start().await;
    create_endpoint(&app, &receiver.url, &[]).await;
    let api_port = free_port();
    let key = app.config.pii_key.as_ref().unwrap().expose().to_owned();
    let _api = server_process("api", &app, &key, 2, api_port);
    app.eventually("the API process listens", || async {
        app.client
            .get(format!("http://127.0.0.1:{api_port}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    })
    .await;
    emit(&app, None, "invoice.created").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 0, "an API process runs no jobs");

    let port = free_port();
    let mut workers = vec![
        worker_process(&app, &key, 2, port),
        worker_process(&app, &key, 2, free_port()),
    ];
    // A worker process serves its health, not the API.
    let base = format!("http://127.0.0.1:{port}");
    app.eventually("the worker listens", || async {
        app.client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    })
    .await;
    let api = app
        .client
        .get(format!("{base}/v1/app"))
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), reqwest::StatusCode::NOT_FOUND);

    for batch in 0..10 {
        let mut tx = app.state.db.begin().await.unwrap();
        for i in 0..100 {
            insert_event(
                &mut tx,
                &NewEvent {
                    app_uuid: app.app_uuid,
                    account_uuid: None,
                    kind: "invoice.created",
                    data: json!({"n": batch * 100 + i}),
                    created_at: app.clock.now(),
                },
            )
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }
    app.eventually("1,001 deliveries", || async { receiver.count() >= 1001 })
        .await;
    app.eventually("1,001 jobs done", || async {
        server::store::jobs::count_by_state(&app.state.db, "done")
            .await
            .unwrap()
            == 1001
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for hit in receiver.hits() {
        *seen.entry(hit.header("webhook-id").to_owned()).or_default() += 1;
    }
    assert_eq!(seen.len(), 1001);
    assert!(seen.values().all(|&n| n == 1), "a job ran twice");

    // Both workers die while one of them is mid-delivery.
    receiver.set(Behavior::Hang);
    let event = emit(&app, None, "invoice.paid").await;
    app.eventually("a worker is mid-job", || async { receiver.count() == 1002 })
        .await;
    for w in &mut workers {
        w.kill();
    }
    receiver.set(Behavior::Ok);
    let mut third = worker_process(&app, &key, 2, free_port());
    app.eventually("the job taken over", || async { receiver.count() == 1003 })
        .await;
    assert_eq!(
        receiver.hits()[1002].header("webhook-id"),
        event.to_string()
    );
    app.eventually("done", || async {
        server::store::jobs::count_by_state(&app.state.db, "done")
            .await
            .unwrap()
            == 1002
    })
    .await;
    third.kill();
}
