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
    assert!(
        r.text.contains("Close"),
        "the host can always be told to close the flow"
    );
    assert!(
        r.text.contains("/pkg/switchboard"),
        "the page loads the hydration bundle"
    );
}

#[tokio::test]
async fn only_registered_origins_may_frame_the_flows() {
    let app = TestApp::spawn(Engine::Sqlite).await;
    let page = format!("/flow/enrollment?app={}", app.app_uuid);
    let r = app.send(Method::GET, &page, None, None, &[]).await;
    assert_eq!(
        r.header("content-security-policy"),
        "frame-ancestors *",
        "a sandbox app with no origins"
    );
    assert_eq!(r.header("referrer-policy"), "no-referrer");

    let mut tx = app.state.db.begin().await.unwrap();
    server::store::apps::update_allowed_origins(
        &mut tx,
        app.app_uuid,
        &["https://partner.example".to_owned()],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let r = app.send(Method::GET, &page, None, None, &[]).await;
    assert_eq!(
        r.header("content-security-policy"),
        "frame-ancestors 'self' https://partner.example"
    );
    assert!(
        r.text.contains("https://partner.example"),
        "the page knows whom to tell when it closes"
    );

    let r = app
        .send(Method::GET, "/flow/enrollment", None, None, &[])
        .await;
    assert_eq!(
        r.header("content-security-policy"),
        "frame-ancestors 'self'"
    );
}
