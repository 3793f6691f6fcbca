//! Live credit checks through the bureau of `docs/credit-bureau.md` (a local fake of it): every
//! outcome, retries within a check (a busy bureau, a slow one), a wrong secret, and a check
//! that keeps failing until its retries run out and lands in the credit review queue.

use reqwest::StatusCode;
use serde_json::json;
use server::{
    config::Secret,
    domain::credit::{ReviewCause, MAX_CHECK_ATTEMPTS},
};
use uuid::Uuid;

use crate::{fake_bureau::FakeBureau, helpers::TestApp};

const SECRET: &str = "bureau-test-secret-0123456789";

/// A live app on a server whose bureau is `fake` (known by `secret`); the original server's
/// workers stop, so that only the configured server runs the checks.
struct Live {
    server: TestApp,
    app_uuid: Uuid,
    app_token: String,
}

async fn live(app: &mut TestApp, fake: &FakeBureau, secret: &str, attempts: u32) -> Live {
    if let Some(w) = app.workers.take() {
        w.kill();
    }
    // Made before the second server opens the database, so that one writer makes it.
    let (app_uuid, app_token) = app.ready_live_app().await;
    let base = fake.base.clone();
    let server = app
        .sibling(|c| {
            c.credit_bureau.url = Some(base);
            c.credit_bureau.secret = Some(Secret::new(secret));
            c.credit_bureau.timeout_ms = 1_000;
            c.credit_bureau.attempts = attempts;
            c.credit_bureau.retry_wait_ms = 20;
        })
        .await;
    Live {
        server,
        app_uuid,
        app_token,
    }
}

