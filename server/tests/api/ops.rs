//! Health, readiness, metrics, compression and CORS.

use reqwest::{Method, StatusCode};

use crate::helpers::TestApp;

both_engines! {
    async fn health_and_readiness(app) {
        let r = app.send(Method::GET, "/healthz", None, None, &[]).await;
        assert_eq!((r.status, r.body["status"].as_str()), (StatusCode::OK, Some("ok")));
        let r = app.send(Method::GET, "/readyz", None, None, &[]).await;
        assert_eq!((r.status, r.body["status"].as_str()), (StatusCode::OK, Some("ready")));
        app.state.db.close().await;
        let r = app.send(Method::GET, "/readyz", None, None, &[]).await;
        assert_eq!((r.status, r.code()), (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"));
        assert_eq!(r.body["error"]["type"], "api_error");
    }
}

#[tokio::test]
async fn metrics_count_requests_by_route() {
    let app = TestApp::spawn(crate::helpers::Engine::Sqlite).await;
    app.get("/v1/app", &app.app_token).await;
    let r = app.send(Method::GET, "/metrics", None, None, &[]).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.header("content-type").starts_with("text/plain"));
    assert!(r.text.contains("http_requests_total"), "{}", r.text);
    assert!(
        r.text.contains("route=\"/v1/app/\"") || r.text.contains("route=\"/v1/app\""),
        "{}",
        r.text
    );
    assert!(r.text.contains("http_request_duration_seconds_bucket"));
}

#[tokio::test]
async fn responses_are_compressed_when_asked() {
    let app = TestApp::spawn(crate::helpers::Engine::Sqlite).await;
    for encoding in ["br", "gzip"] {
        let r = app
            .send(
                Method::GET,
                "/v1/openapi.json",
                None,
                None,
                &[("accept-encoding", encoding)],
            )
            .await;
        assert_eq!(r.header("content-encoding"), encoding);
    }
    let r = app
        .send(Method::GET, "/v1/openapi.json", None, None, &[])
        .await;
    assert_eq!(r.header("content-encoding"), "");
}

#[tokio::test]
async fn browsers_may_call_the_account_api() {
    let app = TestApp::spawn(crate::helpers::Engine::Sqlite).await;
    let r = app
        .send(
            Method::OPTIONS,
            "/v1/account",
            None,
            None,
            &[
                ("origin", "https://partner.example"),
                ("access-control-request-method", "GET"),
                (
                    "access-control-request-headers",
                    "authorization,content-type",
                ),
            ],
        )
        .await;
    assert!(r.status.is_success(), "{}", r.status);
    assert_eq!(
        r.header("access-control-allow-origin"),
        "https://partner.example"
    );
    let allowed = r
        .header("access-control-allow-headers")
        .to_ascii_lowercase();
    assert!(
        allowed.contains("authorization") && allowed.contains("content-type"),
        "{allowed}"
    );
}
