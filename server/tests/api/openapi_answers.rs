//! The OpenAPI document lists what every operation can answer beside its own results: 401, 403
//! (a token of the other kind, a flow's token out of its scope) and 429 on the token groups, 400 where it takes input, 404 where its path names a resource, 414 and 431 everywhere, and
//! the `Idempotency-Key` header on every write; it states the limits, names and rules the server
//! enforces, and the server refuses what it forbids (offsets past the maximum).

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::TestApp;

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
                assert!(
                    has("401") && has("403") && has("429"),
                    "{method} {path}: {responses:?}"
                );
                let forbidden = responses["403"]["description"].as_str().unwrap();
                assert!(
                    forbidden.contains("token_wrong_type"),
                    "{method} {path}: {forbidden}"
                );
                if path.starts_with("/v1/account") {
                    assert!(forbidden.contains("scope_denied"), "{method} {path}");
                }
                for status in ["401", "403", "429"] {
                    assert_eq!(
                        responses[status]["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorEnvelope",
                        "{method} {path}"
                    );
                }
            }
            // Refused before any route: a path and query over 8 KiB, header fields over 32 KiB.
            for (status, code) in [("414", "uri_too_long"), ("431", "headers_too_large")] {
                let description = responses[status]["description"].as_str().unwrap();
                assert!(description.contains(code), "{method} {path}: {description}");
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
                for status in ["409", "422"] {
                    let description = responses[status]["description"].as_str().unwrap();
                    assert!(
                        description.contains("idempotency_key_"),
                        "{method} {path} {status}: {description}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} operations");
}

#[test]
fn the_document_states_the_limits_the_server_enforces() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    let params = |path: &str| {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .clone()
    };
    for path in [
        "/v1/app/accounts",
        "/v1/app/events",
        "/v1/account/billing/invoices",
    ] {
        let params = params(path);
        let param =
            |name: &str| params.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
        assert_eq!(
            (
                param("limit")["minimum"].clone(),
                param("limit")["maximum"].clone()
            ),
            (json!(1), json!(100)),
            "{path}"
        );
        assert_eq!(param("offset")["maximum"], json!(i64::MAX), "{path}");
    }
    let accounts = params("/v1/app/accounts");
    let status = &accounts.iter().find(|p| p["name"] == "status").unwrap()["schema"];
    assert_eq!(status["$ref"], "#/components/schemas/AccountStatus");

    let prop = |schema: &str, name: &str| {
        let s = &schemas[schema];
        let object = s
            .get("allOf")
            .map(|all| all[0].clone())
            .unwrap_or_else(|| s.clone());
        object["properties"][name].clone()
    };
    assert_eq!(prop("AppPlansRequestIn", "term_months")["maximum"], 36);
    assert_eq!(prop("AppPlansRequestIn", "term_months")["minimum"], 1);
    assert_eq!(
        prop("EligibilityIn", "postal_code")["pattern"],
        r"^\s*[0-9]{5}\s*$"
    );
    // A name: no control characters, something besides blanks.
    assert_eq!(
        prop("CreateAccountIn", "first_name")["pattern"],
        r"^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$"
    );
    // What must be agreed, and what a patch may not clear.
    assert_eq!(
        prop("AcceptPlanIn", "terms_accepted")["enum"],
        json!([true])
    );
    assert!(schemas["AcceptPlanIn"]["required"]
        .as_array()
        .unwrap()
        .contains(&json!("terms_accepted")));
    assert_eq!(prop("CreditCheckIn", "consent")["enum"], json!([true]));
    assert_eq!(prop("UpdateAccountIn", "email")["type"], "string");
    assert_eq!(prop("CreateAccountIn", "date_of_birth")["minLength"], 10);
    assert_eq!(prop("CreateAccountIn", "metadata")["maxProperties"], 20);
    let idempotency_key = doc["paths"]["/v1/app/accounts"]["post"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Idempotency-Key")
        .unwrap()["schema"]
        .clone();
    assert_eq!(idempotency_key["maxLength"], 255);
    assert_eq!(prop("AdvanceClockIn", "days")["maximum"], 3650);
    let scopes = prop("FlowLoginIn", "scope")["enum"].clone();
    assert!(
        scopes
            .as_array()
            .unwrap()
            .contains(&json!("update-payment-method")),
        "{scopes}"
    );
    let simulations = prop("SimulateIn", "event")["enum"].clone();
    assert_eq!(
        simulations.as_array().unwrap().len(),
        server::domain::credit::SIMULATED_EVENTS.len(),
        "{simulations}"
    );
    let event_types = prop("CreateWebhookEndpointIn", "event_types")["items"]["enum"].clone();
    assert!(
        event_types
            .as_array()
            .unwrap()
            .contains(&json!("invoice.paid")),
        "{event_types}"
    );
    assert_eq!(
        prop("CancelServiceIn", "reason")["enum"],
        json!(["moving", "switching", "other"])
    );

    // A flow event: a known name, short slugs; a funnel's dates are dates.
    let flow_event = &schemas["FlowEventIn"]["allOf"][0];
    assert_eq!(flow_event["required"], json!(["name"]));
    let event_names: Vec<&str> = server::domain::flow_events::FlowEventName::ALL
        .iter()
        .map(|n| n.as_str())
        .collect();
    assert_eq!(flow_event["properties"]["name"]["enum"], json!(event_names));
    assert_eq!(flow_event["properties"]["name"]["type"], "string");
    for (property, longest) in [("step", 40), ("error_code", 64)] {
        let field = &flow_event["properties"][property];
        assert_eq!(
            (field["minLength"].clone(), field["maxLength"].clone()),
            (json!(1), json!(longest))
        );
    }
    let funnel = params("/v1/app/flow-funnel");
    for name in ["from", "to"] {
        let date = &funnel.iter().find(|p| p["name"] == name).unwrap()["schema"];
        assert_eq!(
            (date["format"].as_str(), date["minLength"].as_i64()),
            (Some("date"), Some(10)),
            "{name}"
        );
    }
    let email = &accounts.iter().find(|p| p["name"] == "email").unwrap()["schema"];
    assert_eq!(email["maxLength"], 254);

    // The rules between fields.
    let any_of = &schemas["AppPlansRequestIn"]["allOf"][1]["anyOf"];
    assert_eq!(any_of[0]["required"], json!(["esi_id"]));
    assert_eq!(any_of[1]["required"], json!(["postal_code"]));
    let one_of = &schemas["AdvanceClockIn"]["allOf"][1]["oneOf"];
    assert_eq!(one_of[0]["required"], json!(["to"]));
    assert_eq!(one_of[1]["required"], json!(["days"]));
}

both_engines! {
    async fn the_esi_id_pattern_is_the_reference_datas_prefixes(app) {
        let table: Vec<(String, usize)> = server::store::market::esi_prefixes(&app.state.db)
            .await
            .unwrap()
            .into_iter()
            .map(|p| (p.prefix, usize::try_from(p.esi_id_length).unwrap()))
            .collect();
        let known: Vec<(String, usize)> = server::domain::market::KNOWN_ESI_PREFIXES
            .iter()
            .map(|(prefix, length)| ((*prefix).to_owned(), *length))
            .collect();
        assert_eq!(known, table);

        let pattern = server::domain::market::esi_id_pattern();
        let doc = document();
        let mut stated = 0;
        for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
            let object = schema.get("allOf").map_or(schema, |all| &all[0]);
            if let Some(field) = object["properties"].get("esi_id") {
                if name.ends_with("In") {
                    assert_eq!(field["pattern"], json!(pattern), "{name}");
                    stated += 1;
                }
            }
        }
        assert!(stated >= 6, "{stated}");
    }

    async fn a_whole_number_written_with_a_fraction_is_an_integer(app) {
        let path = "/v1/app/accounts/enroll/address-search";
        let whole = app.post(path, &app.app_token, &json!({"query": "1", "limit": 2.0})).await;
        assert_eq!(whole.status, StatusCode::OK, "{}", whole.text);
        assert!(whole.body.as_array().unwrap().len() <= 2, "{}", whole.text);
        let part = app.post(path, &app.app_token, &json!({"query": "1", "limit": 2.5})).await;
        assert_eq!(part.status, StatusCode::BAD_REQUEST, "{}", part.text);
        assert_eq!(part.body["error"]["param"], "limit");
    }

    async fn an_email_filter_longer_than_any_address_is_refused(app) {
        let longest = format!("{}@example.com", "a".repeat(254 - 12));
        let r = app.get(&format!("/v1/app/accounts?email={longest}"), &app.app_token).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["data"], json!([]));
        let r = app.get(&format!("/v1/app/accounts?email=a{longest}"), &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"), "{}", r.text);
        assert_eq!(r.body["error"]["param"], "email");
    }

    async fn blanks_declared_as_json_are_malformed_and_change_nothing(app) {
        let account = app.create_account(json!({
            "email": "blanks@example.com", "first_name": "Ana", "last_name": "Díaz"
        })).await;
        let uuid = account["uuid"].as_str().unwrap();
        let path = format!("/v1/app/accounts/{uuid}/record-client-agent");
        for blanks in ["\r", " \n"] {
            let req = app.client.post(app.url(&path)).bearer_auth(&app.app_token)
                .header("content-type", "application/json").body(blanks);
            let r = TestApp::read(req.send().await.unwrap()).await;
            assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "body_malformed"), "{blanks:?}: {}", r.text);
        }
        let r = app.get(&format!("/v1/app/accounts/{uuid}"), &app.app_token).await;
        assert_eq!(r.body["client_agent_accepted"], false, "{}", r.text);
        // Left out, the body is `{}`: the agent's acceptance is recorded now.
        let r = TestApp::read(app.client.post(app.url(&path)).bearer_auth(&app.app_token).send().await.unwrap()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["client_agent_accepted"], true, "{}", r.text);
    }

    async fn offsets_beyond_the_maximum_are_refused(app) {
        let account = app.create_account(json!({
            "email": "offset@example.com", "first_name": "Ana", "last_name": "Díaz"
        })).await;
        let token = app.account_token(account["uuid"].as_str().unwrap()).await;
        let listings = [
            ("/v1/app/accounts", &app.app_token),
            ("/v1/app/events", &app.app_token),
            ("/v1/app/webhook-endpoints", &app.app_token),
            ("/v1/app/plan-groups", &app.app_token),
            ("/v1/app/sandbox/emails", &app.app_token),
            ("/v1/account/billing/invoices", &token),
        ];
        for (path, token) in listings {
            // The largest offset is a plain empty page.
            let last = app.get(&format!("{path}?offset={}", i64::MAX), token).await;
            assert_eq!(last.status, StatusCode::OK, "{path}: {}", last.text);
            assert_eq!(last.body["data"], json!([]), "{path}");
            assert_eq!(last.body["offset"], json!(i64::MAX), "{path}");
            for offset in [(i64::MAX as u64 + 1).to_string(), u64::MAX.to_string(), "18446744073709551616".to_owned()] {
                let r = app.get(&format!("{path}?offset={offset}"), token).await;
                assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path} {offset}: {}", r.text);
                assert_eq!(r.code(), "parameter_invalid", "{path} {offset}");
                assert_eq!(r.body["error"]["param"], "offset", "{path} {offset}");
            }
        }
    }
}
