//! Tokens: missing, malformed, unknown, expired, revoked and of the wrong type.

use reqwest::{Method, StatusCode};

fn assert_401(r: &crate::helpers::TestResponse, code: &str) {
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.text);
    assert_eq!(r.code(), code, "{}", r.text);
    assert_eq!(r.body["error"]["type"], "authentication_error");
    assert_eq!(r.header("www-authenticate"), "Bearer");
}

both_engines! {
    async fn missing_malformed_and_unknown_tokens_are_401(app) {
        for path in ["/v1/app", "/v1/account"] {
            let r = app.send(Method::GET, path, None, None, &[]).await;
            assert_401(&r, "token_missing");
            for header in ["Basic abc", "Bearer", "Bearer ", "swb_sandbox_x"] {
                let r = app.send(Method::GET, path, None, None, &[("authorization", header)]).await;
                assert_401(&r, "token_invalid");
            }
            for token in ["abc", "swb_sandbox_short", "swb_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "swb_acct_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
                assert_401(&app.get(path, token).await, "token_invalid");
            }
        }
    }

    async fn account_tokens_expire_after_an_hour(app) {
        let a = app.create_simple_account("a@example.com").await;
        let token = app.account_token(a["uuid"].as_str().unwrap()).await;
        assert_eq!(app.get("/v1/account", &token).await.status, StatusCode::OK);
        app.clock.advance(chrono::Duration::minutes(59));
        assert_eq!(app.get("/v1/account", &token).await.status, StatusCode::OK);
        app.clock.advance(chrono::Duration::minutes(2));
        assert_401(&app.get("/v1/account", &token).await, "token_expired");
    }

    async fn revoked_app_tokens_stop_working_and_others_go_on(app) {
        let second = server::admin::create_token(&app.state.db, &app.clock, app.app_uuid).await.unwrap();
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);
        server::admin::revoke_token(&app.state.db, &app.clock, &app.app_token[..20]).await.unwrap();
        // Revoked from the command line, the server learns of it within its cache's second.
        app.clock.advance(chrono::Duration::milliseconds(1001));
        assert_401(&app.get("/v1/app", &app.app_token).await, "token_invalid");
        assert_eq!(app.get("/v1/app", &second).await.status, StatusCode::OK);
        assert!(server::admin::revoke_token(&app.state.db, &app.clock, &app.app_token).await.is_err());
    }

    async fn each_token_type_belongs_to_its_path_group(app) {
        let a = app.create_simple_account("a@example.com").await;
        let account_token = app.account_token(a["uuid"].as_str().unwrap()).await;
        let r = app.get("/v1/app/accounts", &account_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "token_wrong_type"));
        assert_eq!(r.body["error"]["type"], "permission_error");
        let r = app.get("/v1/account", &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "token_wrong_type"));
    }
}
