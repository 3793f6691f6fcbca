//! Every failure speaks the error envelope, with a request id, never axum's plain text.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::TestApp;

both_engines! {
    async fn malformed_bodies_and_content_types_are_enveloped(app) {
        let cases: [(&str, &str, StatusCode, &str); 4] = [
            ("{\"email\": ", "application/json", StatusCode::BAD_REQUEST, "body_malformed"),
            ("[1, 2]", "application/json", StatusCode::BAD_REQUEST, "body_malformed"),
            ("email=a@example.com", "application/x-www-form-urlencoded", StatusCode::UNSUPPORTED_MEDIA_TYPE, "content_type_unsupported"),
            ("{\"email\": \"a@example.com\"}", "text/plain", StatusCode::UNSUPPORTED_MEDIA_TYPE, "content_type_unsupported"),
        ];
        for (body, content_type, status, code) in cases {
            let r = app.client.post(app.url("/v1/app/accounts"))
                .bearer_auth(&app.app_token)
                .header("content-type", content_type)
                .body(body)
                .send().await.unwrap();
            let r = TestApp::read(r).await;
            assert_eq!((r.status, r.code()), (status, code), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        }
        // A body of 2 MB is refused, not buffered.
        let big = format!("{{\"email\": \"{}\"}}", "a".repeat(2 * 1024 * 1024));
        let r = app.client.post(app.url("/v1/app/accounts")).bearer_auth(&app.app_token)
            .header("content-type", "application/json").body(big).send().await.unwrap();
        let r = TestApp::read(r).await;
        assert_eq!((r.status, r.code()), (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"));
    }

    async fn unknown_routes_and_methods_are_enveloped(app) {
        let r = app.get("/v1/app/nothing-here", &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
        let r = app.send(Method::GET, "/nowhere", None, None, &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        let r = app.send(Method::DELETE, "/v1/app/accounts", Some(&app.app_token), None, &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"), "{}", r.text);
        let r = app.send(Method::PUT, "/healthz", None, Some(&json!({})), &[]).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.body["error"]["type"], "invalid_request_error");
    }

    async fn every_response_has_a_request_id(app) {
        let mut ids = std::collections::HashSet::new();
        for r in [
            app.send(Method::GET, "/healthz", None, None, &[]).await,
            app.get("/v1/app", &app.app_token).await,
            app.send(Method::GET, "/v1/app", None, None, &[]).await,
            app.send(Method::GET, "/nowhere", None, None, &[]).await,
        ] {
            let id = r.header("request-id").to_owned();
            assert!(id.starts_with("req_"), "{id}");
            assert!(ids.insert(id));
        }
    }
}

both_engines! {
    async fn only_json_bodies_are_read(app) {
        let send = |content_type: &'static str, body: &'static str| {
            app.client.post(app.url("/v1/app/accounts"))
                .bearer_auth(&app.app_token)
                .header("content-type", content_type)
                .body(body)
                .send()
        };
        let account = r#"{"email": "ct@example.com", "first_name": "Ana", "last_name": "Díaz"}"#;
        let r = TestApp::read(send("application/json; charset=utf-8", account).await.unwrap()).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        let r = TestApp::read(send("Application/JSON", account).await.unwrap()).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
        for (content_type, body) in [
            ("application/json; charset=iso-8859-1", account),
            ("application/merge-patch+json", account),
            ("application/jsonp", account),
            // Not parsed: a broken body in another type is refused for its type, not its JSON.
            ("text/plain", "{\"email\": "),
        ] {
            let r = TestApp::read(send(content_type, body).await.unwrap()).await;
            assert_eq!(
                (r.status, r.code()),
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "content_type_unsupported"),
                "{content_type}: {}", r.text
            );
            assert_eq!(r.body["error"]["type"], "invalid_request_error");
            assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        }
    }

    async fn oversized_requests_are_enveloped(app) {
        let r = app.get("/v1/app", &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK);
        // One body limit, 1 MiB, with or without an Idempotency-Key.
        let body = format!("{{\"email\": \"{}@example.com\"}}", "a".repeat(1024 * 1024 + 16));
        for key in [None, Some("big-body")] {
            let mut req = app.client.post(app.url("/v1/app/accounts")).bearer_auth(&app.app_token)
                .header("content-type", "application/json").body(body.clone());
            if let Some(key) = key {
                req = req.header("idempotency-key", key);
            }
            let r = TestApp::read(req.send().await.unwrap()).await;
            assert_eq!((r.status, r.code()), (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"), "{key:?}");
            assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        }
        let long = format!("/v1/app?q={}", "a".repeat(9 * 1024));
        let r = app.get(&long, &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::URI_TOO_LONG, "uri_too_long"), "{}", r.text);
        assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        let big = "b".repeat(40 * 1024);
        let r = app.send(Method::GET, "/v1/app", Some(&app.app_token), None, &[("x-padding", big.as_str())]).await;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "headers_too_large"),
            "{}", r.text
        );
        assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        // Browsers read these too.
        let r = app.send(Method::GET, &long, None, None, &[("origin", "https://partner.example")]).await;
        assert_eq!(r.status, StatusCode::URI_TOO_LONG);
        assert_eq!(r.header("access-control-allow-origin"), "https://partner.example");
    }

    async fn wrong_methods_are_enveloped_everywhere(app) {
        let account = app.create_simple_account("m@example.com").await;
        let token = app.account_token(account["uuid"].as_str().unwrap()).await;
        assert_eq!(app.get("/v1/account", &token).await.status, StatusCode::OK);
        for (method, path, token) in [
            (Method::PUT, "/v1/account", Some(token.as_str())),
            (Method::DELETE, "/v1/app", Some(app.app_token.as_str())),
            (Method::POST, "/v1/openapi.json", None),
            (Method::POST, "/readyz", None),
        ] {
            let r = app.send(method.clone(), path, token, None, &[]).await;
            assert_eq!(
                (r.status, r.code()),
                (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
                "{method} {path}: {}", r.text
            );
            assert_eq!(r.body["error"]["request_id"], r.header("request-id"));
        }
    }

    async fn usage_dates_have_the_years_of_usage_years(app) {
        crate::enrollment::with_meters(&app).await;
        let (_, token) = crate::enrollment::customer(&app, "dates@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["locations"][0]["uuid"].as_str().unwrap().to_owned();
        let base = format!("/v1/account/locations/{location}/usage/intervals");
        let r = app.get(&format!("{base}?date=2026-01-01"), &token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        for date in ["1999-12-31", "2101-01-01", "9999-12-31", "+262142-12-31", "-0001-01-01"] {
            let r = app.get(&format!("{base}?date={date}"), &token).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{date}: {}", r.text);
            assert_eq!(r.body["error"]["param"], "date", "{date}");
        }
    }
}
