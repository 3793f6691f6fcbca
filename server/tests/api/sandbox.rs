//! Sandbox test clocks (`advance-clock`) and the e-mail outbox, kept in the database or sent
//! through a real SMTP server (Python's aiosmtpd, started by the test).

use std::time::Duration as StdDuration;

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::{json, Value};
use server::{
    domain::events::Event,
    mail::{self, Brand, NewEmail, Template},
};
use uuid::Uuid;

use crate::{
    helpers::TestApp,
    receiver::Receiver,
    webhooks::{create_endpoint, deliveries, emit, wait_deliveries},
};

fn ts(v: &Value) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc)
}

async fn queue_email(app: &TestApp, account_uuid: Uuid, to: &str) -> Uuid {
    schedule_email(app, account_uuid, to, None).await
}

/// A renewal reminder, sent at `send_at` on the account's clock (at once without), emitting
/// `location.renewal_email_sent` when it goes out.
async fn schedule_email(
    app: &TestApp,
    account_uuid: Uuid,
    to: &str,
    send_at: Option<chrono::DateTime<chrono::Utc>>,
) -> Uuid {
    let clock = app
        .state
        .clock
        .for_account(&app.state.db, account_uuid)
        .await
        .unwrap();
    let mut tx = app.state.db.begin().await.unwrap();
    let uuid = mail::queue(
        &mut tx,
        &clock,
        &NewEmail {
            app_uuid: app.app_uuid,
            account_uuid: Some(account_uuid),
            to,
            template: &Template::RenewalReminder {
                first_name: "Ana".to_owned(),
                contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
                days_left: 30,
                renewal_url: "https://renew.example/a?b=1".to_owned(),
                month_to_month: None,
                offer: None,
            },
            brand: &Brand {
                display_name: "Sunny Homes".to_owned(),
                primary_color: None,
                support_email: Some("help@sunny.example".to_owned()),
                ..Brand::default()
            },
            send_at,
            event_on_send: Some(Event::RenewalEmailSent {
                account_uuid,
                location_uuid: account_uuid,
                contract_end: chrono::NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
                days_left: 30,
            }),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    uuid
}

async fn emails(app: &TestApp, query: &str) -> Vec<Value> {
    let r = app
        .get(&format!("/v1/app/sandbox/emails{query}"), &app.app_token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

/// A local SMTP server (aiosmtpd) writing what it receives to a maildir.
struct SmtpServer {
    child: std::process::Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl SmtpServer {
    async fn start() -> SmtpServer {
        let port = crate::helpers::free_port();
        let dir = tempfile::tempdir().unwrap();
        let child = std::process::Command::new("python3")
            .args([
                "-m",
                "aiosmtpd",
                "-n",
                "-l",
                &format!("127.0.0.1:{port}"),
                "-c",
            ])
            .arg("aiosmtpd.handlers.Mailbox")
            .arg(dir.path().join("mail"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("python3 with aiosmtpd (pip install aiosmtpd)");
        let deadline = std::time::Instant::now() + StdDuration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "aiosmtpd did not start"
            );
            tokio::time::sleep(StdDuration::from_millis(50)).await;
        }
        SmtpServer { child, port, dir }
    }

    fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sub in ["new", "cur"] {
            if let Ok(entries) = std::fs::read_dir(self.dir.path().join("mail").join(sub)) {
                for e in entries.flatten() {
                    out.push(std::fs::read_to_string(e.path()).unwrap());
                }
            }
        }
        out
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

both_engines! {
    async fn advance_clock_runs_what_falls_due_in_order(app) {
        // How far the service clock stands from the system's (it starts at a chosen instant).
        let service_ahead = app.clock.now() - chrono::Utc::now();
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        let token = app.account_token(&account_uuid.to_string()).await;
        let url = Receiver::down_url().await;
        let endpoint = create_endpoint(&app, &url, &[]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();

        // An account's event: its delivery follows the account's clock.
        emit(&app, Some(account_uuid), "account.status_updated").await;
        let log = wait_deliveries(&app, endpoint_uuid, 1).await;
        let first = ts(&log[0]["attempted_at"]);

        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"days": 2})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["account"]["uuid"], json!(account_uuid.to_string()));
        let clock = ts(&r.body["clock"]);
        let drift = clock - app.clock.now() - Duration::days(2);
        assert!(drift.num_seconds().abs() < 5, "{drift}");
        assert!(r.body["events"].as_array().unwrap().is_empty());

        // Every retry ran inside the advance, in order, each at its instant of the account's
        // clock (the service clock did not move).
        let log = deliveries(&app, endpoint_uuid).await;
        assert_eq!(log.len(), 8, "{log:?}");
        let mut expected = first;
        for (i, step) in [0i64, 5, 300, 1_800, 7_200, 18_000, 36_000, 36_000].iter().enumerate() {
            expected += Duration::seconds(*step);
            let at = ts(&log[i]["attempted_at"]);
            assert_eq!(log[i]["attempt"], json!(i + 1));
            assert!((at - expected).num_seconds().abs() <= 2, "attempt {} at {at}, expected {expected}", i + 1);
        }

        // `to` moves the clock to an instant.
        let r = app
            .post("/v1/account/sandbox/advance-clock", &token, &json!({"to": (clock + Duration::hours(1)).to_rfc3339()}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // The account's clock keeps running after the move: a few milliseconds have passed.
        let late = ts(&r.body["clock"]) - (clock + Duration::hours(1));
        assert!(late >= Duration::zero() && late < Duration::seconds(2), "{late}");

        // Bad input: 400 and nothing moves.
        for body in [json!({}), json!({"days": 0}), json!({"days": 1, "to": clock.to_rfc3339()}),
                     json!({"to": clock.to_rfc3339()}), json!({"days": "x"})] {
            let bad = app.post("/v1/account/sandbox/advance-clock", &token, &body).await;
            assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{body}: {}", bad.text);
        }
        let clock_now = app.state.clock.for_account(&app.state.db, account_uuid).await.unwrap().now();
        assert!((clock_now - (clock + Duration::hours(1))).num_seconds().abs() < 5);
        // The service clock and other accounts did not move.
        assert!((app.clock.now() - chrono::Utc::now() - service_ahead).num_seconds().abs() < 5);
    }

    async fn advance_clock_sends_scheduled_emails_and_reports_their_events(app) {
        let receiver = Receiver::start().await;
        let endpoint = create_endpoint(&app, &receiver.url, &["location.renewal_email_sent"]).await;
        let endpoint_uuid = endpoint["uuid"].as_str().unwrap();
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        let token = app.account_token(&account_uuid.to_string()).await;
        let due = app.clock.now() + Duration::days(30);
        schedule_email(&app, account_uuid, "ana@example.com", Some(due)).await;
        schedule_email(&app, account_uuid, "ana@example.com", Some(due + Duration::days(30))).await;
        tokio::time::sleep(StdDuration::from_millis(200)).await;
        assert_eq!(emails(&app, "").await[0]["status"], json!("queued"), "not due yet");

        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"days": 31})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let events = r.body["events"].as_array().unwrap();
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["type"], json!("location.renewal_email_sent"));
        assert!((ts(&events[0]["created_at"]) - due).num_seconds().abs() <= 2);
        // Its webhook went out inside the advance too.
        let log = deliveries(&app, endpoint_uuid).await;
        assert_eq!(log.len(), 1);
        assert_eq!(log[0]["event_uuid"], events[0]["uuid"]);
        assert_eq!(receiver.count(), 1);
        let list = emails(&app, "").await;
        let sent: Vec<_> = list.iter().filter(|e| e["status"] == json!("stored")).collect();
        assert_eq!(sent.len(), 1);
        assert!((ts(&sent[0]["sent_at"]) - due).num_seconds().abs() <= 2);

        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"days": 30})).await;
        assert_eq!(r.body["events"].as_array().unwrap().len(), 1);
        assert!(emails(&app, "").await.iter().all(|e| e["status"] == json!("stored")));
    }

    async fn sandbox_routes_refuse_live_apps(app) {
        let (_, live) = app.live_app().await;
        let r = app
            .post("/v1/app/accounts", &live, &json!({"email": "a@example.com", "first_name": "A", "last_name": "B"}))
            .await;
        let account_uuid = r.body["uuid"].as_str().unwrap().to_owned();
        let t = app.post(&format!("/v1/app/accounts/{account_uuid}/token"), &live, &Value::Null).await;
        let token = t.body["token"].as_str().unwrap().to_owned();
        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"days": 1})).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "sandbox_only"));
        let r = app.post("/v1/account/sandbox/delete-enrollment", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "sandbox_only"));
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "sandbox_only"));
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["status"], "not_enrolled", "{}", me.text);
        assert_eq!(me.body["locations"], json!([]));
        let r = app.get("/v1/app/sandbox/emails", &live).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "sandbox_only"));
    }

    async fn emails_are_kept_without_smtp(app) {
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        let uuid = queue_email(&app, account_uuid, "ana@example.com").await;
        app.eventually("stored", || async {
            emails(&app, "").await.first().is_some_and(|e| e["status"] == json!("stored"))
        }).await;
        let list = emails(&app, &format!("?account_uuid={account_uuid}")).await;
        assert_eq!(list.len(), 1);
        let e = &list[0];
        assert_eq!(e["uuid"], json!(uuid.to_string()));
        assert_eq!(e["template"], json!("renewal_reminder"));
        assert_eq!(e["to"], json!("ana@example.com"));
        assert_eq!(e["subject"], json!("Your electricity plan ends in 30 days"));
        assert!(e["text"].as_str().unwrap().contains("https://renew.example/a?b=1"));
        assert!(e["html"].as_str().unwrap().contains("https://renew.example/a?b=1".replace('&', "&amp;").as_str()));
        assert!(e["sent_at"].is_string());
        assert!(emails(&app, &format!("?account_uuid={}", Uuid::new_v4())).await.is_empty());
    }

    async fn emails_go_out_through_smtp(app) {
        let smtp = SmtpServer::start().await;
        let port = smtp.port;
        let app = TestApp::spawn_with(app.engine(), |c| {
            c.smtp_url = Some(server::config::Secret::new(format!("smtp://127.0.0.1:{port}")));
        }).await;
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        queue_email(&app, account_uuid, "ana@example.com").await;
        app.eventually("sent", || async {
            emails(&app, "").await.first().is_some_and(|e| e["status"] == json!("sent"))
        }).await;
        let messages = smtp.messages();
        assert_eq!(messages.len(), 1);
        let m = &messages[0];
        assert!(m.contains("Subject: Your electricity plan ends in 30 days"), "{m}");
        assert!(m.contains("To: ana@example.com"), "{m}");
        assert!(m.contains("text/plain") && m.contains("text/html"), "{m}");
    }

    async fn emails_retry_while_smtp_is_down(app) {
        let port = crate::helpers::free_port();
        let app = TestApp::spawn_with(app.engine(), |c| {
            c.smtp_url = Some(server::config::Secret::new(format!("smtp://127.0.0.1:{port}")));
        }).await;
        let account = app.create_simple_account("ana@example.com").await;
        let account_uuid: Uuid = account["uuid"].as_str().unwrap().parse().unwrap();
        let uuid = queue_email(&app, account_uuid, "ana@example.com").await;
        // One attempt is made; it fails (nothing listens) and says why, and the e-mail waits
        // for its retry: still queued, not lost.
        let email = || async {
            server::store::emails::email_by_uuid(&app.state.db, uuid).await.unwrap().unwrap()
        };
        app.eventually("a failed attempt", || async { email().await.error.is_some() }).await;
        let failed = email().await;
        assert_eq!(failed.status.as_str(), "queued");
        let error = failed.error.unwrap();
        assert!(error.starts_with("SMTP failed: "), "{error}");
        assert!(failed.sent_at.is_none());
        assert_eq!(emails(&app, "").await[0]["status"], json!("queued"));
        let job = app
            .query_texts(
                "SELECT state || ' ' || CAST(attempts AS TEXT) || ' ' || COALESCE(last_error, '') \
                 FROM jobs WHERE kind = 'email.send'",
            )
            .await;
        assert_eq!(job.len(), 1, "{job:?}");
        let job = job[0].clone().unwrap();
        let (state, rest) = job.split_once(' ').unwrap();
        let (attempts, last_error) = rest.split_once(' ').unwrap();
        assert!(state == "queued" || state == "running", "{job}");
        assert!(attempts.parse::<i64>().unwrap() >= 1, "{job}");
        assert_eq!(last_error, "SMTP failed", "{job}");
        assert_eq!(server::store::jobs::count_by_state(&app.state.db, "failed").await.unwrap(), 0);
        assert_eq!(server::store::jobs::count_by_state(&app.state.db, "done").await.unwrap(), 0);
    }
}
