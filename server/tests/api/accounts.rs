//! Accounts through the API: creation with typed validation, listing, reading, PATCH semantics,
//! AccountTokens and the account's own view.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::TestApp;

both_engines! {
    async fn creating_an_account_returns_it_not_enrolled(app) {
        let body = app.create_account(json!({
            "email": " Ana.Diaz@Example.com ",
            "first_name": "Ana",
            "last_name": "Díaz",
            "phone": "(512) 555-0123",
            "date_of_birth": "1990-05-01",
            "preliminary_address": {"address_1": "100 Main St", "city": "Dallas", "state": "tx", "postal_code": "75201"},
            "metadata": {"crm_id": "c-1"}
        })).await;
        assert_eq!(body["email"], "ana.diaz@example.com");
        assert_eq!(body["phone"], "+15125550123");
        assert_eq!(body["date_of_birth"], "1990-05-01");
        assert_eq!(body["status"], "not_enrolled");
        assert_eq!(body["status_reason"], "unresolved");
        assert_eq!(body["preliminary_address"]["state"], "TX");
        assert_eq!(body["metadata"]["crm_id"], "c-1");
        assert_eq!(body["client_agent_accepted"], false);
        assert_eq!(body["is_service_active"], false);
        assert_eq!(body["enrollment"]["can_finalize_enrollment"], false);
        assert_eq!(body["enrollment"]["is_identity_complete"], true);
        assert_eq!(body["enrollment"]["missing"], json!(["address", "plan", "credit_check", "payment_method"]));
        assert_eq!(body["locations"], json!([]));
        assert_eq!(body["app"]["uuid"], app.app_uuid.to_string());
        assert!(body["app"]["payment_public_key"].as_str().unwrap().starts_with("pk_test_"));
        assert_eq!(body["account_number"].as_str().unwrap().len(), 9);
        let created_at = body["created_at"].as_str().unwrap();
        assert!(created_at.ends_with('Z') && created_at.len() == 24, "{created_at}");

        // The first status is historized.
        let uuid = body["uuid"].as_str().unwrap().parse().unwrap();
        let history = server::store::accounts::status_history(&app.state.db, uuid).await.unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!((history[0].status.as_str(), history[0].status_reason.as_str()), ("not_enrolled", "unresolved"));
    }

    async fn every_bad_field_is_a_400_naming_it_and_creates_nothing(app) {
        let good = json!({"email": "a@example.com", "first_name": "Ana", "last_name": "Díaz"});
        let cases = [
            (json!({"first_name": "Ana", "last_name": "D"}), "parameter_missing", "email"),
            (json!({"email": "a@example.com", "last_name": "D"}), "parameter_missing", "first_name"),
            (json!({"email": "not-an-email", "first_name": "Ana", "last_name": "D"}), "parameter_invalid", "email"),
            (json!({"email": 42, "first_name": "Ana", "last_name": "D"}), "parameter_invalid", "email"),
            (json!({"email": "a@example.com", "first_name": "", "last_name": "D"}), "parameter_invalid", "first_name"),
            (json!({"email": "a@example.com", "first_name": "x".repeat(101), "last_name": "D"}), "parameter_invalid", "first_name"),
            (json!({"email": "a@example.com", "first_name": "A\u{7}", "last_name": "D"}), "parameter_invalid", "first_name"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "phone": "12345"}), "parameter_invalid", "phone"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "date_of_birth": "2020-01-01"}), "parameter_invalid", "date_of_birth"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "date_of_birth": "2999-01-01"}), "parameter_invalid", "date_of_birth"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "date_of_birth": "01/02/1990"}), "parameter_invalid", "date_of_birth"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "renewals_url": "http://partner.example/renew"}), "parameter_invalid", "renewals_url"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "metadata": {"k": 1}}), "parameter_invalid", "metadata.k"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "metadata": {"k": "v".repeat(501)}}), "parameter_invalid", "metadata.k"),
            (json!({"email": "a@example.com", "first_name": "Ana", "last_name": "D", "preliminary_address": {"address_1": "1 Main", "city": "Dallas", "state": "TX"}}), "parameter_missing", "preliminary_address.postal_code"),
        ];
        for (body, code, param) in cases {
            let r = app.post("/v1/app/accounts", &app.app_token, &body).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text);
            assert_eq!(r.code(), code, "{body}");
            assert_eq!(r.body["error"]["param"], param, "{body}");
            assert_eq!(r.body["error"]["type"], "invalid_request_error");
        }
        let many: serde_json::Map<_, _> = (0..21).map(|i| (format!("k{i}"), json!("v"))).collect();
        let mut body = good.clone();
        body["metadata"] = json!(many);
        let r = app.post("/v1/app/accounts", &app.app_token, &body).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        let list = app.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(list.body["data"], json!([]), "no account was created");
        // Localhost renewal pages are fine in sandbox.
        let mut body = good;
        body["renewals_url"] = json!("http://localhost:8080/renew");
        app.create_account(body).await;
    }

    async fn listing_pages_newest_first_and_filters(app) {
        for i in 0..5 {
            app.create_simple_account(&format!("user{i}@example.com")).await;
        }
        app.create_simple_account("twin@example.com").await;
        app.create_simple_account("Twin@Example.com").await;
        let page = app.get("/v1/app/accounts?limit=3", &app.app_token).await;
        assert_eq!(page.status, StatusCode::OK);
        assert_eq!(page.body["data"].as_array().unwrap().len(), 3);
        assert_eq!(page.body["has_more"], true);
        assert_eq!(page.body["limit"], 3);
        assert_eq!(page.body["offset"], 0);
        assert_eq!(page.body["data"][0]["email"], "twin@example.com");
        assert_eq!(page.body["data"][0]["date_of_birth"], serde_json::Value::Null);
        let next = page.body["next_page_url"].as_str().unwrap().to_owned();
        assert_eq!(next, "/v1/app/accounts?limit=3&offset=3");
        let page2 = app.get(&next, &app.app_token).await;
        let page3 = app.get(page2.body["next_page_url"].as_str().unwrap(), &app.app_token).await;
        assert_eq!(page3.body["data"].as_array().unwrap().len(), 1);
        assert_eq!(page3.body["has_more"], false);
        assert_eq!(page3.body["next_page_url"], serde_json::Value::Null);
        assert_eq!(page3.body["data"][0]["email"], "user0@example.com");

        let twins = app.get("/v1/app/accounts?email=TWIN@example.com&limit=1", &app.app_token).await;
        assert_eq!(twins.body["data"].as_array().unwrap().len(), 1);
        assert_eq!(twins.body["next_page_url"], "/v1/app/accounts?limit=1&offset=1&email=twin%40example.com");
        let by_status = app.get("/v1/app/accounts?status=not_enrolled&limit=100", &app.app_token).await;
        assert_eq!(by_status.body["data"].as_array().unwrap().len(), 7);
        let active = app.get("/v1/app/accounts?status=active", &app.app_token).await;
        assert_eq!(active.body["data"], json!([]));

        for bad in ["limit=0", "limit=101", "limit=abc", "offset=-1", "status=asleep"] {
            let r = app.get(&format!("/v1/app/accounts?{bad}"), &app.app_token).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}");
            assert_eq!(r.code(), "parameter_invalid", "{bad}");
        }
    }

    async fn patch_tells_absent_from_null_from_value(app) {
        let a = app.create_account(json!({
            "email": "a@example.com", "first_name": "Ana", "last_name": "Díaz",
            "phone": "5125550123", "metadata": {"k": "v"}
        })).await;
        let path = format!("/v1/app/accounts/{}", a["uuid"].as_str().unwrap());
        let r = app.patch(&path, &app.app_token, &json!({"first_name": "Bea", "phone": null})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["first_name"], "Bea");
        assert_eq!(r.body["last_name"], "Díaz");
        assert_eq!(r.body["phone"], serde_json::Value::Null);
        assert_eq!(r.body["metadata"]["k"], "v");
        let r = app.patch(&path, &app.app_token, &json!({"renewals_url": "https://partner.example/renew", "date_of_birth": "1980-02-29", "metadata": null})).await;
        assert_eq!(r.body["renewals_url"], "https://partner.example/renew");
        assert_eq!(r.body["date_of_birth"], "1980-02-29");
        assert_eq!(r.body["metadata"], json!({}));
        let r = app.patch(&path, &app.app_token, &json!({"email": null})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_invalid"));
        let r = app.patch(&path, &app.app_token, &json!({"phone": "555"})).await;
        assert_eq!(r.body["error"]["param"], "phone");
        // A refused PATCH changes nothing.
        let after = app.get(&path, &app.app_token).await;
        assert_eq!(after.body["first_name"], "Bea");
        assert_eq!(after.body["email"], "a@example.com");
        // An empty PATCH is fine and changes nothing.
        let r = app.send(reqwest::Method::PATCH, &path, Some(&app.app_token), None, &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["first_name"], "Bea");
    }

    async fn accounts_of_other_apps_are_not_found(app) {
        let a = app.create_simple_account("a@example.com").await;
        let (_, other_token) = app.other_app().await;
        let path = format!("/v1/app/accounts/{}", a["uuid"].as_str().unwrap());
        for r in [
            app.get(&path, &other_token).await,
            app.patch(&path, &other_token, &json!({"first_name": "X"})).await,
            app.post(&format!("{path}/token"), &other_token, &serde_json::Value::Null).await,
        ] {
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.text);
            assert_eq!(r.code(), "resource_missing");
        }
        let list = app.get("/v1/app/accounts", &other_token).await;
        assert_eq!(list.body["data"], json!([]));
        let r = app.get("/v1/app/accounts/not-a-uuid", &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
        let r = app.get(&format!("/v1/app/accounts/{}", uuid::Uuid::new_v4()), &app.app_token).await;
        assert_eq!((r.status, r.code()), (StatusCode::NOT_FOUND, "resource_missing"));
    }

    async fn an_account_token_reads_its_own_account(app) {
        let a = app.create_account(json!({
            "email": "a@example.com", "first_name": "Ana", "last_name": "Díaz", "date_of_birth": "1990-01-02"
        })).await;
        let r = app.post(&format!("/v1/app/accounts/{}/token", a["uuid"].as_str().unwrap()), &app.app_token, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::OK);
        let token = r.body["token"].as_str().unwrap();
        assert!(token.starts_with("swb_acct_"));
        let expires = chrono::DateTime::parse_from_rfc3339(r.body["expires_at"].as_str().unwrap()).unwrap();
        let minutes = (expires.with_timezone(&chrono::Utc) - app.clock.now()).num_minutes();
        assert!((59..=60).contains(&minutes), "{minutes}");
        let me = app.get("/v1/account", token).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["uuid"], a["uuid"]);
        assert_eq!(me.body["date_of_birth"], "1990-01-02");
        assert!(me.body["app"]["payment_public_key"].as_str().unwrap().starts_with("pk_test_"));
    }
}

