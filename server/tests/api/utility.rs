//! Live enrollments never meet the sandbox's utility simulator: they wait on the operator's
//! worklist, and the answers recorded there move them on as the simulator's answers do.

use reqwest::StatusCode;
use serde_json::{json, Value};

use server::domain::users::Role;

use crate::{
    cli::{operator, succeeds},
    dashboard::signed_in,
    enrollment::{event_types, pair, relaxed, settles_at, status, with_meters, SWITCH_HOLD},
    fake_processor::FakeProcessor,
    helpers::TestApp,
    live_payments::live,
    payments::session,
};

/// The worklist as the operator sees it.
pub(crate) fn worklist(app: &TestApp, pending_only: bool) -> Vec<Value> {
    let mut args = vec!["market", "submissions", "list", "--json"];
    if pending_only {
        args.push("--pending");
    }
    serde_json::from_str(&succeeds(&operator(app, &args))).unwrap()
}

/// A live customer whose enrollment waits on the operator's worklist: the server, the
/// customer's token, the account's id and the start date they asked for.
pub(crate) async fn live_submission(app: &TestApp) -> (TestApp, String, String, String) {
    let (_, server, _, token, account, start) = live_submission_with_processor(app).await;
    (server, token, account, start)
}

/// `live_submission`, with the fake processor the live app charges through and the app's token.
pub(crate) async fn live_submission_with_processor(
    app: &TestApp,
) -> (FakeProcessor, TestApp, String, String, String, String) {
    with_meters(app).await;
    let (fake, server, live_uuid, live_token) = live(app).await;
    let created = server
        .post(
            "/v1/app/accounts",
            &live_token,
            &json!({
                "email": "live@example.com", "first_name": "Ana", "last_name": "Díaz",
                "phone": "5125550123", "date_of_birth": "1980-04-02"
            }),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let account = created.body["uuid"].as_str().unwrap().to_owned();
    let token = server
        .post(
            &format!("/v1/app/accounts/{account}/token"),
            &live_token,
            &Value::Null,
        )
        .await;
    let token = token.body["token"].as_str().unwrap().to_owned();

    // An ESI ID whose ending holds the switch in sandbox.
    let confirmed = server
        .post(
            "/v1/account/enroll/confirm-address",
            &token,
            &json!({"esi_id": SWITCH_HOLD}),
        )
        .await;
    assert_eq!(confirmed.status, StatusCode::OK, "{}", confirmed.text);
    let plans = server
        .post(
            "/v1/account/enroll/plans/request",
            &token,
            &json!({"esi_id": SWITCH_HOLD}),
        )
        .await;
    assert_eq!(plans.status, StatusCode::OK, "{}", plans.text);
    let plan = plans.body["plans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["plan_type"] == "fixed")
        .unwrap()
        .clone();
    let start = plan["earliest_switch_start_date"]
        .as_str()
        .unwrap()
        .to_owned();
    let accepted = server.post("/v1/account/enroll/plans/accept", &token, &json!({
        "plan_uuid": plan["plan_uuid"], "esi_id": SWITCH_HOLD, "service_start_date": start, "terms_accepted": true
    })).await;
    assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.text);
    let credit = server
        .post(
            "/v1/account/enroll/credit-check",
            &token,
            &json!({"ssn": "123-45-6789", "consent": true}),
        )
        .await;
    assert_eq!(credit.status, StatusCode::ACCEPTED, "{}", credit.text);
    let (_, secret) = session(&server, &token).await;
    let pm = fake.confirm_card(&secret, "4242424242424242");
    let added = server
        .post(
            "/v1/account/billing/ensure-payment-method-added",
            &token,
            &json!({"payment_method_id": pm}),
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.text);
    let finalized = server
        .post("/v1/account/enroll/finalize", &token, &json!({}))
        .await;
    assert_eq!(finalized.status, StatusCode::OK, "{}", finalized.text);

    // Verification runs a minute after finalize. Live apps have no bureau connection yet:
    // stand in for its answer, as the credit job records one, once verification passed.
    app.clock.advance(chrono::Duration::minutes(2));
    app.eventually("verification passes", || async {
        server.get("/v1/account", &token).await.body["enrollment"]["is_identity_verified"] == true
    })
    .await;
    let account_uuid: uuid::Uuid = account.parse().unwrap();
    let mut tx = app.state.db.begin().await.unwrap();
    server::store::accounts::account_of_app_for_update(&mut tx, live_uuid, account_uuid)
        .await
        .unwrap();
    let check = server::store::credit::latest_credit_check(&mut tx, account_uuid)
        .await
        .unwrap()
        .unwrap();
    server::store::credit::set_credit_check_job(
        &mut tx,
        check.uuid,
        uuid::Uuid::new_v4(),
        server::domain::status::CreditState::Passed,
    )
    .await
    .unwrap();
    server::store::credit::set_credit_check_answer(
        &mut tx,
        check.uuid,
        server::domain::status::CreditState::Passed,
        app.clock.now(),
    )
    .await
    .unwrap();
    let clock = app
        .clock
        .for_account(&app.state.db, account_uuid)
        .await
        .unwrap();
    server::services::follow_up::submit_when_ready(&mut tx, live_uuid, account_uuid, &clock)
        .await
        .unwrap();
    server::services::follow_up::refresh_status(
        &mut tx,
        &app.clock,
        live_uuid,
        account_uuid,
        app.clock.now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    settles_at(&server, &token, pair("reviewing", "utility_submitted")).await;
    (fake, server, live_token, token, account, start)
}

both_engines! {
    with relaxed;
    async fn a_live_enrollment_waits_for_the_utility_on_the_operators_worklist(app) {
        let (server, token, account, start) = live_submission(&app).await;
        let account_uuid: uuid::Uuid = account.parse().unwrap();
        let pending = worklist(&app, true);
        assert_eq!(pending.len(), 1, "{pending:?}");
        let submission = pending[0]["uuid"].as_str().unwrap().to_owned();
        assert_eq!(pending[0]["esi_id"], SWITCH_HOLD);
        assert_eq!(pending[0]["account_uuid"], account.as_str());
        assert_eq!(pending[0]["requested_start_date"], start.as_str());
        assert_eq!(pending[0]["status"], "pending");
        // The magic ending means nothing here: no hold, the enrollment waits for the answer.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        server.state.http.caches.accounts.invalidate(&account_uuid);
        assert_eq!(status(&server.get("/v1/account", &token).await.body), pair("reviewing", "utility_submitted"));

        // Nonsense is refused and changes nothing.
        for bad in [
            &["--accepted"][..],
            &["--rejected"][..],
            &["--active"][..],
            &["--accepted", "--start-date", "2026-02-30"][..],
            &["--accepted", "--start-date", &start, "--switch-hold"][..],
        ] {
            let mut args = vec!["market", "submissions", "record", &submission];
            args.extend_from_slice(bad);
            assert!(!operator(&app, &args).status.success(), "{bad:?} was accepted");
        }
        assert_eq!(worklist(&app, true).len(), 1);

        let out = succeeds(&operator(&app, &["market", "submissions", "record", &submission, "--accepted", "--start-date", &start]));
        assert!(out.contains("accepted"), "{out}");
        settles_at(&server, &token, pair("ready", "service_pending")).await;
        let me = server.get("/v1/account", &token).await.body;
        assert_eq!(me["locations"][0]["service_start_date"], start.as_str());
        assert_eq!(me["is_service_active"], false, "service starts when the utility says so");
        assert!(worklist(&app, true).is_empty(), "answered");
        let again = operator(&app, &["market", "submissions", "record", &submission, "--switch-hold"]);
        assert!(!again.status.success(), "an accepted submission is not held afterwards");

        succeeds(&operator(&app, &["market", "submissions", "record", &submission, "--active"]));
        settles_at(&server, &token, pair("active", "active")).await;
        let me = server.get("/v1/account", &token).await.body;
        assert_eq!(me["is_service_active"], true);
        assert_eq!(me["locations"][0]["is_service_active"], true);
        let all = worklist(&app, false);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0]["status"], "active");
        assert_eq!(all[0]["start_date"], start.as_str());

        let types = event_types(&app, &account).await;
        for expected in ["enrollment.finalized", "location.service_active", "location.usage_history_available"] {
            assert!(types.iter().any(|t| t == expected), "{expected} in {types:?}");
        }
        let history = server::store::accounts::status_history(&app.state.db, account_uuid).await.unwrap();
        let reasons: Vec<_> = history.iter().map(|h| h.status_reason.as_str()).collect();
        for expected in ["utility_submitted", "service_pending", "active"] {
            assert!(reasons.contains(&expected), "{expected} in {reasons:?}");
        }
        assert!(!reasons.contains(&"enrollment_blocked_switch_hold"), "{reasons:?}");
    }

    async fn unknown_submissions_are_refused_and_sandbox_apps_never_queue(app) {
        let out = operator(&app, &["market", "submissions", "record", &uuid::Uuid::new_v4().to_string(), "--rejected", "--reason", "no such meter"]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("no submission"), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(worklist(&app, false).is_empty(), "sandbox enrollments never reach the worklist");
    }
}

both_engines! {
    with relaxed;
    async fn the_operator_records_the_utilitys_answers_on_the_dashboards_worklist(app) {
        let (server, token, account, start) = live_submission(&app).await;
        let submission = worklist(&app, true)[0]["uuid"].as_str().unwrap().to_owned();
        let operator = signed_in(&server, "ops@example.com", Role::Operator, None).await;
        let page = "/dashboard/utility";
        let shown = operator.get(page).await;
        assert_eq!(shown.status, StatusCode::OK, "{}", shown.text);
        assert!(shown.text.contains(SWITCH_HOLD) && shown.text.contains(&account), "{}", shown.text);
        let action = format!("{page}/{submission}");

        // A partner member sees no worklist and records nothing.
        let partner = signed_in(&server, "pat@partner.example", Role::Partner, Some("Partner Co")).await;
        assert_eq!(partner.get(page).await.status, StatusCode::NOT_FOUND);
        let r = partner.submit("/dashboard", &action, &[("answer", "accepted"), ("start_date", &start)]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);

        // Nonsense is refused and changes nothing; service cannot start before the utility accepts.
        for bad in [&[("answer", "accepted"), ("start_date", "2026-02-30")][..], &[("answer", "rejected"), ("reason", " ")][..], &[("answer", "active")][..], &[("answer", "maybe")][..]] {
            let r = operator.submit(page, &action, bad).await;
            assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{bad:?}: {}", r.text);
        }
        assert_eq!(worklist(&app, true)[0]["status"], "pending");

        // Accepted with the utility's start date: the enrollment moves on, audited.
        let r = operator.submit(page, &action, &[("answer", "accepted"), ("start_date", &start)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        settles_at(&server, &token, pair("ready", "service_pending")).await;
        let me = server.get("/v1/account", &token).await.body;
        assert_eq!(me["locations"][0]["service_start_date"], start.as_str());
        let audit = server::store::audit::latest_entries(&app.state.db, 50).await.unwrap();
        let entry = audit.iter().find(|e| e.action == "utility.answer_recorded").unwrap();
        assert_eq!(entry.actor, "ops@example.com");
        assert!(entry.detail.contains("accepted"), "{}", entry.detail);
        // Then service starts.
        let shown = operator.get(page).await;
        assert!(shown.text.contains("Service started"), "{}", shown.text);
        let r = operator.submit(page, &action, &[("answer", "active")]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
        settles_at(&server, &token, pair("active", "active")).await;
        assert!(worklist(&app, true).is_empty());
        // An unknown submission is no page.
        let r = operator.submit(page, &format!("{page}/{}", uuid::Uuid::new_v4()), &[("answer", "active")]).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
    }
}
