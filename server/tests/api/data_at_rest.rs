//! Data at rest: webhook signing secrets are stored sealed with the PII key (secrets stored in
//! clear before are sealed at start and keep signing), and finished work is deleted after its
//! retention, in batches.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::json;
use server::{
    domain::webhooks::{signature_header, WebhookSecret},
    store::webhooks::EndpointRow,
};
use uuid::Uuid;

use crate::{
    helpers::TestApp,
    receiver::{Hit, Receiver},
    webhooks::{create_endpoint, emit},
};

/// Whether `hit` is signed with `secret` (and nothing else).
fn signed_with(secret: &str, hit: &Hit) -> bool {
    let secret = WebhookSecret::parse(secret).unwrap();
    let timestamp: i64 = hit.header("webhook-timestamp").parse().unwrap();
    signature_header(&[&secret], hit.header("webhook-id"), timestamp, &hit.body)
        == hit.header("webhook-signature")
}

async fn stored_secret(app: &TestApp, endpoint: Uuid) -> String {
    server::store::webhooks::endpoint_by_uuid(&app.state.db, endpoint)
        .await
        .unwrap()
        .unwrap()
        .secret
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

both_engines! {
    async fn webhook_secrets_are_sealed_at_rest(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let secret = endpoint["secret"].as_str().unwrap().to_owned();
        assert!(secret.starts_with("whsec_"), "{endpoint}");
        let uuid: Uuid = endpoint["uuid"].as_str().unwrap().parse().unwrap();
        assert!(stored_secret(&app, uuid).await.starts_with("sealed:"));
        // The secret's key part appears nowhere in what the database holds.
        let key_part = secret.trim_start_matches("whsec_");
        assert!(!contains(&app.stored_bytes().await, key_part), "the secret is stored in clear");
        emit(&app, None, "invoice.paid").await;
        app.eventually("a delivery", || async { receiver.count() == 1 }).await;
        assert!(signed_with(&secret, &receiver.hits()[0]), "not signed with the secret shown");

        // A rotated secret is sealed too, and signs at once.
        let r = app.post(&format!("/v1/app/webhook-endpoints/{uuid}/rotate-secret"), &app.app_token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let rotated = r.body["secret"].as_str().unwrap().to_owned();
        assert_ne!(rotated, secret);
        assert!(!contains(&app.stored_bytes().await, rotated.trim_start_matches("whsec_")));
        emit(&app, None, "invoice.paid").await;
        app.eventually("a second delivery", || async { receiver.count() == 2 }).await;
        let signatures = receiver.hits()[1].header("webhook-signature").to_owned();
        assert_eq!(signatures.split(' ').count(), 2, "both secrets sign during the overlap");
    }

    async fn secrets_stored_in_clear_are_sealed_at_start_and_keep_signing(app) {
        let receiver = Receiver::start().await;
        // An endpoint as written before secrets were sealed.
        let secret = WebhookSecret::generate().expose().to_owned();
        let uuid = Uuid::new_v4();
        let mut tx = app.state.db.begin().await.unwrap();
        server::store::webhooks::insert_endpoint(&mut tx, &EndpointRow {
            uuid,
            app_uuid: app.app_uuid,
            url: receiver.url.clone(),
            event_types: "[]".to_owned(),
            description: None,
            secret: secret.clone(),
            previous_secret: None,
            previous_secret_expires_at: None,
            disabled: false,
            disabled_reason: None,
            failing_since: None,
            created_at: app.clock.now(),
        }).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(stored_secret(&app, uuid).await, secret);
        // Read as it is until the next start...
        emit(&app, None, "invoice.paid").await;
        app.eventually("a delivery", || async { receiver.count() == 1 }).await;
        assert!(signed_with(&secret, &receiver.hits()[0]));
        // ...which seals it; it signs the same.
        let restarted = app.sibling(|_| {}).await;
        let stored = stored_secret(&restarted, uuid).await;
        assert!(stored.starts_with("sealed:") && !stored.contains(&secret), "not sealed at start");
        emit(&restarted, None, "invoice.paid").await;
        restarted.eventually("a second delivery", || async { receiver.count() == 2 }).await;
        assert!(signed_with(&secret, &receiver.hits()[1]));
    }
}

fn quick_retention(c: &mut server::config::Config) {
    c.retention.interval_seconds = 1;
    c.retention.batch_size = 2;
    c.retention.jobs_days = 14;
    c.retention.webhook_deliveries_days = 30;
    c.retention.emails_days = 30;
}

async fn email(app: &TestApp, status: &str) -> Uuid {
    let uuid = Uuid::new_v4();
    let mut tx = app.state.db.begin().await.unwrap();
    server::store::emails::insert_email(
        &mut tx,
        &server::store::emails::EmailRow {
            uuid,
            app_uuid: Some(app.app_uuid),
            account_uuid: None,
            template: "notice".to_owned(),
            to_address: "ana@example.com".to_owned(),
            subject: "Hello".to_owned(),
            text_body: "Hello".to_owned(),
            html_body: "<p>Hello</p>".to_owned(),
            status: server::domain::emails::EmailStatus::parse(status).unwrap(),
            error: None,
            created_at: app.clock.now(),
            sent_at: None,
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    uuid
}

both_engines! {
    with quick_retention;
    async fn finished_work_is_deleted_after_its_retention(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &[]).await;
        let endpoint_uuid: Uuid = endpoint["uuid"].as_str().unwrap().parse().unwrap();
        for _ in 0..5 {
            emit(&app, None, "invoice.paid").await;
        }
        app.eventually("five deliveries", || async { receiver.count() == 5 }).await;
        app.eventually("five jobs done", || async {
            server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap() == 5
        }).await;
        let sent = email(&app, "stored").await;
        let waiting = email(&app, "queued").await;
        let deliveries = || async {
            server::store::webhooks::deliveries_of_endpoint(&app.state.db, endpoint_uuid, 100, 0)
                .await
                .unwrap()
                .len()
        };
        // Within their retention, everything stays.
        app.clock.advance(Duration::days(13));
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
        assert_eq!(server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap(), 5);
        assert_eq!(deliveries().await, 5);
        // Past the jobs' 14 days, finished jobs go (two at a time); the delivery log stays.
        app.clock.advance(Duration::days(2));
        app.eventually("finished jobs deleted", || async {
            server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap() == 0
        }).await;
        assert_eq!(deliveries().await, 5);
        assert!(server::store::emails::email_by_uuid(&app.state.db, sent).await.unwrap().is_some());
        // Past 30 days, the delivery log and the e-mails sent go; a queued e-mail stays.
        app.clock.advance(Duration::days(16));
        app.eventually("deliveries deleted", || async { deliveries().await == 0 }).await;
        app.eventually("sent e-mail deleted", || async {
            server::store::emails::email_by_uuid(&app.state.db, sent).await.unwrap().is_none()
        }).await;
        assert!(server::store::emails::email_by_uuid(&app.state.db, waiting).await.unwrap().is_some());
    }
}
