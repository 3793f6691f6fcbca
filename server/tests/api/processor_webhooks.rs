//! A live app's payments after the charge, against the card processor's stand-in: Pay now
//! charges through it with an idempotency key; its webhooks (signature-checked with the app's
//! secret, each event once) reconcile a payment that later failed, was refunded or disputed;
//! the operator refunds in part and in full from the dashboard, audited.

use chrono::Duration;
use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use server::{
    domain::{billing::InvoiceStatus, users::Role},
    store::billing::{InvoiceRow, MeterReadRow},
};
use sha2::Sha256;
use uuid::Uuid;

use crate::{
    dashboard::signed_in,
    enrollment::{accept, first_plan, with_meters, HOUSE},
    helpers::{TestApp, TestResponse},
    live_payments::{account_of, confirm_in_browser, live_on_stand_in},
    payments::session,
};

const WEBHOOK_SECRET: &str = "whsec_standInSigningSecret0123";

/// The processor's signature of `body` made `at` (unix seconds) with `secret`.
fn sign(at: i64, body: &str, secret: &str) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{at}.{body}").as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={at},v1={hex}")
}

async fn deliver(server: &TestApp, app_uuid: Uuid, body: &str, signature: &str) -> TestResponse {
    let r = server
        .client
        .post(server.url(&format!("/processor/webhooks/{app_uuid}")))
        .header("content-type", "application/json")
        .header("stripe-signature", signature)
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    TestApp::read(r).await
}

/// An event of the processor about the payment `pi`, signed now with our secret.
async fn processor_says(
    server: &TestApp,
    app_uuid: Uuid,
    kind: &str,
    object: Value,
) -> (String, TestResponse) {
    let body = json!({"id": format!("evt_{}", Uuid::new_v4().simple()), "type": kind, "data": {"object": object}}).to_string();
    let r = deliver(
        server,
        app_uuid,
        &body,
        &sign(chrono::Utc::now().timestamp(), &body, WEBHOOK_SECRET),
    )
    .await;
    (body, r)
}

/// An issued invoice of `total_cents` for the account's location (as the billing cycle makes).
async fn open_invoice(
    app: &TestApp,
    app_uuid: Uuid,
    account: Uuid,
    location: Uuid,
    total_cents: i64,
) -> InvoiceRow {
    let now = app.clock.now();
    let today = server::domain::market::market_date(now);
    let read = MeterReadRow {
        uuid: Uuid::new_v4(),
        location_uuid: location,
        read_date: today,
        start_date: today - Duration::days(30),
        end_date: today,
        kwh: "1000".into(),
        generation_kwh: "0".into(),
        read_type: "actual".into(),
        created_at: now,
    };
    let invoice = InvoiceRow {
        uuid: Uuid::new_v4(),
        number: format!("INV-{}", &Uuid::new_v4().simple().to_string()[..8]),
        app_uuid,
        account_uuid: account,
        location_uuid: location,
        meter_read_uuid: read.uuid,
        invoice_date: today,
        payment_due_date: today + Duration::days(20),
        billing_period_start: read.start_date,
        billing_period_end: today,
        total_cents,
        total_kwh: "1000".into(),
        generation_kwh: "0".into(),
        charges: "[]".into(),
        status: InvoiceStatus::Open,
        paid_at: None,
        voided_at: None,
        created_at: now,
        updated_at: now,
    };
    let mut tx = app.state.db.begin().await.unwrap();
    assert!(server::store::billing::insert_meter_read(&mut tx, &read)
        .await
        .unwrap());
    server::store::billing::insert_invoice(&mut tx, &invoice)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    invoice
}

