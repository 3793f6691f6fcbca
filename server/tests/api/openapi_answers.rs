//! The OpenAPI document lists what every operation can answer beside its own results: 401 and
//! 429 on the token groups, 400 where it takes input, 404 where its path names a resource, and
//! the `Idempotency-Key` header on every write.

fn document() -> serde_json::Value {
    serde_json::from_str(&server::http::openapi::document()).unwrap()
}

#[test]
fn every_operation_documents_its_standard_errors_and_idempotency_key() {
    let doc = document();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        let gated = path.starts_with("/v1/app/") || path.starts_with("/v1/account");
        for (method, op) in item.as_object().unwrap() {
            let responses = op["responses"].as_object().unwrap();
            let has = |status: &str| responses.contains_key(status);
            if gated {
                assert!(has("401") && has("429"), "{method} {path}: {responses:?}");
                for status in ["401", "429"] {
                    assert_eq!(
                        responses[status]["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorEnvelope",
                        "{method} {path}"
                    );
                }
            }
            if path.contains('{') {
                assert!(has("404"), "{method} {path}");
            }
            if op.get("requestBody").is_some() {
                assert!(has("400"), "{method} {path}");
            }
            if gated && matches!(method.as_str(), "post" | "put" | "patch") {
                let params = op["parameters"].as_array().unwrap();
                assert!(
                    params
                        .iter()
                        .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"),
                    "{method} {path}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} operations");
}
