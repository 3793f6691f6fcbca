//! Abuse limits: failed authentications are limited per client address (429 with Retry-After),
//! and webhook endpoints never target link-local addresses (cloud metadata), nor loopback or
//! private networks unless the operator allows them — checked on the URL and again on the
//! addresses a delivery connects to.

use reqwest::StatusCode;
use serde_json::json;
use server::store::events::{insert_event, NewEvent};
use uuid::Uuid;

use crate::{helpers::TestApp, receiver::Receiver, webhooks::emit};

fn five_failures(c: &mut server::config::Config) {
    c.rate_limits.failed_auth_per_minute = 5;
}

fn no_private_targets(c: &mut server::config::Config) {
    c.webhooks.allow_private_targets = Some(false);
}

both_engines! {
    with five_failures;
    async fn failed_authentications_are_limited_per_address(app) {
        // No token at all is no guess: never counted.
        for _ in 0..8 {
            let r = app.send(reqwest::Method::GET, "/v1/app/accounts", None, None, &[]).await;
            assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_missing"), "{}", r.text);
        }
        // A guessing loop: five wrong tokens are answered 401...
        for i in 0..5 {
            let r = app.get("/v1/app/accounts", &format!("sk_test_guess{i:040}")).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
        }
        // ...then every request of the address is refused before its token is looked at.
        for path in ["/v1/app/accounts", "/v1/account"] {
            let r = app.get(path, "sk_test_guess_again").await;
            assert_eq!((r.status, r.code()), (StatusCode::TOO_MANY_REQUESTS, "rate_limited"), "{}", r.text);
            assert_eq!(r.body["error"]["type"], json!("rate_limit_error"), "{}", r.text);
            assert!(r.body["error"]["message"].as_str().unwrap().contains("failed authentications"));
            let wait: u64 = r.header("retry-after").parse().unwrap();
            assert!((1..=60).contains(&wait), "Retry-After {wait}");
        }
        let r = app.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "a valid token waits too: {}", r.text);
        // Another instance counts its own failures: the limit is per address and instance.
        let other = app.sibling(|_| {}).await;
        let r = other.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
}

both_engines! {
    async fn webhook_endpoints_never_target_link_local_addresses(app) {
        // Private targets are allowed here (as in every test, for the local receivers)...
        for url in [
            "http://169.254.169.254/latest/meta-data",
            "http://[fe80::1]/hook",
            "http://[::ffff:169.254.169.254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
        ] {
            let r = app.post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": url})).await;
            assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "url_not_allowed"), "{url}: {}", r.text);
            assert_eq!(r.body["error"]["param"], json!("url"));
        }
        // ...and loopback is fine.
        let r = app.post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": "http://127.0.0.1:9/hook"})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    }
}

/// An endpoint stored directly, past the API's URL check (as one created while the setting
/// was on would be).
async fn stored_endpoint(app: &TestApp, url: &str) -> Uuid {
    let uuid = Uuid::new_v4();
    let mut tx = app.state.db.begin().await.unwrap();
    server::store::webhooks::insert_endpoint(
        &mut tx,
        &server::store::webhooks::EndpointRow {
            uuid,
            app_uuid: app.app_uuid,
            url: url.to_owned(),
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
            created_at: app.clock.now(),
        },
    )
    .await
    .unwrap();
    insert_event(
        &mut tx,
        &NewEvent {
            app_uuid: app.app_uuid,
            account_uuid: None,
            kind: "invoice.paid",
            data: json!({}),
            created_at: app.clock.now(),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    uuid
}

both_engines! {
    with no_private_targets;
    async fn without_the_setting_sandbox_endpoints_stay_off_private_networks(app) {
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://localhost:8080/hook",
            "http://10.0.0.8/hook",
            "http://192.168.1.20/hook",
            "http://[::1]/hook",
            "http://169.254.169.254/latest",
        ] {
            let r = app.post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": url})).await;
            assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "url_not_allowed"), "{url}: {}", r.text);
        }
        let r = app.post("/v1/app/webhook-endpoints", &app.app_token, &json!({"url": "https://hooks.example.com/in"})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let public = r.body["uuid"].as_str().unwrap().to_owned();
        let r = app.delete(&format!("/v1/app/webhook-endpoints/{public}"), &app.app_token).await;
        assert!(r.status.is_success(), "{}", r.text);

        // At delivery time the addresses are checked again: an address in the URL, and the
        // addresses a name resolves to.
        let receiver = Receiver::start().await;
        let port = receiver.url.rsplit(':').next().unwrap().trim_end_matches("/hook").to_owned();
        for (url, error) in [
            (format!("http://127.0.0.1:{port}/hook"), "address not allowed"),
            (format!("http://localhost:{port}/hook"), "connection failed"),
        ] {
            let endpoint = stored_endpoint(&app, &url).await;
            let attempts = || async {
                server::store::webhooks::deliveries_of_endpoint(&app.state.db, endpoint, 10, 0)
                    .await
                    .unwrap()
            };
            app.eventually("an attempt", || async { !attempts().await.is_empty() }).await;
            let log = attempts().await;
            assert_eq!(log[0].status.as_str(), "failed", "{url}");
            assert_eq!(log[0].error.as_deref(), Some(error), "{url}");
        }
        assert_eq!(receiver.count(), 0, "a private address was reached");
        // With the setting on, the same receiver is reached.
        let mut app = app;
        app.workers.take().unwrap().kill();
        let allowed = app.sibling(|c| c.webhooks.allow_private_targets = Some(true)).await;
        crate::webhooks::create_endpoint(&allowed, &receiver.url, &[]).await;
        emit(&allowed, None, "invoice.paid").await;
        allowed.eventually("a delivery", || async { receiver.count() >= 1 }).await;
    }
}
