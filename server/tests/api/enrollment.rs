//! Enrollment end to end through the HTTP API: address confirmation, plan acceptance, identity,
//! credit, payment, finalize, then the background pipeline driven by advance-clock to
//! `active/active`; every rule of plan acceptance and finalize; client agent enrollment.

use reqwest::StatusCode;
use serde_json::{json, Value};
use server::store::market::ServiceAddressRow;

use crate::{
    helpers::{TestApp, TestResponse},
    payments::{post_card, session},
};

pub(crate) const HOUSE: &str = "10443720000200001";
pub(crate) const OTHER_HOUSE: &str = "10443720000200002";
pub(crate) const SWITCH_HOLD: &str = "10443720000201111";
const DEACTIVATED: &str = "10443720000202222";
const REJECTED: &str = "10443720000203333";

pub(crate) async fn with_meters(app: &TestApp) {
    let row = |esi: &str, number: u32| ServiceAddressRow {
        esi_id: esi.into(),
        address_1: format!("{number} ELM ST"),
        address_2: None,
        city: "DALLAS".into(),
        state: "TX".into(),
        postal_code: "75201".into(),
        tdu: "ONCOR".into(),
        premise_type: "residential".into(),
        status: "active".into(),
    };
    app.add_addresses(&[
        row(HOUSE, 100),
        row(OTHER_HOUSE, 102),
        row(SWITCH_HOLD, 104),
        row(DEACTIVATED, 106),
        row(REJECTED, 108),
    ])
    .await;
}

/// A new customer with name, phone and date of birth; returns (uuid, token).
pub(crate) async fn customer(app: &TestApp, email: &str) -> (String, String) {
    let a = app
        .create_account(json!({
            "email": email, "first_name": "Ana", "last_name": "Díaz",
            "phone": "5125550123", "date_of_birth": "1980-04-02"
        }))
        .await;
    let uuid = a["uuid"].as_str().unwrap().to_owned();
    let token = app.account_token(&uuid).await;
    (uuid, token)
}

