//! Requests that race for a row only one of them may write: the first wins and the others get
//! the 4xx of the rule they broke, never a 500 from the database's unique constraint.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    enrollment::{customer, first_plan, ready_to_finalize, with_meters, HOUSE},
    helpers::TestApp,
};

/// `n` identical POSTs sent at once; their statuses and error codes.
async fn at_once(
    app: &TestApp,
    n: usize,
    path: &str,
    token: &str,
    body: &Value,
) -> Vec<(StatusCode, String)> {
    let sends: Vec<_> = (0..n)
        .map(|_| {
            let request = app.client.post(app.url(path)).bearer_auth(token).json(body);
            tokio::spawn(async move { TestApp::read(request.send().await.unwrap()).await })
        })
        .collect();
    let mut answers = Vec::new();
    for send in sends {
        let r = send.await.unwrap();
        answers.push((r.status, r.code().to_owned()));
    }
    answers
}

both_engines! {
    with |c| c.rate_limits.account_per_second = 1_000;

    async fn finalizing_twice_at_once_finalizes_once(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "race@example.com").await;
        ready_to_finalize(&app, &token, HOUSE).await;

        let answers = at_once(&app, 6, "/v1/account/enroll/finalize", &token, &json!({})).await;
        let won = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
        assert_eq!(won, 1, "{answers:?}");
        let lost: Vec<_> = answers.iter().filter(|(s, _)| *s != StatusCode::OK).collect();
        assert!(
            lost.iter().all(|(s, c)| (*s, c.as_str()) == (StatusCode::CONFLICT, "already_finalized")),
            "{answers:?}"
        );

        let me = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["enrollment"]["is_enrollment_finalized"], true);
        let finalized = app
            .get(&format!("/v1/app/events?type=enrollment.finalized&account_uuid={uuid}"), &app.app_token)
            .await;
        assert_eq!(finalized.status, StatusCode::OK, "{}", finalized.text);
        assert_eq!(finalized.body["data"].as_array().unwrap().len(), 1, "{}", finalized.text);
    }

    async fn accepting_a_plan_twice_at_once_accepts_it_once(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "race-plan@example.com").await;
        let plan = first_plan(&app, &token, HOUSE).await;
        let body = json!({
            "plan_uuid": plan["plan_uuid"], "esi_id": HOUSE, "terms_accepted": true,
            "service_start_date": plan["earliest_switch_start_date"],
        });

        let answers = at_once(&app, 4, "/v1/account/enroll/plans/accept", &token, &body).await;
        let won = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
        assert_eq!(won, 1, "{answers:?}");
        assert!(
            answers
                .iter()
                .filter(|(s, _)| *s != StatusCode::OK)
                .all(|(s, c)| (*s, c.as_str()) == (StatusCode::CONFLICT, "plan_already_accepted")),
            "{answers:?}"
        );

        let me = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["locations"].as_array().unwrap().len(), 1, "{}", me.text);
    }
}
