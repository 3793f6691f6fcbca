//! Payment methods through the built-in processor: session, card, attach, replace; declines
//! and bad cards; card numbers never stored.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::TestApp;

/// Posts a card to the processor the way the browser component does.
pub async fn post_card(
    app: &TestApp,
    publishable_key: &str,
    client_secret: &str,
    number: &str,
) -> crate::helpers::TestResponse {
    app.send(
        Method::POST,
        "/processor/v1/payment_methods",
        Some(publishable_key),
        Some(&json!({
            "client_secret": client_secret,
            "card": {"number": number, "exp_month": 12, "exp_year": 2034, "cvc": "123"},
            "billing_details": {"postal_code": "75201"}
        })),
        &[],
    )
    .await
}

pub async fn session(app: &TestApp, token: &str) -> (String, String) {
    let r = app
        .post("/v1/account/billing/payment-session", token, &Value::Null)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    (
        r.body["publishable_key"].as_str().unwrap().to_owned(),
        r.body["client_secret"].as_str().unwrap().to_owned(),
    )
}

async fn account(app: &TestApp) -> (String, String) {
    let a = app.create_simple_account("pay@example.com").await;
    let uuid = a["uuid"].as_str().unwrap().to_owned();
    let token = app.account_token(&uuid).await;
    (uuid, token)
}

