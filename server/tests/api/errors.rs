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
