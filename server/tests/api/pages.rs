//! The flow shell is server-rendered with the app's brand.

use reqwest::{Method, StatusCode};

use crate::helpers::{Engine, TestApp};

#[tokio::test]
async fn the_flow_shell_renders_the_app_name() {
    let app = TestApp::spawn(Engine::Sqlite).await;
    let r = app
        .send(
            Method::GET,
            &format!("/flow/enrollment?app={}", app.app_uuid),
            None,
            None,
            &[],
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.header("content-type").starts_with("text/html"));
    assert!(r.text.contains("Sunny Homes"), "{}", r.text);
    assert!(r.text.contains("Get started"));
    assert!(
        r.text.contains("/pkg/switchboard"),
        "the page loads the hydration bundle"
    );
}
