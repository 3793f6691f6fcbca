//! Billing under concurrency: many sandbox accounts seeded and advanced at once (while the
//! background workers run the same accounts' jobs) never get a past-due notice for an invoice
//! that was paid; concurrent clock advances of one account apply in turn.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::{sync::Semaphore, task::JoinSet};

use crate::{
    enrollment::{customer, event_types, relaxed, with_meters},
    helpers::TestApp,
};

/// Sends `POST path` with `body` for every token, `at_once` at a time; answers in token order.
async fn post_all(
    app: &TestApp,
    path: &str,
    tokens: &[String],
    body: Value,
    at_once: usize,
) -> Vec<(StatusCode, Value)> {
    let gate = Arc::new(Semaphore::new(at_once));
    let mut set = JoinSet::new();
    for (i, token) in tokens.iter().enumerate() {
        let (client, url, token, body, gate) = (
            app.client.clone(),
            app.url(path),
            token.clone(),
            body.clone(),
            gate.clone(),
        );
        set.spawn(async move {
            let _permit = gate.acquire().await.unwrap();
            let mut req = client.post(url).bearer_auth(token);
            if !body.is_null() {
                req = req.json(&body);
            }
            let r = TestApp::read(req.send().await.unwrap()).await;
            (i, r.status, r.body)
        });
    }
    let mut out = vec![(StatusCode::OK, Value::Null); tokens.len()];
    while let Some(done) = set.join_next().await {
        let (i, status, body) = done.unwrap();
        out[i] = (status, body);
    }
    out
}

async fn invoices(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app
        .get("/v1/account/billing/invoices?limit=100", token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

async fn email_subjects(app: &TestApp, account: &str) -> Vec<String> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={account}&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["subject"].as_str().unwrap().to_owned())
        .collect()
}

/// Many requests at once, each holding a connection while it reads through another: the
/// production pool size (the tests' default of 5 starves on PostgreSQL).
fn busy(c: &mut server::config::Config) {
    relaxed(c);
    c.database_max_connections = 16;
}

/// Accounts seeded and advanced in parallel.
const ACCOUNTS: usize = 16;
const AT_ONCE: usize = 8;

