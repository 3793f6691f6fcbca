//! Every account endpoint partners are told of exists: partner code forgets an account
//! on a 401 or 404 from its reads, so a 404 may only ever be about the resource asked for.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::enrollment::{customer, relaxed};

/// (method, path under /v1/account) of every account endpoint the OpenAPI document lists;
/// `{l}` is a location and `{n}` an invoice number.
const DOCUMENTED_ACCOUNT_ROUTES: &[(&str, &str)] = &[
    ("GET", ""),
    ("POST", "/enroll/eligibility"),
    ("POST", "/enroll/address-search"),
    ("POST", "/enroll/full-address-search"),
    ("POST", "/enroll/esi-id-search"),
    ("POST", "/enroll/confirm-address"),
    ("POST", "/enroll/plans/request"),
    ("POST", "/enroll/plans/accept"),
    ("PATCH", "/enroll/identity"),
    ("POST", "/enroll/credit-check"),
    ("POST", "/enroll/finalize"),
    ("GET", "/enroll/summary"),
    ("POST", "/billing/payment-session"),
    ("POST", "/billing/ensure-payment-method-added"),
    ("GET", "/billing/payment-method"),
    ("GET", "/billing/invoices"),
    ("GET", "/billing/invoices/{n}"),
    ("GET", "/billing/invoices/{n}/pdf"),
    ("POST", "/billing/invoices/{n}/pay"),
    ("GET", "/billing/address"),
    ("PUT", "/billing/address"),
    ("GET", "/locations/{l}"),
    ("GET", "/locations/{l}/plan"),
    ("GET", "/locations/{l}/documents"),
    ("GET", "/locations/{l}/all-documents"),
    ("GET", "/locations/{l}/support-info"),
    ("GET", "/locations/{l}/usage/monthly"),
    ("GET", "/locations/{l}/usage/daily"),
    ("GET", "/locations/{l}/usage/intervals"),
    ("GET", "/locations/{l}/meter-reads"),
    ("POST", "/locations/{l}/cancel-service"),
    ("POST", "/locations/{l}/renewal-plans/request"),
    ("POST", "/locations/{l}/renewal-plans/accept"),
    ("POST", "/sandbox/simulate"),
    ("POST", "/sandbox/advance-clock"),
    ("POST", "/sandbox/seed-demo-data"),
    ("POST", "/sandbox/delete-enrollment"),
];

both_engines! {
    with relaxed;
    async fn every_spec_account_route_exists(app) {
        let (_, token) = customer(&app, "routes@example.com").await;
        let unknown_location = uuid::Uuid::new_v4().to_string();
        for (method, route) in DOCUMENTED_ACCOUNT_ROUTES {
            let path = format!("/v1/account{route}")
                .replace("{l}", &unknown_location)
                .replace("{n}", "INV-99999999");
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let body = (method != Method::GET).then(|| json!({}));
            let r = app.send(method.clone(), &path, Some(&token), body.as_ref(), &[]).await;
            assert_ne!(r.body["error"]["message"], "No such route", "{method} {path}: {}", r.text);
            assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}: {}", r.text);
            assert!(!r.status.is_server_error() || r.status == StatusCode::SERVICE_UNAVAILABLE, "{method} {path}: {}", r.text);
            // A location nobody has is a missing resource, not a missing route (a body that
            // does not parse may be refused first).
            if route.starts_with("/locations/") && r.status != StatusCode::BAD_REQUEST {
                assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{method} {path}");
            }
        }
        // The router's own 404 still answers paths the API does not have.
        let r = app.get("/v1/account/locations/nothing/here/at/all", &token).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
}
