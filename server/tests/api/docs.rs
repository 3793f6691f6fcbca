//! The API reference as a page (`/docs/api`, rendered from the OpenAPI document) and the
//! README's examples held against that document: the renewal recipe's accept call sends what
//! the schema takes, and the iframe sample follows the billing flow's `next` hand-off.

use reqwest::StatusCode;
use serde_json::Value;

use crate::dashboard::signed_in;
use server::domain::users::Role;

const README: &str = include_str!("../../../README.md");

/// The JSON body of the README's `curl ... -d '...'` call to a path ending in `path_end`.
fn readme_body_for(path_end: &str) -> Value {
    let lines: Vec<&str> = README.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_end().ends_with(path_end))
        .unwrap_or_else(|| panic!("the README calls {path_end}"));
    let body = lines[..at]
        .iter()
        .rev()
        .take(3)
        .find_map(|l| {
            let start = l.find("-d '")? + 4;
            let end = l[start..].find('\'')? + start;
            Some(&l[start..end])
        })
        .unwrap_or_else(|| panic!("a body for {path_end}"));
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// The fenced block of `lang` in the README that holds `needle`.
fn readme_block(lang: &str, needle: &str) -> String {
    let fence = format!("```{lang}");
    README
        .split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .find(|block| block.contains(needle))
        .unwrap_or_else(|| panic!("a {lang} block with {needle}"))
        .to_owned()
}

both_engines! {
    async fn the_api_reference_is_a_page_rendered_from_the_openapi_document(app) {
        let r = app.client.get(app.url("/docs/api")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
        let page = r.text().await.unwrap();
        let doc: Value = app.client.get(app.url("/v1/openapi.json")).send().await.unwrap().json().await.unwrap();

        // Every operation, under its tag, with its method and path.
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                let shown = format!("{}</span> <code>{path}</code>", method.to_uppercase());
                assert!(page.contains(&shown), "{method} {path} is on the page");
            }
        }
        for tag in doc["tags"].as_array().unwrap() {
            let name = tag["name"].as_str().unwrap();
            assert!(page.contains(&format!("id=\"tag-{name}\"")), "{name}");
        }
        // Parameters, fields and examples, read from the schemas.
        assert!(page.contains("account_uuid (path)"), "parameters are listed");
        assert!(page.contains("id=\"schema-AcceptRenewalIn\""));
        assert!(page.contains("Example request body") && page.contains("Example answer"));
        let accept = page.find("<code>/v1/account/locations/{location_uuid}/renewal-plans/accept</code>").unwrap();
        let section = &page[accept..accept + page[accept..].find("</section>").unwrap()];
        assert!(section.contains("<code>service_start_date</code>") && section.contains("optional"), "{section}");
        assert!(section.contains("Example request body") && section.contains("\"plan_uuid\": \""), "an example body: {section}");
        assert!(!page.contains("<!>"), "no renderer markers");

        let css = app.client.get(app.url("/docs/api.css")).send().await.unwrap();
        assert_eq!(css.status(), StatusCode::OK);
        assert!(css.headers()["content-type"].to_str().unwrap().starts_with("text/css"));
    }

    async fn the_readme_and_the_dashboard_link_the_reference_page(app) {
        assert!(README.contains("/docs/api"), "the README names the page");
        let browser = signed_in(&app, "member@example.com", Role::Partner, Some("Acme")).await;
        let home = browser.get("/dashboard").await;
        assert!(home.text.contains("href=\"/docs/api\""), "{}", home.text);
    }

    async fn the_readmes_renewal_accept_call_sends_what_the_schema_takes(app) {
        let doc: Value = app.client.get(app.url("/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
        let op = &doc["paths"]["/v1/account/locations/{location_uuid}/renewal-plans/accept"]["post"];
        let name = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        let schema = &doc["components"]["schemas"][name];
        let body = readme_body_for("/renewal-plans/accept");
        let properties = schema["properties"].as_object().unwrap();
        for key in body.as_object().unwrap().keys() {
            assert!(properties.contains_key(key), "the README sends {key}, which {name} does not take");
        }
        for required in schema["required"].as_array().unwrap() {
            let required = required.as_str().unwrap();
            assert!(body.get(required).is_some(), "{name} requires {required}; the README leaves it out");
        }
        // The README says the start date may be left out: the schema agrees.
        assert!(README.contains("`service_start_date` may be left out"));
        assert!(!schema["required"].as_array().unwrap().iter().any(|r| r == "service_start_date"));
    }

    async fn the_readmes_iframe_sample_follows_the_billing_flows_next_hand_off(_app) {
        let sample = readme_block("html", "service-flow-close");
        assert!(sample.contains("event.data.next"), "the sample reads next: {sample}");
        assert!(sample.contains("openFlow(event.data.next)"), "and opens that flow: {sample}");
        assert!(sample.contains("flow-login"), "through a new flow-login: {sample}");
        assert!(sample.contains("service-flow-resize"));
    }
}
