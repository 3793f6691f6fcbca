//! The OpenAPI document: served, and equal to the committed snapshot.

use reqwest::StatusCode;

use crate::helpers::{Engine, TestApp};

const SNAPSHOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi.json");

const CHANGELOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../CHANGELOG.md");

#[test]
fn openapi_matches_the_committed_snapshot() {
    let generated = server::http::openapi::document();
    // The committed document is what partners were given: a change that breaks it must be
    // recorded in the changelog (and, per the versioning policy, belongs in a new version),
    // whether or not the snapshot is being refreshed.
    let committed = std::fs::read_to_string(SNAPSHOT).unwrap_or_default();
    let published: serde_json::Value = serde_json::from_str(&committed).unwrap_or_default();
    let breaking = server::http::openapi::breaking_changes(
        &published,
        &serde_json::from_str(&generated).unwrap(),
    );
    let changelog = std::fs::read_to_string(CHANGELOG).unwrap();
    let unrecorded = server::http::openapi::unrecorded(&breaking, &changelog);
    assert!(
        unrecorded.is_empty(),
        "breaking changes to the published API that CHANGELOG.md does not record: {unrecorded:?}"
    );
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &generated).unwrap();
        return;
    }
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
    // The one reason with two meanings says how to tell them apart.
    let reason = doc["components"]["schemas"]["StatusReason"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("only finalize is left") && reason.contains("can_finalize_enrollment"),
        "{reason}"
    );
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

#[tokio::test]
async fn every_v1_answer_names_its_version() {
    let app = TestApp::spawn(Engine::Sqlite).await;
    for (path, token) in [
        ("/v1/app", Some(app.app_token.as_str())),
        ("/v1/app", None),
        ("/v1/no-such-route", None),
        ("/v1/openapi.json", None),
    ] {
        let r = app.send(reqwest::Method::GET, path, token, None, &[]).await;
        assert_eq!(r.header("api-version"), "v1", "{path}: {}", r.status);
    }
    let r = app
        .send(reqwest::Method::GET, "/healthz", None, None, &[])
        .await;
    assert_eq!(r.header("api-version"), "", "only the API");
}

#[test]
fn every_event_type_has_its_schema_and_its_readme_row() {
    let doc: serde_json::Value = serde_json::from_str(&server::http::openapi::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let any = schemas["WebhookEvent"]["oneOf"].as_array().unwrap();
    assert_eq!(any.len(), server::domain::events::EVENT_DOCS.len());
    for event in server::domain::events::EVENT_DOCS {
        let schema = &schemas[format!("Event.{}", event.kind)];
        let typed = &schema["allOf"][1];
        assert_eq!(
            typed["properties"]["type"]["enum"],
            serde_json::json!([event.kind])
        );
        let data = &typed["properties"]["data"];
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", event.kind)))
            .unwrap_or_else(|| panic!("README has no row for {}", event.kind));
        for field in event.fields {
            assert!(
                !data["properties"][field.name].is_null(),
                "{}.{}",
                event.kind,
                field.name
            );
            assert!(
                row.contains(&format!("`{}`", field.name)),
                "README: {}.{}",
                event.kind,
                field.name
            );
        }
        assert_eq!(
            data["required"].as_array().unwrap().len(),
            event.fields.len(),
            "{}",
            event.kind
        );
    }
    assert!(
        schemas["Event.account.created"]["allOf"][1]["properties"]["data"]["properties"]
            ["account_number"]
            .is_object()
    );
}