pub(crate) async fn first_plan(app: &TestApp, token: &str, esi: &str) -> Value {
    let r = app
        .post(
            "/v1/account/enroll/plans/request",
            token,
            &json!({"esi_id": esi}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_type"] == "fixed")
        .unwrap()
        .clone()
}

pub(crate) async fn accept(
    app: &TestApp,
    token: &str,
    plan: &Value,
    esi: &str,
    start: &str,
) -> TestResponse {
    app.post(
        "/v1/account/enroll/plans/accept",
        token,
        &json!({"plan_uuid": plan["plan_uuid"], "esi_id": esi, "service_start_date": start, "terms_accepted": true}),
    )
    .await
}

pub(crate) async fn add_card(app: &TestApp, token: &str) {
    add_card_number(app, token, "4242424242424242").await;
}

pub(crate) async fn add_card_number(app: &TestApp, token: &str, number: &str) {
    let (pk, secret) = session(app, token).await;
    let pm = post_card(app, &pk, &secret, number).await;
    let r = app
        .post(
            "/v1/account/billing/ensure-payment-method-added",
            token,
            &json!({"payment_method_id": pm.body["id"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

/// Every step but finalize, for `esi`; returns the accepted start date.
pub(crate) async fn ready_to_finalize(app: &TestApp, token: &str, esi: &str) -> String {
    let r = app
        .post(
            "/v1/account/enroll/confirm-address",
            token,
            &json!({"esi_id": esi}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let plan = first_plan(app, token, esi).await;
    let start = plan["earliest_switch_start_date"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = accept(app, token, &plan, esi, &start).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let r = app
        .post(
            "/v1/account/enroll/credit-check",
            token,
            &json!({"ssn": "123-45-6789", "consent": true}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    add_card(app, token).await;
    start
}

pub(crate) async fn advance(app: &TestApp, token: &str, days: i64) -> Value {
    let r = app
        .post(
            "/v1/account/sandbox/advance-clock",
            token,
            &json!({"days": days}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

/// Moves the account's clock on to `hour`:00 of its market day, when it stands earlier.
pub(crate) async fn on_to_hour(app: &TestApp, (uuid, token): (&str, &str), hour: u32) {
    use chrono::{TimeZone, Timelike};
    let clock = app
        .state
        .clock
        .for_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap();
    let local = clock.now().with_timezone(&chrono_tz::America::Chicago);
    if local.hour() >= hour {
        return;
    }
    let to = chrono_tz::America::Chicago
        .from_local_datetime(&clock.today().and_hms_opt(hour, 0, 0).unwrap())
        .earliest()
        .unwrap();
    let r = app
        .post(
            "/v1/account/sandbox/advance-clock",
            token,
            &json!({"to": to.to_rfc3339()}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

pub(crate) fn status(account: &Value) -> (String, String) {
    (
        account["status"].as_str().unwrap().to_owned(),
        account["status_reason"].as_str().unwrap().to_owned(),
    )
}

pub(crate) fn pair(s: &str, r: &str) -> (String, String) {
    (s.to_owned(), r.to_owned())
}

/// Waits until the account shows `expected`: background workers may still be finishing a job
/// that fell due while the clock moved.
pub(crate) async fn settles_at(app: &TestApp, token: &str, expected: (String, String)) {
    app.eventually(&format!("the account reaches {expected:?}"), || async {
        status(&app.get("/v1/account", token).await.body) == expected
    })
    .await;
}

pub(crate) async fn event_types(app: &TestApp, account: &str) -> Vec<String> {
    server::store::events::events_of_account(&app.state.db, account.parse().unwrap())
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

/// Walks make many calls in a second: lift the per-account rate limit for them.
pub(crate) fn relaxed(c: &mut server::config::Config) {
    c.rate_limits.account_per_second = 10_000;
    c.rate_limits.app_per_second = 10_000;
}

both_engines! {
    at [early_morning, fall_back_night, spring_forward_eve];
    with relaxed;
    async fn a_standard_enrollment_walks_to_active(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "walk@example.com").await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["missing"], json!(["address", "plan", "credit_check", "payment_method"]));

        let r = app.post("/v1/account/enroll/plans/request", &token, &json!({})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"), "no ESI ID known yet");
        let r = app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(status(&r.body), pair("not_enrolled", "plan_not_accepted"));
        assert_eq!(r.body["enrollment"]["has_confirmed_address"], true);
        // Plans default to the confirmed address's meter.
        let r = app.post("/v1/account/enroll/plans/request", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert!(!r.body["plans"].as_array().unwrap().is_empty());

        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["contract"]["status"], "pending");
        assert_eq!(r.body["contract"]["start_date"], start.as_str());
        assert_eq!(r.body["contract"]["accepted_by"], "customer");
        assert!(r.body["contract"]["end_date"].is_string());
        assert_eq!(r.body["location"]["esi_id"], HOUSE);
        assert_eq!(r.body["location"]["plan_uuid"], plan["plan_uuid"]);
        assert_eq!(r.body["account"]["locations"].as_array().unwrap().len(), 1);
        assert_eq!(status(&r.body["account"]), pair("not_enrolled", "missing_identity"));

        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        assert_eq!(status(&app.get("/v1/account", &token).await.body), pair("not_enrolled", "missing_payment_method"));
        add_card(&app, &token).await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["can_finalize_enrollment"], true, "{}", me.text);
        assert_eq!(me.body["enrollment"]["missing"], json!([]));

        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(status(&r.body), pair("reviewing", "verification_pending"));
        assert_eq!(r.body["enrollment"]["is_enrollment_finalized"], true);
        let again = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!((again.status, again.code()), (StatusCode::CONFLICT, "already_finalized"));

        // Verification, credit check and submission run within the day; the utility answers
        // within 72 business hours; service starts on the start date.
        let day = advance(&app, &token, 1).await;
        assert!(day["account"]["enrollment"]["is_identity_verified"] == true, "{day}");
        assert_eq!(day["account"]["status"], "reviewing");
        advance(&app, &token, 6).await;
        app.eventually("the utility accepts", || async {
            let (s, _) = status(&app.get("/v1/account", &token).await.body);
            s == "ready" || s == "active"
        })
        .await;
        advance(&app, &token, 14).await;
        settles_at(&app, &token, pair("active", "active")).await;
        let later = app.get("/v1/account", &token).await.body;
        assert_eq!(later["is_service_active"], true);
        let location = &later["locations"][0];
        assert_eq!(location["is_service_active"], true);
        assert_eq!(location["has_usage_history"], true);
        assert_eq!(location["service_start_date"], start.as_str());

        let types = event_types(&app, &uuid).await;
        for expected in ["enrollment.plan_accepted", "enrollment.finalized", "location.service_active", "location.usage_history_available"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }
        let history = server::store::accounts::status_history(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        let reasons: Vec<_> = history.iter().map(|h| h.status_reason.as_str()).collect();
        for expected in ["verification_pending", "credit_check_pending", "utility_submitted", "service_pending", "active"] {
            assert!(reasons.contains(&expected), "{expected} in {reasons:?}");
        }
    }

    async fn plan_acceptance_enforces_every_rule(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "rules@example.com").await;
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let body = |patch: Value| {
            let mut b = json!({"plan_uuid": plan["plan_uuid"], "esi_id": HOUSE, "service_start_date": start, "terms_accepted": true});
            for (k, v) in patch.as_object().unwrap() {
                b[k] = v.clone();
            }
            b
        };
        let post = |b: Value| { let app = &app; let token = token.clone(); async move { app.post("/v1/account/enroll/plans/accept", &token, &b).await } };

        let r = post(body(json!({"terms_accepted": false}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "terms_not_accepted"));
        let mut missing = body(json!({}));
        missing.as_object_mut().unwrap().remove("terms_accepted");
        let r = post(missing).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        let r = post(body(json!({"service_start_date": plan["latest_start_date"].as_str().map(|d| {
            let d = chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap() + chrono::Duration::days(1);
            d.to_string()
        })}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"));
        assert_eq!(r.body["error"]["latest_start_date"], plan["latest_start_date"]);
        assert!(r.body["error"]["earliest_start_date"].is_string());
        let r = post(body(json!({"service_start_date": "2001-01-01"}))).await;
        assert_eq!(r.code(), "start_date_out_of_range");
        let r = post(body(json!({"esi_id": "12345"}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "esi_id_invalid"));
        let r = post(body(json!({"esi_id": "10443729999999999"}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "esi_id_not_found"));
        let r = post(body(json!({"esi_id": OTHER_HOUSE}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "esi_id_invalid"), "a plan priced for another meter");
        let r = post(body(json!({"plan_uuid": uuid::Uuid::new_v4()}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        // Another account's plan is not found either.
        let (_, other_token) = customer(&app, "other@example.com").await;
        let r = app.post("/v1/account/enroll/plans/accept", &other_token, &body(json!({}))).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
        let r = post(body(json!({"enrollment_type": "teleport"}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        // Refused requests created nothing.
        assert_eq!(app.get("/v1/account", &token).await.body["locations"], json!([]));

        let r = post(body(json!({"start_date": start, "service_start_date": null}))).await;
        assert_eq!(r.status, StatusCode::OK, "the start_date alias: {}", r.text);
        let r = post(body(json!({}))).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "plan_already_accepted"));

        // A price older than its 5 business days cannot be accepted.
        let (_, late_token) = customer(&app, "late@example.com").await;
        let late_plan = first_plan(&app, &late_token, HOUSE).await;
        advance(&app, &late_token, 10).await;
        let r = app.post("/v1/account/enroll/plans/accept", &late_token, &json!({"plan_uuid": late_plan["plan_uuid"], "esi_id": HOUSE, "service_start_date": late_plan["latest_start_date"], "terms_accepted": true})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "plan_expired"));
    }

    async fn plan_acceptance_defaults_to_the_plans_meter(app) {
        with_meters(&app).await;
        // Priced by postal code, the plan has no meter: without a confirmed address the
        // ESI ID must be given.
        let (uuid, token) = customer(&app, "default-esi@example.com").await;
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"postal_code": "75201"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let by_zip = r.body["plans"][0].clone();
        let terms = |plan: &Value| json!({"plan_uuid": plan["plan_uuid"], "service_start_date": plan["earliest_switch_start_date"], "terms_accepted": true});
        let r = app.post("/v1/account/enroll/plans/accept", &token, &terms(&by_zip)).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        assert_eq!(r.body["error"]["param"], "esi_id");
        let me = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await;
        assert_eq!(me.body["enrollment"]["has_accepted_plan"], false);

        // Priced for a meter, the plan is accepted for that meter.
        let plan = first_plan(&app, &token, OTHER_HOUSE).await;
        let r = app.post("/v1/account/enroll/plans/accept", &token, &terms(&plan)).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["location"]["esi_id"], OTHER_HOUSE);
    }

    async fn finalize_lists_what_is_missing(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "incomplete@example.com").await;
        app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"));
        assert_eq!(r.body["error"]["missing"], json!(["plan", "credit_check", "payment_method"]));
        assert_eq!(r.body["error"]["type"], "state_error");
        let r = app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": "abc"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "esi_id_invalid"));
        let r = app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": "10443729999999999"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "esi_id_not_found"));
    }

    async fn the_utility_answers_by_the_magic_esi_ids(app) {
        with_meters(&app).await;
        for (i, (esi, reason)) in [
            (SWITCH_HOLD, "enrollment_blocked_switch_hold"),
            (DEACTIVATED, "enrollment_blocked_deactivated"),
            (REJECTED, "utility_blocked"),
        ]
        .into_iter()
        .enumerate()
        {
            let (_, token) = customer(&app, &format!("magic{i}@example.com")).await;
            ready_to_finalize(&app, &token, esi).await;
            assert_eq!(app.post("/v1/account/enroll/finalize", &token, &Value::Null).await.status, StatusCode::OK);
            advance(&app, &token, 10).await;
            settles_at(&app, &token, pair("needs_attention", reason)).await;
        }
    }

    async fn an_expired_price_is_refused_at_finalize_and_a_new_plan_replaces_it(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "expire@example.com").await;
        let r = app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK);
        let plan = first_plan(&app, &token, HOUSE).await;
        let r = accept(&app, &token, &plan, HOUSE, plan["latest_start_date"].as_str().unwrap()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        advance(&app, &token, 9).await;
        // The price expired: finalize says so, and how to go on, and changes nothing.
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "plan_expired"), "{}", r.text);
        assert!(r.body["error"]["message"].as_str().unwrap().contains("plans/request"), "{}", r.text);
        assert_eq!(r.body["error"]["expired_at"], plan["expires_at"], "{}", r.text);
        assert!(!event_types(&app, &uuid).await.contains(&"enrollment.finalized".to_owned()));
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["is_enrollment_finalized"], false, "{}", me.text);
        // Plans again: the new acceptance replaces the expired one, and the enrollment goes on.
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let me = app.get("/v1/account", &token).await;
        let locations = me.body["locations"].as_array().unwrap();
        assert_eq!(locations.len(), 1, "{}", me.text);
        assert_eq!(locations[0]["plan_uuid"], plan["plan_uuid"], "{}", me.text);
        assert_eq!(me.body["enrollment"]["can_finalize_enrollment"], true, "{}", me.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 40).await;
        settles_at(&app, &token, pair("active", "active")).await;
    }

    async fn a_price_that_expires_after_finalize_holds(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "in-time@example.com").await;
        // A start far enough out to outlive the price (the earliest switch date would pass
        // before it expires, which finalize refuses on its own grounds).
        app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        let plan = first_plan(&app, &token, HOUSE).await;
        let r = accept(&app, &token, &plan, HOUSE, plan["latest_start_date"].as_str().unwrap()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        let me = app.get("/v1/account", &token).await;
        let plan_uuid = me.body["locations"][0]["plan_uuid"].as_str().unwrap().parse().unwrap();
        let expires = server::store::market::plan_by_uuid(&app.state.db, plan_uuid).await.unwrap().unwrap().expires_at;
        // Finalized half a minute before the price expires; verification runs a minute later.
        let to = expires - chrono::Duration::seconds(30);
        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"to": to.to_rfc3339()})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        let me = app.get("/v1/account", &token).await;
        assert_ne!(status(&me.body), pair("cancelled", "expire_pre_active"), "{}", me.text);
        assert_eq!(me.body["enrollment"]["is_identity_verified"], true, "{}", me.text);
    }

    async fn an_account_cancelled_for_an_expired_price_can_enroll_again(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "stuck@example.com").await;
        ready_to_finalize(&app, &token, HOUSE).await;
        assert_eq!(app.post("/v1/account/enroll/finalize", &token, &Value::Null).await.status, StatusCode::OK);
        // Stored as an account cancelled for an expired price before verification.
        let account: uuid::Uuid = uuid.parse().unwrap();
        let mut tx = app.state.db.begin().await.unwrap();
        let mut e = server::store::enrollment::enrollment(&mut tx, account).await.unwrap().unwrap();
        e.cancellation = Some(server::domain::status::Cancellation::ExpiredPreActive);
        server::store::enrollment::update_enrollment(&mut tx, &e).await.unwrap();
        server::store::enrollment::set_status_of_account_contracts(
            &mut tx,
            account,
            server::domain::enrollment::ContractStatus::Pending,
            server::domain::enrollment::ContractStatus::Cancelled,
        )
        .await
        .unwrap();
        server::store::enrollment::drop_pending_jobs(&mut tx, account, &server::store::enrollment::PIPELINE_JOB_KINDS).await.unwrap();
        server::services::follow_up::refresh_status(&mut tx, &app.clock, app.app_uuid, account, app.clock.now()).await.unwrap();
        tx.commit().await.unwrap();
        app.state.account_changed(account);
        settles_at(&app, &token, pair("cancelled", "expire_pre_active")).await;
        // Plans again, accepted, finalized: the enrollment starts over and service starts.
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["can_finalize_enrollment"], true, "{}", me.text);
        assert_eq!(me.body["locations"].as_array().unwrap().len(), 1, "{}", me.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 40).await;
        settles_at(&app, &token, pair("active", "active")).await;
    }

}

both_engines! {
    with relaxed;

    async fn client_agent_enrollment_needs_the_authorization_first(app) {
        with_meters(&app).await;
        // Recorded first: plans 7 to 30 days out, accepted by the client agent, finalized.
        let (uuid, token) = customer(&app, "agent@example.com").await;
        let r = app.post(&format!("/v1/app/accounts/{uuid}/record-client-agent"), &app.app_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK);
        app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(status(&me.body), pair("not_enrolled", "enrollment_pending_client_agent"), "{}", me.text);
        let plan = first_plan(&app, &token, HOUSE).await;
        let today = server::domain::market::market_date(app.clock.now());
        let too_soon = (today + chrono::Duration::days(6)).to_string();
        let r = accept(&app, &token, &plan, HOUSE, &too_soon).await;
        assert_eq!(r.code(), "start_date_out_of_range", "{}", r.text);
        let r = accept(&app, &token, &plan, HOUSE, &(today + chrono::Duration::days(10)).to_string()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["contract"]["accepted_by"], "client_agent");
        // The customer receives the Letter of Authorization.
        let mails = app.get(&format!("/v1/app/sandbox/emails?account_uuid={uuid}"), &app.app_token).await;
        let letter = mails.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["template"] == "letter_of_authorization")
            .unwrap_or_else(|| panic!("no letter in {}", mails.text))
            .clone();
        let text = letter["text"].as_str().unwrap();
        for fact in [HOUSE, "100 ELM ST", "Ana Díaz", plan["name"].as_str().unwrap(), "cancel"] {
            assert!(text.contains(fact), "{fact} in {text}");
        }
        assert_eq!(letter["to"], "agent@example.com");
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({"is_client_agent_enrollment": true})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["status"], "reviewing");
        // The credit check already ran; the utility and the start date follow.
        advance(&app, &token, 31).await;
        settles_at(&app, &token, pair("active", "active")).await;

        // After the customer accepted a plan, recording is refused, even back-dated, and the
        // enrollment cannot be finalized as a client agent's.
        let (uuid, token) = customer(&app, "late-agent@example.com").await;
        ready_to_finalize(&app, &token, OTHER_HOUSE).await;
        let back_dated = (app.clock.now() - chrono::Duration::days(2)).to_rfc3339();
        for body in [Value::Null, json!({"client_agent_accepted_at": back_dated})] {
            let r = app.post(&format!("/v1/app/accounts/{uuid}/record-client-agent"), &app.app_token, &body).await;
            assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "client_agent_not_recorded"), "{}", r.text);
            assert!(r.body["error"]["message"].as_str().unwrap().contains("precede plans/accept"), "{}", r.text);
        }
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["client_agent_accepted"], false, "{}", me.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({"is_client_agent_enrollment": true})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "client_agent_not_recorded"));
        // The customer's own enrollment goes on.
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }

    async fn the_billing_address_is_the_service_address_unless_told_otherwise(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "bill@example.com").await;
        let r = app.get("/v1/account/billing/address", &token).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&json!({"same_as_service_address": true})), &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"));
        app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        let r = app.get("/v1/account/billing/address", &token).await;
        assert_eq!(r.body, json!({"same_as_service_address": true, "address_1": "100 ELM ST", "address_2": null, "city": "DALLAS", "state": "TX", "postal_code": "75201"}));
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&json!({"same_as_service_address": false})), &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&json!({"same_as_service_address": false, "address": {"address_1": "PO Box 9", "city": "Austin", "state": "tx", "postal_code": "78701"}})), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(app.get("/v1/account/billing/address", &token).await.body["city"], "Austin");
        assert!(event_types(&app, &uuid).await.iter().any(|t| t == "account.billing_address_updated"));
        assert_eq!(app.get("/v1/account", &token).await.body["enrollment"]["is_billing_address_confirmed"], true);

        // Back to the service address with an address sent beside it: a malformed one is
        // refused and changes nothing; a well-formed one is not used.
        let austin = app.get("/v1/account/billing/address", &token).await.body;
        let malformed = json!({"same_as_service_address": true, "address": {"address_1": "", "city": "Austin", "state": "tx", "postal_code": "787"}});
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&malformed), &[]).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        assert!(r.body["error"]["param"].as_str().unwrap().starts_with("address"), "{}", r.text);
        assert_eq!(app.get("/v1/account/billing/address", &token).await.body, austin);
        let beside = json!({"same_as_service_address": true, "address": {"address_1": "PO Box 10", "city": "Waco", "state": "TX", "postal_code": "76701"}});
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&beside), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let service = json!({"same_as_service_address": true, "address_1": "100 ELM ST", "address_2": null, "city": "DALLAS", "state": "TX", "postal_code": "75201"});
        assert_eq!(r.body, service);
        assert_eq!(app.get("/v1/account/billing/address", &token).await.body, service);
    }

    async fn the_summary_reads_back_each_choice_as_it_was_made(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "summary@example.com").await;
        let r = app.get("/v1/account/enroll/summary", &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body, json!({"plan": null, "payment_method": null, "billing_address": null}));

        app.post("/v1/account/enroll/confirm-address", &token, &json!({"esi_id": HOUSE})).await;
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        add_card_number(&app, &token, "5555555555554444").await;
        let r = app.get("/v1/account/enroll/summary", &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // The plan as it was offered: its prices, fee and averages, not re-priced.
        let summary = &r.body["plan"];
        for field in ["plan_uuid", "name", "plan_type", "term_months", "rates", "average_price_cents_per_kwh", "renewable_percent", "earliest_start_date"] {
            assert_eq!(summary[field], plan[field], "{field}");
        }
        assert_eq!(r.body["payment_method"]["card_brand"], "mastercard");
        assert_eq!(r.body["payment_method"]["card_last4"], "4444");
        assert_eq!(r.body["billing_address"]["same_as_service_address"], true);
        assert_eq!(r.body["billing_address"]["address_1"], "100 ELM ST");

        // Another customer's summary shows nothing of this one's.
        let (_, other) = customer(&app, "summary-other@example.com").await;
        let r = app.get("/v1/account/enroll/summary", &other).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body, json!({"plan": null, "payment_method": null, "billing_address": null}));
    }

    async fn the_sandbox_simulates_the_utility_and_the_market(app) {
        with_meters(&app).await;
        let simulate = |token: String, event: &'static str| {
            let app = &app;
            async move {
                let r = app.post("/v1/account/sandbox/simulate", &token, &json!({"event": event})).await;
                assert_eq!(r.status, StatusCode::OK, "{event}: {}", r.text);
                status(&r.body["account"])
            }
        };
        // Before finalize there is nothing for the utility to answer.
        let (_, token) = customer(&app, "sim0@example.com").await;
        let r = app.post("/v1/account/sandbox/simulate", &token, &json!({"event": "switch_hold"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"));

        let finalized = |email: &'static str| {
            let app = &app;
            async move {
                let (uuid, token) = customer(app, email).await;
                ready_to_finalize(app, &token, HOUSE).await;
                let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
                assert_eq!(r.status, StatusCode::OK, "{}", r.text);
                (uuid, token)
            }
        };
        let (_, t) = finalized("sim1@example.com").await;
        assert_eq!(simulate(t.clone(), "verification_hold").await, pair("needs_attention", "enrollment_blocked_verification_hold"));
        let (_, t) = finalized("sim2@example.com").await;
        assert_eq!(simulate(t.clone(), "switch_hold").await, pair("needs_attention", "enrollment_blocked_switch_hold"));
        let lifted = simulate(t.clone(), "switch_hold_lifted").await;
        assert_eq!(lifted.0, "reviewing", "{lifted:?}");
        let (_, t) = finalized("sim3@example.com").await;
        assert_eq!(simulate(t.clone(), "meter_deactivated").await, pair("needs_attention", "enrollment_blocked_deactivated"));
        let (_, t) = finalized("sim4@example.com").await;
        assert_eq!(simulate(t.clone(), "utility_blocked").await, pair("needs_attention", "utility_blocked"));
        let (_, t) = finalized("sim5@example.com").await;
        assert_eq!(simulate(t.clone(), "utility_accepted").await, pair("ready", "service_pending"));
        assert_eq!(simulate(t.clone(), "service_canceled").await, pair("cancelled", "cancelled_pre_start"));
        let (uuid, t) = finalized("sim6@example.com").await;
        simulate(t.clone(), "service_active").await;
        settles_at(&app, &t, pair("active", "active")).await;
        simulate(t.clone(), "usage_history_available").await;
        assert_eq!(simulate(t.clone(), "customer_switched_away").await, pair("cancelled", "cancelled_post_start"));
        let me = app.get("/v1/account", &t).await.body;
        assert_eq!(me["locations"][0]["is_service_active"], false);
        assert!(me["locations"][0]["final_service_date"].is_string());
        let types = event_types(&app, &uuid).await;
        assert!(types.iter().any(|t| t == "location.service_canceled"), "{types:?}");
    }
}

both_engines! {
    with relaxed;
    async fn a_location_and_its_support_info_belong_to_its_account(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "loc@example.com").await;
        ready_to_finalize(&app, &token, HOUSE).await;
        let me = app.get("/v1/account", &token).await.body;
        let location = me["locations"][0]["uuid"].as_str().unwrap().to_owned();

        let r = app.get(&format!("/v1/account/locations/{location}"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body, me["locations"][0]);
        assert_eq!(r.body["esi_id"], HOUSE);

        let r = app.get(&format!("/v1/account/locations/{location}/support-info"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let oncor = server::store::market::tdus(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .find(|t| t.name == "ONCOR")
            .unwrap();
        assert_eq!(r.body["tdu_name"], oncor.display_name.as_str());
        assert_eq!(r.body["tdu_phone"], oncor.phone.as_str());
        assert_eq!(r.body["tdu_outage_phone"], json!(oncor.outage_phone));
        assert!(r.body["partner_support"].is_object(), "{}", r.text);

        // Another account of the same app sees neither.
        let (_, other) = customer(&app, "other@example.com").await;
        for path in [format!("/v1/account/locations/{location}"), format!("/v1/account/locations/{location}/support-info")] {
            let r = app.get(&path, &other).await;
            assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{path}");
        }
        let r = app.get("/v1/account/locations/not-a-uuid", &token).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }

    async fn delete_enrollment_after_active_lets_the_account_enroll_again(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "again@example.com").await;
        ready_to_finalize(&app, &token, HOUSE).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 1).await;
        advance(&app, &token, 6).await;
        app.eventually("the utility accepts", || async {
            let (s, _) = status(&app.get("/v1/account", &token).await.body);
            s == "ready" || s == "active"
        })
        .await;
        advance(&app, &token, 14).await;
        settles_at(&app, &token, pair("active", "active")).await;

        let r = app.post("/v1/account/sandbox/delete-enrollment", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // Back to the start: nothing of the enrollment is left.
        assert_eq!(status(&r.body), pair("not_enrolled", "unresolved"));
        assert_eq!(r.body["enrollment"]["has_credit_check"], false);
        assert_eq!(r.body["enrollment"]["has_payment_method"], false);
        assert_eq!(r.body["locations"], json!([]));
        assert_eq!(r.body["enrollment"]["is_enrollment_finalized"], false, "{}", r.text);
        assert_eq!(r.body["is_service_active"], false);
        let id = uuid.parse().unwrap();
        assert!(server::store::enrollment::contracts_of_account(&app.state.db, id).await.unwrap().is_empty());
        assert!(server::store::enrollment::enrollment(&app.state.db, id).await.unwrap().is_none());
        assert!(server::store::enrollment::billing_address(&app.state.db, id).await.unwrap().is_none());
        let history = server::store::accounts::status_history(&app.state.db, id).await.unwrap();
        let reasons: Vec<_> = history.iter().map(|h| h.status_reason.as_str()).collect();
        assert!(reasons.contains(&"active"), "{reasons:?}");
        assert_eq!(reasons.last(), Some(&"unresolved"), "{reasons:?}");
        assert!(event_types(&app, &uuid).await.iter().filter(|t| *t == "account.status_updated").count() >= 2);

        // The same home (or another) can be enrolled again, to active.
        ready_to_finalize(&app, &token, OTHER_HOUSE).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["locations"].as_array().unwrap().len(), 1);
        assert_eq!(r.body["locations"][0]["esi_id"], OTHER_HOUSE);
        advance(&app, &token, 1).await;
        advance(&app, &token, 6).await;
        advance(&app, &token, 14).await;
        settles_at(&app, &token, pair("active", "active")).await;
    }
}

both_engines! {
    with relaxed;
    async fn a_spec_order_enrollment_finalizes_without_confirm_address(app) {
        with_meters(&app).await;
        let (_, token) = customer(&app, "spec-order@example.com").await;
        // Search, the customer confirms in the partner's UI, then plans/accept with the ESI ID.
        let r = app.post("/v1/account/enroll/esi-id-search", &token, &json!({"esi_id": HOUSE})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plan = first_plan(&app, &token, HOUSE).await;
        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["account"]["enrollment"]["has_confirmed_address"], true, "{}", r.text);
        assert_eq!(status(&r.body["account"]), pair("not_enrolled", "missing_identity"));
        // The accepted meter's address is the confirmed one: the billing address follows it.
        let r = app.send(reqwest::Method::PUT, "/v1/account/billing/address", Some(&token), Some(&json!({"same_as_service_address": true})), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["address_1"], "100 ELM ST");

        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["missing"], json!([]), "{}", me.text);
        assert_eq!(me.body["enrollment"]["can_finalize_enrollment"], true);
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(status(&r.body), pair("reviewing", "verification_pending"));
    }

    async fn a_client_agent_enrollment_without_confirm_address_finalizes(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "spec-agent@example.com").await;
        let r = app.post(&format!("/v1/app/accounts/{uuid}/record-client-agent"), &app.app_token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(status(&me.body), pair("not_enrolled", "missing_address"), "{}", me.text);

        let plan = first_plan(&app, &token, HOUSE).await;
        let today = server::domain::market::market_date(app.clock.now());
        let r = accept(&app, &token, &plan, HOUSE, &(today + chrono::Duration::days(10)).to_string()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["contract"]["accepted_by"], "client_agent");
        assert_eq!(r.body["account"]["enrollment"]["has_confirmed_address"], true);
        assert_eq!(status(&r.body["account"]), pair("not_enrolled", "enrollment_pending_client_agent"), "{}", r.text);
        let history = server::store::accounts::status_history(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(history.iter().any(|h| h.status_reason == server::domain::status::StatusReason::EnrollmentPendingClientAgent));

        let r = app.post("/v1/account/enroll/finalize", &token, &json!({"is_client_agent_enrollment": true})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["status"], "reviewing");
        assert_eq!(r.body["enrollment"]["is_enrollment_finalized"], true);
    }
}

/// Finalizes and walks the pipeline to `active/active`; returns the service start date.
pub(crate) async fn walk_to_active(app: &TestApp, token: &str, esi: &str) -> String {
    let start = ready_to_finalize(app, token, esi).await;
    let r = app
        .post("/v1/account/enroll/finalize", token, &json!({}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    advance(app, token, 1).await;
    advance(app, token, 6).await;
    app.eventually("the utility accepts", || async {
        let (s, _) = status(&app.get("/v1/account", token).await.body);
        s == "ready" || s == "active"
    })
    .await;
    advance(app, token, 14).await;
    settles_at(app, token, pair("active", "active")).await;
    start
}

pub(crate) fn days_after(date: &str, days: i64) -> String {
    (chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap() + chrono::Duration::days(days))
        .to_string()
}

both_engines! {
    with relaxed;
    async fn cancel_service_before_start_cancels_at_once(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "cancel-early@example.com").await;
        let start = ready_to_finalize(&app, &token, HOUSE).await;
        let me = app.get("/v1/account", &token).await.body;
        let location = me["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let path = format!("/v1/account/locations/{location}/cancel-service");
        let ok = json!({"final_service_date": start, "reason": "moving"});

        // Not finalized: nothing to cancel yet.
        let r = app.post(&path, &token, &ok).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"), "{}", r.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let before = app.get("/v1/account", &token).await.body;

        // Bad dates and reasons are 400 and change nothing.
        for (body, param) in [
            (json!({"final_service_date": "2001-01-01", "reason": "moving"}), "final_service_date"),
            (json!({"final_service_date": days_after(&start, 120), "reason": "moving"}), "final_service_date"),
            (json!({"final_service_date": "next week", "reason": "moving"}), "final_service_date"),
            (json!({"final_service_date": start, "reason": "price"}), "reason"),
        ] {
            let r = app.post(&path, &token, &body).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{}", r.text);
        }
        let r = app.post(&path, &token, &json!({"reason": "moving"})).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text);
        let (_, other) = customer(&app, "cancel-other@example.com").await;
        let r = app.post(&path, &other, &ok).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        assert_eq!(app.get("/v1/account", &token).await.body, before);
        assert!(!event_types(&app, &uuid).await.iter().any(|t| t == "location.service_canceled"));

        let r = app.post(&path, &token, &ok).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["uuid"], location.as_str());
        assert_eq!(r.body["status"], "cancelled");
        assert_eq!(r.body["is_service_active"], false);
        assert!(r.body["final_service_date"].is_string(), "{}", r.text);
        let me = app.get("/v1/account", &token).await.body;
        assert_eq!(status(&me), pair("cancelled", "cancelled_pre_start"));
        assert_eq!(me["locations"][0], r.body);
        let contracts = server::store::enrollment::contracts_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(contracts.iter().all(|c| c.status.as_str() == "cancelled"), "{contracts:?}");
        assert!(event_types(&app, &uuid).await.iter().any(|t| t == "location.service_canceled"));
        let history = server::store::accounts::status_history(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert_eq!(history.last().unwrap().status_reason, server::domain::status::StatusReason::CancelledPreStart);

        let r = app.post(&path, &token, &ok).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "service_not_active"), "{}", r.text);
        // Nothing runs later on the cancelled enrollment.
        advance(&app, &token, 30).await;
        settles_at(&app, &token, pair("cancelled", "cancelled_pre_start")).await;
    }

    async fn cancel_service_after_start_ends_on_the_final_service_date(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "cancel-late@example.com").await;
        let start = walk_to_active(&app, &token, HOUSE).await;
        let me = app.get("/v1/account", &token).await.body;
        let location = me["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let path = format!("/v1/account/locations/{location}/cancel-service");
        let last_day = days_after(&start, 40);

        let r = app.post(&path, &token, &json!({"final_service_date": days_after(&start, 200), "reason": "switching"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{}", r.text);
        assert_eq!(app.get("/v1/account", &token).await.body, me);

        let r = app.post(&path, &token, &json!({"final_service_date": last_day, "reason": "switching"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["final_service_date"], last_day.as_str());
        assert_eq!(r.body["is_service_active"], true);
        assert_eq!(r.body["status"], "active");
        assert_eq!(status(&app.get("/v1/account", &token).await.body), pair("active", "active"));
        let r = app.post(&path, &token, &json!({"final_service_date": last_day, "reason": "other"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "service_not_active"), "{}", r.text);

        // Up to the day before, service goes on; on the final service date it ends.
        let to_eve = advance(&app, &token, 1).await;
        let today = to_eve["clock"].as_str().unwrap()[..10].to_owned();
        let days_left = (chrono::NaiveDate::parse_from_str(&last_day, "%Y-%m-%d").unwrap()
            - chrono::NaiveDate::parse_from_str(&today, "%Y-%m-%d").unwrap())
        .num_days();
        advance(&app, &token, days_left - 2).await;
        settles_at(&app, &token, pair("active", "active")).await;
        assert!(!event_types(&app, &uuid).await.iter().any(|t| t == "location.service_canceled"));
        advance(&app, &token, 3).await;
        settles_at(&app, &token, pair("cancelled", "cancelled_post_start")).await;
        let l = app.get(&format!("/v1/account/locations/{location}"), &token).await.body;
        assert_eq!(l["status"], "cancelled");
        assert_eq!(l["is_service_active"], false);
        assert_eq!(l["final_service_date"], last_day.as_str());
        let contracts = server::store::enrollment::contracts_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(contracts.iter().all(|c| c.status.as_str() == "ended"), "{contracts:?}");
        assert!(event_types(&app, &uuid).await.iter().any(|t| t == "location.service_canceled"));
    }
}

both_engines! {
    with relaxed;
    async fn delete_enrollment_mid_pipeline_drops_its_pending_jobs(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "midway@example.com").await;
        ready_to_finalize(&app, &token, HOUSE).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/sandbox/delete-enrollment", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(status(&r.body), pair("not_enrolled", "unresolved"));
        // Verification, submission and service start no longer run.
        advance(&app, &token, 30).await;
        settles_at(&app, &token, pair("not_enrolled", "unresolved")).await;
        let types = event_types(&app, &uuid).await;
        assert!(!types.iter().any(|t| t == "location.service_active"), "{types:?}");
    }
}

both_engines! {
    with relaxed;
    async fn seed_demo_data_reaches_active_in_one_call(app) {
        // An empty directory: nothing to seed, nothing changes.
        let (uuid, token) = customer(&app, "demo@example.com").await;
        let before = app.get("/v1/account", &token).await.body;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "enrollment_incomplete"), "{}", r.text);
        assert_eq!(app.get("/v1/account", &token).await.body, before);

        with_meters(&app).await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(status(&r.body), pair("active", "active"));
        assert_eq!(r.body["is_service_active"], true);
        assert_eq!(r.body["enrollment"]["is_enrollment_finalized"], true);
        let location = &r.body["locations"][0];
        assert_eq!(location["status"], "active");
        assert_eq!(location["is_service_active"], true);
        assert_eq!(location["has_usage_history"], true);
        assert!(location["plan_uuid"].is_string(), "{}", r.text);
        assert_eq!(location["service_start_date"], location["contract_start"]);
        let contracts = server::store::enrollment::contracts_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(contracts.len() == 1 && contracts[0].status.as_str() == "active", "{contracts:?}");
        let types = event_types(&app, &uuid).await;
        for expected in ["enrollment.plan_accepted", "account.payment_method_added", "location.service_active", "location.usage_history_available"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }
        let history = server::store::accounts::status_history(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert_eq!(history.last().unwrap().status_reason, server::domain::status::StatusReason::Active);
        // Nothing undoes it as time goes by; it can be reset and seeded again.
        advance(&app, &token, 30).await;
        settles_at(&app, &token, pair("active", "active")).await;
        let r = app.post("/v1/account/sandbox/delete-enrollment", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(status(&r.body), pair("active", "active"), "{}", r.text);
    }

    async fn seed_demo_data_finishes_a_finalized_enrollment(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "demo-finalized@example.com").await;
        ready_to_finalize(&app, &token, SWITCH_HOLD).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(status(&r.body), pair("active", "active"));
        assert_eq!(r.body["locations"].as_array().unwrap().len(), 1);
        assert_eq!(r.body["locations"][0]["esi_id"], SWITCH_HOLD);
        // The pipeline's pending steps (a switch hold for this meter) no longer run.
        advance(&app, &token, 30).await;
        settles_at(&app, &token, pair("active", "active")).await;
        let types = event_types(&app, &uuid).await;
        assert_eq!(types.iter().filter(|t| *t == "location.service_active").count(), 1, "{types:?}");

        // A cancelled enrollment is not revived.
        let location = r.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let today = advance(&app, &token, 1).await["clock"].as_str().unwrap()[..10].to_owned();
        let r = app.post(&format!("/v1/account/locations/{location}/cancel-service"), &token, &json!({"final_service_date": days_after(&today, 5), "reason": "other"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 10).await;
        settles_at(&app, &token, pair("cancelled", "cancelled_post_start")).await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "service_not_active"), "{}", r.text);
    }
}

/// The account's market date, as the API writes dates.
async fn account_today(app: &TestApp, uuid: &str) -> chrono::NaiveDate {
    app.state
        .clock
        .for_account(&app.state.db, uuid.parse().unwrap())
        .await
        .unwrap()
        .today()
}

both_engines! {
    at [business_afternoon];
    with relaxed;
    async fn a_move_in_starts_the_same_day_until_the_utilitys_cut_off(app) {
        with_meters(&app).await;
        // Accepted and finalized before the cut-off: the move-in starts today.
        let (uuid, token) = customer(&app, "same-day@example.com").await;
        let today = account_today(&app, &uuid).await;
        let plan = first_plan(&app, &token, HOUSE).await;
        assert_eq!(plan["earliest_start_date"], today.to_string(), "{plan}");
        let r = accept(&app, &token, &plan, HOUSE, &today.to_string()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["contract"]["start_date"], today.to_string());
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        advance(&app, &token, 4).await;
        settles_at(&app, &token, pair("active", "active")).await;
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["locations"][0]["service_start_date"], today.to_string(), "{}", me.text);

        // Accepted before the cut-off, finalized after it: finalize says which days remain and
        // changes nothing; a new acceptance replaces the old one.
        let (uuid, token) = customer(&app, "late-same-day@example.com").await;
        let plan = first_plan(&app, &token, HOUSE).await;
        let r = accept(&app, &token, &plan, HOUSE, &today.to_string()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        add_card(&app, &token).await;
        on_to_hour(&app, (&uuid, &token), 17).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, "start_date_passed"), "{}", r.text);
        let tomorrow = (today + chrono::Duration::days(1)).to_string();
        assert_eq!(r.body["error"]["earliest_start_date"], tomorrow.as_str(), "{}", r.text);
        assert!(!event_types(&app, &uuid).await.contains(&"enrollment.finalized".to_owned()));
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["is_enrollment_finalized"], false, "{}", me.text);
        // After the cut-off, today is no longer offered nor accepted.
        let plan = first_plan(&app, &token, HOUSE).await;
        assert_eq!(plan["earliest_start_date"], tomorrow.as_str(), "{plan}");
        let r = accept(&app, &token, &plan, HOUSE, &today.to_string()).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"), "{}", r.text);
        let r = accept(&app, &token, &plan, HOUSE, &tomorrow).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["locations"].as_array().unwrap().len(), 1, "{}", me.text);
        let r = app.post("/v1/account/enroll/finalize", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }
}

both_engines! {
    at [business_evening];
    async fn after_the_cut_off_a_move_in_starts_tomorrow_at_the_earliest(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "evening@example.com").await;
        let today = account_today(&app, &uuid).await;
        let plan = first_plan(&app, &token, HOUSE).await;
        assert_eq!(plan["earliest_start_date"], (today + chrono::Duration::days(1)).to_string(), "{plan}");
        let r = accept(&app, &token, &plan, HOUSE, &today.to_string()).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"), "{}", r.text);
        let r = app.post("/v1/app/accounts/enroll/plans/request", &app.app_token, &json!({"esi_id": HOUSE, "service_start_date": today.to_string()})).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "start_date_out_of_range"), "{}", r.text);
        assert_eq!(r.body["error"]["earliest_start_date"], (today + chrono::Duration::days(1)).to_string());
    }
}