async fn event_types(app: &TestApp, account: Uuid) -> Vec<String> {
    server::store::events::events_of_account(&app.state.db, account)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

fn count(types: &[String], kind: &str) -> usize {
    types.iter().filter(|t| *t == kind).count()
}

both_engines! {
    async fn a_live_payment_is_reconciled_from_the_processors_webhooks_and_refunded_by_the_operator(app) {
        with_meters(&app).await;
        let (base, server, live_uuid, live_token, publishable) = live_on_stand_in(&app).await;
        server::admin::set_payment_webhook_secret(&app.state.db, &app.state.pii, live_uuid, WEBHOOK_SECRET).await.unwrap();
        // The stand-in sends its own events (signed with the same secret) to our endpoint too.
        let hook = reqwest::Client::new()
            .post(format!("{base}/_config/webhooks/{}", Uuid::new_v4().simple()))
            .form(&[("url", server.url(&format!("/processor/webhooks/{live_uuid}"))), ("secret", WEBHOOK_SECRET.to_owned())])
            .send()
            .await
            .unwrap();
        assert!(hook.status().is_success(), "{}", hook.status());

        let (account, token) = account_of(&server, &live_token, "reconciled@example.com").await;
        let confirmed = server.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.text);
        let plan = first_plan(&server, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let accepted = accept(&server, &token, &plan, HOUSE, &start).await;
        assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.text);
        let (pk, secret) = session(&server, &token).await;
        assert_eq!(pk, publishable);
        let pm = confirm_in_browser(&base, &pk, &secret, "4242424242424242").await["payment_method"].as_str().unwrap().to_owned();
        let added = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        let location: Uuid = server.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().parse().unwrap();
        let invoice = open_invoice(&app, live_uuid, account, location, 10_000).await;

        // Pay now: charged off-session through the processor, with an idempotency key.
        let paid = server.post(&format!("/v1/account/billing/invoices/{}/pay", invoice.number), &token, &Value::Null).await;
        assert_eq!(paid.status, StatusCode::OK, "{}", paid.text);
        let payments = server::store::billing::payments_of_invoice(&app.state.db, invoice.uuid).await.unwrap();
        assert_eq!(payments.len(), 1);
        let pi = payments[0].processor_payment_id.clone().unwrap();
        assert!(pi.starts_with("pi_"), "{pi}");
        let intent: Value = reqwest::Client::new().get(format!("{base}/v1/payment_intents/{pi}")).bearer_auth(format!("sk_test_{}", &publishable["pk_test_".len()..])).send().await.unwrap().json().await.unwrap();
        assert_eq!((intent["status"].as_str(), intent["amount"].as_i64()), (Some("succeeded"), Some(10_000)), "{intent}");

        // The stand-in's own payment_intent.succeeded arrives, is trusted and changes nothing.
        app.eventually("the stand-in's event is handled", || async {
            server::store::payments::processor_events_handled(&app.state.db, live_uuid, "payment_intent.succeeded").await.unwrap() >= 1
        }).await;
        assert_eq!(count(&event_types(&app, account).await, "account.payment_successful"), 1);

        // Forged, wrongly signed or stale deliveries are refused and change nothing.
        let body = json!({"id": "evt_forged", "type": "payment_intent.payment_failed", "data": {"object": {"id": pi}}}).to_string();
        let now = chrono::Utc::now().timestamp();
        for signature in [sign(now, &body, "whsec_wrong"), sign(now - 600, &body, WEBHOOK_SECRET), "t=1,v1=00".to_owned(), String::new()] {
            let r = deliver(&server, live_uuid, &body, &signature).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{signature}: {}", r.text);
        }
        let unsigned = server.send(Method::POST, &format!("/processor/webhooks/{live_uuid}"), None, Some(&json!({"id": "evt_x"})), &[]).await;
        assert_eq!(unsigned.status, StatusCode::BAD_REQUEST, "{}", unsigned.text);
        // Another app's id (a sandbox app, or one unknown) is no endpoint.
        for other in [app.app_uuid, Uuid::new_v4()] {
            let r = deliver(&server, other, &body, &sign(now, &body, WEBHOOK_SECRET)).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        }
        assert_eq!(server::store::billing::invoice(&app.state.db, invoice.uuid).await.unwrap().unwrap().status, InvoiceStatus::Paid);

        // The operator refunds part of it from the dashboard; the processor refunds it.
        let operator = signed_in(&server, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/accounts/{account}");
        let payment = payments[0].uuid;
        let refund_path = format!("{page}/payments/{payment}/refund");
        for bad in ["0", "100.01", "abc", "-5"] {
            let r = operator.submit(&page, &refund_path, &[("amount", bad), ("reason", "x")]).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.text);
        }
        let r = operator.submit(&page, &refund_path, &[("amount", "25.50"), ("reason", "Billing error on the meter read")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let refunds: Value = reqwest::Client::new().get(format!("{base}/v1/refunds?payment_intent={pi}")).bearer_auth(format!("sk_test_{}", &publishable["pk_test_".len()..])).send().await.unwrap().json().await.unwrap();
        assert_eq!(refunds["data"][0]["amount"], 2550, "{refunds}");
        let row = server::store::billing::payment_of_account(&app.state.db, account, payment).await.unwrap().unwrap();
        assert_eq!(row.refunded_cents, 2550);
        let events = server::store::events::events_of_account(&app.state.db, account).await.unwrap();
        let refunded = events.iter().find(|e| e.kind == "account.payment_refunded").unwrap();
        let data: Value = serde_json::from_str(&refunded.data).unwrap();
        assert_eq!((data["amount_cents"].as_i64(), data["refunded_cents"].as_i64(), data["source"].as_str()), (Some(2550), Some(2550), Some("operator")));
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        let entry = audit.iter().find(|e| e.action == "payment.refunded").unwrap();
        assert_eq!(entry.actor, "ops@example.com");
        assert!(entry.detail.contains("Billing error on the meter read"), "{}", entry.detail);
        // The page shows it, with what is left to refund.
        let shown = operator.get(&page).await;
        assert!(shown.text.contains("$25.50 refunded"), "{}", shown.text);
        assert!(shown.text.contains("up to $74.50"), "{}", shown.text);
        // A partner member may not refund.
        let partner = signed_in(&server, "pat@partner.example", Role::Partner, Some("Partner Co")).await;
        let r = partner.submit("/dashboard", &refund_path, &[("amount", "1")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // The processor reports the rest refunded at its end (charge.refunded, in all $100).
        let (body, r) = processor_says(&server, live_uuid, "charge.refunded", json!({"id": "ch_x", "payment_intent": pi, "amount_refunded": 10_000})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body, json!({"received": true, "duplicate": false}));
        let row = server::store::billing::payment_of_account(&app.state.db, account, payment).await.unwrap().unwrap();
        assert_eq!(row.refunded_cents, 10_000);
        // The same delivery again (a replay within the window) changes nothing.
        let again = deliver(&server, live_uuid, &body, &sign(chrono::Utc::now().timestamp(), &body, WEBHOOK_SECRET)).await;
        assert_eq!(again.body, json!({"received": true, "duplicate": true}), "{}", again.text);
        let types = event_types(&app, account).await;
        assert_eq!(count(&types, "account.payment_refunded"), 2, "{types:?}");
        // The customer's app sees both refunds on the invoice's payment.
        let shown = server.get(&format!("/v1/account/billing/invoices/{}", invoice.number), &token).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        let paid = &shown.body["payments"][0];
        assert_eq!(paid["refunded_cents"], 10_000, "{paid}");
        let amounts: Vec<i64> = paid["refunds"].as_array().unwrap().iter().map(|r| r["amount_cents"].as_i64().unwrap()).collect();
        assert_eq!(amounts, [2550, 7450], "{paid}");
        assert!(paid["disputed_at"].is_null(), "{paid}");
        // Nothing is left to refund.
        let r = operator.submit(&page, &refund_path, &[("amount", "")]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);

        // A dispute, once.
        for _ in 0..2 {
            let (_, r) = processor_says(&server, live_uuid, "charge.dispute.created", json!({"id": "dp_1", "payment_intent": pi, "amount": 10_000})).await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        }
        assert_eq!(count(&event_types(&app, account).await, "account.payment_disputed"), 1);
        let shown = server.get(&format!("/v1/account/billing/invoices/{}", invoice.number), &token).await;
        assert!(shown.body["payments"][0]["disputed_at"].is_string(), "{}", shown.text);

        // A payment the processor fails after all: the invoice is owed again and the customer
        // hears of it.
        let before = count(&event_types(&app, account).await, "account.payment_failed");
        let (_, r) = processor_says(&server, live_uuid, "payment_intent.payment_failed", json!({"id": pi, "last_payment_error": {"code": "card_declined", "decline_code": "insufficient_funds"}})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let types = event_types(&app, account).await;
        assert_eq!(count(&types, "account.payment_failed"), before + 1, "{types:?}");
        let row = server::store::billing::payment_of_account(&app.state.db, account, payment).await.unwrap().unwrap();
        assert_eq!((row.status.to_string(), row.failure_code.as_deref()), ("failed".to_owned(), Some("insufficient_funds")));
        assert_eq!(server::store::billing::invoice(&app.state.db, invoice.uuid).await.unwrap().unwrap().status, InvoiceStatus::Open);
        // Events of payments that are not the app's are received and ignored.
        let (_, r) = processor_says(&server, live_uuid, "payment_intent.succeeded", json!({"id": "pi_someoneElse"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // The processor says it succeeded after all (the customer completed the card's check):
        // paid again.
        let (_, r) = processor_says(&server, live_uuid, "payment_intent.succeeded", json!({"id": pi})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(server::store::billing::invoice(&app.state.db, invoice.uuid).await.unwrap().unwrap().status, InvoiceStatus::Paid);
        assert_eq!(count(&event_types(&app, account).await, "account.payment_successful"), 2);
    }
}

both_engines! {
    async fn the_operator_sets_the_processors_webhook_signing_secret_in_the_dashboard(app) {
        let (live_uuid, _) = app.live_app().await;
        let operator = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = format!("/dashboard/apps/{live_uuid}");
        let action = format!("{page}/payment-webhook-secret");
        let body = json!({"id": "evt_dash", "type": "payment_intent.succeeded", "data": {"object": {"id": "pi_none"}}}).to_string();
        let signed = || sign(chrono::Utc::now().timestamp(), &body, WEBHOOK_SECRET);

        // Missing: the page says so and where the processor's events go; they are refused.
        let shown = operator.get(&page).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        assert!(shown.text.contains("Signing secret: not set"), "{}", shown.text);
        assert!(shown.text.contains(&format!("/processor/webhooks/{live_uuid}")), "{}", shown.text);
        assert_eq!(deliver(&app, live_uuid, &body, &signed()).await.status, StatusCode::NOT_FOUND);

        // Not a signing secret: refused, and nothing is set.
        for bad in ["", "sk_live_0123456789abcdefghij", "whsec_short", "whsec_with spaces in the middle"] {
            let r = operator.submit(&page, &action, &[("webhook_secret", bad)]).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {}", r.text);
            assert!(bad.is_empty() || !r.text.contains(bad), "the page repeats the secret");
        }
        assert_eq!(deliver(&app, live_uuid, &body, &signed()).await.status, StatusCode::NOT_FOUND);

        // A partner member may not set it.
        let partner = signed_in(&app, "pat@partner.example", Role::Partner, Some("Partner Co")).await;
        let r = partner.submit("/dashboard", &action, &[("webhook_secret", WEBHOOK_SECRET)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        assert_eq!(deliver(&app, live_uuid, &body, &signed()).await.status, StatusCode::NOT_FOUND);

        // Set: shown as set (never its value), audited, and the processor's events are trusted.
        let r = operator.submit(&page, &action, &[("webhook_secret", WEBHOOK_SECRET)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        let shown = operator.get(&page).await;
        assert!(shown.text.contains("Signing secret: set"), "{}", shown.text);
        assert!(!shown.text.contains(WEBHOOK_SECRET), "the page shows the secret");
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        let entry = audit.iter().find(|e| e.action == "app.payment_webhook_secret_set").unwrap();
        assert_eq!(entry.actor, "ops@example.com");
        assert!(!entry.detail.contains(WEBHOOK_SECRET));
        let r = deliver(&app, live_uuid, &body, &signed()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);

        // A sandbox app has no such secret to set.
        let sandbox = format!("/dashboard/apps/{}/payment-webhook-secret", app.app_uuid);
        let r = operator.submit(&format!("/dashboard/apps/{}", app.app_uuid), &sandbox, &[("webhook_secret", WEBHOOK_SECRET)]).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    }
}

/// What the stand-in's script does when the customer completes their bank's check of the
/// payment `pi` (its `confirmCardPayment`, after its own confirmation dialog).
async fn bank_confirms(base: &str, publishable: &str, pi: &str, client_secret: &str) -> Value {
    reqwest::Client::new()
        .post(format!(
            "{base}/v1/payment_intents/{pi}/_authenticate?success=true"
        ))
        .body(json!({"key": publishable, "client_secret": client_secret}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

both_engines! {
    async fn a_payment_the_bank_wants_confirmed_is_e_mailed_confirmed_on_its_page_and_settled_by_the_webhook(app) {
        with_meters(&app).await;
        let (base, server, live_uuid, live_token, publishable) = live_on_stand_in(&app).await;
        server::admin::set_payment_webhook_secret(&app.state.db, &app.state.pii, live_uuid, WEBHOOK_SECRET).await.unwrap();
        let hook = reqwest::Client::new()
            .post(format!("{base}/_config/webhooks/{}", Uuid::new_v4().simple()))
            .form(&[("url", server.url(&format!("/processor/webhooks/{live_uuid}"))), ("secret", WEBHOOK_SECRET.to_owned())])
            .send()
            .await
            .unwrap();
        assert!(hook.status().is_success(), "{}", hook.status());

        // A card whose bank checks each payment (the processor's test card ending 3155), saved
        // after the customer's check of the card itself.
        let (account, token) = account_of(&server, &live_token, "sca@example.com").await;
        let confirmed = server.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.text);
        let plan = first_plan(&server, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let accepted = accept(&server, &token, &plan, HOUSE, &start).await;
        assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.text);
        let (pk, secret) = session(&server, &token).await;
        assert_eq!(pk, publishable);
        let first = confirm_in_browser(&base, &pk, &secret, "4000002500003155").await;
        assert_eq!(first["status"], "requires_action", "{first}");
        let seti = secret.split("_secret_").next().unwrap();
        let checked: Value = reqwest::Client::new()
            .post(format!("{base}/v1/setup_intents/{seti}/confirm"))
            .body(json!({"key": pk, "use_stripe_sdk": true, "client_secret": secret}).to_string())
            .send().await.unwrap().json().await.unwrap();
        assert_eq!(checked["status"], "succeeded", "{checked}");
        let pm = first["payment_method"].as_str().unwrap().to_owned();
        let added = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        let location: Uuid = server.get("/v1/account", &token).await.body["locations"][0]["uuid"].as_str().unwrap().parse().unwrap();
        let invoice = open_invoice(&app, live_uuid, account, location, 8_000).await;

        // Charged off-session, the bank asks for the customer: not paid, said so, and e-mailed.
        let paid = server.post(&format!("/v1/account/billing/invoices/{}/pay", invoice.number), &token, &Value::Null).await;
        assert_eq!((paid.status, paid.code()), (StatusCode::PAYMENT_REQUIRED, "card_declined"), "{}", paid.text);
        assert_eq!(paid.body["error"]["decline_code"], "authentication_required", "{}", paid.text);
        let payments = server::store::billing::payments_of_invoice(&app.state.db, invoice.uuid).await.unwrap();
        assert_eq!(payments.len(), 1);
        let pi = payments[0].processor_payment_id.clone().expect("the waiting payment's id is kept");
        assert_eq!(server::store::billing::invoice(&app.state.db, invoice.uuid).await.unwrap().unwrap().status, InvoiceStatus::Open);
        let types = event_types(&app, account).await;
        assert_eq!(count(&types, "account.payment_failed"), 1, "{types:?}");
        let mails = server::store::emails::emails_of_app(&app.state.db, live_uuid, Some(account), 50, 0).await.unwrap();
        let mail = mails.iter().find(|m| m.template == "authenticate_payment").expect("the e-mail asking to confirm");
        assert!(!mails.iter().any(|m| m.template == "payment_failed"), "not the change-your-card e-mail");
        assert!(mail.text_body.contains("$80.00") && mail.text_body.contains(&invoice.number), "{}", mail.text_body);
        let link = mail.text_body.split_whitespace().find(|w| w.contains("/hosted/link?token=")).unwrap().to_owned();

        // The link opens the page (once, with a click), which loads the processor's script and
        // hands its component the payment's client secret, and nothing else runs there.
        let mut browser = crate::hosted::Browser::new(&server);
        let shown = browser.get(&link).await;
        assert!(shown.text.contains("Confirm the payment"), "{}", shown.text);
        let token_param = link.split("token=").nth(1).unwrap();
        let opened = browser.post("/hosted/link", &[("csrf", &shown.csrf()), ("token", token_param)]).await;
        assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.text);
        assert_eq!(opened.location(), "/hosted/authenticate");
        let page = browser.get("/hosted/authenticate").await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.testid("authenticate-button"), "{}", page.text);
        let client_secret = page.text.split("data-client-secret=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
        assert!(client_secret.starts_with(&format!("{pi}_secret_")), "{client_secret}");
        assert!(page.text.contains(&format!("<script src=\"{base}/js.stripe.com/v3/\">")), "{}", page.text);
        let csp = page.headers.get("content-security-policy").unwrap().to_str().unwrap().to_owned();
        assert!(csp.contains(&format!("script-src 'self' {base}")) && csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        let script = browser.get("/portal/assets/authenticate.js").await;
        assert!(script.text.contains("confirmCardPayment"), "{}", script.text);

        // The customer completes the bank's check; the processor's webhook settles the bill.
        let done = bank_confirms(&base, &pk, &pi, &client_secret).await;
        assert_eq!(done["status"], "succeeded", "{done}");
        app.eventually("the processor's webhook settles the bill", || async {
            server::store::billing::invoice(&app.state.db, invoice.uuid).await.unwrap().unwrap().status == InvoiceStatus::Paid
        }).await;
        let row = server::store::billing::payment_of_account(&app.state.db, account, payments[0].uuid).await.unwrap().unwrap();
        assert_eq!(row.status.to_string(), "succeeded");
        let types = event_types(&app, account).await;
        assert_eq!((count(&types, "account.payment_successful"), count(&types, "invoice.paid")), (1, 1), "{types:?}");
        // Nothing is left to confirm on the page.
        let after = browser.get("/hosted/authenticate").await;
        assert!(after.testid("authenticate-settled") && after.text.contains("went through"), "{}", after.text);
    }
}

/// The e-mail templates sent to an account of the live app.
async fn templates_of(app: &TestApp, app_uuid: Uuid, account: Uuid) -> Vec<String> {
    server::store::emails::emails_of_app(&app.state.db, app_uuid, Some(account), 100, 0)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.template)
        .collect()
}

both_engines! {
    async fn a_card_the_processor_saved_is_the_accounts_even_when_the_flow_never_said_so(app) {
        let (base, server, live_uuid, live_token, publishable) = live_on_stand_in(&app).await;
        server::admin::set_payment_webhook_secret(&app.state.db, &app.state.pii, live_uuid, WEBHOOK_SECRET).await.unwrap();
        let (account, token) = account_of(&server, &live_token, "closed-early@example.com").await;
        let customer = || async {
            server::store::payments::processor_customer(&app.state.db, live_uuid, account).await.unwrap().unwrap()
        };

        // The customer saves a card in the processor's component, and the flow closes before it
        // tells us: the processor's setup_intent.succeeded attaches it.
        let (pk, secret) = session(&server, &token).await;
        assert_eq!(pk, publishable);
        let first = confirm_in_browser(&base, &pk, &secret, "4242424242424242").await["payment_method"].as_str().unwrap().to_owned();
        let seti = secret.split("_secret_").next().unwrap();
        let object = json!({"id": seti, "customer": customer().await, "payment_method": first, "status": "succeeded"});
        let (body, r) = processor_says(&server, live_uuid, "setup_intent.succeeded", object).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let card = server::store::payments::current_payment_method(&app.state.db, account).await.unwrap();
        assert!(card.as_ref().is_some_and(|c| c.id == first && c.last4 == "4242"), "{card:?}");
        assert_eq!(count(&event_types(&app, account).await, "account.payment_method_added"), 1);
        // A first card is no change: no notice.
        assert!(!templates_of(&app, live_uuid, account).await.contains(&"card_changed".to_owned()));
        // The same event again changes nothing.
        let again = deliver(&server, live_uuid, &body, &sign(chrono::Utc::now().timestamp(), &body, WEBHOOK_SECRET)).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.text);
        assert_eq!(count(&event_types(&app, account).await, "account.payment_method_added"), 1);

        // A second card saved the same way replaces it, and the customer is told.
        let (_, secret) = session(&server, &token).await;
        let second = confirm_in_browser(&base, &pk, &secret, "5555555555554444").await["payment_method"].as_str().unwrap().to_owned();
        let seti = secret.split("_secret_").next().unwrap();
        let object = json!({"id": seti, "customer": customer().await, "payment_method": second, "status": "succeeded"});
        let (_, r) = processor_says(&server, live_uuid, "setup_intent.succeeded", object).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let card = server::store::payments::current_payment_method(&app.state.db, account).await.unwrap();
        assert!(card.as_ref().is_some_and(|c| c.id == second && c.last4 == "4444"), "{card:?}");
        assert_eq!(count(&templates_of(&app, live_uuid, account).await, "card_changed"), 1);
        // The flow telling us afterwards changes nothing more.
        let told = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": second})).await;
        assert_eq!(told.status, StatusCode::OK, "{}", told.text);
        assert_eq!(count(&templates_of(&app, live_uuid, account).await, "card_changed"), 1);

        // A customer of the processor that is none of ours, or a card that is not that
        // customer's, changes nothing.
        let object = json!({"id": "seti_x", "customer": "cus_someone_else", "payment_method": first});
        let (_, r) = processor_says(&server, live_uuid, "setup_intent.succeeded", object).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let object = json!({"id": "seti_y", "customer": customer().await, "payment_method": "pm_not_theirs"});
        let (_, r) = processor_says(&server, live_uuid, "setup_intent.succeeded", object).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let card = server::store::payments::current_payment_method(&app.state.db, account).await.unwrap();
        assert!(card.is_some_and(|c| c.id == second), "the card stays");
    }
}