/// A live account with `ssn` submitted and its check run; the account's uuid.
async fn checked(live: &Live, ssn: &str) -> Uuid {
    let s = &live.server;
    let r = s
        .post(
            "/v1/app/accounts",
            &live.app_token,
            &json!({"email": "live@example.com", "first_name": "Ana", "last_name": "Díaz",
                "date_of_birth": "1985-07-04"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let account: Uuid = r.body["uuid"].as_str().unwrap().parse().unwrap();
    let t = s
        .post(
            &format!("/v1/app/accounts/{account}/token"),
            &live.app_token,
            &serde_json::Value::Null,
        )
        .await;
    assert_eq!(t.status, StatusCode::OK, "{}", t.text);
    let token = t.body["token"].as_str().unwrap().to_owned();
    let r = s
        .post(
            "/v1/account/enroll/credit-check",
            &token,
            &json!({"ssn": ssn, "consent": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
    // The check runs when the enrollment asks for it; here, at once.
    let mut tx = s.state.db.begin().await.unwrap();
    let row = server::store::accounts::account_of_app_for_update(&mut tx, live.app_uuid, account)
        .await
        .unwrap()
        .unwrap();
    let clock = s
        .state
        .clock
        .for_account(&s.state.db, account)
        .await
        .unwrap();
    server::services::follow_up::rerun_credit_check(&mut tx, &row, &clock)
        .await
        .unwrap()
        .expect("a check to run");
    tx.commit().await.unwrap();
    account
}

async fn check_status(app: &TestApp, account: Uuid) -> String {
    let mut tx = app.state.db.begin().await.unwrap();
    let c = server::store::credit::latest_credit_check(&mut tx, account)
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    c.status.as_str().to_owned()
}

async fn answered(app: &TestApp, account: Uuid, expected: &str) {
    app.eventually(&format!("the check answers {expected}"), || async {
        check_status(app, account).await == expected
    })
    .await;
}

async fn status_reason(live: &Live, account: Uuid) -> String {
    let r = live
        .server
        .get(&format!("/v1/app/accounts/{account}"), &live.app_token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    format!(
        "{}/{}",
        r.body["status"].as_str().unwrap(),
        r.body["status_reason"].as_str().unwrap()
    )
}

async fn review_causes(app: &TestApp, account: Uuid) -> Vec<ReviewCause> {
    server::store::credit_reviews::reviews_of_account(&app.state.db, account)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.cause)
        .collect()
}

/// Runs the check's queued job now, as its last allowed attempt.
async fn last_attempt_now(app: &TestApp, account: Uuid) {
    use sqlx::Connection;
    let sql = format!(
        "UPDATE jobs SET attempts = {}, run_at = 0 WHERE kind = 'credit.check' AND state = 'queued'",
        MAX_CHECK_ATTEMPTS - 1
    );
    let url = app.config.database_url.expose().to_owned();
    if url.starts_with("sqlite") {
        let mut c = sqlx::SqliteConnection::connect(&url).await.unwrap();
        assert_eq!(
            sqlx::query(&sql)
                .execute(&mut c)
                .await
                .unwrap()
                .rows_affected(),
            1
        );
    } else {
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        assert_eq!(
            sqlx::query(&sql)
                .execute(&mut c)
                .await
                .unwrap()
                .rows_affected(),
            1
        );
    }
    let _ = account;
}

both_engines! {
    async fn a_passed_check_sends_the_contracts_request(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 3).await;
        let account = checked(&live, "123-45-6789").await;
        answered(&live.server, account, "passed").await;
        let requests = fake.requests();
        assert_eq!(requests.len(), 1);
        let r = &requests[0];
        assert_eq!(r.authorization, format!("Bearer {SECRET}"));
        let reference = r.body["reference"].as_str().unwrap().to_owned();
        assert_eq!(r.idempotency_key.as_deref(), Some(reference.as_str()));
        assert_eq!(r.body["ssn"], "123456789");
        assert_eq!(r.body["first_name"], "Ana");
        assert_eq!(r.body["last_name"], "Díaz");
        assert_eq!(r.body["date_of_birth"], "1985-07-04");
        assert!(r.body["service_address"].is_null(), "no address confirmed yet");
        assert!(review_causes(&live.server, account).await.is_empty());
    }

    async fn declined_and_not_found_go_to_review_at_once(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 3).await;
        let declined = checked(&live, "123-45-0002").await;
        answered(&live.server, declined, "declined").await;
        assert_eq!(status_reason(&live, declined).await, "needs_attention/credit_declined");
        let not_found = checked(&live, "123-45-0003").await;
        answered(&live.server, not_found, "not_found").await;
        assert_eq!(status_reason(&live, not_found).await, "needs_attention/credit_not_found");
        assert_eq!(fake.requests().len(), 2, "a final answer is not asked again");
        assert_eq!(review_causes(&live.server, declined).await, [ReviewCause::Declined]);
        assert_eq!(review_causes(&live.server, not_found).await, [ReviewCause::NotFound]);
    }

    async fn a_frozen_file_waits_for_its_retries_before_review(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 3).await;
        let account = checked(&live, "123-45-0001").await;
        answered(&live.server, account, "frozen").await;
        assert_eq!(status_reason(&live, account).await, "needs_attention/credit_check_frozen");
        assert!(review_causes(&live.server, account).await.is_empty(), "retried first");
        let s = &live.server;
        s.eventually("the unfreeze e-mail", || async {
            server::store::emails::emails_of_app(&s.state.db, live.app_uuid, Some(account), 10, 0)
                .await
                .unwrap()
                .iter()
                .any(|e| e.text_body.contains(crate::fake_bureau::UNFREEZE_URL))
        }).await;
        last_attempt_now(s, account).await;
        s.eventually("the review", || async { !review_causes(s, account).await.is_empty() }).await;
        assert_eq!(review_causes(s, account).await, [ReviewCause::Frozen]);
    }

    async fn a_busy_bureau_is_asked_again_within_the_check(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 3).await;
        let account = checked(&live, "123-45-0004").await;
        answered(&live.server, account, "passed").await;
        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "one 503, then the answer");
        assert_eq!(requests[0].idempotency_key, requests[1].idempotency_key, "the same reference");
        assert_eq!(requests[0].body, requests[1].body);
    }

    async fn a_failing_bureau_is_retried_then_reviewed(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 3).await;
        let account = checked(&live, "123-45-0005").await;
        answered(&live.server, account, "error").await;
        assert_eq!(fake.requests().len(), 3, "the attempts of one check");
        assert_eq!(status_reason(&live, account).await, "needs_attention/credit_check_error");
        assert!(review_causes(&live.server, account).await.is_empty(), "the job retries first");
        last_attempt_now(&live.server, account).await;
        let s = &live.server;
        s.eventually("the review", || async { !review_causes(s, account).await.is_empty() }).await;
        assert_eq!(review_causes(s, account).await, [ReviewCause::Error]);
        assert_eq!(fake.requests().len(), 6);
    }

    async fn a_slow_bureau_times_out(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, SECRET, 2).await;
        let started = std::time::Instant::now();
        let account = checked(&live, "123-45-0006").await;
        answered(&live.server, account, "error").await;
        assert!(started.elapsed() < crate::fake_bureau::SLOW * 2, "{:?}", started.elapsed());
        assert_eq!(fake.requests().len(), 2, "each request timed out");
        assert_eq!(status_reason(&live, account).await, "needs_attention/credit_check_error");
    }

    async fn a_wrong_secret_is_not_retried_within_the_check(app) {
        let mut app = app;
        let fake = FakeBureau::start(SECRET).await;
        let live = live(&mut app, &fake, "not-the-secret", 3).await;
        let account = checked(&live, "123-45-6789").await;
        answered(&live.server, account, "error").await;
        let requests = fake.requests();
        assert_eq!(requests.len(), 1, "a refused secret is not asked again at once");
        assert_eq!(requests[0].authorization, "Bearer not-the-secret");
        assert_eq!(status_reason(&live, account).await, "needs_attention/credit_check_error");
    }
}
