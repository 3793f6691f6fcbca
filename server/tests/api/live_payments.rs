//! Payment methods and charges of live apps through the real processor's REST API (a local
//! fake of it), and charges through the built-in test-mode processor.

use reqwest::StatusCode;
use serde_json::{json, Value};
use server::adapters::payments::{
    ChargeOutcome, ChargeRequest, PaymentProcessor, Processor, ProcessorError,
};
use uuid::Uuid;

use crate::{
    fake_processor::FakeProcessor,
    helpers::{captured_logs, TestApp},
    payments::{post_card, session},
};

const SECRET: &str = "sk_live_fakeSECRET0123456789";

const PUBLISHABLE: &str = "pk_live_fakePUBLIC0123456789";

/// The fake processor and a server of the same database that talks to it, with a live app
/// whose keys are set.
pub(crate) async fn live(app: &TestApp) -> (FakeProcessor, TestApp, Uuid, String) {
    let fake = FakeProcessor::start(SECRET).await;
    let base = fake.base.clone();
    let server = app
        .sibling(|c| c.payment_processor_api_base = Some(base))
        .await;
    let (live_uuid, live_token) = app.live_app().await;
    server::admin::set_payment_keys(
        &app.state.db,
        &app.state.pii,
        live_uuid,
        PUBLISHABLE,
        SECRET,
    )
    .await
    .unwrap();
    app.make_live_ready(live_uuid).await;
    (fake, server, live_uuid, live_token)
}