/// The kinds of events, sorted (events of one transaction share their instant).
fn event_kinds(events: &[server::store::events::EventRow]) -> Vec<&str> {
    let mut kinds: Vec<_> = events.iter().map(|e| e.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds
}

both_engines! {
    async fn a_card_is_added_through_the_processor(app) {
        let (uuid, token) = account(&app).await;
        let r = app.get("/v1/account/billing/payment-method", &token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));

        let (pk, secret) = session(&app, &token).await;
        assert!(pk.starts_with("pk_test_") && secret.starts_with("seti_"));
        let pm = post_card(&app, &pk, &secret, "4242 4242 4242 4242").await;
        assert_eq!(pm.status, StatusCode::OK, "{}", pm.text);
        let pm_id = pm.body["id"].as_str().unwrap();
        assert!(pm_id.starts_with("pm_"));
        assert_eq!(pm.body["card"], json!({"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2034}));

        let added = app.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm_id})).await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        assert_eq!(added.body, json!({"type": "card", "card_brand": "visa", "card_last4": "4242", "card_exp_month": 12, "card_exp_year": 2034, "card_postal_code": "75201"}));
        let again = app.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm_id})).await;
        assert_eq!(again.body, added.body);
        assert_eq!(app.get("/v1/account/billing/payment-method", &token).await.body, added.body);

        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["has_payment_method"], true);
        assert_eq!((me.body["status"].as_str(), me.body["status_reason"].as_str()), (Some("not_enrolled"), Some("missing_address")));
        let account_uuid = uuid.parse().unwrap();
        let history = server::store::accounts::status_history(&app.state.db, account_uuid).await.unwrap();
        assert_eq!(history.iter().map(|h| h.status_reason.as_str()).collect::<Vec<_>>(), ["unresolved", "missing_address"]);
        let events = server::store::events::events_of_account(&app.state.db, account_uuid).await.unwrap();
        assert_eq!(event_kinds(&events), ["account.created", "account.payment_method_added", "account.status_updated"], "attaching twice announces once");

        // Replacing the card uses the same calls.
        let (pk, secret) = session(&app, &token).await;
        let pm2 = post_card(&app, &pk, &secret, "5555555555554444").await;
        let replaced = app.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm2.body["id"]})).await;
        assert_eq!(replaced.body["card_brand"], "mastercard");
        assert_eq!(app.get("/v1/account/billing/payment-method", &token).await.body["card_last4"], "4444");
    }

    async fn declined_cards_leave_the_session_usable(app) {
        let (_, token) = account(&app).await;
        let (pk, secret) = session(&app, &token).await;
        for (number, decline_code) in [("4000000000000002", "generic_decline"), ("4000000000009995", "insufficient_funds"), ("4000000000000069", "expired_card")] {
            let r = post_card(&app, &pk, &secret, number).await;
            assert_eq!((r.status, r.code()), (StatusCode::PAYMENT_REQUIRED, "card_declined"), "{number}");
            assert_eq!(r.body["error"]["decline_code"], decline_code);
        }
        let ok = post_card(&app, &pk, &secret, "4242424242424242").await;
        assert_eq!(ok.status, StatusCode::OK);
        let reused = post_card(&app, &pk, &secret, "4242424242424242").await;
        assert_eq!((reused.status, reused.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, Some("client_secret")));
        // The card whose later charges fail is saved like any other.
        let (pk, secret) = session(&app, &token).await;
        assert_eq!(post_card(&app, &pk, &secret, "4000000000000341").await.status, StatusCode::OK);
    }

    async fn bad_cards_keys_and_secrets_are_refused(app) {
        let (_, token) = account(&app).await;
        let (pk, secret) = session(&app, &token).await;
        let card = |number: &str, month: u32, year: i32, cvc: &str| json!({
            "client_secret": secret, "card": {"number": number, "exp_month": month, "exp_year": year, "cvc": cvc}
        });
        let cases = [
            (card("4242424242424241", 12, 2034, "123"), "invalid_number", "card.number"),
            (card("4242", 12, 2034, "123"), "invalid_number", "card.number"),
            (card("4242424242424242", 13, 2034, "123"), "invalid_expiry_month", "card.exp_month"),
            (card("4242424242424242", 1, 2020, "123"), "invalid_expiry_year", "card.exp_year"),
            (card("4242424242424242", 12, 2034, "12"), "invalid_cvc", "card.cvc"),
        ];
        for (body, code, param) in cases {
            let r = app.send(Method::POST, "/processor/v1/payment_methods", Some(&pk), Some(&body), &[]).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{body}");
            assert_eq!(r.body["error"]["param"], param);
        }
        let good = card("4242424242424242", 12, 2034, "123");
        let r = app.send(Method::POST, "/processor/v1/payment_methods", Some("pk_test_nope"), Some(&good), &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_invalid"));
        let r = app.send(Method::POST, "/processor/v1/payment_methods", None, Some(&good), &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_missing"));
        let r = post_card(&app, &pk, "seti_unknown_secret_x", "4242424242424242").await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        // Another app's publishable key does not unlock this app's session.
        let (other_app, _) = app.other_app().await;
        let other = server::store::apps::app_by_uuid(&app.state.db, other_app).await.unwrap().unwrap();
        let r = post_card(&app, &other.payment_publishable_key, &secret, "4242424242424242").await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        // A session expires after an hour.
        app.clock.advance(chrono::Duration::minutes(61));
        let token = app.account_token(&account(&app).await.0).await;
        let (pk, secret) = session(&app, &token).await;
        app.clock.advance(chrono::Duration::minutes(61));
        let r = post_card(&app, &pk, &secret, "4242424242424242").await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{}", r.text);
    }

    async fn payment_methods_of_other_accounts_cannot_be_attached(app) {
        let (_, token) = account(&app).await;
        let b = app.create_simple_account("b@example.com").await;
        let token_b = app.account_token(b["uuid"].as_str().unwrap()).await;
        let (pk, secret) = session(&app, &token_b).await;
        let pm = post_card(&app, &pk, &secret, "4242424242424242").await;
        let r = app.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm.body["id"]})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        let r = app.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
    }
}

both_engines! {
    async fn card_numbers_are_never_stored(app) {
        let (_, token) = account(&app).await;
        let (pk, secret) = session(&app, &token).await;
        let pm = post_card(&app, &pk, &secret, "4242 4242 4242 4242").await;
        assert_eq!(pm.status, StatusCode::OK, "{}", pm.text);
        let added = app
            .post(
                "/v1/account/billing/ensure-payment-method-added",
                &token,
                &json!({"payment_method_id": pm.body["id"]}),
            )
            .await;
        assert_eq!(added.status, StatusCode::OK, "{}", added.text);
        assert_eq!(added.body["card_last4"], "4242");
        // The processor's id of the card is kept; the number, in any spelling, is not.
        let pm_id = pm.body["id"].as_str().unwrap();
        app.assert_not_stored(
            pm_id,
            &["4242424242424242", "4242 4242 4242 4242", "4242-4242-4242-4242"],
            "a card number",
        )
        .await;
    }
}