#[tokio::test]
async fn app_endpoint_describes_the_app() {
    let app = TestApp::spawn(crate::helpers::Engine::Sqlite).await;
    let r = app.get("/v1/app", &app.app_token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["uuid"], app.app_uuid.to_string());
    assert_eq!(r.body["environment"], "sandbox");
    assert_eq!(r.body["branding"]["display_name"], "Sunny Homes");
    assert!(r.body["slug"].as_str().unwrap().starts_with("sunny-homes-"));
    assert_eq!(r.body["allowed_origins"], json!([]));
}

both_engines! {
    async fn client_agent_authorization_is_recorded(app) {
        let a = app.create_simple_account("agent@example.com").await;
        let path = format!("/v1/app/accounts/{}/record-client-agent", a["uuid"].as_str().unwrap());
        let r = app.post(&path, &app.app_token, &json!({"client_agent_accepted_at": "2099-01-01T00:00:00Z"})).await;
        assert_eq!((r.status, r.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, Some("client_agent_accepted_at")));
        let r = app.post(&path, &app.app_token, &json!({"client_agent_accepted_at": "2026-01-05T10:00:00-06:00"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["client_agent_accepted"], true);
        assert_eq!(r.body["client_agent_accepted_at"], "2026-01-05T16:00:00.000Z");
        // Without a body, the authorization is dated now.
        let r = app.post(&path, &app.app_token, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let at = chrono::DateTime::parse_from_rfc3339(r.body["client_agent_accepted_at"].as_str().unwrap()).unwrap();
        assert!((app.clock.now() - at.with_timezone(&chrono::Utc)).num_seconds().abs() < 5);
        let (_, other) = app.other_app().await;
        let r = app.post(&path, &other, &serde_json::Value::Null).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
}

/// Writes `sql` (the account's uuid bound as `$1`) straight to the database: a stored value no
/// release of the service writes.
async fn write_raw(app: &TestApp, sql: &str, account: uuid::Uuid) {
    let mut tx = app.state.db.begin().await.unwrap();
    match &mut tx {
        server::store::Tx::Sqlite(t) => {
            sqlx::query(sql)
                .bind(account)
                .execute(&mut **t)
                .await
                .unwrap();
        }
        server::store::Tx::Postgres(t) => {
            sqlx::query(sql)
                .bind(account)
                .execute(&mut **t)
                .await
                .unwrap();
        }
    }
    tx.commit().await.unwrap();
}

both_engines! {
    async fn an_unknown_stored_state_fails_the_read_instead_of_passing_as_a_default(app) {
        let a = app.create_simple_account("odd@example.com").await;
        let uuid: uuid::Uuid = a["uuid"].as_str().unwrap().parse().unwrap();
        write_raw(
            &app,
            "INSERT INTO enrollments (account_uuid, finalized_at, is_client_agent, verification, \
             utility, cancellation, updated_at) \
             SELECT uuid, created_at, FALSE, 'pending', 'on_hold', NULL, created_at \
             FROM accounts WHERE uuid = $1",
            uuid,
        )
        .await;
        let read = server::store::enrollment::enrollment(&app.state.db, uuid).await;
        assert!(read.is_err(), "an unknown utility state is read as {read:?}");
        let mut tx = app.state.db.begin().await.unwrap();
        let check = server::store::credit::NewCreditCheck {
            account_uuid: uuid,
            ssn_ciphertext: b"sealed",
            ssn_last4: "6789",
            consented_at: app.clock.now(),
            status: server::domain::status::CreditState::Submitted,
        };
        server::store::credit::insert_credit_check(&mut tx, &check).await.unwrap();
        tx.commit().await.unwrap();
        write_raw(&app, "UPDATE credit_checks SET status = 'on_ice' WHERE account_uuid = $1", uuid).await;
        let mut tx = app.state.db.begin().await.unwrap();
        let read = server::store::credit::latest_credit_check(&mut tx, uuid).await;
        drop(tx);
        assert!(read.is_err(), "an unknown credit check state is read as {read:?}");
        write_raw(&app, "UPDATE accounts SET status = 'paused' WHERE uuid = $1", uuid).await;
        let read = server::store::accounts::account_by_uuid(&app.state.db, uuid).await;
        assert!(read.is_err(), "an unknown account status is read as {read:?}");
        let r = app.get("/v1/app/accounts", &app.app_token).await;
        assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.text);
        assert_eq!(r.body["error"]["code"], "internal_error", "{}", r.text);
    }
}