/// An account of the app of `app_token` and its AccountToken.
pub(crate) async fn account_of(app: &TestApp, app_token: &str, email: &str) -> (Uuid, String) {
    let r = app
        .post(
            "/v1/app/accounts",
            app_token,
            &json!({"email": email, "first_name": "Ana", "last_name": "Díaz"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let uuid = r.body["uuid"].as_str().unwrap().to_owned();
    let t = app
        .post(
            &format!("/v1/app/accounts/{uuid}/token"),
            app_token,
            &Value::Null,
        )
        .await;
    assert_eq!(t.status, StatusCode::OK, "{}", t.text);
    (
        uuid.parse().unwrap(),
        t.body["token"].as_str().unwrap().to_owned(),
    )
}

async fn processor(app: &TestApp, app_uuid: Uuid) -> Processor {
    let row = server::store::apps::app_by_uuid(&app.state.db, app_uuid)
        .await
        .unwrap()
        .unwrap();
    app.state.processor_for(&row).await.unwrap()
}

fn charge(account_uuid: Uuid, pm: &str, key: &str) -> ChargeRequest {
    ChargeRequest {
        account_uuid,
        payment_method_id: pm.to_owned(),
        amount_cents: 12_345,
        idempotency_key: key.to_owned(),
    }
}

both_engines! {
    async fn a_live_app_adds_a_card_through_the_real_processor(app) {
        let (fake, server, live_uuid, live_token) = live(&app).await;
        let (account, token) = account_of(&server, &live_token, "live@example.com").await;

        let (pk, secret) = session(&server, &token).await;
        assert_eq!(pk, PUBLISHABLE);
        assert!(secret.starts_with("seti_fake1_secret_"), "{secret}");
        let requests = fake.requests();
        assert_eq!(requests.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["/v1/customers", "/v1/setup_intents"]);
        assert!(requests.iter().all(|r| r.authorization == format!("Bearer {SECRET}")));
        assert_eq!(requests[1].params["customer"], "cus_fake1");
        assert_eq!(requests[1].params["usage"], "off_session");
        assert_eq!(requests[0].params["metadata[switchboard_account_uuid]"], account.to_string());
        let customer = server::store::payments::processor_customer(&app.state.db, live_uuid, account).await.unwrap();
        assert_eq!(customer.as_deref(), Some("cus_fake1"));

        // Live cards never go to the built-in test-mode processor.
        let r = post_card(&server, &pk, &secret, "4242424242424242").await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_invalid"), "{}", r.text);

        // The browser component confirms the card; the server reads it back and attaches it.
        let pm = fake.confirm_card(&secret, "4242424242424242");
        let added = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        assert_eq!(added.body, json!({"type": "card", "card_brand": "visa", "card_last4": "4242", "card_exp_month": 12, "card_exp_year": 2034, "card_postal_code": "75201"}));
        assert_eq!(server.get("/v1/account/billing/payment-method", &token).await.body, added.body);
        let events = server::store::events::events_of_account(&app.state.db, account).await.unwrap();
        let added_events: Vec<_> = events.iter().filter(|e| e.kind == "account.payment_method_added").collect();
        assert_eq!(added_events.len(), 1);
        assert!(server::store::payments::current_payment_method(&app.state.db, account).await.unwrap().is_some_and(|c| c.fingerprint == "fp4242" && c.id == pm));

        // A second session keeps the account's customer.
        let (_, secret2) = session(&server, &token).await;
        assert_ne!(secret2, secret);
        assert_eq!(fake.requests().iter().filter(|r| r.path == "/v1/customers").count(), 1);
        assert!(!added.text.contains(SECRET));
    }

    async fn payment_methods_of_other_customers_are_not_found(app) {
        let (fake, server, _, live_token) = live(&app).await;
        let (_, token_a) = account_of(&server, &live_token, "a@example.com").await;
        let (_, token_b) = account_of(&server, &live_token, "b@example.com").await;
        let (_, secret_b) = session(&server, &token_b).await;
        let pm_b = fake.confirm_card(&secret_b, "4242424242424242");

        // Account A has no customer yet, then has one of its own.
        for _ in 0..2 {
            let r = server.post("/v1/account/billing/ensure-payment-method-added", &token_a, &json!({"payment_method_id": pm_b})).await;
            assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
            session(&server, &token_a).await;
        }
        for id in ["pm_unknown", "../customers", "pm_x?expand=all"] {
            let r = server.post("/v1/account/billing/ensure-payment-method-added", &token_a, &json!({"payment_method_id": id})).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{id}: {}", r.text);
        }
        assert!(fake.requests().iter().all(|r| !r.path.contains("..") && !r.path.contains('?')));
        assert!(fake.requests().iter().filter(|r| r.path.starts_with("/v1/payment_methods/")).all(|r| r.method == "GET"));
        // Its own customer's card is fine.
        let ok = server.post("/v1/account/billing/ensure-payment-method-added", &token_b, &json!({"payment_method_id": pm_b})).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    }

    async fn live_charges_succeed_or_come_back_declined(app) {
        let (fake, server, live_uuid, live_token) = live(&app).await;
        let (account, token) = account_of(&server, &live_token, "charge@example.com").await;
        let processor = processor(&server, live_uuid).await;
        assert!(!format!("{processor:?}").contains(SECRET), "Debug hides the key");

        let mut cards = Vec::new();
        for number in ["4242424242424242", "4000000000000341", "4000000000009995"] {
            let (_, secret) = session(&server, &token).await;
            cards.push(fake.confirm_card(&secret, number));
        }
        let ok = processor.charge(&charge(account, &cards[0], "inv-1")).await.unwrap();
        let ChargeOutcome::Succeeded { payment_id } = &ok else { panic!("{ok:?}") };
        let sent = fake.requests().into_iter().rfind(|r| r.path == "/v1/payment_intents").unwrap();
        assert_eq!(sent.idempotency_key.as_deref(), Some("inv-1"));
        assert_eq!(sent.authorization, format!("Bearer {SECRET}"));
        for (k, v) in [("amount", "12345"), ("currency", "usd"), ("customer", "cus_fake1"), ("confirm", "true"), ("off_session", "true")] {
            assert_eq!(sent.params[k], v, "{k}");
        }
        assert_eq!(sent.params["payment_method"], cards[0]);
        // The same key is the same payment.
        assert_eq!(processor.charge(&charge(account, &cards[0], "inv-1")).await.unwrap(), ok);
        assert!(payment_id.starts_with("pi_"));

        assert_eq!(
            processor.charge(&charge(account, &cards[1], "inv-2")).await.unwrap(),
            ChargeOutcome::Declined { decline_code: "card_declined".into() }
        );
        assert_eq!(
            processor.charge(&charge(account, &cards[2], "inv-3")).await.unwrap(),
            ChargeOutcome::Declined { decline_code: "insufficient_funds".into() }
        );

        fake.set_down(true);
        let down = processor.charge(&charge(account, &cards[0], "inv-4")).await.unwrap_err();
        assert!(matches!(down, ProcessorError::Unavailable(_)), "{down:?}");
        assert!(!down.to_string().contains(SECRET) && !format!("{down:?}").contains(SECRET));
    }

    async fn the_processor_down_is_service_unavailable(app) {
        let logs = captured_logs();
        let (fake, server, _, live_token) = live(&app).await;
        let (_, token) = account_of(&server, &live_token, "down@example.com").await;
        let (_, secret) = session(&server, &token).await;
        let pm = fake.confirm_card(&secret, "4242424242424242");

        fake.set_down(true);
        let r = server.post("/v1/account/billing/payment-session", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r.text);
        let r2 = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!((r2.status, r2.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r2.text);

        // Nothing listening at all.
        let base = FakeProcessor::down_base().await;
        let unreachable = app.sibling(|c| c.payment_processor_api_base = Some(base)).await;
        let r3 = unreachable.post("/v1/account/billing/payment-session", &token, &Value::Null).await;
        assert_eq!((r3.status, r3.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r3.text);
        for r in [&r, &r2, &r3] {
            assert!(!r.text.contains(SECRET) && !r.text.contains(&fake.base));
        }

        // The failures are logged, without the key.
        let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
        assert!(logged.contains("payment processor unavailable"), "{logged}");
        assert!(!logged.contains("fakeSECRET"), "the secret key is never logged");

        // Back up: it works again.
        fake.set_down(false);
        let ok = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    }

    async fn live_apps_without_keys_or_processor_answer_503(app) {
        let fake = FakeProcessor::start(SECRET).await;
        let base = fake.base.clone();
        let server = app.sibling(|c| c.payment_processor_api_base = Some(base)).await;
        let (live_uuid, live_token) = app.live_app().await;
        let (_, token) = account_of(&server, &live_token, "nokeys@example.com").await;
        let r = server.post("/v1/account/billing/payment-session", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r.text);
        assert!(r.text.contains("no payment processor keys"), "{}", r.text);
        assert!(fake.requests().is_empty());

        // Keys, but no processor API configured on this server.
        server::admin::set_payment_keys(&app.state.db, &app.state.pii, live_uuid, PUBLISHABLE, SECRET).await.unwrap();
        let r = app.post("/v1/account/billing/payment-session", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r.text);
        // And with both it works.
        assert_eq!(server.post("/v1/account/billing/payment-session", &token, &Value::Null).await.status, StatusCode::OK);
        // Keys the processor refuses: 503 too, and the refused key is not repeated.
        server::admin::set_payment_keys(&app.state.db, &app.state.pii, live_uuid, PUBLISHABLE, "sk_live_revokedKEY0123456789").await.unwrap();
        let r = server.post("/v1/account/billing/payment-session", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"), "{}", r.text);
        assert!(!r.text.contains("revokedKEY"));
        assert_eq!(fake.requests().last().unwrap().authorization, "Bearer sk_live_revokedKEY0123456789");
    }

    async fn secret_keys_are_sealed_and_checked(app) {
        let (live_uuid, _) = app.live_app().await;
        let sealed = server::store::payments::app_secret_key_sealed(&app.state.db, live_uuid).await.unwrap();
        assert!(sealed.is_none());
        server::admin::set_payment_keys(&app.state.db, &app.state.pii, live_uuid, PUBLISHABLE, SECRET).await.unwrap();
        let sealed = server::store::payments::app_secret_key_sealed(&app.state.db, live_uuid).await.unwrap().unwrap();
        assert!(!sealed.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()), "sealed at rest");
        assert_eq!(app.state.pii.open(&sealed).unwrap(), SECRET.as_bytes());
        let row = server::store::apps::app_by_uuid(&app.state.db, live_uuid).await.unwrap().unwrap();
        assert_eq!(row.payment_publishable_key, PUBLISHABLE);

        // Sandbox apps keep the built-in processor; bad or mismatched keys are refused.
        let sandbox = server::admin::set_payment_keys(&app.state.db, &app.state.pii, app.app_uuid, PUBLISHABLE, SECRET).await.unwrap_err();
        assert!(sandbox.to_string().contains("live apps"));
        for (pk, sk) in [(PUBLISHABLE, "sk_test_fakeSECRET0123456789"), ("pk_live_x", SECRET), (SECRET, PUBLISHABLE)] {
            let e = server::admin::set_payment_keys(&app.state.db, &app.state.pii, live_uuid, pk, sk).await.unwrap_err();
            assert!(!e.to_string().contains("fakeSECRET"), "{e}");
        }
    }

    async fn the_built_in_processor_fails_charges_of_0341_cards_only(app) {
        let a = app.create_simple_account("builtin@example.com").await;
        let account: Uuid = a["uuid"].as_str().unwrap().parse().unwrap();
        let token = app.account_token(&account.to_string()).await;
        let mut cards = Vec::new();
        for number in ["4242424242424242", "4000000000000341", "5555555555554444"] {
            let (pk, secret) = session(&app, &token).await;
            let pm = post_card(&app, &pk, &secret, number).await;
            assert_eq!(pm.status, StatusCode::OK, "{}", pm.text);
            cards.push(pm.body["id"].as_str().unwrap().to_owned());
        }
        let processor = processor(&app, app.app_uuid).await;
        assert!(matches!(processor, Processor::BuiltIn(_)));
        let first = processor.charge(&charge(account, &cards[0], "k1")).await.unwrap();
        assert!(matches!(&first, ChargeOutcome::Succeeded { payment_id } if payment_id.starts_with("pi_")));
        assert_eq!(processor.charge(&charge(account, &cards[0], "k1")).await.unwrap(), first);
        assert_eq!(
            processor.charge(&charge(account, &cards[1], "k2")).await.unwrap(),
            ChargeOutcome::Declined { decline_code: "card_declined".into() }
        );
        assert!(matches!(processor.charge(&charge(account, &cards[2], "k3")).await.unwrap(), ChargeOutcome::Succeeded { .. }));
        assert_eq!(processor.charge(&charge(account, "pm_unknown", "k4")).await.unwrap_err(), ProcessorError::NotFound);
    }
}

/// The card processor's stand-in, which the test command starts (`end2end/localstripe.sh
/// start`) at `LOCALSTRIPE_URL` (default `http://127.0.0.1:8420`).
async fn stand_in() -> String {
    let base = std::env::var("LOCALSTRIPE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:8420".to_owned())
        .trim_end_matches('/')
        .to_owned();
    let reachable = reqwest::Client::new()
        .get(format!("{base}/v1/customers"))
        .timeout(std::time::Duration::from_secs(5))
        .send()
        .await
        .is_ok();
    assert!(
        reachable,
        "the card processor's stand-in is not reachable at {base}: start it with \
         `end2end/localstripe.sh start` (or set LOCALSTRIPE_URL to where it runs)"
    );
    base
}

/// A server talking to the stand-in, and a live app with keys of its own there (the stand-in
/// keeps each key's objects apart, so tests running at once do not meet).
pub(crate) async fn live_on_stand_in(app: &TestApp) -> (String, TestApp, Uuid, String, String) {
    let base = stand_in().await;
    let api = base.clone();
    let server = app
        .sibling(|c| {
            c.payment_processor_api_base = Some(api.clone());
            c.payment_processor_js_url = Some(format!("{api}/js.stripe.com/v3/"));
        })
        .await;
    let (live_uuid, live_token) = app.live_app().await;
    let suffix = Uuid::new_v4().simple().to_string();
    let publishable = format!("pk_test_{suffix}");
    server::admin::set_payment_keys(
        &app.state.db,
        &app.state.pii,
        live_uuid,
        &publishable,
        &format!("sk_test_{suffix}"),
    )
    .await
    .unwrap();
    (base, server, live_uuid, live_token, publishable)
}

/// What the processor's browser component does with a card and a setup session's client
/// secret (as the stand-in's script does it): the card goes from the page to the processor,
/// never to us. The payment method's id, the session's status, or the processor's error.
pub(crate) async fn confirm_in_browser(
    base: &str,
    publishable: &str,
    client_secret: &str,
    number: &str,
) -> Value {
    let seti = client_secret.split("_secret_").next().unwrap();
    let r = reqwest::Client::new()
        .post(format!("{base}/v1/setup_intents/{seti}/confirm"))
        .body(
            json!({
                "key": publishable,
                "use_stripe_sdk": true,
                "client_secret": client_secret,
                "payment_method_data": {
                    "type": "card",
                    "card": {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"},
                    "billing_details": {"address": {"postal_code": "75201"}},
                },
            })
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    r.json().await.unwrap()
}

both_engines! {
    async fn a_live_app_adds_cards_and_charges_them_through_the_processors_stand_in(app) {
        let (base, server, live_uuid, live_token, publishable) = live_on_stand_in(&app).await;
        let (account, token) = account_of(&server, &live_token, "stand-in@example.com").await;

        let (pk, secret) = session(&server, &token).await;
        assert_eq!(pk, publishable);
        assert!(secret.starts_with("seti_") && secret.contains("_secret_"), "{secret}");
        let confirmed = confirm_in_browser(&base, &pk, &secret, "4242424242424242").await;
        assert_eq!(confirmed["status"], "succeeded", "{confirmed}");
        let pm = confirmed["payment_method"].as_str().unwrap().to_owned();

        let added = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        assert_eq!(added.body, json!({"type": "card", "card_brand": "visa", "card_last4": "4242", "card_exp_month": 12, "card_exp_year": 2034, "card_postal_code": "75201"}));
        let events = server::store::events::events_of_account(&app.state.db, account).await.unwrap();
        assert_eq!(events.iter().filter(|e| e.kind == "account.payment_method_added").count(), 1);
        // Asking again changes nothing.
        let again = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.text);
        let events = server::store::events::events_of_account(&app.state.db, account).await.unwrap();
        assert_eq!(events.iter().filter(|e| e.kind == "account.payment_method_added").count(), 1);

        // The card is now this account's customer's: another account of the app cannot take it.
        let (_, other) = account_of(&server, &live_token, "other@example.com").await;
        session(&server, &other).await;
        let stolen = server.post("/v1/account/billing/ensure-payment-method-added", &other, &json!({"payment_method_id": pm})).await;
        assert_eq!((stolen.status, stolen.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", stolen.text);

        // Off-session charges with idempotency keys.
        let processor = processor(&server, live_uuid).await;
        let paid = processor.charge(&charge(account, &pm, &format!("inv-{}", Uuid::new_v4()))).await.unwrap();
        assert!(matches!(&paid, ChargeOutcome::Succeeded { payment_id } if payment_id.starts_with("pi_")), "{paid:?}");

        // A card that is saved but whose charges fail.
        let (_, secret) = session(&server, &token).await;
        let failing = confirm_in_browser(&base, &pk, &secret, "4000000000000341").await;
        let failing = failing["payment_method"].as_str().unwrap().to_owned();
        let r = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": failing})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(
            processor.charge(&charge(account, &failing, &format!("inv-{}", Uuid::new_v4()))).await.unwrap(),
            ChargeOutcome::Declined { decline_code: "card_declined".into() }
        );

        // A declined card never becomes a payment method: the component says so in the page.
        let (_, secret) = session(&server, &token).await;
        let declined = confirm_in_browser(&base, &pk, &secret, "4000000000000002").await;
        assert_eq!(declined["error"]["code"], "card_declined", "{declined}");

        // Nothing was sent to us but ids.
        assert!(server::store::payments::current_payment_method(&app.state.db, account).await.unwrap().is_some_and(|c| c.id == failing && c.last4 == "0341"));
    }

    async fn the_flow_pages_of_live_apps_load_the_processors_script_only(app) {
        let (base, server, live_uuid, _, publishable) = live_on_stand_in(&app).await;
        let page = server.send(reqwest::Method::GET, &format!("/flow/enrollment?app={live_uuid}"), None, None, &[]).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let csp = page.headers.get("content-security-policy").unwrap().to_str().unwrap().to_owned();
        assert_eq!(
            csp,
            format!("frame-ancestors 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval' {base}; frame-src {base}; connect-src 'self' {base}")
        );
        // The page tells its code which component to load, with the app's publishable key.
        let script = format!("{base}/js.stripe.com/v3/");
        assert!(page.text.contains(&script), "{}", page.text);
        assert!(page.text.contains(&publishable));

        // Without a processor, a live page loads no one's script.
        let bare = server.sibling(|c| c.payment_processor_js_url = None).await;
        let page = bare.send(reqwest::Method::GET, &format!("/flow/update-payment-method?app={live_uuid}"), None, None, &[]).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let csp = page.headers.get("content-security-policy").unwrap().to_str().unwrap().to_owned();
        assert!(csp.ends_with("script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; frame-src 'none'; connect-src 'self'"), "{csp}");
        assert!(!page.text.contains(&script));
        assert!(page.text.contains("Unavailable"), "{}", page.text);

        // Sandbox pages keep the built-in form and only say who may frame them.
        let page = server.send(reqwest::Method::GET, &format!("/flow/enrollment?app={}", app.app_uuid), None, None, &[]).await;
        let csp = page.headers.get("content-security-policy").unwrap().to_str().unwrap().to_owned();
        assert_eq!(csp, "frame-ancestors *");
        assert!(page.text.contains("BuiltIn"));
        assert!(!page.text.contains(&script));
    }
}
