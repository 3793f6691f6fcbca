//! Links the API hands out open in a browser by themselves: invoice PDFs and documents are
//! absolute, signed URLs on the public base that need no token, expire after an hour, and
//! refuse a tampered or expired link with 403.

use reqwest::StatusCode;
use serde_json::Value;

use crate::{
    enrollment::{customer, first_plan, relaxed, with_meters, HOUSE},
    flows::{flow_link, open_link},
    helpers::{TestApp, TestResponse},
};

/// Opens an absolute link as a browser tab would: no Authorization header.
async fn open(url: &str, accept: &str) -> TestResponse {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let r = client
        .get(url)
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    TestApp::read(r).await
}

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// The link with one character of its signature changed.
fn tampered(url: &str) -> String {
    let at = url.find("signature=").unwrap() + "signature=".len() + 5;
    let mut bytes = url.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

fn assert_signed_on_public_base(app: &TestApp, url: &str) {
    assert!(url.starts_with(&format!("http://{}/", app.addr)), "{url}");
    assert!(
        url.contains("?expires=") && url.contains("&signature="),
        "{url}"
    );
}

async fn assert_refused(url: &str, code: &str) {
    let page = open(url, BROWSER).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{url}: {}", page.text);
    assert!(
        page.header("content-type").starts_with("text/html"),
        "{}",
        page.header("content-type")
    );
    assert!(page.text.contains("invalid or expired"), "{}", page.text);
    let json = open(url, "application/json").await;
    assert_eq!(
        (json.status, json.code()),
        (StatusCode::FORBIDDEN, code),
        "{}",
        json.text
    );
    assert_eq!(json.body["error"]["type"], "permission_error");
}

both_engines! {
    with relaxed;
    async fn an_invoice_pdf_link_opens_without_a_token_until_it_expires(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "links@example.com").await;
        let r = app.post("/v1/account/sandbox/seed-demo-data", &token, &Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let list = app.get("/v1/account/billing/invoices", &token).await;
        assert_eq!(list.status, StatusCode::OK, "{}", list.text);
        let invoice = &list.body["data"][0];
        let number = invoice["number"].as_str().unwrap();
        let pdf = invoice["pdf"].as_str().unwrap().to_owned();
        assert_signed_on_public_base(&app, &pdf);
        // The detail gives a link too.
        let detail = app.get(&format!("/v1/account/billing/invoices/{number}"), &token).await;
        assert_signed_on_public_base(&app, detail.body["pdf"].as_str().unwrap());

        let r = open(&pdf, BROWSER).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.header("content-type"), "application/pdf");
        assert!(r.text.starts_with("%PDF-") && r.text.contains(number));
        // API clients keep the authenticated path.
        let r = app.get(&format!("/v1/account/billing/invoices/{number}/pdf"), &token).await;
        assert_eq!((r.status, r.header("content-type")), (StatusCode::OK, "application/pdf"));

        assert_refused(&tampered(&pdf), "link_invalid").await;
        // Another invoice's path under this signature is refused as well.
        let other = pdf.replacen(number, "INV-99999999", 1);
        assert_refused(&other, "link_invalid").await;
        let unsigned = pdf.split('?').next().unwrap();
        assert_refused(unsigned, "link_invalid").await;

        app.clock.advance(chrono::Duration::minutes(61));
        assert_refused(&pdf, "link_expired").await;
        // A fresh listing (with a fresh token: the old one has expired too) gives a fresh link.
        let token = app.account_token(&uuid).await;
        let list = app.get("/v1/account/billing/invoices", &token).await;
        assert_eq!(list.status, StatusCode::OK, "{}", list.text);
        let r = open(list.body["data"][0]["pdf"].as_str().unwrap(), BROWSER).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    }

    async fn plan_and_location_document_links_open_without_a_token(app) {
        with_meters(&app).await;
        let (account, token) = customer(&app, "docs@example.com").await;
        let plan = first_plan(&app, &token, HOUSE).await;
        for kind in ["efl", "tos", "yrac"] {
            let url = plan["documents"][kind].as_str().unwrap();
            assert_signed_on_public_base(&app, url);
            let r = open(url, BROWSER).await;
            assert_eq!(r.status, StatusCode::OK, "{kind}: {}", r.text);
            assert!(r.header("content-type").starts_with("application/pdf"));
            assert_refused(&tampered(url), "link_invalid").await;
        }

        let start = plan["earliest_switch_start_date"].as_str().unwrap().to_owned();
        let r = crate::enrollment::accept(&app, &token, &plan, HOUSE, &start).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let location = r.body["location"]["uuid"].as_str().unwrap().to_owned();

        let docs = app.get(&format!("/v1/account/locations/{location}/documents"), &token).await;
        assert_eq!(docs.status, StatusCode::OK, "{}", docs.text);
        assert_eq!(docs.body["contract_start"], start.as_str());
        assert!(docs.body["contract_end"].is_string(), "{}", docs.text);
        for kind in ["efl", "tos", "yrac"] {
            let url = docs.body[kind].as_str().unwrap();
            assert_signed_on_public_base(&app, url);
            let r = open(url, BROWSER).await;
            assert_eq!(r.status, StatusCode::OK, "{kind}: {}", r.text);
        }
        assert!(open(docs.body["efl"].as_str().unwrap(), BROWSER).await.text.contains(plan["name"].as_str().unwrap()));

        let all = app.get(&format!("/v1/account/locations/{location}/all-documents"), &token).await;
        assert_eq!(all.status, StatusCode::OK, "{}", all.text);
        let data = all.body["data"].as_array().unwrap();
        let kinds: Vec<_> = data.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["efl", "tos", "yrac"], "{}", all.text);
        for d in data {
            assert_eq!(d["status"], "active");
            assert_eq!(d["effective_date"], start.as_str());
            assert_eq!(open(d["url"].as_str().unwrap(), BROWSER).await.status, StatusCode::OK);
        }

        let p = app.get(&format!("/v1/account/locations/{location}/plan"), &token).await;
        assert_eq!(p.status, StatusCode::OK, "{}", p.text);
        assert_eq!(p.body["uuid"], plan["plan_uuid"]);
        assert_eq!(p.body["name"], plan["name"]);
        assert_eq!(p.body["plan_type"], "fixed");
        assert_eq!(p.body["rate_structure"], "flat");
        assert_eq!(p.body["rates"], plan["rates"]);
        assert_eq!(p.body["contract"]["start_date"], start.as_str());
        assert_eq!(p.body["contract"]["status"], "pending");

        // A documents flow reads the documents, and nothing else of the location.
        let session = open_link(&app, flow_link(&app, &account, "documents").await["login_link"].as_str().unwrap()).await.unwrap();
        for path in ["documents", "all-documents"] {
            let r = app.get(&format!("/v1/account/locations/{location}/{path}"), &session).await;
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
        }
        let r = app.get(&format!("/v1/account/locations/{location}/plan"), &session).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "scope_denied"));

        // Another account's location, or none at all, is a missing resource.
        let (_, other) = customer(&app, "other-docs@example.com").await;
        for path in ["plan", "documents", "all-documents"] {
            let r = app.get(&format!("/v1/account/locations/{location}/{path}"), &other).await;
            assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{path}");
            assert_ne!(r.body["error"]["message"], "No such route");
            let r = app.get(&format!("/v1/account/locations/{}/{path}", uuid::Uuid::new_v4()), &token).await;
            assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{path}");
        }
    }
}
