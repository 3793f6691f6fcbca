//! Browsers read our errors: every `/v1` answer, errors included, carries the CORS headers for
//! the calling origin, and preflights of any `/v1` path are answered.

use reqwest::{Method, StatusCode};

use crate::helpers::{TestApp, TestResponse};

const ORIGIN: &str = "https://partner.example";

/// What a browser's `fetch` needs to hand the page the answer and its headers.
fn assert_readable_by_the_page(r: &TestResponse) {
    assert_eq!(r.header("access-control-allow-origin"), ORIGIN, "{r:?}");
    let exposed = r
        .header("access-control-expose-headers")
        .to_ascii_lowercase();
    assert!(exposed.contains("request-id"), "{exposed}");
    assert!(
        r.body["error"]["code"].is_string(),
        "a JSON error: {}",
        r.text
    );
}

async fn preflight(app: &TestApp, path: &str, method: &str) -> TestResponse {
    app.send(
        Method::OPTIONS,
        path,
        None,
        None,
        &[
            ("origin", ORIGIN),
            ("access-control-request-method", method),
            (
                "access-control-request-headers",
                "authorization,content-type",
            ),
        ],
    )
    .await
}

fn limited(c: &mut server::config::Config) {
    c.rate_limits.account_per_second = 1;
}

both_engines! {
    with limited;
    async fn preflights_of_any_v1_path_are_answered(app) {
        for (path, method) in [
            ("/v1/account/no-such-thing", "POST"),
            ("/v1/account/locations/00000000-0000-0000-0000-000000000000/plan", "GET"),
            ("/v1/account", "GET"),
            ("/v1/app/nothing-here", "GET"),
        ] {
            let r = preflight(&app, path, method).await;
            assert!(r.status.is_success(), "{path}: {}", r.status);
            assert_eq!(r.header("access-control-allow-origin"), ORIGIN, "{path}");
            let allowed = r.header("access-control-allow-headers").to_ascii_lowercase();
            assert!(allowed.contains("authorization") && allowed.contains("content-type"), "{allowed}");
        }
        // Pages and documents are not an API: no CORS for them.
        let r = preflight(&app, "/flow/enrollment", "GET").await;
        assert_eq!(r.header("access-control-allow-origin"), "");
    }

    async fn unknown_routes_answer_browsers_with_json(app) {
        let a = app.create_simple_account("cors@example.com").await;
        let token = app.account_token(a["uuid"].as_str().unwrap()).await;
        for method in [Method::GET, Method::POST] {
            let r = app.send(method.clone(), "/v1/account/no-such-thing", Some(&token), None, &[("origin", ORIGIN)]).await;
            assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{method}: {}", r.text);
            assert_readable_by_the_page(&r);
        }
        let r = app.send(Method::GET, "/v1/app/nothing-here", Some(&app.app_token), None, &[("origin", ORIGIN)]).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"), "{}", r.text);
        assert_readable_by_the_page(&r);
    }

    async fn auth_and_rate_limit_errors_answer_browsers_with_json(app) {
        let r = app.send(Method::GET, "/v1/account", Some("swb_acct_not-a-real-token"), None, &[("origin", ORIGIN)]).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_invalid"), "{}", r.text);
        assert_readable_by_the_page(&r);
        assert!(r.header("access-control-expose-headers").to_ascii_lowercase().contains("www-authenticate"));

        // An AppToken on the account group is refused with a reason the page can read.
        let r = app.send(Method::GET, "/v1/account", Some(&app.app_token), None, &[("origin", ORIGIN)]).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
        assert_readable_by_the_page(&r);

        // The app group answers browsers the same way.
        let r = app.send(Method::GET, "/v1/app", None, None, &[("origin", ORIGIN)]).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNAUTHORIZED, "token_missing"), "{}", r.text);
        assert_readable_by_the_page(&r);

        let a = app.create_simple_account("limited@example.com").await;
        let token = app.account_token(a["uuid"].as_str().unwrap()).await;
        let first = app.send(Method::GET, "/v1/account", Some(&token), None, &[("origin", ORIGIN)]).await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.text);
        assert_eq!(first.header("access-control-allow-origin"), ORIGIN);
        let r = app.send(Method::GET, "/v1/account", Some(&token), None, &[("origin", ORIGIN)]).await;
        assert_eq!((r.status, r.code()), (StatusCode::TOO_MANY_REQUESTS, "rate_limited"), "{}", r.text);
        assert_readable_by_the_page(&r);
        let exposed = r.header("access-control-expose-headers").to_ascii_lowercase();
        assert!(exposed.contains("retry-after") && exposed.contains("ratelimit"), "{exposed}");
    }
}
