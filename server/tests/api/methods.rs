//! A method a route does not take is answered 405 in the error envelope, with an `Allow` header
//! naming the methods it does take.

use reqwest::{Method, StatusCode};

both_engines! {
    async fn method_not_allowed_answers_name_the_allowed_methods(app) {
        let account = app.create_simple_account("allow@example.com").await;
        let token = app.account_token(account["uuid"].as_str().unwrap()).await;
        let cases: [(Method, &str, Option<&str>, &[&str]); 5] = [
            (Method::DELETE, "/v1/app/accounts", Some(app.app_token.as_str()), &["GET", "POST"]),
            (Method::PUT, "/v1/account", Some(token.as_str()), &["GET"]),
            (Method::POST, "/v1/openapi.json", None, &["GET"]),
            (Method::POST, "/readyz", None, &["GET"]),
            (Method::PUT, "/healthz", None, &["GET"]),
        ];
        for (method, path, token, allowed) in cases {
            let r = app.send(method.clone(), path, token, None, &[]).await;
            assert_eq!(
                (r.status, r.code()),
                (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
                "{method} {path}: {}", r.text
            );
            let allow: Vec<&str> = r.header("allow").split(',').map(str::trim).collect();
            for m in allowed {
                assert!(allow.contains(m), "{method} {path}: Allow {allow:?} lacks {m}");
            }
            assert!(!allow.contains(&method.as_str()), "{method} {path}: Allow {allow:?}");
        }
    }
}
