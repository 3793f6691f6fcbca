//! Identity and credit-check submission during enrollment.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::enrollment::{customer, ready_to_finalize, with_meters, HOUSE};

both_engines! {
    async fn identity_updates_complete_the_identity(app) {
        let a = app.create_simple_account("id@example.com").await;
        let uuid = a["uuid"].as_str().unwrap();
        let token = app.account_token(uuid).await;
        let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&token), Some(&json!({"phone": "512 555 0199"})), &[]).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(r.body["is_identity_complete"], false);
        assert_eq!(r.body["phone"], "+15125550199");
        let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&token), Some(&json!({"date_of_birth": "1985-07-04"})), &[]).await;
        assert_eq!(r.body, json!({"first_name": "Ana", "last_name": "Díaz", "phone": "+15125550199", "email": "id@example.com", "date_of_birth": "1985-07-04", "is_identity_complete": true}));
        let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&token), Some(&json!({"date_of_birth": "2015-01-01"})), &[]).await;
        assert_eq!((r.status, r.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, Some("date_of_birth")));
        // The same values again change nothing and announce nothing.
        app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&token), Some(&json!({"date_of_birth": "1985-07-04"})), &[]).await;
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert_eq!(events.iter().filter(|e| e.kind == "enrollment.identity_updated").count(), 2);
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["is_identity_complete"], true);
        assert_eq!(me.body["date_of_birth"], "1985-07-04");
    }

    async fn identity_set_through_the_app_patch_is_announced(app) {
        let a = app.create_simple_account("patched@example.com").await;
        let uuid = a["uuid"].as_str().unwrap();
        let path = format!("/v1/app/accounts/{uuid}");
        let announced = || async {
            server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap())
                .await
                .unwrap()
                .into_iter()
                .filter(|e| e.kind == "enrollment.identity_updated")
                .map(|e| serde_json::from_str::<serde_json::Value>(&e.data).unwrap()["is_identity_complete"].clone())
                .collect::<Vec<_>>()
        };
        let r = app.patch(&path, &app.app_token, &json!({"phone": "512 555 0199"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(announced().await, vec![json!(false)]);
        let r = app.patch(&path, &app.app_token, &json!({"date_of_birth": "1985-07-04"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(announced().await, vec![json!(false), json!(true)]);
        // What is not identity, or the same values again, announces nothing.
        let r = app.patch(&path, &app.app_token, &json!({"renewals_url": "https://partner.example/renew", "phone": "+15125550199"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(announced().await.len(), 2);
    }

    async fn the_email_changes_only_with_the_app_token(app) {
        let a = app.create_simple_account("before@example.com").await;
        let uuid = a["uuid"].as_str().unwrap();
        let token = app.account_token(uuid).await;
        for body in [
            json!({"email": "after@example.com"}),
            json!({"email": "after@example.com", "phone": "512 555 0199"}),
            json!({"email": null}),
        ] {
            let r = app.send(Method::PATCH, "/v1/account/enroll/identity", Some(&token), Some(&body), &[]).await;
            assert_eq!((r.status, r.code()), (StatusCode::FORBIDDEN, "email_change_requires_app_token"), "{body}: {}", r.text);
            assert_eq!(r.body["error"]["type"], "permission_error");
            assert_eq!(r.body["error"]["param"], "email");
        }
        // Nothing changed, not even the phone sent along, and nothing was announced.
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.status, StatusCode::OK, "{}", me.text);
        assert_eq!(me.body["email"], "before@example.com");
        assert!(me.body["phone"].is_null(), "{}", me.text);
        let events = server::store::events::events_of_account(&app.state.db, uuid.parse().unwrap()).await.unwrap();
        assert!(!events.iter().any(|e| e.kind == "enrollment.identity_updated"));
        // The partner's backend changes it with the AppToken.
        let r = app.patch(&format!("/v1/app/accounts/{uuid}"), &app.app_token, &json!({"email": "after@example.com"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        assert_eq!(app.get("/v1/account", &token).await.body["email"], "after@example.com");
    }

    async fn credit_check_needs_consent_and_a_valid_ssn(app) {
        let a = app.create_simple_account("credit@example.com").await;
        let uuid = a["uuid"].as_str().unwrap();
        let token = app.account_token(uuid).await;
        let r = app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": false})).await;
        assert_eq!((r.status, r.code()), (StatusCode::UNPROCESSABLE_ENTITY, "consent_required"));
        let r = app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789"})).await;
        assert_eq!((r.status, r.code()), (StatusCode::BAD_REQUEST, "parameter_missing"));
        for bad in ["12345678", "000-12-3456", "123-45-678x"] {
            let r = app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": bad, "consent": true})).await;
            assert_eq!((r.status, r.body["error"]["param"].as_str()), (StatusCode::BAD_REQUEST, Some("ssn")), "{bad}");
            assert!(!r.text.contains(bad), "the SSN is not echoed");
        }
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["has_credit_check"], false, "refused submissions change nothing");

        let r = app.post("/v1/account/enroll/credit-check", &token, &json!({"ssn": "123-45-6789", "consent": true})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        // The answer says what is stored: submitted, until the check runs after finalize.
        assert_eq!(r.body, json!({"status": "submitted", "ssn_last4": "6789"}));
        assert_eq!(app.query_texts("SELECT status FROM credit_checks").await, vec![Some("submitted".to_owned())]);
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["has_credit_check"], true);
        assert!(!me.text.contains("6789"), "the account never shows the SSN");
        assert_eq!(me.body["status_reason"], "missing_address");

        // Sealed at rest, and only this deployment's key opens it.
        let mut tx = app.state.db.begin().await.unwrap();
        let stored = server::store::credit::latest_credit_check(&mut tx, uuid.parse().unwrap()).await.unwrap().unwrap();
        tx.commit().await.unwrap();
        assert_eq!(stored.ssn_last4, "6789");
        assert!(!stored.ssn_ciphertext.windows(9).any(|w| w == b"123456789"));
        assert_eq!(app.state.pii.open(&stored.ssn_ciphertext).unwrap(), b"123456789");
    }
}

both_engines! {
    async fn ssns_never_reach_the_database_in_clear(app) {
        let a = app.create_simple_account("clear-ssn@example.com").await;
        let token = app.account_token(a["uuid"].as_str().unwrap()).await;
        let r = app
            .post(
                "/v1/account/enroll/credit-check",
                &token,
                &json!({"ssn": "321-54-9876", "consent": true}),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text);
        assert_eq!(r.body["ssn_last4"], "9876");
        let me = app.get("/v1/account", &token).await;
        assert_eq!(me.body["enrollment"]["has_credit_check"], true, "{}", me.text);
        app.assert_not_stored(
            "clear-ssn@example.com",
            &["321549876", "321-54-9876", "321 54 9876"],
            "an SSN",
        )
        .await;
    }

    async fn ssns_stay_out_of_the_database_once_the_check_has_run(app) {
        with_meters(&app).await;
        let (uuid, token) = customer(&app, "checked-ssn@example.com").await;
        // Submits 123-45-6789 (answered 202) and every other step.
        ready_to_finalize(&app, &token, HOUSE).await;
        let r = app.post("/v1/account/enroll/finalize", &token, &json!({})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        // The bureau is asked in the background after finalize: jobs, their payloads and the
        // bureau's answer are written too.
        let r = app.post("/v1/account/sandbox/advance-clock", &token, &json!({"days": 1})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text);
        let mut tx = app.state.db.begin().await.unwrap();
        let check = server::store::credit::latest_credit_check(&mut tx, uuid.parse().unwrap())
            .await
            .unwrap()
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(check.status.as_str(), "passed");
        app.assert_not_stored(
            "checked-ssn@example.com",
            &["123456789", "123-45-6789", "123 45 6789"],
            "an SSN",
        )
        .await;
    }
}