both_engines! {
    with busy;
    async fn paid_invoices_never_get_a_past_due_notice(app) {
        with_meters(&app).await;
        let mut uuids = Vec::new();
        let mut tokens = Vec::new();
        for i in 0..ACCOUNTS {
            let (uuid, token) = customer(&app, &format!("race{i}@example.com")).await;
            uuids.push(uuid);
            tokens.push(token);
        }
        // Seeding bills three months at once: reads, invoices, auto-pay and the past-due checks
        // all fall due together, for the request and the background workers alike.
        for (status, body) in post_all(&app, "/v1/account/sandbox/seed-demo-data", &tokens, Value::Null, AT_ONCE).await {
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        // Then two months more, advanced a few days at a time, all accounts at once.
        for _ in 0..6 {
            for (status, body) in post_all(&app, "/v1/account/sandbox/advance-clock", &tokens, json!({"days": 10}), AT_ONCE).await {
                assert_eq!(status, StatusCode::OK, "{body}");
            }
        }
        // Let the workers finish what they hold.
        app.eventually("the queue is idle", || async {
            server::store::jobs::count_by_state(&app.state.db, "running").await.unwrap() == 0
        }).await;

        let mut paid = 0;
        for (uuid, token) in uuids.iter().zip(&tokens) {
            let list = invoices(&app, token).await;
            let paid_numbers: Vec<&str> = list
                .iter()
                .filter(|i| i["status"] == "paid")
                .map(|i| i["number"].as_str().unwrap())
                .collect();
            assert!(list.iter().all(|i| i["status"] != "past_due"), "a paid-by-card invoice is past due: {list:?}");
            paid += paid_numbers.len();
            let types = event_types(&app, uuid).await;
            assert!(!types.iter().any(|t| t == "invoice.past_due"), "{uuid}: {types:?}");
            let subjects = email_subjects(&app, uuid).await;
            assert!(!subjects.iter().any(|s| s.contains("past due")), "{uuid}: {subjects:?}");
        }
        // Every account paid at least its seeded cycles' invoices.
        assert!(paid >= ACCOUNTS * 2, "only {paid} invoices paid");
    }
}

both_engines! {
    with relaxed;
    async fn concurrent_advances_of_one_account_apply_in_turn(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "turns@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let account: uuid::Uuid = uuid.parse().unwrap();
        let clock_now = || async {
            app.state.clock.for_account(&app.state.db, account).await.unwrap().now()
        };
        let before = clock_now().await;
        let tokens = vec![token.clone(), token.clone()];
        let answers = post_all(&app, "/v1/account/sandbox/advance-clock", &tokens, json!({"days": 365}), 2).await;
        let mut clocks = Vec::new();
        for (status, body) in &answers {
            assert_eq!(*status, StatusCode::OK, "{body}");
            let at = chrono::DateTime::parse_from_rfc3339(body["clock"].as_str().unwrap()).unwrap();
            clocks.push(at.with_timezone(&chrono::Utc));
        }
        clocks.sort();
        let after = clock_now().await;
        let near = |a: chrono::DateTime<chrono::Utc>, b: chrono::DateTime<chrono::Utc>| (a - b).num_seconds().abs() < 60;
        // Both moves applied, one after the other.
        assert!(near(after, before + chrono::Duration::days(730)), "moved from {before} to {after}");
        assert!(near(clocks[0], before + chrono::Duration::days(365)), "{clocks:?}");
        assert!(near(clocks[1], before + chrono::Duration::days(730)), "{clocks:?}");
        // Nothing was billed or emitted past the account's present.
        app.eventually("the queue is idle", || async {
            server::store::jobs::count_by_state(&app.state.db, "running").await.unwrap() == 0
        }).await;
        let today = server::domain::market::market_date(after);
        let list = invoices(&app, &token).await;
        assert!(list.len() >= 24, "{} invoices", list.len());
        for i in &list {
            let date = chrono::NaiveDate::parse_from_str(i["invoice_date"].as_str().unwrap(), "%Y-%m-%d").unwrap();
            assert!(date <= today, "invoice dated {date}, after {today}");
        }
        let events = server::store::events::events_of_account(&app.state.db, account).await.unwrap();
        assert!(events.iter().all(|e| e.created_at <= after + chrono::Duration::minutes(1)), "an event after {after}");
        let types = event_types(&app, &uuid).await;
        assert!(!types.iter().any(|t| t == "invoice.past_due"), "{types:?}");
    }
}

both_engines! {
    with relaxed;
    async fn a_second_process_writing_never_breaks_a_transaction_that_read_first(app) {
        // Two servers on one database, as when the operator's CLI runs beside the service.
        let sibling = app.sibling(|_| {}).await;
        let account = app.create_simple_account("first@example.com").await;
        let uuid: uuid::Uuid = account["uuid"].as_str().unwrap().parse().unwrap();

        let mut tx = app.state.db.begin().await.unwrap();
        let row = server::store::accounts::account_of_app_for_update(&mut tx, app.app_uuid, uuid).await.unwrap();
        assert!(row.is_some());
        // The sibling writes while this transaction holds what it read.
        let other = tokio::spawn(async move {
            let r = sibling.post("/v1/app/accounts", &sibling.app_token, &json!({
                "email": "second@example.com", "first_name": "Bo", "last_name": "Lee"
            })).await;
            (r.status, r.text)
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        match &mut tx {
            server::store::Tx::Sqlite(t) => {
                sqlx::query("UPDATE accounts SET updated_at = updated_at WHERE uuid = $1")
                    .bind(uuid)
                    .execute(&mut **t)
                    .await
                    .expect("the transaction that read first still writes");
            }
            server::store::Tx::Postgres(t) => {
                sqlx::query("UPDATE accounts SET updated_at = updated_at WHERE uuid = $1")
                    .bind(uuid)
                    .execute(&mut **t)
                    .await
                    .expect("the transaction that read first still writes");
            }
        }
        tx.commit().await.unwrap();
        let (status, text) = other.await.unwrap();
        assert_eq!(status, StatusCode::CREATED, "{text}");
    }
}
