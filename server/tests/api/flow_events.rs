//! Flow events: what a flow records (`POST /v1/account/flow-events`), the session's summary
//! (`flow.session_ended`, once, when completed or left and when abandoned), and the funnel
//! (`GET /v1/app/flow-funnel` and the dashboard's page).

use reqwest::StatusCode;
use serde_json::{json, Value};
use server::domain::users::Role;

use crate::{
    dashboard::signed_in,
    flows::{flow_link, open_link},
    helpers::TestApp,
};

/// A new account's flow session of `scope`: the account and the session token.
async fn session(app: &TestApp, email: &str, scope: &str) -> (String, String) {
    let a = app.create_simple_account(email).await;
    let account = a["uuid"].as_str().unwrap().to_owned();
    let link = flow_link(app, &account, scope).await;
    let token = open_link(app, link["login_link"].as_str().unwrap())
        .await
        .unwrap();
    (account, token)
}

/// Records one event; its answer's `flow_session_id`.
async fn record(app: &TestApp, token: &str, event: Value) -> String {
    let r = app.post("/v1/account/flow-events", token, &event).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["flow_session_id"].as_str().unwrap().to_owned()
}

/// The account's `flow.session_ended` events.
async fn ended(app: &TestApp, account: &str) -> Vec<Value> {
    let r = app
        .get(
            &format!("/v1/app/events?type=flow.session_ended&account_uuid={account}"),
            &app.app_token,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body["data"].as_array().unwrap().clone()
}

/// Waits until no `flow.session_end` job is queued or running before `now`.
async fn settled(app: &TestApp) {
    app.eventually("the flow session jobs due have run", || async {
        let now = app.clock.now().timestamp_millis();
        app.query_texts(&format!(
            "SELECT kind FROM jobs WHERE kind = 'flow.session_end' \
             AND state IN ('queued', 'running') AND run_at <= {now}"
        ))
        .await
        .is_empty()
    })
    .await;
}

both_engines! {
    async fn a_flow_records_its_events_and_refuses_bad_ones(app) {
        let (account, token) = session(&app, "events@example.com", "enrollment").await;
        let id = record(&app, &token, json!({"type": "service-flow-event", "name": "opened", "scope": "enrollment"})).await;
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "a public id: {id}");
        assert!(!token.contains(&id));
        let again = record(&app, &token, json!({"name": "step_viewed", "step": "address"})).await;
        assert_eq!(again, id, "one id per session");
        record(&app, &token, json!({"name": "error_shown", "step": "credit", "error_code": "card_declined"})).await;
        // The longest step and error code the document states, and digits up to three in a row.
        let step = format!("s{}", "1ab".repeat(13));
        assert_eq!(step.len(), 40);
        record(&app, &token, json!({"name": "step_viewed", "step": step, "error_code": null})).await;
        record(&app, &token, json!({"name": "error_shown", "error_code": format!("e{}", "x".repeat(60)) + "123"})).await;

        let refused = [
            (json!({}), "parameter_missing", "name"),
            (json!({"name": "clicked"}), "parameter_invalid", "name"),
            (json!({"name": "step_viewed"}), "parameter_missing", "step"),
            (json!({"name": "step_viewed", "step": "Jane Doe, 12 Elm St"}), "parameter_invalid", "step"),
            (json!({"name": "error_shown", "step": "credit"}), "parameter_missing", "error_code"),
            (json!({"name": "opened", "error_code": "card_declined"}), "parameter_invalid", "error_code"),
            (json!({"name": "error_shown", "error_code": "123-45-6789"}), "parameter_invalid", "error_code"),
            (json!({"name": "step_viewed", "step": format!("s{}", "x".repeat(40))}), "parameter_invalid", "step"),
            (json!({"name": "error_shown", "error_code": format!("e{}", "x".repeat(64))}), "parameter_invalid", "error_code"),
            (json!({"name": "step_viewed", "step": ""}), "parameter_invalid", "step"),
        ];
        for (i, (body, code, param)) in refused.into_iter().enumerate() {
            // Five at a time: the account's requests are rate limited (10 a second).
            if i % 5 == 0 {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            let r = app.post("/v1/account/flow-events", &token, &body).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, code), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{}", r.text);
            assert_eq!(r.body["error"]["type"], "invalid_request_error");
        }
        // An AccountToken has no flow (a second later: the account's requests are rate limited).
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let account_token = app.account_token(&account).await;
        let r = app.post("/v1/account/flow-events", &account_token, &json!({"name": "opened"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"), "{}", r.text);
        // Whatever it sends: the session is asked for before the body is read.
        for body in [json!({}), json!({"name": "clicked"}), json!({"name": 3})] {
            let r = app.post("/v1/account/flow-events", &account_token, &body).await;
            assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"), "{body}: {}", r.text);
        }
        // Nothing refused was recorded.
        let names = app.query_texts("SELECT name FROM flow_events ORDER BY created_at").await;
        let names: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["error_shown", "error_shown", "opened", "step_viewed", "step_viewed"]);
        let codes = app.query_texts("SELECT error_code FROM flow_events WHERE error_code IS NOT NULL ORDER BY error_code").await;
        assert_eq!(codes, [Some("card_declined".to_owned()), Some(format!("e{}123", "x".repeat(60)))]);
    }

    async fn a_completed_session_s_summary_goes_out_once(app) {
        let (account, token) = session(&app, "completed@example.com", "enrollment").await;
        let id = record(&app, &token, json!({"name": "opened"})).await;
        record(&app, &token, json!({"name": "step_viewed", "step": "address"})).await;
        app.clock.advance(chrono::Duration::minutes(2));
        record(&app, &token, json!({"name": "step_viewed", "step": "plan"})).await;
        app.clock.advance(chrono::Duration::minutes(3));
        record(&app, &token, json!({"name": "step_viewed", "step": "done"})).await;
        record(&app, &token, json!({"name": "completed", "step": "done"})).await;
        record(&app, &token, json!({"name": "exited"})).await;
        app.eventually("the summary", || async { !ended(&app, &account).await.is_empty() }).await;
        let events = ended(&app, &account).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let data = &events[0]["data"];
        assert_eq!(data["flow_session_id"], id);
        assert_eq!(data["scope"], "enrollment");
        assert_eq!(data["outcome"], "completed");
        assert_eq!(data["steps_reached"], json!(["address", "plan", "done"]));
        assert_eq!(data["last_step"], "done");
        assert_eq!(data["duration_seconds"], 300);
        // Neither the second end nor the look for abandonment sends it again.
        app.clock.advance(chrono::Duration::minutes(30));
        settled(&app).await;
        assert_eq!(ended(&app, &account).await.len(), 1);
    }

    async fn an_abandoned_session_s_summary_goes_out_once_within_15_minutes(app) {
        let (account, token) = session(&app, "abandoned@example.com", "enrollment").await;
        let id = record(&app, &token, json!({"name": "opened"})).await;
        record(&app, &token, json!({"name": "step_viewed", "step": "address"})).await;
        app.clock.advance(chrono::Duration::minutes(6));
        record(&app, &token, json!({"name": "step_viewed", "step": "plan"})).await;
        record(&app, &token, json!({"name": "error_shown", "step": "plan", "error_code": "network_error"})).await;
        // Ten minutes after it opened the session is still in use.
        app.clock.advance(chrono::Duration::minutes(5));
        settled(&app).await;
        assert!(ended(&app, &account).await.is_empty());
        // Ten minutes after its last event it is abandoned.
        app.clock.advance(chrono::Duration::minutes(6));
        app.eventually("the summary", || async { !ended(&app, &account).await.is_empty() }).await;
        let events = ended(&app, &account).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let data = &events[0]["data"];
        assert_eq!(data["flow_session_id"], id);
        assert_eq!(data["outcome"], "abandoned");
        assert_eq!(data["steps_reached"], json!(["address", "plan"]));
        assert_eq!(data["last_step"], "plan");
        assert_eq!(data["duration_seconds"], 360);
        app.clock.advance(chrono::Duration::minutes(60));
        settled(&app).await;
        assert_eq!(ended(&app, &account).await.len(), 1);

        // A session in which nothing was recorded is abandoned too.
        let (other, _) = session(&app, "never@example.com", "billing").await;
        app.clock.advance(chrono::Duration::minutes(11));
        app.eventually("the summary", || async { !ended(&app, &other).await.is_empty() }).await;
        let data = ended(&app, &other).await[0]["data"].clone();
        assert_eq!((data["outcome"].as_str(), data["scope"].as_str()), (Some("abandoned"), Some("billing")));
        assert_eq!((data["steps_reached"].clone(), data["last_step"].clone()), (json!([]), Value::Null));
    }

    async fn the_funnel_counts_the_sessions_of_a_period(app) {
        let steps = |n: usize| ["address", "plan", "identity"][..n].to_vec();
        // Two complete (in 4 and 6 minutes), one stops at plan, one at address, one never shows a step.
        for (i, (reached, done_after)) in [(3, Some(4)), (3, Some(6)), (2, None), (1, None), (0, None)].into_iter().enumerate() {
            let (_, token) = session(&app, &format!("funnel{i}@example.com"), "enrollment").await;
            for step in steps(reached) {
                record(&app, &token, json!({"name": "step_viewed", "step": step})).await;
            }
            if let Some(minutes) = done_after {
                app.clock.advance(chrono::Duration::minutes(minutes));
                record(&app, &token, json!({"name": "completed", "step": "done"})).await;
            }
        }
        // Another scope is another funnel.
        let (_, token) = session(&app, "billing@example.com", "billing").await;
        record(&app, &token, json!({"name": "step_viewed", "step": "summary"})).await;

        let today = app.clock.today();
        let r = app.get(&format!("/v1/app/flow-funnel?scope=enrollment&from={today}&to={today}"), &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["sessions_started"], 5);
        assert_eq!(
            r.body["steps"],
            json!([
                {"step": "address", "sessions": 4, "share_percent": "80.0"},
                {"step": "plan", "sessions": 3, "share_percent": "60.0"},
                {"step": "identity", "sessions": 2, "share_percent": "40.0"},
                {"step": "done", "sessions": 2, "share_percent": "40.0"},
            ])
        );
        assert_eq!(r.body["sessions_completed"], 2);
        assert_eq!(r.body["completion_percent"], "40.0");
        assert_eq!(r.body["median_duration_seconds"], 300);
        let r = app.get("/v1/app/flow-funnel?scope=billing", &app.app_token).await;
        assert_eq!((r.status, r.body["sessions_started"].as_i64()), (StatusCode::OK, Some(1)), "{}", r.text);
        assert_eq!(r.body["median_duration_seconds"], Value::Null);
        // A period before these sessions has none.
        let before = today - chrono::Duration::days(3);
        let r = app.get(&format!("/v1/app/flow-funnel?scope=enrollment&from={before}&to={before}"), &app.app_token).await;
        assert_eq!((r.status, r.body["sessions_started"].as_i64()), (StatusCode::OK, Some(0)));
        for (query, param) in [("", "scope"), ("scope=admin", "scope"), ("scope=billing&from=May", "from"), ("scope=billing&from=", "from"), ("scope=billing&to=", "to"), ("scope=billing&from=2027-02-01&to=2027-01-01", "from")] {
            let r = app.get(&format!("/v1/app/flow-funnel?{query}"), &app.app_token).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.text);
            assert_eq!(r.body["error"]["param"], param, "{query}");
        }

        // The dashboard shows the same figures, as bars and a table.
        let browser = signed_in(&app, "operator@example.com", Role::Operator, None).await;
        let page = browser.get(&format!("/dashboard/apps/{}/funnel?scope=enrollment&from={today}&to={today}", app.app_uuid)).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        assert!(page.text.contains("5 sessions started"), "{}", page.text);
        assert!(page.text.contains("data-testid=\"funnel-chart\""), "{}", page.text);
        assert!(page.text.contains("<tr data-step=\"plan\"><th scope=\"row\">plan</th><td data-testid=\"sessions\">3</td><td data-testid=\"share\">60.0%</td></tr>"), "{}", page.text);
        assert!(page.text.contains("5 min 00 s"), "{}", page.text);
    }
}

both_engines! {
    at [spring_forward_eve];
    async fn the_funnels_days_are_market_days_on_the_service_clock(app) {
        // 23:30 in the market: in UTC it is already tomorrow.
        let today = app.clock.today();
        let utc_day = app.clock.now().date_naive();
        assert_eq!(utc_day, today + chrono::Duration::days(1));
        let (_, token) = session(&app, "late@example.com", "billing").await;
        record(&app, &token, json!({"name": "step_viewed", "step": "summary"})).await;
        // A sandbox account whose own clock runs ten days ahead opens its session now too.
        let a = app.create_simple_account("ahead@example.com").await;
        let account = a["uuid"].as_str().unwrap().to_owned();
        let account_token = app.account_token(&account).await;
        let r = app.post("/v1/account/sandbox/advance-clock", &account_token, &json!({"days": 10})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let link = flow_link(&app, &account, "billing").await;
        let token = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        record(&app, &token, json!({"name": "step_viewed", "step": "summary"})).await;

        let started = |query: String| {
            let app = &app;
            async move {
                let r = app.get(&format!("/v1/app/flow-funnel?scope=billing{query}"), &app.app_token).await;
                assert_eq!(r.status, StatusCode::OK, "{}", r.text);
                r.body
            }
        };
        // Both opened today in the market, on the service's clock.
        let body = started(format!("&from={today}&to={today}")).await;
        assert_eq!(body["sessions_started"], 2, "{body}");
        assert_eq!(body["steps"], json!([{"step": "summary", "sessions": 2, "share_percent": "100.0"}]));
        // Not on the UTC date, nor on the day the account's own clock shows.
        for day in [utc_day, today + chrono::Duration::days(10)] {
            let body = started(format!("&from={day}&to={day}")).await;
            assert_eq!(body["sessions_started"], 0, "{day}: {body}");
        }
        // The period's default ends today in the market.
        let body = started(String::new()).await;
        assert_eq!((body["to"].as_str(), body["sessions_started"].as_i64()), (Some(today.to_string().as_str()), Some(2)), "{body}");
    }
}
