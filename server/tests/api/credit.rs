//! The credit check pipeline: client agent enrollments run the soft check as soon as every
//! prerequisite is met (here the SSN comes last); the sandbox bureau's magic SSNs, the e-mails,
//! the retries on the account's clock, and `sandbox/simulate`.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    helpers::{TestApp, TestResponse},
    payments::{post_card, session},
};

const UNFREEZE_URL: &str = "https://bureau.sandbox.switchboard.example/unfreeze";

const METER: &str = "10443720000500001";

/// A meter to confirm, added once per test server.
async fn with_meter(app: &TestApp) {
    app.add_addresses(&[server::store::market::ServiceAddressRow {
        esi_id: METER.into(),
        address_1: "500 MAIN ST".into(),
        address_2: None,
        city: "DALLAS".into(),
        state: "TX".into(),
        postal_code: "75201".into(),
        tdu: "ONCOR".into(),
        premise_type: "residential".into(),
        status: "active".into(),
    }])
    .await;
}

/// Confirms the meter's address and adds a card: with identity complete, only the credit
/// check is left of a client agent enrollment's prerequisites.
async fn address_and_card(app: &TestApp, token: &str) {
    let r = account_post(
        app,
        "/v1/account/enroll/confirm-address",
        token,
        &json!({"esi_id": METER}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let (pk, secret) = session(app, token).await;
    let pm = post_card(app, &pk, &secret, "4242424242424242").await;
    let r = account_post(
        app,
        "/v1/account/billing/ensure-payment-method-added",
        token,
        &json!({"payment_method_id": pm.body["id"]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// A client agent account with every prerequisite but the credit check, and its AccountToken.
pub(crate) async fn client_agent_account(app: &TestApp, email: &str) -> (String, String) {
    let (uuid, token) = client_agent_only(app, email).await;
    with_meter(app).await;
    address_and_card(app, &token).await;
    (uuid, token)
}

/// A client agent account (identity complete, nothing else) and its AccountToken.
async fn client_agent_only(app: &TestApp, email: &str) -> (String, String) {
    let a = app
        .create_account(
            json!({"email": email, "first_name": "Ana", "last_name": "Díaz",
            "phone": "512 555 0199", "date_of_birth": "1985-07-04"}),
        )
        .await;
    let uuid = a["uuid"].as_str().unwrap().to_owned();
    let r = app
        .post(
            &format!("/v1/app/accounts/{uuid}/record-client-agent"),
            &app.app_token,
            &json!({}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let token = app.account_token(&uuid).await;
    (uuid, token)
}

pub(crate) async fn submit(app: &TestApp, token: &str, ssn: &str) {
    let r = app
        .post(
            "/v1/account/enroll/credit-check",
            token,
            &json!({"ssn": ssn, "consent": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
}

/// An AccountToken call, waited out when over the account's rate limit (10 per second).
async fn account_post(app: &TestApp, path: &str, token: &str, body: &Value) -> TestResponse {
    loop {
        let r = app.post(path, token, body).await;
        if r.status != StatusCode::TOO_MANY_REQUESTS {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// `status/status_reason`, read with the AppToken (the account's own limit stays free).
async fn reason(app: &TestApp, uuid: &str) -> String {
    let me = app
        .get(&format!("/v1/app/accounts/{uuid}"), &app.app_token)
        .await;
    assert_eq!(me.status, StatusCode::OK, "{}", me.text);
    format!(
        "{}/{}",
        me.body["status"].as_str().unwrap(),
        me.body["status_reason"].as_str().unwrap()
    )
}

pub(crate) async fn wait_reason(app: &TestApp, uuid: &str, expected: &str) {
    app.eventually(&format!("status {expected}"), || async {
        reason(app, uuid).await == expected
    })
    .await;
}

/// The stored status of the account's latest credit check.
pub(crate) async fn check_status(app: &TestApp, uuid: &str) -> String {
    let mut tx = app.state.db.begin().await.unwrap();
    let c = server::store::credit::latest_credit_check(&mut tx, uuid.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    c.status.as_str().to_owned()
}

pub(crate) async fn emails(app: &TestApp, uuid: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/sandbox/emails?account_uuid={uuid}"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

pub(crate) fn templates(emails: &[Value]) -> Vec<&str> {
    emails
        .iter()
        .map(|e| e["template"].as_str().unwrap())
        .collect()
}

/// The `status_reason`s announced by `account.status_updated`, oldest first.
async fn announced(app: &TestApp, uuid: &str) -> Vec<String> {
    let r = app
        .get(
            &format!("/v1/app/events?account_uuid={uuid}&type=account.status_updated&limit=100"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let mut reasons: Vec<String> = r.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["status_reason"].as_str().unwrap().to_owned())
        .collect();
    reasons.reverse();
    reasons
}

async fn advance(app: &TestApp, token: &str, days: i64) -> Value {
    let r = account_post(
        app,
        "/v1/account/sandbox/advance-clock",
        token,
        &json!({"days": days}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

pub(crate) async fn simulate(app: &TestApp, token: &str, event: &str) -> Value {
    let r = account_post(
        app,
        "/v1/account/sandbox/simulate",
        token,
        &json!({"event": event}),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

fn emitted_reasons(answer: &Value) -> Vec<&str> {
    answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "account.status_updated")
        .map(|e| e["data"]["status_reason"].as_str().unwrap())
        .collect()
}

both_engines! {
    async fn a_frozen_file_is_retried_until_the_customer_unfreezes_it(app) {
        let (uuid, token) = client_agent_account(&app, "frozen@example.com").await;
        submit(&app, &token, "123-45-0001").await;
        wait_reason(&app, &uuid, "needs_attention/credit_check_frozen").await;
        app.eventually("the unfreeze e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_frozen"]
        }).await;
        let mail = &emails(&app, &uuid).await[0];
        assert_eq!(mail["to"], "frozen@example.com");
        assert!(mail["text"].as_str().unwrap().contains(UNFREEZE_URL), "{mail}");
        assert!(!mail.to_string().contains("0001"), "no SSN digits in the e-mail");

        // Still frozen: the retries keep answering frozen and e-mail nobody again.
        let answer = advance(&app, &token, 1).await;
        assert_eq!(answer["account"]["status_reason"], "credit_check_frozen");
        assert_eq!(emitted_reasons(&answer), Vec::<&str>::new());
        assert_eq!(emails(&app, &uuid).await.len(), 1);

        // The customer lifts the freeze; the next scheduled retry passes, no partner action.
        // (A retry falling due on the account's running clock may already be under way.)
        let answer = simulate(&app, &token, "credit_check_unfrozen").await;
        // Unfreezing alone changes nothing; a retry that fell due meanwhile (the simulation runs
        // the account's due jobs) may already pass, and nothing else.
        let reasons = emitted_reasons(&answer);
        assert!(
            reasons.is_empty() || reasons == ["enrollment_pending_client_agent"],
            "unfreezing alone changes nothing: {answer}"
        );
        advance(&app, &token, 1).await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        assert_eq!(check_status(&app, &uuid).await, "passed");
        assert_eq!(
            announced(&app, &uuid).await,
            ["missing_identity", "enrollment_pending_client_agent", "credit_check_frozen", "enrollment_pending_client_agent"]
        );
        // Passing after the freeze tells the customer, once.
        app.eventually("the approved e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_approved", "credit_frozen"]
        }).await;
        let events = app.get(&format!("/v1/app/events?account_uuid={uuid}&limit=100"), &app.app_token).await;
        // (The account's number, in `account.created`, may end in the same digits.)
        let number = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await.body["account_number"].as_str().unwrap().to_owned();
        let events_text = events.text.replace(&format!("\"{number}\""), "\"\"");
        assert!(!events_text.contains("123450001") && !events_text.contains("0001\""));
        // Passed for good: nothing runs again.
        let answer = advance(&app, &token, 2).await;
        assert_eq!(emitted_reasons(&answer), Vec::<&str>::new());
        assert_eq!(emails(&app, &uuid).await.len(), 2);
    }

    async fn a_declined_check_emails_the_customer_and_stops(app) {
        let (uuid, token) = client_agent_account(&app, "declined@example.com").await;
        submit(&app, &token, "123-45-0002").await;
        wait_reason(&app, &uuid, "needs_attention/credit_declined").await;
        app.eventually("the declined e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_declined"]
        }).await;
        // It says what really happens next (the review and its e-mailed decision), and
        // promises no team that would get in touch.
        let text = emails(&app, &uuid).await[0]["text"].as_str().unwrap().to_owned();
        assert!(text.contains("your enrollment goes to review"), "{text}");
        assert!(text.contains("We e-mail you the decision"), "{text}");
        assert!(!text.contains("support team"), "{text}");
        let reviews = app.query_texts("SELECT r.status FROM credit_reviews r JOIN accounts a ON a.uuid = r.account_uuid WHERE a.email = 'declined@example.com'").await;
        assert_eq!(reviews, [Some("open".to_owned())], "the review the e-mail promises is open");
        let answer = advance(&app, &token, 3).await;
        assert_eq!(answer["account"]["status_reason"], "credit_declined");
        assert_eq!(emails(&app, &uuid).await.len(), 1);
        assert_eq!(announced(&app, &uuid).await, ["missing_identity", "enrollment_pending_client_agent", "credit_declined"]);
    }

    async fn a_missing_credit_file_emails_the_customer(app) {
        let (uuid, token) = client_agent_account(&app, "notfound@example.com").await;
        submit(&app, &token, "123-45-0003").await;
        wait_reason(&app, &uuid, "needs_attention/credit_not_found").await;
        app.eventually("the not-found e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_not_found"]
        }).await;
        assert_eq!(check_status(&app, &uuid).await, "not_found");
        assert_eq!(announced(&app, &uuid).await, ["missing_identity", "enrollment_pending_client_agent", "credit_not_found"]);
    }

    async fn a_bureau_error_is_retried_until_it_passes(app) {
        let (uuid, token) = client_agent_account(&app, "error@example.com").await;
        submit(&app, &token, "123-45-0004").await;
        wait_reason(&app, &uuid, "needs_attention/credit_check_error").await;
        advance(&app, &token, 1).await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        assert_eq!(check_status(&app, &uuid).await, "passed");
        assert_eq!(
            announced(&app, &uuid).await,
            ["missing_identity", "enrollment_pending_client_agent", "credit_check_error", "enrollment_pending_client_agent"]
        );
        // An error e-mails nobody; passing afterwards is the only news.
        app.eventually("the approved e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_approved"]
        }).await;
    }

    async fn a_normal_ssn_passes_and_standard_enrollments_wait_for_finalize(app) {
        let (uuid, token) = client_agent_account(&app, "pass@example.com").await;
        submit(&app, &token, "123-45-6789").await;
        app.eventually("the check passes", || async {
            check_status(&app, &uuid).await == "passed"
        }).await;
        assert_eq!(reason(&app, &uuid).await, "not_enrolled/enrollment_pending_client_agent");
        app.eventually("the approved e-mail", || async {
            templates(&emails(&app, &uuid).await) == ["credit_approved"]
        }).await;

        // Without client agent, the check waits for finalize.
        let a = app.create_simple_account("standard@example.com").await;
        let standard = a["uuid"].as_str().unwrap().to_owned();
        let standard_token = app.account_token(&standard).await;
        submit(&app, &standard_token, "123-45-0001").await;
        advance(&app, &standard_token, 1).await;
        assert_eq!(check_status(&app, &standard).await, "submitted");
        assert_eq!(reason(&app, &standard).await, "not_enrolled/missing_address");
    }

    async fn simulated_credit_events(app) {
        let (uuid, token) = client_agent_account(&app, "sim@example.com").await;
        let r = account_post(&app, "/v1/account/sandbox/simulate", &token, &json!({"event": "credit_declined"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"));
        assert_eq!(r.body["error"]["missing"], json!(["credit_check"]));
        submit(&app, &token, "123-45-6789").await;
        app.eventually("the check passes", || async {
            check_status(&app, &uuid).await == "passed"
        }).await;

        let r = account_post(&app, "/v1/account/sandbox/simulate", &token, &json!({"event": "credit_frozen"})).await;
        assert_eq!((r.status, r.code(), r.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, "parameter_invalid", Some("event")));
        let r = account_post(&app, "/v1/account/sandbox/simulate", &token, &json!({"event": "invoice_generated"})).await;
        // Billing events need active service.
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "service_not_active"));
        let r = account_post(&app, "/v1/account/sandbox/simulate", &token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));

        let answer = simulate(&app, &token, "credit_declined").await;
        assert_eq!(answer["event"], "credit_declined");
        assert_eq!(answer["account"]["status_reason"], "credit_declined");
        assert_eq!(emitted_reasons(&answer), ["credit_declined"]);

        let answer = simulate(&app, &token, "credit_not_found").await;
        assert_eq!(answer["account"]["status_reason"], "credit_not_found");

        let answer = simulate(&app, &token, "credit_check_frozen").await;
        assert_eq!(answer["account"]["status_reason"], "credit_check_frozen");
        app.eventually("the e-mails", || async {
            templates(&emails(&app, &uuid).await) == ["credit_frozen", "credit_not_found", "credit_declined", "credit_approved"]
        }).await;
        simulate(&app, &token, "credit_check_unfrozen").await;
        advance(&app, &token, 1).await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;

        let answer = simulate(&app, &token, "credit_check_error").await;
        assert_eq!(answer["account"]["status_reason"], "credit_check_error");
        advance(&app, &token, 1).await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
    }

    async fn a_new_submission_replaces_the_pending_retry(app) {
        let (uuid, token) = client_agent_account(&app, "again@example.com").await;
        submit(&app, &token, "123-45-0001").await;
        wait_reason(&app, &uuid, "needs_attention/credit_check_frozen").await;
        // The customer gives another SSN: its check runs at once and the frozen one's retry
        // stands down.
        submit(&app, &token, "123-45-6789").await;
        wait_reason(&app, &uuid, "not_enrolled/enrollment_pending_client_agent").await;
        app.eventually("the new check passes", || async {
            check_status(&app, &uuid).await == "passed"
        }).await;
        let answer = advance(&app, &token, 2).await;
        assert_eq!(answer["account"]["status_reason"], "enrollment_pending_client_agent");
        assert_eq!(emitted_reasons(&answer), Vec::<&str>::new());
    }

    async fn the_check_waits_for_the_last_prerequisite(app) {
        with_meter(&app).await;
        let (uuid, token) = client_agent_only(&app, "order@example.com").await;
        // The SSN first: address and card are still missing, so nothing runs yet.
        submit(&app, &token, "123-45-6789").await;
        advance(&app, &token, 1).await;
        assert_eq!(check_status(&app, &uuid).await, "submitted");
        assert_eq!(reason(&app, &uuid).await, "not_enrolled/missing_address");
        // The card comes last: that completes the prerequisites and the check runs at once.
        address_and_card(&app, &token).await;
        app.eventually("the check passes", || async {
            check_status(&app, &uuid).await == "passed"
        }).await;
        assert_eq!(reason(&app, &uuid).await, "not_enrolled/enrollment_pending_client_agent");
    }

    async fn live_checks_never_reach_the_sandbox_bureau(app) {
        with_meter(&app).await;
        let (fake, server, _, live) = crate::live_payments::live(&app).await;
        let r = server
            .post("/v1/app/accounts", &live, &json!({"email": "live@example.com", "first_name": "A", "last_name": "B",
                "phone": "512 555 0199", "date_of_birth": "1985-07-04"}))
            .await;
        let uuid = r.body["uuid"].as_str().unwrap().to_owned();
        let r = server.post(&format!("/v1/app/accounts/{uuid}/record-client-agent"), &live, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = server.post(&format!("/v1/app/accounts/{uuid}/token"), &live, &Value::Null).await;
        let token = r.body["token"].as_str().unwrap().to_owned();
        let r = server.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": METER})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let (_, secret) = session(&server, &token).await;
        let pm = fake.confirm_card(&secret, "4242424242424242");
        let r = server.post("/v1/account/billing/ensure-payment-method-added", &token, &json!({"payment_method_id": pm})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // A magic SSN means nothing in live: without a bureau connection the check waits in
        // credit_check_error and is retried.
        submit(&server, &token, "123-45-0002").await;
        app.eventually("the live check is retried", || async {
            check_status(&app, &uuid).await == "error"
        }).await;
        let me = app.get(&format!("/v1/app/accounts/{uuid}"), &live).await;
        assert_eq!(me.body["status_reason"], "credit_check_error");
    }

    async fn simulate_is_sandbox_only(app) {
        let (_, live) = app.live_app().await;
        let r = app
            .post("/v1/app/accounts", &live, &json!({"email": "a@example.com", "first_name": "A", "last_name": "B"}))
            .await;
        let account_uuid = r.body["uuid"].as_str().unwrap().to_owned();
        let r = app.post(&format!("/v1/app/accounts/{account_uuid}/token"), &live, &Value::Null).await;
        let token = r.body["token"].as_str().unwrap().to_owned();
        let r = account_post(&app, "/v1/account/sandbox/simulate", &token, &json!({"event": "credit_declined"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "sandbox_only"));
    }
}
