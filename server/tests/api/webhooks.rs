//! Webhooks: endpoint management, signed delivery (verified by the Standard Webhooks reference
//! library), retries on the clock, disabling, Retry-After, rotation, redeliver, recover,
//! send-test, and the SSRF guard of live apps.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};
use server::store::events::{insert_event, NewEvent};
use uuid::Uuid;

use crate::{
    helpers::TestApp,
    receiver::{verify_with_reference, Behavior, Receiver},
};

pub async fn create_endpoint(app: &TestApp, url: &str, types: &[&str]) -> Value {
    let r = app
        .post(
            "/v1/app/webhook-endpoints",
            &app.app_token,
            &json!({"url": url, "event_types": types, "description": "Test receiver"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    r.body
}

/// Emits an event the way every feature does: `insert_event` in the change's transaction.
pub async fn emit(app: &TestApp, account_uuid: Option<Uuid>, kind: &str) -> Uuid {
    let mut tx = app.state.db.begin().await.unwrap();
    let uuid = insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: app.app_uuid,
            account_uuid,
            kind,
            data: json!({"account_uuid": account_uuid, "status": "active"}),
            created_at: app.clock.now(),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    uuid
}

pub async fn deliveries(app: &TestApp, endpoint: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/webhook-endpoints/{endpoint}/deliveries?limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut list = r.body["data"].as_array().unwrap().clone();
    list.reverse(); // oldest first
    list
}

pub async fn wait_deliveries(app: &TestApp, endpoint: &str, n: usize) -> Vec<Value> {
    let uuid: Uuid = endpoint.parse().unwrap();
    // Polls the store, not the API, to stay under the app's rate limit.
    app.eventually(&format!("{n} delivery attempts"), || async {
        server::store::webhooks::deliveries_of_endpoint(&app.state.db, uuid, 100, 0)
            .await
            .unwrap()
            .len()
            >= n
    })
    .await;
    deliveries(app, endpoint).await
}

fn ts(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
}

both_engines! {
    async fn endpoints_are_managed(app) {
        let created = create_endpoint(&app, "http://127.0.0.1:9/hook", &["invoice.paid"]).await;
        let uuid = created["uuid"].as_str().unwrap().to_owned();
        let secret = created["secret"].as_str().unwrap();
        assert!(secret.starts_with("whsec_"), "{secret}");
        assert_eq!(created["event_types"], json!(["invoice.paid"]));
        assert_eq!(created["disabled"], json!(false));

        let path = format!("/v1/app/webhook-endpoints/{uuid}");
        let got = app.get(&path, &app.app_token).await;
        assert_eq!(got.status, StatusCode::OK);
        assert!(got.body.get("secret").is_none(), "the secret is shown once");
        assert!(!got.text.contains(secret));

        let list = app.get("/v1/app/webhook-endpoints", &app.app_token).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
        assert!(!list.text.contains(secret));

        let patched = app
            .patch(&path, &app.app_token, &json!({"event_types": [], "disabled": true, "description": null}))
            .await;
        assert_eq!(patched.status, StatusCode::OK, "{}", patched.text);
        assert_eq!(patched.body["event_types"], json!([]));
        assert_eq!(patched.body["disabled"], json!(true));
        assert_eq!(patched.body["disabled_reason"], json!("disabled_by_app"));
        assert_eq!(patched.body["description"], Value::Null);
        let enabled = app.patch(&path, &app.app_token, &json!({"disabled": false})).await;
        assert_eq!(enabled.body["disabled_reason"], Value::Null);

        let rotated = app
            .post(&format!("{path}/rotate-secret"), &app.app_token, &Value::Null)
            .await;
        assert_eq!(rotated.status, StatusCode::OK);
        let new_secret = rotated.body["secret"].as_str().unwrap();
        assert!(new_secret.starts_with("whsec_") && new_secret != secret);

        // Bad input changes nothing and names the field.
        let bad = app
            .patch(&path, &app.app_token, &json!({"event_types": ["invoice.paid", "nope"]}))
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert_eq!(bad.code(), "parameter_invalid");
        assert_eq!(bad.body["error"]["param"], json!("event_types[1]"));
        // The refusal names the valid types.
        let message = bad.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("unknown event type nope") && message.contains("account.created, enrollment.plan_requested"), "{message}");
        let bad = app
            .post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": "ftp://x.example/"}))
            .await;
        assert_eq!((bad.status, bad.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        let bad = app
            .post("/v1/app/webhook-endpoints", &app.app_token, &json!({}))
            .await;
        assert_eq!((bad.status, bad.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));

        // Another app sees nothing.
        let (_, other) = app.other_app().await;
        assert_eq!(app.get(&path, &other).await.status, StatusCode::NOT_FOUND);

        let deleted = app.delete(&path, &app.app_token).await;
        assert_eq!(deleted.status, StatusCode::OK);
        assert_eq!(deleted.body["deleted"], json!(true));
        assert_eq!(app.get(&path, &app.app_token).await.code(), "resource_missing");
        assert_eq!(app.delete(&path, &app.app_token).await.status, StatusCode::NOT_FOUND);
    }

    async fn live_apps_cannot_target_private_addresses(app) {
        let (_, live) = app.live_app().await;
        for url in [
            "https://127.0.0.1/hook",
            "https://localhost/hook",
            "https://10.0.0.8/hook",
            "https://169.254.169.254/latest",
            "https://[::1]/hook",
            "http://hooks.example.com/hook",
        ] {
            let r = app
                .post("/v1/app/webhook-endpoints", &live, &json!({"url": url}))
                .await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}: {}", r.text);
            assert_eq!(r.code(), "url_not_allowed");
            assert_eq!(r.body["error"]["param"], json!("url"));
        }
        let ok = app
            .post("/v1/app/webhook-endpoints", &live, &json!({"url": "https://hooks.example.com/in"}))
            .await;
        assert_eq!(ok.status, StatusCode::CREATED, "{}", ok.text);
        let list = app.get("/v1/app/webhook-endpoints", &live).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 1);
    }

    async fn live_deliveries_never_reach_private_addresses(app) {
        // Defense in depth: even an endpoint whose name resolves to loopback (stored here
        // directly, past the API's check) is not reached by a live app's delivery.
        let receiver = Receiver::start().await;
        let (live_uuid, live) = app.live_app().await;
        let port = receiver.url.rsplit(':').next().unwrap().trim_end_matches("/hook").to_owned();
        let endpoint_uuid = Uuid::new_v4();
        let mut tx = app.state.db.begin().await.unwrap();
        server::store::webhooks::insert_endpoint(&mut tx, &server::store::webhooks::EndpointRow {
            uuid: endpoint_uuid,
            app_uuid: live_uuid,
            url: format!("http://localhost:{port}/hook"),
            event_types: "[]".to_owned(),
            description: None,
            secret: server::domain::webhooks::WebhookSecret::generate().expose().to_owned(),
            previous_secret: None,
            previous_secret_expires_at: None,
            disabled: false,
            disabled_reason: None,
            failing_since: None,
            created_at: app.clock.now(),
        }).await.unwrap();
        insert_event(&mut tx, &NewEvent {
            app_uuid: live_uuid, account_uuid: None, kind: "invoice.paid",
            data: json!({}), created_at: app.clock.now(),
        }).await.unwrap();
        tx.commit().await.unwrap();
        let attempts = || async {
            server::store::webhooks::deliveries_of_endpoint(&app.state.db, endpoint_uuid, 10, 0)
                .await
                .unwrap()
        };
        app.eventually("an attempt", || async { !attempts().await.is_empty() }).await;
        let log = attempts().await;
        assert_eq!(log[0].status.as_str(), "failed");
        assert_eq!(log[0].error.as_deref(), Some("connection failed"));
        assert_eq!(receiver.count(), 0);
        let listed = app
            .get(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}/deliveries"), &live)
            .await;
        assert_eq!(listed.body["data"][0]["error"], json!("connection failed"));
        // The same URL is reachable for a sandbox app: the guard made the difference.
        create_endpoint(&app, &format!("http://localhost:{port}/hook"), &[]).await;
        emit(&app, None, "invoice.paid").await;
        app.eventually("sandbox delivery", || async { receiver.count() == 1 }).await;
    }

    async fn events_are_delivered_signed_and_listed(app) {
        let receiver = Receiver::start().await;
        // Made before the endpoints, so that its `account.created` goes to none of them.
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        let secret = endpoint["secret"].as_str().unwrap();
        let filtered = create_endpoint(&app, &receiver.url, &["invoice.paid"]).await;

        let event_uuid = emit(&app, Some(account_uuid), "location.service_active").await;
        app.eventually("one delivery", || async { receiver.count() >= 1 }).await;
        let hit = receiver.hits()[0].clone();
        assert_eq!(hit.header("webhook-id"), event_uuid.to_string());
        assert_eq!(hit.header("content-type"), "application/json");
        assert!(verify_with_reference(secret, &hit), "signature refused by the reference library");
        assert!(!verify_with_reference("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &hit));
        let body = hit.json();
        assert_eq!(body["uuid"], json!(event_uuid.to_string()));
        assert_eq!(body["type"], json!("location.service_active"));
        assert_eq!(body["environment"], json!("sandbox"));
        assert_eq!(body["data"]["account_uuid"], json!(account_uuid.to_string()));

        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(log[0]["status"], json!("succeeded"));
        assert_eq!(log[0]["attempt"], json!(1));
        assert_eq!(log[0]["response_status"], json!(204));
        assert_eq!(log[0]["next_attempt_at"], Value::Null);
        // The endpoint filtered to invoice.paid got nothing.
        let filtered_uuid = filtered["uuid"].as_str().unwrap();
        assert!(deliveries(&app, filtered_uuid).await.is_empty());
        assert_eq!(receiver.count(), 1);

        // An event whose transaction rolls back leaves neither event nor delivery.
        let mut tx = app.state.db.begin().await.unwrap();
        insert_event(&mut tx, &NewEvent {
            app_uuid: app.app_uuid, account_uuid: None, kind: "invoice.paid",
            data: json!({}), created_at: app.clock.now(),
        }).await.unwrap();
        drop(tx);
        emit(&app, None, "invoice.created").await;

        let all = app.get("/v1/app/events", &app.app_token).await;
        assert_eq!(all.status, StatusCode::OK);
        let types: Vec<_> = all.body["data"].as_array().unwrap().iter()
            .map(|e| e["type"].as_str().unwrap().to_owned()).collect();
        assert_eq!(types, vec!["invoice.created", "location.service_active", "account.created"]);
        let by_type = app.get("/v1/app/events?type=location.service_active", &app.app_token).await;
        assert_eq!(by_type.body["data"].as_array().unwrap().len(), 1);
        let by_account = app
            .get(&format!("/v1/app/events?account_uuid={account_uuid}&limit=1"), &app.app_token)
            .await;
        assert_eq!(by_account.body["data"][0]["uuid"], json!(event_uuid.to_string()));
        // (and the account's `account.created` before it)
        assert_eq!(by_account.body["has_more"], json!(true));
        let paged = app.get("/v1/app/events?limit=1", &app.app_token).await;
        assert_eq!(paged.body["next_page_url"], json!("/v1/app/events?limit=1&offset=1"));
        let one = app.get(&format!("/v1/app/events/{event_uuid}"), &app.app_token).await;
        assert_eq!(one.body, body);
        let bad = app.get("/v1/app/events?type=nope", &app.app_token).await;
        assert_eq!((bad.status, bad.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        let bad = app.get("/v1/app/events?account_uuid=123", &app.app_token).await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        let (_, other) = app.other_app().await;
        let hidden = app.get(&format!("/v1/app/events/{event_uuid}"), &other).await;
        assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    }

    async fn failures_are_retried_on_the_clock(app) {
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Status(500));
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;

        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(log[0]["status"], json!("failed"));
        assert_eq!(log[0]["response_status"], json!(500));
        assert_eq!(log[0]["error"], json!("HTTP 500"));
        assert_eq!(ts(&log[0]["next_attempt_at"]) - ts(&log[0]["attempted_at"]), Duration::seconds(5));
        // Nothing more until the clock moves.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(receiver.count(), 1);

        app.clock.advance(Duration::seconds(5));
        let log = wait_deliveries(&app, endpoint_uuid, 2).await;
        assert_eq!(log[1]["attempt"], json!(2));
        assert_eq!(ts(&log[1]["next_attempt_at"]) - ts(&log[1]["attempted_at"]), Duration::minutes(5));

        receiver.set(Behavior::Ok);
        app.clock.advance(Duration::minutes(5));
        let log = wait_deliveries(&app, endpoint_uuid, 3).await;
        assert_eq!(log[2]["status"], json!("succeeded"));
        assert_eq!(log[2]["attempt"], json!(3));
        let first = receiver.hits()[0].header("webhook-id").to_owned();
        assert!(receiver.hits().iter().all(|h| h.header("webhook-id") == first), "stable id");
    }

    async fn retries_stop_after_the_schedule(app) {
        let url = Receiver::down_url().await;
        let endpoint = create_endpoint(&app, &url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;
        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(log[0]["error"], json!("connection failed"));
        assert_eq!(log[0]["response_status"], Value::Null);
        for (n, step) in [
            Duration::seconds(5), Duration::minutes(5), Duration::minutes(30), Duration::hours(2),
            Duration::hours(5), Duration::hours(10), Duration::hours(10),
        ].into_iter().enumerate() {
            app.clock.advance(step);
            wait_deliveries(&app, endpoint_uuid, n + 2).await;
        }
        let log = deliveries(&app, endpoint_uuid).await;
        assert_eq!(log.len(), 8);
        assert_eq!(log[7]["next_attempt_at"], Value::Null, "eight attempts, then no more");
        app.clock.advance(Duration::days(1));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(deliveries(&app, endpoint_uuid).await.len(), 8);
        // Failing for about 28 hours: not disabled yet.
        let got = app.get(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}"), &app.app_token).await;
        assert_eq!(got.body["disabled"], json!(false));
    }

    async fn five_days_of_failures_disable_the_endpoint(app) {
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Status(502));
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;
        wait_deliveries(&app, endpoint_uuid, 1).await;
        app.clock.advance(Duration::days(4));
        emit(&app, None, "invoice.created").await;
        app.eventually("attempts", || async { receiver.count() >= 3 }).await;
        let path = format!("/v1/app/webhook-endpoints/{endpoint_uuid}");
        assert_eq!(app.get(&path, &app.app_token).await.body["disabled"], json!(false));
        app.clock.advance(Duration::days(1));
        emit(&app, None, "invoice.created").await;
        app.eventually("disabled", || async {
            app.get(&path, &app.app_token).await.body["disabled"] == json!(true)
        }).await;
        let got = app.get(&path, &app.app_token).await;
        assert_eq!(got.body["disabled_reason"], json!("failing_for_5_days"));
        // A disabled endpoint gets no new deliveries.
        let before = receiver.count();
        emit(&app, None, "invoice.created").await;
        app.clock.advance(Duration::days(1));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(receiver.count(), before);
    }

    async fn gone_disables_at_once(app) {
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Status(410));
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;
        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(log[0]["response_status"], json!(410));
        assert_eq!(log[0]["next_attempt_at"], Value::Null);
        let got = app.get(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}"), &app.app_token).await;
        assert_eq!(got.body["disabled"], json!(true));
        assert_eq!(got.body["disabled_reason"], json!("endpoint_gone"));
    }

    async fn retry_after_is_honoured(app) {
        let receiver = Receiver::start().await;
        receiver.set(Behavior::StatusRetryAfter(503, "120"));
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;
        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(ts(&log[0]["next_attempt_at"]) - ts(&log[0]["attempted_at"]), Duration::seconds(120));
        app.clock.advance(Duration::seconds(60));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(receiver.count(), 1, "not before Retry-After");
        receiver.set(Behavior::Ok);
        app.clock.advance(Duration::seconds(60));
        let log = wait_deliveries(&app, endpoint_uuid, 2).await;
        assert_eq!(log[1]["status"], json!("succeeded"));
    }

    async fn rotation_signs_with_both_secrets_for_a_day(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        let old = endpoint["secret"].as_str().unwrap().to_owned();
        let rotated = app
            .post(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}/rotate-secret"), &app.app_token, &Value::Null)
            .await;
        let new = rotated.body["secret"].as_str().unwrap().to_owned();
        emit(&app, None, "invoice.paid").await;
        app.eventually("delivery", || async { receiver.count() >= 1 }).await;
        let hit = receiver.hits()[0].clone();
        assert_eq!(hit.header("webhook-signature").split(' ').count(), 2);
        assert!(verify_with_reference(&old, &hit));
        assert!(verify_with_reference(&new, &hit));

        app.clock.advance(Duration::hours(25));
        emit(&app, None, "invoice.paid").await;
        app.eventually("delivery", || async { receiver.count() >= 2 }).await;
        let hit = receiver.hits()[1].clone();
        assert_eq!(hit.header("webhook-signature").split(' ').count(), 1);
        assert!(verify_with_reference(&new, &hit));
        assert!(!verify_with_reference(&old, &hit));
    }

    async fn slow_receivers_time_out(app) {
        let app = TestApp::spawn_with(app.engine(), |c| c.jobs.webhook_timeout_ms = 300).await;
        let receiver = Receiver::start().await;
        receiver.set(Behavior::Slow(std::time::Duration::from_secs(3)));
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        emit(&app, None, "invoice.created").await;
        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        assert_eq!(log[0]["status"], json!("failed"));
        assert_eq!(log[0]["error"], json!("timeout"));
        assert_eq!(ts(&log[0]["next_attempt_at"]) - ts(&log[0]["attempted_at"]), Duration::seconds(5));
    }

    async fn redeliver_recover_and_send_test(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &["invoice.paid"]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        let secret = endpoint["secret"].as_str().unwrap();

        let test = app
            .post(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}/send-test"), &app.app_token, &Value::Null)
            .await;
        assert_eq!(test.status, StatusCode::ACCEPTED, "{}", test.text);
        app.eventually("test delivery", || async { receiver.count() >= 1 }).await;
        let hit = receiver.hits()[0].clone();
        assert_eq!(hit.json()["type"], json!("webhook.test"));
        assert_eq!(hit.header("webhook-id"), test.body["event_uuid"].as_str().unwrap());
        assert!(verify_with_reference(secret, &hit));

        let since = app.clock.now();
        let paid = emit(&app, None, "invoice.paid").await;
        emit(&app, None, "invoice.created").await; // not subscribed
        app.eventually("paid delivery", || async { receiver.count() >= 2 }).await;

        let again = app
            .post(&format!("/v1/app/events/{paid}/redeliver"), &app.app_token, &Value::Null)
            .await;
        assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.text);
        assert_eq!(again.body["scheduled"], json!(1));
        app.eventually("redelivery", || async { receiver.count() >= 3 }).await;
        assert_eq!(receiver.hits()[2].header("webhook-id"), paid.to_string());

        let recovered = app
            .post(
                &format!("/v1/app/webhook-endpoints/{endpoint_uuid}/recover"),
                &app.app_token,
                &json!({"since": (since - Duration::seconds(1)).to_rfc3339()}),
            )
            .await;
        assert_eq!(recovered.status, StatusCode::ACCEPTED, "{}", recovered.text);
        assert_eq!(recovered.body["scheduled"], json!(1), "only the subscribed event since then");
        app.eventually("recovery", || async { receiver.count() >= 4 }).await;

        let bad = app
            .post(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}/recover"), &app.app_token, &json!({}))
            .await;
        assert_eq!((bad.status, bad.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        let missing = app
            .post(&format!("/v1/app/events/{}/redeliver", Uuid::new_v4()), &app.app_token, &Value::Null)
            .await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        let log = deliveries(&app, endpoint_uuid).await;
        assert_eq!(log.len(), 4);
        assert!(log.iter().all(|d| d["status"] == json!("succeeded")));
    }
}

fn development(c: &mut server::config::Config) {
    // As a partner runs it on a laptop: nothing set, the service on localhost.
    c.webhooks.allow_private_targets = None;
}

both_engines! {
    async fn a_new_account_is_announced_as_account_created(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &["account.created"]).await;
        let account = app.create_simple_account("created@example.com").await;
        let listed = wait_deliveries(&app, endpoint["uuid"].as_str().unwrap(), 1).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        app.eventually("the event arrives", || async { receiver.count() > 0 }).await;
        let hit = &receiver.hits()[0];
        let body: Value = serde_json::from_slice(&hit.body).unwrap();
        assert_eq!(body["type"], "account.created");
        assert_eq!(body["data"]["account_uuid"], account["uuid"]);
        assert_eq!(body["data"]["account_number"], account["account_number"]);
        assert_eq!(body["data"].as_object().unwrap().len(), 2, "{body}");
        // Listed with the app's events too.
        let events = app.get("/v1/app/events?type=account.created&limit=10", &app.app_token).await;
        assert_eq!(events.status, StatusCode::OK, "{}", events.text);
        assert_eq!(events.body["data"].as_array().unwrap().len(), 1, "{}", events.text);
    }
}

both_engines! {
    with development;
    async fn a_sandbox_app_may_target_localhost_in_development_and_is_told_how_otherwise(app) {
        let r = app
            .post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": "http://localhost:9/hook"}))
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "the service runs on localhost: {}", r.text);
        // Where the operator says no (as a deployed service's default is: see the config's unit
        // test), the same URL is refused, and the error says how to allow it.
        let deployed = app
            .sibling(|c| c.webhooks.allow_private_targets = Some(false))
            .await;
        let r = deployed
            .post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": "http://localhost:9/hook"}))
            .await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "url_not_allowed"), "{}", r.text);
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("webhooks.allow_private_targets = true") && message.contains("SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS"), "{message}");
        // A live app never may.
        let (_, live) = app.live_app().await;
        let r = app
            .post("/v1/app/webhook-endpoints", &live, &json!({"url": "http://localhost:9/hook"}))
            .await;
        assert_eq!(r.code(), "url_not_allowed", "{}", r.text);
    }
}
