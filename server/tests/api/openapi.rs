//! The OpenAPI document: served, and equal to the committed snapshot.

use reqwest::StatusCode;

use crate::helpers::{Engine, TestApp};

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi.json");

#[test]
fn openapi_matches_the_committed_snapshot() {
    let generated = server::http::openapi::document();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    assert!(
        committed == generated,
        "the API surface changed: review the difference, then run \
         `UPDATE_SNAPSHOTS=1 cargo test -p server --test api openapi` and commit openapi.json"
    );
}

#[test]
fn openapi_lists_every_error_code_and_both_token_kinds() {
    let doc: serde_json::Value = serde_json::from_str(&server::http::openapi::document()).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .unwrap();
    for code in server::http::error::ErrorCode::ALL {
        assert!(
            codes.iter().any(|c| c == code.as_str()),
            "{}",
            code.as_str()
        );
    }
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["app_token"]["scheme"], "bearer");
    assert_eq!(schemes["account_token"]["scheme"], "bearer");
    assert!(doc["paths"]["/v1/app/accounts"]["post"].is_object());
}

#[tokio::test]
async fn openapi_is_served() {
    let app = TestApp::spawn(Engine::Sqlite).await;
    let r = app
        .send(reqwest::Method::GET, "/v1/openapi.json", None, None, &[])
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.text, server::http::openapi::document());
}
