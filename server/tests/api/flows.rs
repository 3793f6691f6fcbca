//! Flow links and flow sessions: single use, 10 minutes, scoped.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::TestApp;

/// Opens a flow link without following its redirect; returns the session token.
pub(crate) async fn open_link(
    app: &TestApp,
    link: &str,
) -> Result<String, crate::helpers::TestResponse> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let r = client.get(link).send().await.unwrap();
    if r.status() != StatusCode::SEE_OTHER {
        return Err(TestApp::read(r).await);
    }
    let location = r.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert!(
        location.starts_with("/flow/") && location.contains(&format!("?app={}", app.app_uuid)),
        "{location}"
    );
    Ok(location.split("#session=").nth(1).unwrap().to_owned())
}

pub(crate) async fn flow_link(app: &TestApp, account: &str, scope: &str) -> Value {
    let r = app
        .post(
            &format!("/v1/app/accounts/{account}/flow-login"),
            &app.app_token,
            &json!({"scope": scope}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    r.body
}

both_engines! {
    async fn a_flow_link_opens_one_scoped_session(app) {
        let a = app.create_simple_account("flow@example.com").await;
        let account = a["uuid"].as_str().unwrap();
        let link = flow_link(&app, account, "enrollment").await;
        assert_eq!(link["scope"], "enrollment");
        let login_link = link["login_link"].as_str().unwrap();
        assert!(login_link.starts_with(&format!("http://{}/flow/login?token=swb_login_", app.addr)), "{login_link}");
        let expires = chrono::DateTime::parse_from_rfc3339(link["expires_at"].as_str().unwrap()).unwrap();
        assert_eq!((expires.with_timezone(&chrono::Utc) - app.clock.now()).num_minutes(), 9);

        let session = open_link(&app, login_link).await.unwrap();
        assert!(session.starts_with("swb_flow_"));
        let me = app.get("/v1/account", &session).await;
        assert_eq!((me.status, me.body["uuid"].as_str()), (StatusCode::OK, Some(account)));
        let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&session), Some(&json!({"phone": "5125550100"})), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/billing/payment-session", &session, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK);
        let r = app.get("/v1/account/billing/payment-method", &session).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));
        assert_eq!(r.body["error"]["type"], "permission_error");
        // Flow sessions never reach the app API.
        let r = app.get("/v1/app/accounts", &session).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "token_wrong_type"));

        // The link works once.
        let again = open_link(&app, login_link).await.unwrap_err();
        assert_eq!(again.status, StatusCode::GONE);
        assert!(again.text.contains("This link has expired"));
    }

    async fn a_spent_link_s_page_speaks_for_its_app_and_tells_the_host(app) {
        server::admin::set_branding(
            &app.state.db,
            app.app_uuid,
            &server::admin::BrandingChange {
                display_name: Some("Sunny <Homes>"),
                primary_color: Some("#ff8800"),
                logo_url: Some("https://cdn.sunny.example/logo.png"),
            },
        )
        .await
        .unwrap();
        let a = app.create_simple_account("spent@example.com").await;
        let link = flow_link(&app, a["uuid"].as_str().unwrap(), "billing").await;
        let login_link = link["login_link"].as_str().unwrap();
        open_link(&app, login_link).await.unwrap();
        let again = open_link(&app, login_link).await.unwrap_err();
        assert_eq!(again.status, StatusCode::GONE);
        assert!(again.text.contains("Sunny &lt;Homes&gt;</span>"), "{}", again.text);
        assert!(again.text.contains("Go back to Sunny &lt;Homes&gt; and open it again"), "{}", again.text);
        assert!(again.text.contains("src=\"https://cdn.sunny.example/logo.png\""), "{}", again.text);
        assert!(again.text.contains("--brand:#ff8800"), "{}", again.text);
        // A sandbox app with no registered origin: its flows post to any host, and may be framed anywhere.
        assert!(again.text.contains(r#"reason:"expired""#) && again.text.contains(r#"of ["*"]"#), "{}", again.text);
        assert_eq!(again.header("content-security-policy"), "frame-ancestors *");

        // With registered origins, only they are told, and only they may frame the page.
        server::admin::set_allowed_origins(
            &app.state.db,
            app.app_uuid,
            vec![server::domain::apps::Origin::parse("https://partner.example").unwrap()],
        )
        .await
        .unwrap();
        let link = flow_link(&app, a["uuid"].as_str().unwrap(), "billing").await;
        app.clock.advance(chrono::Duration::minutes(11));
        let late = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap_err();
        assert_eq!(late.status, StatusCode::GONE);
        assert!(late.text.contains(r#"of ["https://partner.example"]"#), "{}", late.text);
        assert_eq!(late.header("content-security-policy"), "frame-ancestors 'self' https://partner.example");

        // A token that was never ours gets the plain page.
        let r = open_link(&app, &app.url("/flow/login?token=swb_login_nothing")).await.unwrap_err();
        assert_eq!(r.status, StatusCode::GONE);
        assert!(r.text.contains("the app you came from") && !r.text.contains("Sunny"), "{}", r.text);
    }

    async fn each_scope_reaches_only_its_endpoints(app) {
        let a = app.create_simple_account("scope@example.com").await;
        let account = a["uuid"].as_str().unwrap();
        let link = flow_link(&app, account, "update-payment-method").await;
        let session = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        assert_eq!(app.get("/v1/account/billing/payment-method", &session).await.status, StatusCode::NOT_FOUND, "allowed, and there is none yet");
        let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&session), Some(&json!({})), &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));
        let link = flow_link(&app, account, "documents").await;
        let session = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        let r = app.post("/v1/account/billing/payment-session", &session, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));
        assert_eq!(app.get("/v1/account", &session).await.status, StatusCode::OK);
    }

    async fn flow_links_expire_and_bad_requests_are_refused(app) {
        let a = app.create_simple_account("late@example.com").await;
        let account = a["uuid"].as_str().unwrap();
        let link = flow_link(&app, account, "billing").await;
        app.clock.advance(chrono::Duration::minutes(11));
        let r = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap_err();
        assert_eq!(r.status, StatusCode::GONE);
        let r = open_link(&app, &app.url("/flow/login?token=garbage")).await.unwrap_err();
        assert_eq!(r.status, StatusCode::GONE);

        // Scope from the query string works too.
        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login?scope=renewal"), &app.app_token, &Value::Null).await;
        assert_eq!((r.status, r.body["scope"].as_str()), (StatusCode::OK, Some("renewal")));
        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login"), &app.app_token, &Value::Null).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login"), &app.app_token, &json!({"scope": "admin"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        // Both given: the same scope works; a bad or a different one in either place is refused.
        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login?scope=billing"), &app.app_token, &json!({"scope": "billing"})).await;
        assert_eq!((r.status, r.body["scope"].as_str()), (StatusCode::OK, Some("billing")));
        for (query, body) in [("admin", "billing"), ("billing", "admin"), ("renewal", "billing")] {
            let r = app.post(&format!("/v1/app/accounts/{account}/flow-login?scope={query}"), &app.app_token, &json!({"scope": body})).await;
            assert_eq!((r.status, r.code(), r.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, "parameter_invalid", Some("scope")), "{query} / {body}");
        }
        let r = app.post(&format!("/v1/app/accounts/{}/flow-login", uuid::Uuid::new_v4()), &app.app_token, &json!({"scope": "billing"})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);

        // Flow sessions end after an hour.
        let link = flow_link(&app, account, "enrollment").await;
        let session = open_link(&app, link["login_link"].as_str().unwrap()).await.unwrap();
        app.clock.advance(chrono::Duration::minutes(61));
        let r = app.get("/v1/account", &session).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_expired"));
    }

    async fn a_flow_link_can_offer_one_plan_group(app) {
        app.add_addresses(&[server::store::market::ServiceAddressRow {
            esi_id: "10443720000300001".into(),
            address_1: "300 PECAN ST".into(),
            address_2: None,
            city: "DALLAS".into(),
            state: "TX".into(),
            postal_code: "75201".into(),
            tdu: "ONCOR".into(),
            premise_type: "residential".into(),
            status: "active".into(),
        }])
        .await;
        let a = app.create_simple_account("group@example.com").await;
        let account = a["uuid"].as_str().unwrap();
        let groups = app.get("/v1/app/plan-groups", &app.app_token).await;
        let groups = groups.body["data"].as_array().cloned().unwrap_or_else(|| groups.body.as_array().unwrap().clone());
        assert!(groups.len() > 1);
        let wanted = groups[1]["uuid"].as_str().unwrap();

        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login"), &app.app_token, &json!({"scope": "enrollment", "plan_group_uuid": uuid::Uuid::new_v4()})).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        assert_eq!(r.body["error"]["param"], "plan_group_uuid");

        let r = app.post(&format!("/v1/app/accounts/{account}/flow-login"), &app.app_token, &json!({"scope": "enrollment", "plan_group_uuid": wanted})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let session = open_link(&app, r.body["login_link"].as_str().unwrap()).await.unwrap();
        let r = app.post("/v1/account/enroll/confirm-address", &session, &json!({"esi_id": "10443720000300001"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let r = app.post("/v1/account/enroll/plans/request", &session, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let plans = r.body["plans"].as_array().unwrap();
        assert!(!plans.is_empty());
        assert!(plans.iter().all(|p| p["plan_group_uuid"] == wanted), "{plans:?}");

        // The account's own token still sees every group.
        let token = app.account_token(account).await;
        let r = app.post("/v1/account/enroll/plans/request", &token, &json!({})).await;
        assert!(r.body["plans"].as_array().unwrap().iter().any(|p| p["plan_group_uuid"] != wanted));
    }
}
