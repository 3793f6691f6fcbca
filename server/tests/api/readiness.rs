//! A live app goes live only when ready: until its checklist passes (brand, support contacts,
//! payment keys, the processor's webhook signing secret, allowed origins, a month-to-month default group, every enabled webhook
//! endpoint verified), its sign-up page is not public, no enrollment flow opens and no SSN is
//! taken; the dashboard names what is missing.

use reqwest::StatusCode;
use serde_json::{json, Value};
use server::domain::users::Role;
use uuid::Uuid;

use crate::{dashboard::signed_in, helpers::TestApp};

async fn slug_of(app: &TestApp, uuid: Uuid) -> String {
    server::store::apps::app_by_uuid(&app.state.db, uuid)
        .await
        .unwrap()
        .unwrap()
        .slug
}

/// A customer of the app of `token` and the AccountToken.
async fn account(app: &TestApp, token: &str, email: &str) -> (String, String) {
    let r = app
        .post(
            "/v1/app/accounts",
            token,
            &json!({"email": email, "first_name": "Ana", "last_name": "Díaz"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let uuid = r.body["uuid"].as_str().unwrap().to_owned();
    let t = app
        .post(
            &format!("/v1/app/accounts/{uuid}/token"),
            token,
            &Value::Null,
        )
        .await;
    assert_eq!(t.status, StatusCode::OK, "{}", t.text);
    (uuid, t.body["token"].as_str().unwrap().to_owned())
}

async fn credit_checks(app: &TestApp) -> usize {
    app.query_texts("SELECT CAST(COUNT(*) AS TEXT) FROM credit_checks")
        .await[0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

both_engines! {
    async fn a_live_app_opens_to_customers_only_once_its_checklist_passes(app) {
        let (uuid, token) = app.live_app().await;
        let slug = slug_of(&app, uuid).await;
        let (customer, account_token) = account(&app, &token, "early@example.com").await;

        // Approved but not ready: the sign-up page is not public.
        let landing = reqwest::get(app.url(&format!("/go/{slug}"))).await.unwrap();
        assert_eq!(landing.status(), StatusCode::NOT_FOUND);
        assert!(landing.text().await.unwrap().contains("There is no sign-up page"));
        // No enrollment flow opens, and the refusal names what is missing.
        let r = app
            .post(&format!("/v1/app/accounts/{customer}/flow-login"), &token, &json!({"scope": "enrollment"}))
            .await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "app_not_ready"), "{}", r.text);
        assert_eq!(
            r.body["error"]["missing"],
            json!(["brand", "support_contacts", "payment_keys", "processor_webhook_secret", "allowed_origins"]),
            "{}", r.text
        );
        // No SSN is taken: nothing is stored.
        let r = app
            .post("/v1/account/enroll/credit-check", &account_token, &json!({"ssn": "123-45-6789", "consent": true}))
            .await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "app_not_ready"), "{}", r.text);
        assert_eq!(credit_checks(&app).await, 0);
        app.assert_not_stored("early@example.com", &["123456789", "123-45-6789"], "the refused SSN").await;

        // The dashboard shows the checklist with what is missing.
        let browser = signed_in(&app, "ops@example.com", Role::Operator, None).await;
        let page = browser.get(&format!("/dashboard/apps/{uuid}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.text.contains("data-testid=\"readiness\""), "{}", page.text);
        assert!(page.text.contains("Not open to customers yet"), "{}", page.text);
        for item in ["brand", "support_contacts", "payment_keys", "processor_webhook_secret", "allowed_origins"] {
            assert!(page.text.contains(&format!("data-item=\"{item}\" data-done=\"false\"")), "{item}: {}", page.text);
        }
        assert!(page.text.contains("data-item=\"month_to_month_default\" data-done=\"true\""));

        // Everything but a verified webhook endpoint: an enabled endpoint that never answered
        // keeps the app closed.
        server::admin::set_payment_keys(&app.state.db, &app.state.pii, uuid, "pk_live_readyPUBLIC0123", "sk_live_readySECRET0123")
            .await
            .unwrap();
        // Keys without the signing secret of the processor's webhooks: a payment that fails at
        // the processor would never be known, so the app stays closed.
        let r = app
            .post(&format!("/v1/app/accounts/{customer}/flow-login"), &token, &json!({"scope": "enrollment"}))
            .await;
        assert_eq!(
            r.body["error"]["missing"],
            json!(["brand", "support_contacts", "processor_webhook_secret", "allowed_origins"]),
            "{}", r.text
        );
        app.make_live_ready(uuid).await;
        let endpoint = app
            .post("/v1/app/webhook-endpoints", &token, &json!({"url": "https://hooks.example.com/in"}))
            .await;
        assert_eq!(endpoint.status, StatusCode::CREATED, "{}", endpoint.text);
        let r = app
            .post(&format!("/v1/app/accounts/{customer}/flow-login"), &token, &json!({"scope": "enrollment"}))
            .await;
        assert_eq!(r.body["error"]["missing"], json!(["verified_webhooks"]), "{}", r.text);
        let landing = reqwest::get(app.url(&format!("/go/{slug}"))).await.unwrap();
        assert_eq!(landing.status(), StatusCode::NOT_FOUND);
        let endpoint_uuid = endpoint.body["uuid"].as_str().unwrap();
        let r = app
            .delete(&format!("/v1/app/webhook-endpoints/{endpoint_uuid}"), &token)
            .await;
        assert!(r.status.is_success(), "{}", r.text);

        // Ready: the page is public, the flow opens, the SSN is taken.
        let landing = reqwest::get(app.url(&format!("/go/{slug}"))).await.unwrap();
        assert_eq!(landing.status(), StatusCode::OK);
        let r = app
            .post(&format!("/v1/app/accounts/{customer}/flow-login"), &token, &json!({"scope": "enrollment"}))
            .await;
        assert!(r.status.is_success(), "{}", r.text);
        let r = app
            .post("/v1/account/enroll/credit-check", &account_token, &json!({"ssn": "123-45-6789", "consent": true}))
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        assert_eq!(credit_checks(&app).await, 1);
        let page = browser.get(&format!("/dashboard/apps/{uuid}")).await;
        assert!(page.text.contains("Ready for customers"), "{}", page.text);
    }

    async fn a_sandbox_app_needs_no_checklist(app) {
        let (customer, _) = account(&app, &app.app_token.clone(), "sandbox@example.com").await;
        let r = app
            .post(&format!("/v1/app/accounts/{customer}/flow-login"), &app.app_token, &json!({"scope": "enrollment"}))
            .await;
        assert!(r.status.is_success(), "{}", r.text);
    }
}
